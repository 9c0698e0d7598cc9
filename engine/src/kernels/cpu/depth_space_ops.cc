// DepthToSpace and SpaceToDepth (NHWC) with TensorFlow's semantics and validation messages
// (core/kernels/depthtospace_op.cc, spacetodepth_op.cc): sub-pixel upsampling layers and
// space-to-depth stems. Output [b, h, w, (by * bs + bx) * c + d] of SpaceToDepth is input
// [b, h * bs + by, w * bs + bx, d]; DepthToSpace is its inverse. Elements move as bytes, so one
// routine serves every dtype. TensorFlow's CPU has no NCHW kernel either; ember refuses it.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/op_kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/op_util.h"

namespace ember {
namespace kernels {
namespace {

using oputil::RegisterCpu;
using oputil::RegisterOp;
using oputil::TypedArg;
using Bytes = unsigned char;

class DepthSpaceOp : public OpKernel {
 public:
  explicit DepthSpaceOp(OpKernelConstruction* c)
      : OpKernel(c), to_space_(c->node().op == "DepthToSpace") {
    Status s = c->GetAttr("block_size", &block_);
    if (s.ok() && block_ < 2) {
      s = InvalidArg(c->node(), "Value for attr 'block_size' of " + std::to_string(block_) +
                                    " must be at least minimum 2");
    }
    if (s.ok()) s = RequireNHWC(c);
    if (!s.ok()) c->SetStatus(s);
  }

  void Compute(OpKernelContext* ctx) override {
    const NodeDef& node = ctx->node();
    const Tensor& in = ctx->input(0);
    const int64_t bs = block_;
    if (in.dims() != 4) {
      ctx->SetStatus(InvalidArg(node, std::string("Input rank should be") +
                                          (to_space_ ? ": " : " ") + "4 instead of" +
                                          (to_space_ ? ": " : " ") + std::to_string(in.dims())));
      return;
    }
    const int64_t batch = in.dim_size(0), h = in.dim_size(1), w = in.dim_size(2),
                  depth = in.dim_size(3);
    int64_t sh = h, sw = w, sd = depth;  // the space-side tensor's dims
    if (to_space_) {
      if (depth % (bs * bs) != 0) {
        ctx->SetStatus(InvalidArg(node, "Input depth dimension " + std::to_string(depth) +
                                            " should be divisible by: " + std::to_string(bs * bs)));
        return;
      }
      sh = h * bs, sw = w * bs, sd = depth / (bs * bs);
    } else if (h % bs != 0 || w % bs != 0) {
      ctx->SetStatus(
          InvalidArg(node, "Image width " + std::to_string(w) + " and height " + std::to_string(h) +
                               " should be divisible by block_size: " + std::to_string(bs)));
      return;
    }
    const TensorShape out_shape = to_space_ ? TensorShape({batch, sh, sw, sd})
                                            : TensorShape({batch, h / bs, w / bs, depth * bs * bs});
    Tensor* out = nullptr;
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output_uninitialized(0, out_shape, &out));
    if (out->NumElements() == 0) return;
    const size_t row = static_cast<size_t>(sd) * DataTypeSize(in.dtype());
    const Bytes* src = static_cast<const Bytes*>(in.raw_data());
    Bytes* dst = static_cast<Bytes*>(out->raw_data());
    // Walks the space-side tensor one depth row at a time; `packed` is the row's place in the
    // depth-side tensor.
    const int64_t ph = sh / bs, pw = sw / bs;
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t y = 0; y < sh; ++y) {
        for (int64_t x = 0; x < sw; ++x) {
          const int64_t space = ((b * sh + y) * sw + x);
          const int64_t packed = (((b * ph + y / bs) * pw + x / bs) * bs + y % bs) * bs + x % bs;
          if (to_space_) {
            std::memcpy(dst + static_cast<size_t>(space) * row,
                        src + static_cast<size_t>(packed) * row, row);
          } else {
            std::memcpy(dst + static_cast<size_t>(packed) * row,
                        src + static_cast<size_t>(space) * row, row);
          }
        }
      }
    }
  }

 private:
  bool to_space_;
  int64_t block_ = 0;
};

Status DepthSpaceShape(ShapeContext* c) {
  c->output_shapes.assign(1, UnknownShape());
  int64_t bs = 0;
  if (!oputil::KnownRank(c, 0) || c->input_shapes[0].dims.size() != 4 ||
      !AttrReader(*c->node).Get("block_size", &bs).ok() || bs < 2) {
    return Status::OK();
  }
  std::vector<int64_t> d = c->input_shapes[0].dims;
  const bool to_space = c->node->op == "DepthToSpace";
  auto scale = [](int64_t v, int64_t by, bool up) {
    if (v < 0) return v;
    if (up) return v * by;
    return v % by == 0 ? v / by : int64_t{-1};
  };
  d[1] = scale(d[1], bs, to_space);
  d[2] = scale(d[2], bs, to_space);
  d[3] = scale(d[3], bs * bs, !to_space);
  c->output_shapes[0] = KnownShape(d);
  return Status::OK();
}

[[maybe_unused]] const bool kRegistered = [] {
  for (const char* op : {"DepthToSpace", "SpaceToDepth"}) {
    RegisterOp(op, {TypedArg("input", "T")}, {TypedArg("output", "T")}, DepthSpaceShape);
    RegisterCpu<DepthSpaceOp>(op);
  }
  return true;
}();

}  // namespace
}  // namespace kernels
}  // namespace ember
