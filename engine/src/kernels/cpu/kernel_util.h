// Helpers shared by the CPU kernels: error messages that name the node, dtype dispatch,
// NumPy-style broadcasting, convolution padding arithmetic and shape-function building blocks.
#ifndef EMBER_KERNELS_CPU_KERNEL_UTIL_H_
#define EMBER_KERNELS_CPU_KERNEL_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/op_kernel.h"
#include "ember/graph_def.h"
#include "ember/status.h"
#include "ember/tensor.h"
#include "ember/types.h"

namespace ember {
namespace kernels {

// `message` followed by TensorFlow's node suffix, on one line: "... [[{{node add}}]]".
Status NodeError(const NodeDef& node, Code code, const std::string& message);
inline Status InvalidArg(const NodeDef& node, const std::string& message) {
  return NodeError(node, Code::kInvalidArgument, message);
}

// "[2,3]" for a shape given as dims.
std::string DimsString(const std::vector<int64_t>& dims);

// Calls f(T{}) with T the C++ type of `dt`; returns false when dt is not in the set.
// Numeric: float, double, int32, int64, int8, uint8, int16.
template <typename F>
bool DispatchNumeric(DataType dt, F&& f) {
  switch (dt) {
    case DataType::kFloat:
      f(float{});
      return true;
    case DataType::kDouble:
      f(double{});
      return true;
    case DataType::kInt32:
      f(int32_t{});
      return true;
    case DataType::kInt64:
      f(int64_t{});
      return true;
    case DataType::kInt8:
      f(int8_t{});
      return true;
    case DataType::kUInt8:
      f(uint8_t{});
      return true;
    case DataType::kInt16:
      f(int16_t{});
      return true;
    default:
      return false;
  }
}
// Numeric plus bool.
template <typename F>
bool DispatchPod(DataType dt, F&& f) {
  if (dt == DataType::kBool) {
    f(bool{});
    return true;
  }
  return DispatchNumeric(dt, f);
}
template <typename F>
bool DispatchFloat(DataType dt, F&& f) {
  switch (dt) {
    case DataType::kFloat:
      f(float{});
      return true;
    case DataType::kDouble:
      f(double{});
      return true;
    default:
      return false;
  }
}
// int32 or int64 index tensors ("Tidx", "Tshape", "Tperm").
template <typename F>
bool DispatchIndex(DataType dt, F&& f) {
  switch (dt) {
    case DataType::kInt32:
      f(int32_t{});
      return true;
    case DataType::kInt64:
      f(int64_t{});
      return true;
    default:
      return false;
  }
}

// Reads a rank-0 or rank-1 int32/int64 tensor into `out`.
Status ReadIndexVector(const NodeDef& node, const Tensor& t, const char* what,
                       std::vector<int64_t>* out);

// Records "Value for attr 'T' of <dt> is not in the list of allowed values: ..." on `ctx`
// when `dt` is not accepted. Returns true when it is accepted.
bool CheckTypeAllowed(OpKernelConstruction* ctx, const char* attr, DataType dt, bool ok,
                      const char* allowed);

// ---- uninitialized variables ----
// A reference variable read before its first Assign outputs this marker (the executor requires
// every output to be set); consumers that check for it fail with FAILED_PRECONDITION
// "Attempting to use uninitialized value <input>", as TensorFlow's executor does.
const Tensor& UninitializedMarker(DataType dtype);
bool IsUninitializedMarker(const Tensor& t);
// Sets that error on ctx and returns true when input i is the marker.
bool FailIfUninitialized(OpKernelContext* ctx, int i);

// ---- broadcasting ----
// NumPy broadcasting of two shapes; false when incompatible.
bool BroadcastShapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                     std::vector<int64_t>* out);

// Element strides of `in` (right-aligned to `out_rank` dims) with 0 on broadcast dims.
std::vector<int64_t> BroadcastStrides(const std::vector<int64_t>& in,
                                      const std::vector<int64_t>& out);

// ---- convolution / pooling geometry ----
enum class Padding { kSame, kValid, kExplicit };
// SAME or VALID ("padding"); anything else is UNIMPLEMENTED (the pooling ops).
Status ParsePadding(const OpKernelConstruction* ctx, Padding* out);
// A convolution's padding: SAME, VALID, or EXPLICIT with its amounts from "explicit_paddings"
// ([before, after] per NHWC dimension; batch and depth 0), as TensorFlow's Conv2D and
// DepthwiseConv2dNative take them. Errors name the node and the attr.
struct ConvPadding {
  Padding kind = Padding::kValid;
  int64_t top = 0, bottom = 0, left = 0, right = 0;  // EXPLICIT only
};
Status ParseConvPadding(const NodeDef& node, ConvPadding* out);
// Output size and padding before, as TensorFlow's GetWindowedOutputSizeVerbose; `before` and
// `after` are the amounts of an EXPLICIT padding.
Status WindowedOutputSize(const NodeDef& node, int64_t in, int64_t k, int64_t dilation,
                          int64_t stride, Padding padding, int64_t* out, int64_t* pad_before,
                          int64_t before = 0, int64_t after = 0);
// Reads a 4-element NHWC list attr ("strides", "dilations", "ksize") into (h, w);
// batch and depth entries must be 1.
Status ReadSpatialAttr(OpKernelConstruction* ctx, const char* attr, int64_t fallback, int64_t* h,
                       int64_t* w);
// data_format must be NHWC (ember's CPU kernels implement only that layout).
Status RequireNHWC(OpKernelConstruction* ctx);

// ---- shape functions ----
ShapeFn UnchangedShape();
ShapeFn BroadcastBinaryShape();
PartialShape UnknownShape();
PartialShape KnownShape(std::vector<int64_t> dims);

}  // namespace kernels
}  // namespace ember

#endif  // EMBER_KERNELS_CPU_KERNEL_UTIL_H_
