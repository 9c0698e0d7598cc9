// NumPy .npy files for the lite tools and tests: the names they use, over ember/npy.h (the one
// parser, which needs nothing beyond ember/status.h, so consumers need only libember_lite).
#ifndef EMBER_LITE_NPY_H_
#define EMBER_LITE_NPY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "ember/lite/schema.h"
#include "ember/npy.h"
#include "ember/status.h"

namespace ember {
namespace lite {

using NpyArray = npy::Array;  // descr ("<f4", "|i1", ...), shape, data

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

inline StatusOr<NpyArray> ReadNpy(const std::string& path) { return npy::ReadArray(path); }

inline Status WriteNpy(const std::string& path, const std::string& descr,
                       const std::vector<int64_t>& shape, const void* data, size_t bytes) {
  return npy::WriteArray(path, descr, shape, data, bytes);
}

}  // namespace lite
}  // namespace ember

#endif  // EMBER_LITE_NPY_H_
