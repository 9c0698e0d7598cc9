// MIRROR_PAD (tf.pad with mode "REFLECT" or "SYMMETRIC"), as LiteRT's kernel: byte moves of
// float32, int8, uint8, int32 and int64 (a quantized output keeps the input's codes), constant
// paddings [rank, 2] of int32 or int64. REFLECT mirrors around the edge element (pads up to
// dim - 1), SYMMETRIC repeats it (pads up to dim), as TensorFlow requires; larger pads would
// read outside the input in LiteRT and are refused here. Each output coordinate maps to its input
// coordinate through a table per dimension made at Prepare.
#include <cstdint>
#include <cstring>
#include <string>

#include "lite/kernels.h"
#include "lite/kernels_misc.h"

namespace ember {
namespace lite {
namespace {

constexpr size_t kMaxRank = 8;

// node->scratch32 holds, for each dimension d, out_shape[d] input coordinates starting at
// node->in_shape6[d]; node->out_shape6 is the output shape, node->axes the input strides.
template <typename T>
Status EvalMirrorPad(NodeState* node) {
  const T* x = node->t.In<T>(0);
  T* y = node->t.Out<T>(0);
  const size_t rank = node->out_shape6.size();
  const std::vector<int32_t>& out = node->out_shape6;
  if (node->t.out[0]->num_elements == 0) return Status::OK();
  const int32_t* map[kMaxRank] = {};
  for (size_t d = 0; d < rank; ++d) map[d] = node->scratch32.data() + node->in_shape6[d];
  const int32_t last = out[rank - 1];
  const int32_t* last_map = map[rank - 1];
  int32_t idx[kMaxRank] = {};
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < rank; ++d) rows *= out[d];
  for (int64_t r = 0; r < rows; ++r) {
    int64_t base = 0;
    for (size_t d = 0; d + 1 < rank; ++d) {
      base += static_cast<int64_t>(map[d][idx[d]]) * node->axes[d];
    }
    const T* src = x + base;
    for (int32_t i = 0; i < last; ++i) y[i] = src[last_map[i]];
    y += last;
    for (size_t d = rank - 1; d-- > 0;) {
      if (++idx[d] < out[d]) break;
      idx[d] = 0;
    }
  }
  return Status::OK();
}

int64_t PadAt(const TensorDef& p, size_t i) {
  return p.type == TensorType::kInt32 ? reinterpret_cast<const int32_t*>(p.data)[i]
                                      : reinterpret_cast<const int64_t*>(p.data)[i];
}

}  // namespace

Status PrepareMirrorPad(NodeState* node) {
  EMBER_RETURN_IF_ERROR(misc::CheckIo(*node, 2, 2));
  const TensorDef& in = *node->t.in[0];
  const TensorDef& pads = *node->t.in[1];
  const TensorDef& out = *node->t.out[0];
  const size_t elem = TensorTypeSize(in.type);
  if (in.type != TensorType::kFloat32 && in.type != TensorType::kInt8 &&
      in.type != TensorType::kUInt8 && in.type != TensorType::kInt32 &&
      in.type != TensorType::kInt64) {
    return errors::Unimplemented(node->what + ": input '" + in.name + "' is " +
                                 TensorTypeName(in.type) +
                                 "; FLOAT32, INT8, UINT8, INT32 and INT64 are supported");
  }
  EMBER_RETURN_IF_ERROR(CheckType(*node, out, in.type, "output"));
  const int8_t mode = node->op->options.mirror_mode;
  if (mode != 0 && mode != 1) {
    return errors::InvalidArgument(node->what + ": unknown mode " + std::to_string(mode) +
                                   " (0 REFLECT and 1 SYMMETRIC are defined)");
  }
  const size_t rank = in.shape.size();
  if (rank == 0 || rank > kMaxRank) {
    return errors::Unimplemented(node->what + ": input '" + in.name + "' has rank " +
                                 std::to_string(rank) + "; ranks 1-8 are supported");
  }
  if (pads.type != TensorType::kInt32 && pads.type != TensorType::kInt64) {
    return errors::InvalidArgument(node->what + ": paddings '" + pads.name + "' are " +
                                   TensorTypeName(pads.type) + ", expected INT32 or INT64");
  }
  if (pads.shape != std::vector<int32_t>{static_cast<int32_t>(rank), 2}) {
    return errors::InvalidArgument(node->what + ": paddings '" + pads.name + "' have shape " +
                                   ShapeString(pads.shape) + ", expected [" + std::to_string(rank) +
                                   ",2]");
  }
  if (pads.data == nullptr) {
    return errors::Unimplemented(node->what + ": paddings '" + pads.name +
                                 "' are computed at run time; ember lite needs constant paddings");
  }
  if (!in.quant.empty() || !out.quant.empty()) {
    if (in.quant.scale != out.quant.scale || in.quant.zero_point != out.quant.zero_point) {
      return errors::Unimplemented(node->what + ": output '" + out.name +
                                   "' is quantized unlike input '" + in.name +
                                   "'; MIRROR_PAD copies codes");
    }
  }
  const int64_t offset = mode == 0 ? 1 : 0;  // REFLECT skips the edge element
  std::vector<int32_t> expect(rank);
  node->in_shape6.assign(rank, 0);
  node->axes.assign(rank, 1);
  node->scratch32.clear();
  for (size_t d = rank; d-- > 0;) {
    if (d + 1 < rank) node->axes[d] = node->axes[d + 1] * in.shape[d + 1];
  }
  for (size_t d = 0; d < rank; ++d) {
    const int64_t lo = PadAt(pads, 2 * d), hi = PadAt(pads, 2 * d + 1);
    const int64_t size = in.shape[d];
    const int64_t limit = size - offset;
    if (lo < 0 || hi < 0 || lo > limit || hi > limit) {
      return errors::InvalidArgument(node->what + ": paddings [" + std::to_string(lo) + "," +
                                     std::to_string(hi) + "] of dimension " + std::to_string(d) +
                                     " (size " + std::to_string(size) + ") must be between 0 and " +
                                     std::to_string(limit < 0 ? 0 : limit) + " in " +
                                     (mode == 0 ? "REFLECT" : "SYMMETRIC") + " mode");
    }
    const int64_t total = size + lo + hi;
    if (total > (int64_t{1} << 31) - 1) {
      return errors::InvalidArgument(node->what + ": padded dimension " + std::to_string(d) +
                                     " is too large");
    }
    expect[d] = static_cast<int32_t>(total);
    node->in_shape6[d] = static_cast<int32_t>(node->scratch32.size());
    for (int64_t o = 0; o < total; ++o) {
      int64_t i = o - lo;
      if (i < 0) i = -i - 1 + offset;                // mirrored before the start
      if (i >= size) i = 2 * size - i - 1 - offset;  // mirrored after the end
      node->scratch32.push_back(static_cast<int32_t>(i));
    }
  }
  EMBER_RETURN_IF_ERROR(CheckShape(*node, out, expect, "output"));
  node->out_shape6 = expect;
  switch (elem) {
    case 1:
      node->eval = EvalMirrorPad<uint8_t>;
      break;
    case 4:
      node->eval = EvalMirrorPad<uint32_t>;
      break;
    default:
      node->eval = EvalMirrorPad<uint64_t>;
      break;
  }
  return Status::OK();
}

}  // namespace lite
}  // namespace ember
