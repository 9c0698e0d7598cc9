// DEPTH_TO_SPACE and SPACE_TO_DEPTH (tf.nn.depth_to_space / space_to_depth: sub-pixel
// upsampling, YOLO's reorg), NHWC, as LiteRT's reference kernels
// (lite/kernels/internal/reference/depth_to_space.h, space_to_depth.h):
//
//   DEPTH_TO_SPACE: out[b, h, w, d] = in[b, h / bs, w / bs, ((h % bs) * bs + w % bs) * D + d]
//   SPACE_TO_DEPTH: out[b, h / bs, w / bs, ((h % bs) * bs + w % bs) * C + c] = in[b, h, w, c]
//
// with D the output depth and C the input depth. Each run of D (or C) elements is contiguous on
// both sides, so Eval copies runs of bytes: float32, int32, int64, int8 and uint8, the types
// LiteRT's Prepare accepts; quantized tensors keep their quantization (in and out must agree).
// Rank-4 input, block_size > 0, and the dimensions the block must divide, checked at Prepare.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "lite/kernels.h"
#include "lite/kernels_index.h"

namespace ember {
namespace lite {
namespace {

// The node's geometry: n, ih, iw, ic (input), oh, ow, oc (output), kh = block size.

Status EvalDepthToSpace(NodeState* node) {
  const size_t elem = TensorTypeSize(node->t.in[0]->type);
  const int bs = node->kh;
  const size_t run = static_cast<size_t>(node->oc) * elem;
  const uint8_t* in = node->t.in_data[0];
  uint8_t* out = node->t.out_data[0];
  const size_t in_row = static_cast<size_t>(node->iw) * static_cast<size_t>(node->ic) * elem;
  const size_t in_image = static_cast<size_t>(node->ih) * in_row;
  for (int b = 0; b < node->n; ++b) {
    for (int h = 0; h < node->oh; ++h) {
      const uint8_t* in_row_start = in + static_cast<size_t>(b) * in_image +
                                    static_cast<size_t>(h / bs) * in_row +
                                    static_cast<size_t>((h % bs) * bs) * run;
      for (int w = 0; w < node->ow; ++w) {
        const uint8_t* src = in_row_start +
                             static_cast<size_t>(w / bs) * static_cast<size_t>(node->ic) * elem +
                             static_cast<size_t>(w % bs) * run;
        std::memcpy(out, src, run);
        out += run;
      }
    }
  }
  return Status::OK();
}

Status EvalSpaceToDepth(NodeState* node) {
  const size_t elem = TensorTypeSize(node->t.in[0]->type);
  const int bs = node->kh;
  const size_t run = static_cast<size_t>(node->ic) * elem;
  const uint8_t* in = node->t.in_data[0];
  uint8_t* out = node->t.out_data[0];
  const size_t out_pixel = static_cast<size_t>(node->oc) * elem;
  const size_t out_row = static_cast<size_t>(node->ow) * out_pixel;
  const size_t out_image = static_cast<size_t>(node->oh) * out_row;
  for (int b = 0; b < node->n; ++b) {
    for (int h = 0; h < node->ih; ++h) {
      uint8_t* out_row_start = out + static_cast<size_t>(b) * out_image +
                               static_cast<size_t>(h / bs) * out_row +
                               static_cast<size_t>((h % bs) * bs) * run;
      for (int w = 0; w < node->iw; ++w) {
        uint8_t* dst = out_row_start + static_cast<size_t>(w / bs) * out_pixel +
                       static_cast<size_t>(w % bs) * run;
        std::memcpy(dst, in, run);
        in += run;
      }
    }
  }
  return Status::OK();
}

Status PrepareBlockOp(NodeState* node, bool to_space) {
  EMBER_RETURN_IF_ERROR(index_ops::CheckArity(*node, 1, 1, "input"));
  const TensorDef& in = *node->t.in[0];
  const TensorDef& out = *node->t.out[0];
  switch (in.type) {
    case TensorType::kFloat32:
    case TensorType::kInt32:
    case TensorType::kInt64:
    case TensorType::kInt8:
    case TensorType::kUInt8:
      break;
    default:
      return index_ops::UnsupportedType(*node, in, "input",
                                        "FLOAT32, INT32, INT64, INT8 and UINT8 are");
  }
  EMBER_RETURN_IF_ERROR(index_ops::SameTypeAndQuant(*node, in, "input", out, "output"));
  if (in.shape.size() != 4) {
    return errors::InvalidArgument(node->what + ": input '" + in.name + "' has shape " +
                                   ShapeString(in.shape) + "; the operator takes NHWC (rank 4)");
  }
  const int32_t bs = node->op->options.block_size;
  if (bs <= 0) {
    return errors::InvalidArgument(node->what + ": block_size is " + std::to_string(bs) +
                                   "; it must be positive");
  }
  const int64_t n = in.shape[0], h = in.shape[1], w = in.shape[2], c = in.shape[3];
  const int64_t b = bs, bb = b * b;
  std::vector<int64_t> dims;
  if (to_space) {
    if (c % bb != 0) {
      return errors::InvalidArgument(node->what + ": input depth " + std::to_string(c) + " of '" +
                                     in.name + "' is not a multiple of block_size^2 (" +
                                     std::to_string(bb) + ")");
    }
    dims = {n, h * b, w * b, c / bb};
  } else {
    if (h % b != 0 || w % b != 0) {
      return errors::InvalidArgument(node->what + ": input '" + in.name + "' of shape " +
                                     ShapeString(in.shape) + ": height and width must be " +
                                     "multiples of block_size " + std::to_string(bs));
    }
    dims = {n, h / b, w / b, c * bb};
  }
  std::vector<int32_t> expected;
  if (!index_ops::ToShape(dims, &expected)) {
    return errors::InvalidArgument(node->what + ": the output of '" + in.name +
                                   "' with block_size " + std::to_string(bs) +
                                   " has a dimension above 2^31 - 1");
  }
  EMBER_RETURN_IF_ERROR(CheckShape(*node, out, expected, "output"));
  node->n = static_cast<int>(n);
  node->ih = static_cast<int>(h);
  node->iw = static_cast<int>(w);
  node->ic = static_cast<int>(c);
  node->oh = expected[1];
  node->ow = expected[2];
  node->oc = expected[3];
  node->kh = bs;
  node->eval = to_space ? EvalDepthToSpace : EvalSpaceToDepth;
  return Status::OK();
}

}  // namespace

Status PrepareDepthToSpace(NodeState* node) { return PrepareBlockOp(node, true); }

Status PrepareSpaceToDepth(NodeState* node) { return PrepareBlockOp(node, false); }

}  // namespace lite
}  // namespace ember
