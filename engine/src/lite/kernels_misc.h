// Helpers shared by kernels_misc.cc and kernels_misc_array.cc.
#ifndef EMBER_SRC_LITE_KERNELS_MISC_H_
#define EMBER_SRC_LITE_KERNELS_MISC_H_

#include <cstdint>
#include <vector>

#include "lite/kernels.h"

namespace ember {
namespace lite {
namespace misc {

// Exactly one output and [min_in, max_in] present inputs.
Status CheckIo(const NodeState& node, size_t min_in, size_t max_in);
// UNIMPLEMENTED naming the operator and the type.
Status Unsupported(const NodeState& node, TensorType t);
// NumPy broadcast of two shapes; false when incompatible.
bool BroadcastShape(const std::vector<int32_t>& a, const std::vector<int32_t>& b,
                    std::vector<int32_t>* out);
// Element strides of `in` right-aligned to `out`, 0 on broadcast dims.
std::vector<int64_t> BroadcastStrides(const std::vector<int32_t>& in,
                                      const std::vector<int32_t>& out);

}  // namespace misc
}  // namespace lite
}  // namespace ember

#endif  // EMBER_SRC_LITE_KERNELS_MISC_H_
