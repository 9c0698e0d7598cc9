// Reads and writes NumPy .npy files (format 1.0/2.0, little-endian, C order) for the lite
// tools and tests. Header-only so consumers need nothing beyond libember_lite.
#ifndef EMBER_LITE_NPY_H_
#define EMBER_LITE_NPY_H_

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "ember/lite/schema.h"
#include "ember/status.h"

namespace ember {
namespace lite {

struct NpyArray {
  std::string descr;  // "<f4", "|i1", "<i4", ...
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
  size_t num_elements() const {
    size_t n = 1;
    for (int64_t d : shape) n *= static_cast<size_t>(d);
    return n;
  }
};

inline const char* NpyDescr(TensorType t) {
  switch (t) {
    case TensorType::kFloat32:
      return "<f4";
    case TensorType::kInt32:
      return "<i4";
    case TensorType::kInt8:
      return "|i1";
    case TensorType::kUInt8:
      return "|u1";
    case TensorType::kInt64:
      return "<i8";
    case TensorType::kInt16:
      return "<i2";
    case TensorType::kBool:
      return "|b1";
    default:
      return "";
  }
}

inline StatusOr<NpyArray> ReadNpy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return errors::NotFound("cannot open '" + path + "'");
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto bad = [&](const std::string& why) {
    return errors::InvalidArgument("'" + path + "' is not a valid .npy file: " + why);
  };
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0) return bad("no magic");
  size_t hlen, hstart;
  if (bytes[6] == 1) {
    hlen = bytes[8] | (bytes[9] << 8);
    hstart = 10;
  } else {
    if (bytes.size() < 12) return bad("truncated header");
    hlen = bytes[8] | (bytes[9] << 8) | (bytes[10] << 16) | (static_cast<size_t>(bytes[11]) << 24);
    hstart = 12;
  }
  if (hstart + hlen > bytes.size()) return bad("truncated header");
  const std::string h(reinterpret_cast<const char*>(bytes.data() + hstart), hlen);
  NpyArray a;
  auto field = [&](const std::string& key) -> std::string {
    const size_t k = h.find("'" + key + "'");
    if (k == std::string::npos) return "";
    size_t v = h.find(':', k);
    if (v == std::string::npos) return "";
    ++v;
    while (v < h.size() && h[v] == ' ') ++v;
    if (h[v] == '\'') return h.substr(v + 1, h.find('\'', v + 1) - v - 1);
    if (h[v] == '(') return h.substr(v + 1, h.find(')', v) - v - 1);
    return h.substr(v, h.find_first_of(",}", v) - v);
  };
  a.descr = field("descr");
  if (field("fortran_order") == "True") return bad("Fortran order is not supported");
  const std::string shape = field("shape");
  size_t p = 0;
  while (p < shape.size()) {
    while (p < shape.size() && (shape[p] == ' ' || shape[p] == ',')) ++p;
    if (p >= shape.size()) break;
    size_t e = p;
    while (e < shape.size() && shape[e] >= '0' && shape[e] <= '9') ++e;
    if (e == p) return bad("bad shape '" + shape + "'");
    a.shape.push_back(std::stoll(shape.substr(p, e - p)));
    p = e;
  }
  size_t elem = 0;
  if (a.descr.size() >= 3) elem = static_cast<size_t>(std::stoi(a.descr.substr(2)));
  if (elem == 0 || a.descr[0] == '>') return bad("unsupported dtype '" + a.descr + "'");
  const size_t need = a.num_elements() * elem;
  if (bytes.size() - hstart - hlen < need) return bad("data shorter than its shape");
  a.data.assign(bytes.begin() + static_cast<long>(hstart + hlen),
                bytes.begin() + static_cast<long>(hstart + hlen + need));
  return a;
}

inline Status WriteNpy(const std::string& path, const std::string& descr,
                       const std::vector<int64_t>& shape, const void* data, size_t bytes) {
  std::string h = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i) h += std::to_string(shape[i]) + ", ";
  if (shape.size() > 1) h.resize(h.size() - 2);
  if (shape.size() == 1) h.resize(h.size() - 1);
  h += "), }";
  while ((10 + h.size() + 1) % 64 != 0) h += ' ';
  h += '\n';
  std::ofstream f(path, std::ios::binary);
  if (!f) return errors::NotFound("cannot write '" + path + "'");
  const uint8_t pre[10] = {0x93,
                           'N',
                           'U',
                           'M',
                           'P',
                           'Y',
                           1,
                           0,
                           static_cast<uint8_t>(h.size() & 0xff),
                           static_cast<uint8_t>(h.size() >> 8)};
  f.write(reinterpret_cast<const char*>(pre), 10);
  f.write(h.data(), static_cast<std::streamsize>(h.size()));
  f.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  if (!f) return errors::DataLoss("short write to '" + path + "'");
  return Status::OK();
}

}  // namespace lite
}  // namespace ember

#endif  // EMBER_LITE_NPY_H_
