// SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND (tf.space_to_batch_nd / batch_to_space_nd: TensorFlow
// wraps a dilated convolution of a dynamic-batch model in them, Keras's Conv1D and Conv2D with a
// dilation_rate), as LiteRT's reference kernels (reference_ops.h SpaceToBatchND, BatchToSpaceND):
// NHWC input of rank 4 with a [2] block_shape and [2, 2] paddings / crops, or of rank 3
// [b, h, c], taken as [b, h, 1, c] with a [1] block_shape and [1, 2] paddings / crops. With B the
// space side's batch, bh x bw the block and the batch-side image (sh * bw + sw) * B + b:
//
//   SPACE_TO_BATCH_ND: out[(sh * bw + sw) * B + b, y, x] = in[b, y * bh + sh - top, x * bw + sw -
//   left] BATCH_TO_SPACE_ND: out[b, y * bh + sh - top, x * bw + sw - left] = in[(sh * bw + sw) * B
//   + b, y, x]
//
// (top and left the paddings' or the crops' first values). Each pixel's channels are contiguous on
// both sides, so Eval copies runs of bytes (whole row runs when bw is 1, Conv1D's case):
// float32, int8, uint8, int16, int32 and int64, the types LiteRT's kernels take. SPACE_TO_BATCH_ND
// fills the padding with the output zero point's byte, as LiteRT does (0 but for int8 and uint8;
// int16 must have zero point 0). block_shape and paddings / crops must be constant INT32 tensors
// (the converter writes them so); shapes, values and quantization are checked at Prepare.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "lite/kernels.h"
#include "lite/kernels_index.h"

namespace ember {
namespace lite {
namespace {

// The node's geometry: n, ih, iw the space side's batch, height and width (iw 1 for rank 3);
// oh, ow the batch side's height and width; ic the depth; kh, kw the block; pad_h, pad_w the
// paddings' (crops') top and left; out_zp the padding byte.

// Batch-side columns [*c0, *c1) of a row whose block column is `sw` lie inside the space side
// (space column c * kw + sw - pad_w).
void ColumnRange(const NodeState& node, int sw, int64_t* c0, int64_t* c1) {
  const int64_t first = int64_t{node.pad_w} - sw;          // c * kw >= first
  const int64_t end = int64_t{node.iw} + node.pad_w - sw;  // c * kw < end
  *c0 = std::min<int64_t>(first > 0 ? (first + node.kw - 1) / node.kw : 0, node.ow);
  *c1 = std::max(*c0, std::min<int64_t>(end > 0 ? (end + node.kw - 1) / node.kw : 0, node.ow));
}

// Calls run(b, y, row, c0, c1, sw) for every batch-side row `row`, in order: b and y are the
// space side's image and row (y -1 where the row is padding, or cropped), [c0, c1) the columns
// inside the space side (ColumnRange) and sw the block column.
template <typename Fn>
void ForEachBatchRow(const NodeState& node, Fn run) {
  const int64_t images = int64_t{node.n} * node.kh * node.kw;
  int64_t row = 0;
  for (int64_t ob = 0; ob < images; ++ob) {
    const int64_t b = ob % node.n, s = ob / node.n;
    const int sh = static_cast<int>(s / node.kw), sw = static_cast<int>(s % node.kw);
    int64_t c0, c1;
    ColumnRange(node, sw, &c0, &c1);
    for (int r = 0; r < node.oh; ++r, ++row) {
      const int64_t y = int64_t{r} * node.kh + sh - node.pad_h;
      run(b, y >= 0 && y < node.ih ? y : -1, row, c0, c1, sw);
    }
  }
}

struct Strides {
  size_t pixel, space_row, space_image, batch_row;
};

Strides StridesOf(const NodeState& node) {
  const size_t pixel = static_cast<size_t>(node.ic) * TensorTypeSize(node.t.in[0]->type);
  const size_t space_row = static_cast<size_t>(node.iw) * pixel;
  return {pixel, space_row, static_cast<size_t>(node.ih) * space_row,
          static_cast<size_t>(node.ow) * pixel};
}

Status EvalSpaceToBatch(NodeState* node) {
  if (node->t.out[0]->num_elements == 0) return Status::OK();
  const Strides st = StridesOf(*node);
  const uint8_t* in = node->t.in_data[0];
  uint8_t* out = node->t.out_data[0];
  const int fill = node->out_zp;
  const int kw = node->kw;
  const size_t step = static_cast<size_t>(kw) * st.pixel;
  ForEachBatchRow(*node, [&](int64_t b, int64_t y, int64_t row, int64_t c0, int64_t c1, int sw) {
    uint8_t* dst = out + static_cast<size_t>(row) * st.batch_row;
    if (y < 0) {
      std::memset(dst, fill, st.batch_row);
      return;
    }
    const size_t head = static_cast<size_t>(c0) * st.pixel;
    const size_t body = static_cast<size_t>(c1 - c0) * st.pixel;
    std::memset(dst, fill, head);
    std::memset(dst + head + body, fill, st.batch_row - head - body);
    if (c1 == c0) return;
    const uint8_t* src = in + static_cast<size_t>(b) * st.space_image +
                         static_cast<size_t>(y) * st.space_row +
                         static_cast<size_t>(c0 * kw + sw - node->pad_w) * st.pixel;
    if (kw == 1) {
      std::memcpy(dst + head, src, body);
    } else {
      for (int64_t c = c0; c < c1; ++c, src += step) {
        std::memcpy(dst + static_cast<size_t>(c) * st.pixel, src, st.pixel);
      }
    }
  });
  return Status::OK();
}

Status EvalBatchToSpace(NodeState* node) {
  if (node->t.out[0]->num_elements == 0) return Status::OK();
  const Strides st = StridesOf(*node);
  const uint8_t* in = node->t.in_data[0];
  uint8_t* out = node->t.out_data[0];
  const int kw = node->kw;
  const size_t step = static_cast<size_t>(kw) * st.pixel;
  ForEachBatchRow(*node, [&](int64_t b, int64_t y, int64_t row, int64_t c0, int64_t c1, int sw) {
    if (y < 0 || c1 == c0) return;  // cropped
    const uint8_t* src = in + static_cast<size_t>(row) * st.batch_row;
    uint8_t* dst = out + static_cast<size_t>(b) * st.space_image +
                   static_cast<size_t>(y) * st.space_row +
                   static_cast<size_t>(c0 * kw + sw - node->pad_w) * st.pixel;
    if (kw == 1) {
      std::memcpy(dst, src + static_cast<size_t>(c0) * st.pixel,
                  static_cast<size_t>(c1 - c0) * st.pixel);
    } else {
      for (int64_t c = c0; c < c1; ++c, dst += step) {
        std::memcpy(dst, src + static_cast<size_t>(c) * st.pixel, st.pixel);
      }
    }
  });
  return Status::OK();
}

std::string ValuesString(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

// block_shape or paddings / crops: INT32, of shape `want`, constant.
Status CheckIndexInput(const NodeState& node, const TensorDef& t, const char* role,
                       const std::vector<int32_t>& want, size_t rank) {
  EMBER_RETURN_IF_ERROR(CheckType(node, t, TensorType::kInt32, role));
  if (t.shape != want) {
    return errors::InvalidArgument(node.what + ": " + role + " '" + t.name + "' has shape " +
                                   ShapeString(t.shape) + "; an input of rank " +
                                   std::to_string(rank) + " takes " + ShapeString(want));
  }
  if (t.data == nullptr || t.data_size < t.num_elements * 4) {
    return errors::Unimplemented(node.what + ": " + role + " '" + t.name +
                                 "' is computed at run time; ember lite needs a constant " + role +
                                 " (TensorFlow's converter writes one)");
  }
  return Status::OK();
}

// int8, uint8 and int16 keep their codes: input and output quantized alike, one scale and zero
// point (int16: zero point 0), as LiteRT's Prepare requires.
Status CheckQuant(const NodeState& node, const TensorDef& in, const TensorDef& out) {
  if (in.type != TensorType::kInt8 && in.type != TensorType::kUInt8 &&
      in.type != TensorType::kInt16) {
    return Status::OK();
  }
  if (!in.quant.empty()) EMBER_RETURN_IF_ERROR(NeedPerTensorQuant(node, in, "input"));
  if (!out.quant.empty()) EMBER_RETURN_IF_ERROR(NeedPerTensorQuant(node, out, "output"));
  EMBER_RETURN_IF_ERROR(index_ops::SameTypeAndQuant(node, in, "input", out, "output"));
  if (in.type == TensorType::kInt16 && !in.quant.empty() && in.quant.zero_point[0] != 0) {
    return errors::InvalidArgument(node.what + ": INT16 input '" + in.name + "' has zero point " +
                                   std::to_string(in.quant.zero_point[0]) +
                                   "; INT16 tensors must have zero point 0");
  }
  return Status::OK();
}

}  // namespace

StatusOr<std::vector<int32_t>> SpaceBatchNdShape(bool to_batch, const std::vector<int32_t>& in,
                                                 const std::vector<int64_t>& block,
                                                 const std::vector<int64_t>& pads) {
  const char* pads_role = to_batch ? "paddings" : "crops";
  const size_t rank = in.size();
  if (rank != 3 && rank != 4) {
    return errors::InvalidArgument("rank " + std::to_string(rank) +
                                   ": rank 3 [batch, height, depth] and rank 4 NHWC are supported");
  }
  const size_t m = rank - 2;
  if (block.size() != m || pads.size() != 2 * m) {
    return errors::InvalidArgument("block_shape " + ValuesString(block) + " and " + pads_role +
                                   " " + ValuesString(pads) + " do not have " + std::to_string(m) +
                                   " and " + std::to_string(2 * m) + " values");
  }
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  for (int64_t b : block) {
    if (b < 1 || b > kMax) {
      return errors::InvalidArgument("block_shape " + ValuesString(block) +
                                     ": each block size must be at least 1");
    }
  }
  for (int64_t p : pads) {
    if (p < 0 || p > kMax) {
      return errors::InvalidArgument(std::string(pads_role) + " " + ValuesString(pads) +
                                     ": each value must be at least 0");
    }
  }
  std::vector<int32_t> out = in;
  int64_t blocks = 1;
  for (size_t d = 0; d < m; ++d) {
    const int64_t size = in[d + 1], lo = pads[2 * d], hi = pads[2 * d + 1], b = block[d];
    const std::string dim =
        "dimension " + std::to_string(d + 1) + " (" + std::to_string(size) + ")";
    int64_t o;
    if (to_batch) {
      const int64_t padded = size + lo + hi;
      if (padded % b != 0) {
        return errors::InvalidArgument(dim + " padded by " + std::to_string(lo) + " and " +
                                       std::to_string(hi) + " is " + std::to_string(padded) +
                                       ", not a multiple of its block size " + std::to_string(b));
      }
      o = padded / b;
    } else {
      const int64_t whole = size * b;
      if (lo + hi > whole) {
        return errors::InvalidArgument("crops " + std::to_string(lo) + " and " +
                                       std::to_string(hi) + " of " + dim + " exceed " +
                                       std::to_string(whole) + ", its size times its block size " +
                                       std::to_string(b));
      }
      o = whole - lo - hi;
    }
    if (o > kMax) return errors::InvalidArgument(dim + ": the output's is above 2^31 - 1");
    out[d + 1] = static_cast<int32_t>(o);
    blocks *= b;
    if (blocks > kMax) {
      return errors::InvalidArgument("block_shape " + ValuesString(block) +
                                     ": the block's product is above 2^31 - 1");
    }
  }
  if (to_batch) {
    const int64_t batch = int64_t{in[0]} * blocks;
    if (batch > kMax) {
      return errors::InvalidArgument("batch " + std::to_string(in[0]) + " times the block (" +
                                     std::to_string(blocks) + ") is above 2^31 - 1");
    }
    out[0] = static_cast<int32_t>(batch);
  } else {
    if (in[0] % blocks != 0) {
      return errors::InvalidArgument(
          "batch " + std::to_string(in[0]) + " is not a multiple of the block's product " +
          std::to_string(blocks) + " (block_shape " + ValuesString(block) + ")");
    }
    out[0] = static_cast<int32_t>(in[0] / blocks);
  }
  return out;
}

Status PrepareSpaceBatchNd(NodeState* node) {
  const bool to_batch = node->op->op == BuiltinOp::kSpaceToBatchNd;
  const char* pads_role = to_batch ? "paddings" : "crops";
  EMBER_RETURN_IF_ERROR(index_ops::CheckArity(
      *node, 3, 1, to_batch ? "input, block_shape, paddings" : "input, block_shape, crops"));
  const TensorDef& in = *node->t.in[0];
  const TensorDef& block = *node->t.in[1];
  const TensorDef& pads = *node->t.in[2];
  const TensorDef& out = *node->t.out[0];
  switch (in.type) {
    case TensorType::kFloat32:
    case TensorType::kInt8:
    case TensorType::kUInt8:
    case TensorType::kInt16:
    case TensorType::kInt32:
    case TensorType::kInt64:
      break;
    default:
      return index_ops::UnsupportedType(*node, in, "input",
                                        "FLOAT32, INT8, UINT8, INT16, INT32 and INT64 are");
  }
  EMBER_RETURN_IF_ERROR(CheckType(*node, out, in.type, "output"));
  EMBER_RETURN_IF_ERROR(CheckQuant(*node, in, out));
  const size_t rank = in.shape.size();
  if (rank != 3 && rank != 4) {
    return errors::Unimplemented(node->what + ": input '" + in.name + "' has shape " +
                                 ShapeString(in.shape) +
                                 "; rank 3 [batch, height, depth] and rank 4 NHWC are supported");
  }
  const int32_t m = static_cast<int32_t>(rank) - 2;
  EMBER_RETURN_IF_ERROR(CheckIndexInput(*node, block, "block_shape", {m}, rank));
  EMBER_RETURN_IF_ERROR(CheckIndexInput(*node, pads, pads_role, {m, 2}, rank));
  const std::vector<int64_t> b = index_ops::IndexValues(block.type, block.data, block.num_elements);
  const std::vector<int64_t> p = index_ops::IndexValues(pads.type, pads.data, pads.num_elements);
  StatusOr<std::vector<int32_t>> want = SpaceBatchNdShape(to_batch, in.shape, b, p);
  if (!want.ok()) {
    return errors::InvalidArgument(node->what + ": input '" + in.name + "' of shape " +
                                   ShapeString(in.shape) + ", block_shape '" + block.name + "', " +
                                   pads_role + " '" + pads.name + "': " + want.status().message());
  }
  EMBER_RETURN_IF_ERROR(CheckShape(*node, out, *want, "output"));
  const std::vector<int32_t>& space = to_batch ? in.shape : out.shape;
  const std::vector<int32_t>& batch = to_batch ? out.shape : in.shape;
  node->n = space[0];
  node->ih = space[1];
  node->iw = rank == 4 ? space[2] : 1;
  node->oh = batch[1];
  node->ow = rank == 4 ? batch[2] : 1;
  node->ic = in.shape.back();
  node->kh = static_cast<int>(b[0]);
  node->kw = rank == 4 ? static_cast<int>(b[1]) : 1;
  node->pad_h = static_cast<int>(p[0]);
  node->pad_w = rank == 4 ? static_cast<int>(p[2]) : 0;
  // LiteRT fills with the output zero point's byte (memset): int16's is 0.
  const bool byte_quant =
      (out.type == TensorType::kInt8 || out.type == TensorType::kUInt8) && !out.quant.empty();
  node->out_zp = byte_quant ? static_cast<int32_t>(out.quant.zero_point[0]) : 0;
  node->eval = to_batch ? EvalSpaceToBatch : EvalBatchToSpace;
  return Status::OK();
}

}  // namespace lite
}  // namespace ember
