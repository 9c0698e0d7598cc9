// A bounds-checked FlatBuffer reader. Every accessor validates offsets, vtable sizes and
// vector lengths against the buffer before it reads, so an untrusted .tflite file can never
// make ember read outside it. Reads go through memcpy: no alignment assumptions.
#ifndef EMBER_SRC_LITE_FLATBUFFER_READER_H_
#define EMBER_SRC_LITE_FLATBUFFER_READER_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

namespace ember {
namespace lite {
namespace fb {

template <typename T>
inline T LoadScalar(const uint8_t* p) {
  if constexpr (std::is_same_v<T, bool>) {
    return *p != 0;  // any non-zero byte is true; never load an invalid bool
  } else {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;  // FlatBuffers are little-endian; every target ember supports is too.
  }
}

// A vector's location: `count` elements of `elem_size` bytes starting at `pos`.
struct Vec {
  size_t pos = 0;
  uint32_t count = 0;
  bool present = false;
};

class Table;

// The whole buffer; all positions are byte offsets into it.
class Buffer {
 public:
  Buffer(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  bool InBounds(size_t pos, size_t len) const { return pos <= size_ && len <= size_ - pos; }

 private:
  const uint8_t* data_;
  size_t size_;
};

// A validated table: its vtable lies inside the buffer and every field offset it lists
// lies inside the table's declared size.
class Table {
 public:
  Table() = default;
  // Validates the table at `pos`; on failure returns false and sets *error.
  bool Init(const Buffer* buf, size_t pos, std::string* error) {
    buf_ = buf;
    pos_ = pos;
    if (!buf->InBounds(pos, 4)) return Fail(error, "table offset outside the buffer");
    const int32_t soff = LoadScalar<int32_t>(buf->data() + pos);
    const int64_t vt = static_cast<int64_t>(pos) - static_cast<int64_t>(soff);
    if (vt < 0 || !buf->InBounds(static_cast<size_t>(vt), 4)) {
      return Fail(error, "vtable offset outside the buffer");
    }
    vt_ = static_cast<size_t>(vt);
    vt_size_ = LoadScalar<uint16_t>(buf->data() + vt_);
    table_size_ = LoadScalar<uint16_t>(buf->data() + vt_ + 2);
    if (vt_size_ < 4 || (vt_size_ & 1) != 0 || !buf->InBounds(vt_, vt_size_)) {
      return Fail(error, "bad vtable size " + std::to_string(vt_size_));
    }
    if (table_size_ < 4 || !buf->InBounds(pos, table_size_)) {
      return Fail(error, "bad table size " + std::to_string(table_size_));
    }
    return true;
  }

  // Offset of field `id` from the table start, or 0 when absent. Validates that `size`
  // bytes at that offset lie inside the table.
  bool FieldOffset(int id, size_t size, uint16_t* off, std::string* error) const {
    *off = 0;
    const size_t slot = 4 + 2 * static_cast<size_t>(id);
    if (slot + 2 > vt_size_) return true;
    const uint16_t o = LoadScalar<uint16_t>(buf_->data() + vt_ + slot);
    if (o == 0) return true;
    if (o < 4 || static_cast<size_t>(o) + size > table_size_) {
      return Fail(error, "field " + std::to_string(id) + " lies outside its table");
    }
    *off = o;
    return true;
  }

  template <typename T>
  bool Scalar(int id, T def, T* out, std::string* error) const {
    uint16_t off;
    if (!FieldOffset(id, sizeof(T), &off, error)) return false;
    *out = off == 0 ? def : LoadScalar<T>(buf_->data() + pos_ + off);
    return true;
  }

  // Follows a uoffset field; *target is 0 when absent.
  bool Offset(int id, size_t* target, std::string* error) const {
    uint16_t off;
    if (!FieldOffset(id, 4, &off, error)) return false;
    if (off == 0) {
      *target = 0;
      return true;
    }
    const size_t at = pos_ + off;
    const uint32_t rel = LoadScalar<uint32_t>(buf_->data() + at);
    if (rel == 0 || !buf_->InBounds(at, static_cast<size_t>(rel))) {
      return Fail(error, "field " + std::to_string(id) + " points outside the buffer");
    }
    *target = at + rel;
    return true;
  }

  bool SubTable(int id, Table* out, bool* present, std::string* error) const {
    size_t target;
    if (!Offset(id, &target, error)) return false;
    *present = target != 0;
    if (!*present) return true;
    return out->Init(buf_, target, error);
  }

  bool Vector(int id, size_t elem_size, Vec* out, std::string* error) const {
    size_t target;
    *out = Vec();
    if (!Offset(id, &target, error)) return false;
    if (target == 0) return true;
    if (!buf_->InBounds(target, 4)) return Fail(error, "vector length outside the buffer");
    const uint32_t count = LoadScalar<uint32_t>(buf_->data() + target);
    const uint64_t bytes = static_cast<uint64_t>(count) * elem_size;
    if (bytes > buf_->size() || !buf_->InBounds(target + 4, static_cast<size_t>(bytes))) {
      return Fail(error, "vector of " + std::to_string(count) + " elements (field " +
                             std::to_string(id) + ") runs past the end of the buffer");
    }
    out->pos = target + 4;
    out->count = count;
    out->present = true;
    return true;
  }

  bool String(int id, std::string* out, std::string* error) const {
    Vec v;
    if (!Vector(id, 1, &v, error)) return false;
    out->clear();
    if (!v.present) return true;
    out->assign(reinterpret_cast<const char*>(buf_->data() + v.pos), v.count);
    return true;
  }

  // Element i of a vector of tables.
  bool TableAt(const Vec& v, uint32_t i, Table* out, std::string* error) const {
    const size_t at = v.pos + 4 * static_cast<size_t>(i);
    const uint32_t rel = LoadScalar<uint32_t>(buf_->data() + at);
    if (rel == 0 || !buf_->InBounds(at, static_cast<size_t>(rel))) {
      return Fail(error, "vector element " + std::to_string(i) + " points outside the buffer");
    }
    return out->Init(buf_, at + rel, error);
  }

  template <typename T>
  T ElementAt(const Vec& v, uint32_t i) const {
    return LoadScalar<T>(buf_->data() + v.pos + sizeof(T) * static_cast<size_t>(i));
  }

  const Buffer* buffer() const { return buf_; }
  size_t pos() const { return pos_; }

 private:
  static bool Fail(std::string* error, const std::string& what) {
    *error = what;
    return false;
  }

  const Buffer* buf_ = nullptr;
  size_t pos_ = 0;
  size_t vt_ = 0;
  uint16_t vt_size_ = 0;
  uint16_t table_size_ = 0;
};

}  // namespace fb
}  // namespace lite
}  // namespace ember

#endif  // EMBER_SRC_LITE_FLATBUFFER_READER_H_
