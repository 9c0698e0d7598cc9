#include "npy.h"

#include <cstring>
#include <vector>

#include "ember/npy.h"

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

}  // namespace

Status Parse(const std::string& bytes, const std::string& where, Tensor* out) {
  Header h;
  Status s = ParseHeader(bytes.data(), bytes.size(), where, &h);
  if (!s.ok()) return s;
  DataType dtype = DataType::kInvalid;
  for (const Descr& d : kDescrs) {
    if (h.descr == d.code) dtype = d.dtype;
  }
  if (dtype == DataType::kInvalid) {
    return errors::InvalidArgument(
        where + ": dtype '" + h.descr +
        "' is not supported; ember-run reads float32, int32, int64, int8, uint8 and bool "
        "(little-endian): convert with arr.astype(numpy.float32) or similar");
  }
  StatusOr<TensorShape> shape = TensorShape::FromDims(h.shape);
  if (!shape.ok()) return errors::InvalidArgument(where + ": " + shape.status().message());
  Tensor t(dtype, *shape);
  if (h.data_bytes > 0) std::memcpy(t.raw_data(), bytes.data() + h.data_offset, h.data_bytes);
  *out = t;
  return Status::OK();
}

Status Read(const std::string& path, Tensor* out) {
  StatusOr<std::string> bytes = ReadFile(path);
  if (!bytes.ok()) return bytes.status();
  return Parse(*bytes, path, out);
}

StatusOr<std::string> Serialize(const Tensor& t) {
  const char* code = nullptr;
  for (const Descr& d : kDescrs) {
    if (d.dtype == t.dtype()) code = d.code;
  }
  if (code == nullptr) {
    return errors::Unimplemented("cannot write a " + DataTypeString(t.dtype()) + " tensor as .npy");
  }
  std::vector<int64_t> shape;
  for (int i = 0; i < t.dims(); ++i) shape.push_back(t.dim_size(i));
  return Serialize(code, shape, t.raw_data(), t.TotalBytes());
}

Status Write(const std::string& path, const Tensor& t) {
  StatusOr<std::string> bytes = Serialize(t);
  if (!bytes.ok()) return bytes.status();
  return WriteFile(path, *bytes);
}

}  // namespace npy
}  // namespace ember
