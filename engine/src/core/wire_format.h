// Protobuf wire-format primitives: a bounds-checked reader and a writer.
// Used by the GraphDef loader; no protobuf dependency.
#ifndef EMBER_CORE_WIRE_FORMAT_H_
#define EMBER_CORE_WIRE_FORMAT_H_

#include <cstdint>
#include <cstring>
#include <string>

namespace ember {
namespace wire {

enum WireType : int { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

// Every read checks bounds and returns false instead of reading past the end.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}
  bool done() const { return p_ >= end_; }
  size_t remaining() const { return static_cast<size_t>(end_ - p_); }

  bool ReadVarint(uint64_t* out) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ >= end_) return false;
      uint8_t b = *p_++;
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) {
        *out = v;
        return true;
      }
    }
    return false;  // more than 10 bytes
  }
  bool ReadTag(uint32_t* field, int* wire_type) {
    uint64_t tag;
    if (!ReadVarint(&tag)) return false;
    *field = static_cast<uint32_t>(tag >> 3);
    *wire_type = static_cast<int>(tag & 7);
    return *field != 0 && (tag >> 3) <= 0x1fffffff;
  }
  bool ReadFixed32(uint32_t* out) {
    if (remaining() < 4) return false;
    std::memcpy(out, p_, 4);
    p_ += 4;
    return true;
  }
  bool ReadFixed64(uint64_t* out) {
    if (remaining() < 8) return false;
    std::memcpy(out, p_, 8);
    p_ += 8;
    return true;
  }
  // A length-delimited field; *sub covers exactly its bytes.
  bool ReadBytes(const uint8_t** data, size_t* size) {
    uint64_t len;
    if (!ReadVarint(&len) || len > remaining()) return false;
    *data = p_;
    *size = static_cast<size_t>(len);
    p_ += len;
    return true;
  }
  bool ReadString(std::string* out) {
    const uint8_t* d;
    size_t n;
    if (!ReadBytes(&d, &n)) return false;
    out->assign(reinterpret_cast<const char*>(d), n);
    return true;
  }
  bool Skip(int wire_type) {
    uint64_t v = 0;
    uint32_t f32;
    const uint8_t* d;
    size_t n;
    switch (wire_type) {
      case kVarint:
        return ReadVarint(&v);
      case kFixed64:
        return ReadFixed64(&v);
      case kLengthDelimited:
        return ReadBytes(&d, &n);
      case kFixed32:
        return ReadFixed32(&f32);
      default:
        return false;  // groups (3, 4) are not used by GraphDef
    }
  }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

class Writer {
 public:
  std::string& buffer() { return out_; }
  void Varint(uint64_t v) {
    while (v >= 0x80) {
      out_.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    out_.push_back(static_cast<char>(v));
  }
  void Tag(uint32_t field, int wire_type) {
    Varint((static_cast<uint64_t>(field) << 3) | static_cast<uint64_t>(wire_type));
  }
  void VarintField(uint32_t field, uint64_t v) {
    Tag(field, kVarint);
    Varint(v);
  }
  void Fixed32Field(uint32_t field, uint32_t v) {
    Tag(field, kFixed32);
    char b[4];
    std::memcpy(b, &v, 4);
    out_.append(b, 4);
  }
  void BytesField(uint32_t field, const std::string& bytes) {
    Tag(field, kLengthDelimited);
    Varint(bytes.size());
    out_ += bytes;
  }

 private:
  std::string out_;
};

}  // namespace wire
}  // namespace ember

#endif  // EMBER_CORE_WIRE_FORMAT_H_
