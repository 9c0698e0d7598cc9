#include "npy.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

namespace ember {
namespace npy {

namespace {

struct Descr {
  const char* code;
  DataType dtype;
};
constexpr Descr kDescrs[] = {
    {"<f4", DataType::kFloat}, {"<i4", DataType::kInt32}, {"<i8", DataType::kInt64},
    {"|i1", DataType::kInt8},  {"|u1", DataType::kUInt8}, {"|b1", DataType::kBool},
};

// The value of 'key' in the header dict, up to the next top-level ',' or '}'.
bool FindValue(const std::string& header, const std::string& key, std::string* out) {
  size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) return false;
  size_t colon = header.find(':', k);
  if (colon == std::string::npos) return false;
  size_t i = colon + 1;
  while (i < header.size() && header[i] == ' ') ++i;
  size_t end = i;
  int depth = 0;
  while (end < header.size()) {
    char c = header[end];
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (depth == 0 && (c == ',' || c == '}')) break;
    ++end;
    if (depth < 0) return false;
  }
  if (depth == 0 && end > i && header[end - 1] == ')') {
    *out = header.substr(i, end - i);
  } else {
    *out = header.substr(i, end - i);
  }
  while (!out->empty() && out->back() == ' ') out->pop_back();
  return true;
}

}  // namespace

Status Parse(const std::string& bytes, const std::string& where, Tensor* out) {
  auto bad = [&](const std::string& what) { return errors::InvalidArgument(where + ": " + what); };
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) {
    return bad("not a .npy file (missing \\x93NUMPY magic); save arrays with numpy.save");
  }
  int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len, offset;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) |
                 (static_cast<size_t>(static_cast<unsigned char>(bytes[9])) << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return bad("truncated .npy header");
    header_len = 0;
    for (int i = 0; i < 4; ++i)
      header_len |=
          static_cast<size_t>(static_cast<unsigned char>(bytes[8 + static_cast<size_t>(i)]))
          << (8 * i);
    offset = 12;
  } else {
    return bad("unsupported .npy format version " + std::to_string(major));
  }
  if (header_len > bytes.size() - offset) return bad("truncated .npy header");
  std::string header = bytes.substr(offset, header_len);
  std::string descr, fortran, shape_text;
  if (!FindValue(header, "descr", &descr) || !FindValue(header, "fortran_order", &fortran) ||
      !FindValue(header, "shape", &shape_text)) {
    return bad("malformed .npy header: " + header);
  }
  if (descr.size() >= 2 && descr.front() == '\'' && descr.back() == '\'') {
    descr = descr.substr(1, descr.size() - 2);
  }
  DataType dtype = DataType::kInvalid;
  for (const Descr& d : kDescrs) {
    if (descr == d.code || (descr.size() == 3 && descr[0] == '=' &&
                            descr.substr(1) == std::string(d.code).substr(1))) {
      dtype = d.dtype;
    }
  }
  if (dtype == DataType::kInvalid) {
    return bad("dtype '" + descr +
               "' is not supported; ember-run reads float32, int32, int64, int8, uint8 and bool "
               "(little-endian): convert with arr.astype(numpy.float32) or similar");
  }
  if (fortran != "False") {
    return bad("Fortran-ordered arrays are not supported; save numpy.ascontiguousarray(arr)");
  }
  if (shape_text.size() < 2 || shape_text.front() != '(' || shape_text.back() != ')') {
    return bad("malformed shape in .npy header: " + shape_text);
  }
  std::vector<int64_t> dims;
  std::stringstream ss(shape_text.substr(1, shape_text.size() - 2));
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t b = item.find_first_not_of(' ');
    if (b == std::string::npos) continue;
    item = item.substr(b);
    while (!item.empty() && (item.back() == ' ' || item.back() == 'L')) item.pop_back();
    char* end = nullptr;
    long long v = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < 0) return bad("bad dimension '" + item + "' in shape");
    dims.push_back(v);
  }
  StatusOr<TensorShape> shape = TensorShape::FromDims(dims);
  if (!shape.ok()) return bad(shape.status().message());
  size_t data_offset = offset + header_len;
  size_t elem = DataTypeSize(dtype);
  size_t have = bytes.size() - data_offset;
  if (shape->num_elements() < 0 || static_cast<uint64_t>(shape->num_elements()) > have / elem ||
      static_cast<size_t>(shape->num_elements()) * elem != have) {
    return bad(
        "data has " + std::to_string(have) + " bytes but shape " + shape->DebugString() + " of " +
        DataTypeString(dtype) + " needs " +
        std::to_string(static_cast<double>(shape->num_elements()) * static_cast<double>(elem)));
  }
  Tensor t(dtype, *shape);
  if (have > 0) std::memcpy(t.raw_data(), bytes.data() + data_offset, have);
  *out = t;
  return Status::OK();
}

Status Read(const std::string& path, Tensor* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return errors::NotFound(path + ": " + std::strerror(errno));
  std::ostringstream buf;
  buf << in.rdbuf();
  return Parse(buf.str(), path, out);
}

StatusOr<std::string> Serialize(const Tensor& t) {
  const char* code = nullptr;
  for (const Descr& d : kDescrs) {
    if (d.dtype == t.dtype()) code = d.code;
  }
  if (code == nullptr) {
    return errors::Unimplemented("cannot write a " + DataTypeString(t.dtype()) + " tensor as .npy");
  }
  std::string shape = "(";
  for (int i = 0; i < t.dims(); ++i) {
    shape += std::to_string(t.dim_size(i));
    if (t.dims() == 1 || i + 1 < t.dims()) shape += ",";
    if (i + 1 < t.dims()) shape += " ";
  }
  shape += ")";
  std::string header =
      std::string("{'descr': '") + code + "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  std::string out = "\x93NUMPY";
  out.push_back('\x01');
  out.push_back('\x00');
  out.push_back(static_cast<char>(header.size() & 0xff));
  out.push_back(static_cast<char>((header.size() >> 8) & 0xff));
  out += header;
  if (t.TotalBytes() > 0) out.append(static_cast<const char*>(t.raw_data()), t.TotalBytes());
  return out;
}

Status Write(const std::string& path, const Tensor& t) {
  StatusOr<std::string> bytes = Serialize(t);
  if (!bytes.ok()) return bytes.status();
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return errors::NotFound("cannot write " + path + ": " + std::strerror(errno));
  f.write(bytes->data(), static_cast<std::streamsize>(bytes->size()));
  if (!f) return errors::DataLoss("short write to " + path);
  return Status::OK();
}

}  // namespace npy
}  // namespace ember
