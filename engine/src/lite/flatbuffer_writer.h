// A minimal FlatBuffer builder. Like the reference implementation it builds back to front:
// children first, so every uoffset points forward; an Offset is a distance from the end.
#ifndef EMBER_SRC_LITE_FLATBUFFER_WRITER_H_
#define EMBER_SRC_LITE_FLATBUFFER_WRITER_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace ember {
namespace lite {
namespace fb {

class Builder {
 public:
  using Offset = uint32_t;

  size_t size() const { return size_; }

  // Pads so that after `len` more bytes the size is a multiple of `align`.
  void PreAlign(size_t len, size_t align) {
    min_align_ = std::max(min_align_, align);
    const size_t pad = (align - ((size_ + len) % align)) % align;
    Zeros(pad);
  }

  template <typename T>
  void Push(T v) {
    PreAlign(sizeof(T), sizeof(T));
    Prepend(&v, sizeof(T));
  }

  Offset CreateString(const std::string& s) {
    PreAlign(s.size() + 1, 4);
    Zeros(1);
    Prepend(s.data(), s.size());
    PushCount(s.size());
    return static_cast<Offset>(size_);
  }

  // A vector of scalars (elements already little-endian in memory); `align` >= 4.
  Offset CreateVector(const void* data, size_t count, size_t elem, size_t align = 4) {
    PreAlign(count * elem, std::max<size_t>(align, 4));
    Prepend(data, count * elem);
    PushCount(count);
    return static_cast<Offset>(size_);
  }

  Offset CreateOffsetVector(const std::vector<Offset>& offs) {
    PreAlign(offs.size() * 4, 4);
    for (size_t i = offs.size(); i-- > 0;) PushOffsetRaw(offs[i]);
    PushCount(offs.size());
    return static_cast<Offset>(size_);
  }

  void StartTable() {
    fields_.clear();
    table_start_ = size_;
  }
  template <typename T>
  void AddScalar(int id, T v) {
    Push(v);
    fields_.emplace_back(id, static_cast<Offset>(size_));
  }
  void AddOffset(int id, Offset target) {
    if (target == 0) return;
    PreAlign(4, 4);
    PushOffsetRaw(target);
    fields_.emplace_back(id, static_cast<Offset>(size_));
  }
  Offset EndTable() {
    Push<int32_t>(0);  // soffset to the vtable, patched below
    const Offset table = static_cast<Offset>(size_);
    int max_id = -1;
    for (const auto& f : fields_) max_id = std::max(max_id, f.first);
    std::vector<uint16_t> vt(static_cast<size_t>(max_id + 1) + 2, 0);
    vt[0] = static_cast<uint16_t>(vt.size() * 2);
    vt[1] = static_cast<uint16_t>(table - table_start_);
    for (const auto& f : fields_)
      vt[static_cast<size_t>(f.first) + 2] = static_cast<uint16_t>(table - f.second);
    for (size_t i = vt.size(); i-- > 0;) Push(vt[i]);
    const int32_t soff = static_cast<int32_t>(size_ - table);
    std::memcpy(At(table), &soff, 4);
    return table;
  }

  std::vector<uint8_t> Finish(Offset root, const char ident[4]) {
    PreAlign(8, std::max<size_t>(min_align_, 4));
    Prepend(ident, 4);
    PushOffsetRaw(root);
    return std::vector<uint8_t>(buf_.end() - static_cast<long>(size_), buf_.end());
  }

 private:
  uint8_t* At(size_t dist_from_end) { return buf_.data() + buf_.size() - dist_from_end; }
  void Reserve(size_t n) {
    if (size_ + n <= buf_.size()) return;
    size_t cap = std::max<size_t>(1024, buf_.size());
    while (cap < size_ + n) cap *= 2;
    std::vector<uint8_t> fresh(cap);
    if (size_ != 0) {  // the first Reserve has nothing to move (and a null buf_.data())
      std::memcpy(fresh.data() + cap - size_, buf_.data() + buf_.size() - size_, size_);
    }
    buf_.swap(fresh);
  }
  void Prepend(const void* p, size_t n) {
    Reserve(n);
    size_ += n;
    if (n) std::memcpy(At(size_), p, n);
  }
  void Zeros(size_t n) {
    Reserve(n);
    size_ += n;
    if (n) std::memset(At(size_), 0, n);  // the buffer may still be empty (null)
  }
  void PushCount(size_t n) {
    const uint32_t c = static_cast<uint32_t>(n);
    Prepend(&c, 4);
  }
  void PushOffsetRaw(Offset target) {
    const uint32_t rel = static_cast<uint32_t>(size_ + 4 - target);
    Prepend(&rel, 4);
  }

  std::vector<uint8_t> buf_;
  size_t size_ = 0;
  size_t min_align_ = 1;
  size_t table_start_ = 0;
  std::vector<std::pair<int, Offset>> fields_;
};

}  // namespace fb
}  // namespace lite
}  // namespace ember

#endif  // EMBER_SRC_LITE_FLATBUFFER_WRITER_H_
