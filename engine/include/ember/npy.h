// NumPy .npy files (format versions 1-3, little-endian, C order) as bytes: the one parser and
// serializer behind ember-run, ember-lite-run, ember-convert and the tests. Header-only and
// needing only ember/status.h, so the lite runtime uses it without the framework.
//
// Corrupt input never throws and is never read past its end: each malformed file is an
// INVALID_ARGUMENT naming the file, what is wrong and, where there is one, the fix.
#ifndef EMBER_NPY_H_
#define EMBER_NPY_H_

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "ember/status.h"

namespace ember {
namespace npy {

// An array as the file holds it. descr is NumPy's, normalized: "<f4", "<i8", "|u1", "|b1", ...
// ('=' is written as '<' or '|').
struct Array {
  std::string descr;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
  size_t num_elements() const {
    size_t n = 1;
    for (int64_t d : shape) n *= static_cast<size_t>(d);
    return n;
  }
};

// What a header says, and where its data lies in the file's bytes.
struct Header {
  std::string descr;
  std::vector<int64_t> shape;
  size_t itemsize = 0;
  size_t data_offset = 0;
  size_t data_bytes = 0;
};

namespace internal {

// A cursor over the header dict, a Python literal such as
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class DictReader {
 public:
  explicit DictReader(const std::string& text) : s_(text) {}
  void SkipSpace() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r'))
      ++i_;
  }
  bool Eat(char c) {
    SkipSpace();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool Peek(char c) {
    SkipSpace();
    return i_ < s_.size() && s_[i_] == c;
  }
  bool AtEnd() {
    SkipSpace();
    return i_ >= s_.size();
  }
  // A '...' or "..." literal without escapes (NumPy writes none in these keys).
  bool String(std::string* out) {
    SkipSpace();
    if (i_ >= s_.size() || (s_[i_] != '\'' && s_[i_] != '"')) return false;
    const char quote = s_[i_];
    const size_t end = s_.find(quote, i_ + 1);
    if (end == std::string::npos) return false;
    *out = s_.substr(i_ + 1, end - i_ - 1);
    i_ = end + 1;
    return true;
  }
  // A bare word: True, False, or a decimal number (with Python 2's 'L' suffix).
  std::string Word() {
    SkipSpace();
    const size_t b = i_;
    while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '-'))
      ++i_;
    return s_.substr(b, i_ - b);
  }

 private:
  const std::string& s_;
  size_t i_ = 0;
};

// A dimension: decimal digits only, at most INT64_MAX.
inline bool ParseDim(std::string word, int64_t* out) {
  if (!word.empty() && word.back() == 'L') word.pop_back();
  if (word.empty()) return false;
  uint64_t v = 0;
  for (char c : word) {
    if (c < '0' || c > '9') return false;
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (v > (static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) - digit) / 10) return false;
    v = v * 10 + digit;
  }
  *out = static_cast<int64_t>(v);
  return true;
}

// Normalizes a plain numeric descr ("<f4", "=i8", "|b1") and returns its item size, or 0 when it
// is not one: bool 1; int and uint 1, 2, 4, 8; float 2, 4, 8; complex 8, 16.
inline size_t NormalizeDescr(std::string* descr) {
  const std::string& d = *descr;
  if (d.size() < 3 || d.size() > 4) return 0;
  const char order = d[0], kind = d[1];
  if (order != '<' && order != '|' && order != '=') return 0;
  size_t size = 0;
  for (size_t i = 2; i < d.size(); ++i) {
    if (d[i] < '0' || d[i] > '9') return 0;
    size = size * 10 + static_cast<size_t>(d[i] - '0');
  }
  bool known = false;
  switch (kind) {
    case 'b':
      known = size == 1;
      break;
    case 'i':
    case 'u':
      known = size == 1 || size == 2 || size == 4 || size == 8;
      break;
    case 'f':
      known = size == 2 || size == 4 || size == 8;
      break;
    case 'c':
      known = size == 8 || size == 16;
      break;
    default:
      break;
  }
  if (!known) return 0;
  (*descr)[0] = size == 1 ? '|' : '<';
  return size;
}

inline Status ParseDict(const std::string& text, Header* h, const std::string& where) {
  auto bad = [&](const std::string& what) {
    return errors::InvalidArgument(where + ": malformed .npy header (" + what +
                                   "): " + text.substr(0, 200) + "; save arrays with numpy.save");
  };
  DictReader r(text);
  if (!r.Eat('{')) return bad("no '{'");
  bool have_descr = false, have_order = false, have_shape = false;
  while (!r.Eat('}')) {
    std::string key;
    if (!r.String(&key)) return bad("expected a quoted key or '}'");
    if (!r.Eat(':')) return bad("no ':' after '" + key + "'");
    if (key == "descr") {
      if (!r.String(&h->descr)) {
        return errors::InvalidArgument(where +
                                       ": structured dtypes are not supported; save a plain "
                                       "numeric array, one file per field");
      }
      have_descr = true;
    } else if (key == "fortran_order") {
      const std::string v = r.Word();
      if (v == "True") {
        return errors::InvalidArgument(where +
                                       ": Fortran-ordered arrays are not supported; save "
                                       "numpy.ascontiguousarray(arr)");
      }
      if (v != "False") return bad("fortran_order is '" + v + "', not True or False");
      have_order = true;
    } else if (key == "shape") {
      if (!r.Eat('(')) return bad("shape is not a tuple");
      h->shape.clear();
      while (!r.Eat(')')) {
        const std::string w = r.Word();
        int64_t dim = 0;
        if (!w.empty() && w[0] == '-') return bad("negative dimension " + w + " in shape");
        if (!ParseDim(w, &dim)) return bad("bad dimension '" + w + "' in shape");
        h->shape.push_back(dim);
        if (!r.Eat(',') && !r.Peek(')')) return bad("expected ',' or ')' in shape");
      }
      have_shape = true;
    } else {
      return bad("unknown key '" + key + "'");
    }
    if (!r.Eat(',') && !r.Peek('}')) return bad("expected ',' or '}' after '" + key + "'");
  }
  if (!r.AtEnd()) return bad("text after the closing '}'");
  if (!have_descr) return bad("no 'descr'");
  if (!have_order) return bad("no 'fortran_order'");
  if (!have_shape) return bad("no 'shape'");
  return Status::OK();
}

inline uint32_t LittleEndian(const uint8_t* p, int n) {
  uint32_t v = 0;
  for (int i = 0; i < n; ++i) v |= static_cast<uint32_t>(p[i]) << (8 * i);
  return v;
}

}  // namespace internal

// Parses the preamble and header of the size bytes at p and checks the data's length.
// where names the file in errors.
inline Status ParseHeader(const void* p, size_t size, const std::string& where, Header* out) {
  const uint8_t* b = static_cast<const uint8_t*>(p);
  if (size < 8 || std::memcmp(b, "\x93NUMPY", 6) != 0) {
    return errors::InvalidArgument(
        where + ": not a .npy file (missing \\x93NUMPY magic); save arrays with numpy.save");
  }
  const int major = b[6], minor = b[7];
  if (major < 1 || major > 3 || minor != 0) {
    return errors::InvalidArgument(where + ": unsupported .npy format version " +
                                   std::to_string(major) + "." + std::to_string(minor) +
                                   " (ember reads 1.0, 2.0 and 3.0); save arrays with numpy.save");
  }
  const size_t len_bytes = major == 1 ? 2 : 4;
  const size_t offset = 8 + len_bytes;
  if (size < offset) return errors::InvalidArgument(where + ": truncated .npy header");
  const size_t header_len = internal::LittleEndian(b + 8, static_cast<int>(len_bytes));
  if (header_len > size - offset) {
    return errors::InvalidArgument(where + ": truncated .npy header (" +
                                   std::to_string(header_len) + " bytes declared, " +
                                   std::to_string(size - offset) + " present)");
  }
  Header h;
  // Version 3 only differs from 2 by UTF-8 in the header; the keys read here are ASCII.
  const std::string text(reinterpret_cast<const char*>(b + offset), header_len);
  Status s = internal::ParseDict(text, &h, where);
  if (!s.ok()) return s;
  if (!h.descr.empty() && h.descr[0] == '>') {
    return errors::InvalidArgument(
        where + ": big-endian dtype '" + h.descr +
        "' is not supported; save arr.astype(arr.dtype.newbyteorder('<'))");
  }
  const std::string written = h.descr;
  h.itemsize = internal::NormalizeDescr(&h.descr);
  if (h.itemsize == 0) {
    return errors::InvalidArgument(where + ": dtype '" + written +
                                   "' is not supported; ember reads bool, int, uint, float and "
                                   "complex arrays: convert with arr.astype(numpy.float32) or "
                                   "similar");
  }
  uint64_t elements = 1;
  const uint64_t max_bytes = std::numeric_limits<size_t>::max();
  for (int64_t d : h.shape) {
    const uint64_t dim = static_cast<uint64_t>(d);
    if (dim != 0 && elements > max_bytes / h.itemsize / dim) {
      return errors::InvalidArgument(where + ": shape of " + std::to_string(h.shape.size()) +
                                     " dimensions has more elements than memory can hold");
    }
    elements *= dim;
  }
  h.data_offset = offset + header_len;
  h.data_bytes = static_cast<size_t>(elements) * h.itemsize;
  const size_t have = size - h.data_offset;
  if (have != h.data_bytes) {
    std::string shape = "(";
    for (size_t i = 0; i < h.shape.size(); ++i) {
      shape += (i ? ", " : "") + std::to_string(h.shape[i]);
    }
    shape += h.shape.size() == 1 ? ",)" : ")";
    return errors::InvalidArgument(where + ": data has " + std::to_string(have) +
                                   " bytes but shape " + shape + " of '" + h.descr + "' needs " +
                                   std::to_string(h.data_bytes) +
                                   (have < h.data_bytes ? " (truncated file)" : ""));
  }
  *out = std::move(h);
  return Status::OK();
}

inline Status ParseArray(const void* p, size_t size, const std::string& where, Array* out) {
  Header h;
  Status s = ParseHeader(p, size, where, &h);
  if (!s.ok()) return s;
  const uint8_t* data = static_cast<const uint8_t*>(p) + h.data_offset;
  out->descr = std::move(h.descr);
  out->shape = std::move(h.shape);
  out->data.assign(data, data + h.data_bytes);
  return Status::OK();
}

// The whole file at path; NOT_FOUND when it cannot be opened.
inline StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return errors::NotFound(path + ": " + std::strerror(errno));
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (f.bad()) return errors::DataLoss(path + ": read failed");
  return bytes;
}

inline StatusOr<Array> ReadArray(const std::string& path) {
  StatusOr<std::string> bytes = ReadFile(path);
  if (!bytes.ok()) return bytes.status();
  Array a;
  Status s = ParseArray(bytes->data(), bytes->size(), path, &a);
  if (!s.ok()) return s;
  return a;
}

// A version 1.0 file (2.0 when the header exceeds 65535 bytes), header padded to 64 bytes.
inline std::string Serialize(const std::string& descr, const std::vector<int64_t>& shape,
                             const void* data, size_t bytes) {
  std::string h = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i) {
    h += (i ? ", " : "") + std::to_string(shape[i]);
  }
  h += shape.size() == 1 ? ",), }" : "), }";
  const bool v2 = h.size() + 12 + 64 > 65535;
  const size_t pre = v2 ? 12 : 10;
  h.append((64 - (pre + h.size() + 1) % 64) % 64, ' ');
  h.push_back('\n');
  std::string out = "\x93NUMPY";
  out.push_back(v2 ? '\x02' : '\x01');
  out.push_back('\x00');
  for (size_t i = 0; i < pre - 8; ++i)
    out.push_back(static_cast<char>((h.size() >> (8 * i)) & 0xff));
  out += h;
  if (bytes > 0) out.append(static_cast<const char*>(data), bytes);
  return out;
}

inline Status WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return errors::NotFound("cannot write " + path + ": " + std::strerror(errno));
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  f.close();
  if (!f) return errors::DataLoss("short write to " + path);
  return Status::OK();
}

inline Status WriteArray(const std::string& path, const std::string& descr,
                         const std::vector<int64_t>& shape, const void* data, size_t bytes) {
  return WriteFile(path, Serialize(descr, shape, data, bytes));
}

}  // namespace npy
}  // namespace ember

#endif  // EMBER_NPY_H_
