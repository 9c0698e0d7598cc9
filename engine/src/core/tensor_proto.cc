#include "core/tensor_proto.h"

#include <cstring>

namespace ember {

namespace {
struct NamedType {
  int value;
  const char* name;
};
constexpr NamedType kTypeNames[] = {
    {1, "DT_FLOAT"},    {2, "DT_DOUBLE"},      {3, "DT_INT32"},   {4, "DT_UINT8"},
    {5, "DT_INT16"},    {6, "DT_INT8"},        {7, "DT_STRING"},  {8, "DT_COMPLEX64"},
    {9, "DT_INT64"},    {10, "DT_BOOL"},       {11, "DT_QINT8"},  {12, "DT_QUINT8"},
    {13, "DT_QINT32"},  {14, "DT_BFLOAT16"},   {15, "DT_QINT16"}, {16, "DT_QUINT16"},
    {17, "DT_UINT16"},  {18, "DT_COMPLEX128"}, {19, "DT_HALF"},   {20, "DT_RESOURCE"},
    {21, "DT_VARIANT"}, {22, "DT_UINT32"},     {23, "DT_UINT64"},
};

template <typename T, typename V>
void Fill(Tensor* t, const std::vector<V>& vals) {
  T* out = t->data<T>();
  int64_t n = t->NumElements();
  for (int64_t i = 0; i < n; ++i) {
    size_t k = static_cast<size_t>(i) < vals.size() ? static_cast<size_t>(i) : vals.size() - 1;
    out[i] = static_cast<T>(vals[k]);
  }
}
}  // namespace

std::string DataTypeProtoName(int value) {
  int base = value > 100 ? value - 100 : value;
  for (const NamedType& t : kTypeNames) {
    if (t.value == base) return std::string(t.name) + (value > 100 ? "_REF" : "");
  }
  return "";
}

Status DataTypeFromProto(int64_t value, const std::string& where, DataType* out) {
  int64_t base = value > 100 ? value - 100 : value;
  if (base == 0) {
    *out = DataType::kInvalid;
    return Status::OK();
  }
  if (base < 0 || base > 1000 || !DataTypeIsValid(static_cast<int>(base))) {
    std::string name = DataTypeProtoName(static_cast<int>(value));
    return errors::Unimplemented(where + ": DataType " + std::to_string(value) +
                                 (name.empty() ? "" : " (" + name + ")") +
                                 " is not supported by ember; use float32, int32, int64, int8, "
                                 "uint8 or bool");
  }
  *out = static_cast<DataType>(base);
  return Status::OK();
}

Status TensorFromFields(const TensorProtoFields& f, const std::string& where, Tensor* out) {
  DataType dt;
  EMBER_RETURN_IF_ERROR(DataTypeFromProto(f.dtype, where, &dt));
  if (dt == DataType::kInvalid) return errors::InvalidArgument(where + ": tensor has no dtype");
  if (f.shape.unknown_rank)
    return errors::InvalidArgument(where + ": tensor shape has unknown rank");
  for (int64_t d : f.shape.dims) {
    if (d < 0) {
      return errors::InvalidArgument(where + ": tensor dimension " + std::to_string(d) +
                                     " must be >= 0");
    }
  }
  StatusOr<TensorShape> shape = TensorShape::FromDims(f.shape.dims);
  if (!shape.ok()) return errors::InvalidArgument(where + ": " + shape.status().message());
  int64_t n = shape->num_elements();
  size_t elem = DataTypeSize(dt);
  if (dt == DataType::kString || dt == DataType::kResource) {
    // No storage for strings; the graph can still load if nothing computes on them.
    *out = Tensor(dt, *shape);
    return Status::OK();
  }
  if (n > kMaxGraphTensorBytes / static_cast<int64_t>(elem)) {
    return errors::InvalidArgument(where + ": tensor of shape " + shape->DebugString() +
                                   " is larger than 1 GiB");
  }
  if (f.has_content) {
    if (f.content.size() != static_cast<size_t>(n) * elem) {
      return errors::InvalidArgument(where + ": tensor_content has " +
                                     std::to_string(f.content.size()) + " bytes, but " +
                                     DataTypeString(dt) + " shape " + shape->DebugString() +
                                     " needs " + std::to_string(static_cast<size_t>(n) * elem));
    }
    Tensor t(dt, *shape);
    if (n > 0) std::memcpy(t.raw_data(), f.content.data(), f.content.size());
    *out = t;
    return Status::OK();
  }
  Tensor t(dt, *shape);
  size_t count = 0;
  switch (dt) {
    case DataType::kFloat:
      count = f.float_val.size();
      break;
    case DataType::kDouble:
      count = f.double_val.size();
      break;
    case DataType::kInt64:
      count = f.int64_val.size();
      break;
    case DataType::kBool:
      count = f.bool_val.size();
      break;
    default:
      count = f.int_val.size();
      break;
  }
  if (count > static_cast<size_t>(n)) {
    return errors::InvalidArgument(where + ": tensor has " + std::to_string(count) +
                                   " values but shape " + shape->DebugString() + " holds " +
                                   std::to_string(n));
  }
  if (count > 0) {
    switch (dt) {
      case DataType::kFloat:
        Fill<float>(&t, f.float_val);
        break;
      case DataType::kDouble:
        Fill<double>(&t, f.double_val);
        break;
      case DataType::kInt32:
        Fill<int32_t>(&t, f.int_val);
        break;
      case DataType::kUInt8:
        Fill<uint8_t>(&t, f.int_val);
        break;
      case DataType::kInt16:
        Fill<int16_t>(&t, f.int_val);
        break;
      case DataType::kInt8:
        Fill<int8_t>(&t, f.int_val);
        break;
      case DataType::kInt64:
        Fill<int64_t>(&t, f.int64_val);
        break;
      case DataType::kBool: {
        bool* b = t.data<bool>();
        for (int64_t i = 0; i < n; ++i) {
          size_t k = static_cast<size_t>(i) < count ? static_cast<size_t>(i) : count - 1;
          b[i] = f.bool_val[k] != 0;
        }
        break;
      }
      default:
        break;
    }
  }
  *out = t;
  return Status::OK();
}

}  // namespace ember
