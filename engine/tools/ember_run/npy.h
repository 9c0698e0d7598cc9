// NumPy .npy files <-> Tensor: ember/npy.h parses the bytes, this maps descr <-> DataType for
// float32, int32, int64, int8, uint8 and bool; other dtypes are rejected with the conversion.
#ifndef EMBER_TOOLS_EMBER_RUN_NPY_H_
#define EMBER_TOOLS_EMBER_RUN_NPY_H_

#include <string>

#include "ember/status.h"
#include "ember/tensor.h"

namespace ember {
namespace npy {

Status Parse(const std::string& bytes, const std::string& where, Tensor* out);
Status Read(const std::string& path, Tensor* out);
StatusOr<std::string> Serialize(const Tensor& t);
Status Write(const std::string& path, const Tensor& t);

}  // namespace npy
}  // namespace ember

#endif  // EMBER_TOOLS_EMBER_RUN_NPY_H_
