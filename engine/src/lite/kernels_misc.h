// Helpers shared by kernels_misc.cc, kernels_misc_array.cc and kernels_int8_misc.cc.
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

// Visits every output element with the offsets of up to three broadcast inputs.
template <typename F>
void ForEachBroadcast(const std::vector<int32_t>& out, const std::vector<std::vector<int64_t>>& st,
                      F f) {
  int64_t total = 1;
  for (int32_t d : out) total *= d;
  const size_t r = out.size();
  std::vector<int64_t> idx(r, 0), off(st.size(), 0);
  for (int64_t i = 0; i < total; ++i) {
    f(i, off.data());
    for (size_t d = r; d-- > 0;) {
      for (size_t k = 0; k < st.size(); ++k) off[k] += st[k][d];
      if (++idx[d] < out[d]) break;
      for (size_t k = 0; k < st.size(); ++k) off[k] -= st[k][d] * out[d];
      idx[d] = 0;
    }
  }
}

}  // namespace misc
}  // namespace lite
}  // namespace ember

#endif  // EMBER_SRC_LITE_KERNELS_MISC_H_
