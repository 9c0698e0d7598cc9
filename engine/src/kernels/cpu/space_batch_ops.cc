// SpaceToBatchND and BatchToSpaceND with TensorFlow's semantics and validation messages
// (core/kernels/spacetobatch_op.cc, batchtospace_op.cc). TensorFlow lowers a dilated Conv2D to
// SpaceToBatchND -> Conv2D -> BatchToSpaceND, so these appear in frozen atrous-conv graphs.
// Elements are moved as bytes, so one routine serves every numeric dtype.
#include <algorithm>
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

using oputil::Product;
using oputil::RegisterCpu;
using oputil::RegisterOp;
using oputil::TypedArg;
using Bytes = unsigned char;

// TensorFlow's kMaxSpaceToBatchBlockDims: block dims left after merging leading and trailing
// dims whose block is 1 and whose padding (crop) is 0.
constexpr int kMaxBlockDims = 4;

// The validated arguments of one call: block_shape and [before, after] pairs per block dim.
struct BlockArgs {
  std::vector<int64_t> block;
  std::vector<int64_t> pads;  // paddings (SpaceToBatchND) or crops (BatchToSpaceND), flat
};

// Reads block_shape and the [M, 2] paddings/crops, with TensorFlow's rank checks.
Status ReadBlockArgs(const OpKernelContext* ctx, const char* pads_name, BlockArgs* args) {
  const NodeDef& node = ctx->node();
  const Tensor& in = ctx->input(0);
  const Tensor& block = ctx->input(1);
  const Tensor& pads = ctx->input(2);
  if (block.dims() != 1) {
    return InvalidArg(node,
                      "block_shape rank should be 1 instead of " + std::to_string(block.dims()));
  }
  const int64_t m = block.dim_size(0);
  if (in.dims() < 1 + m) {
    return InvalidArg(node, "input rank should be >= " + std::to_string(1 + m) + " instead of " +
                                std::to_string(in.dims()));
  }
  if (pads.dims() != 2 || pads.dim_size(0) != m || pads.dim_size(1) != 2) {
    return InvalidArg(node, std::string(pads_name) + " should have shape [" + std::to_string(m) +
                                ", 2] instead of " + pads.shape().DebugString());
  }
  EMBER_RETURN_IF_ERROR(ReadIndexVector(node, block, "block_shape", &args->block));
  Tensor flat;
  flat.CopyFrom(pads, TensorShape({pads.NumElements()}));
  return ReadIndexVector(node, flat, pads_name, &args->pads);
}

// Block dims that cannot be merged into the batch (leading) or depth (trailing) dims.
int64_t InternalBlockDims(const BlockArgs& a) {
  const int64_t m = static_cast<int64_t>(a.block.size());
  auto trivial = [&](int64_t d) {
    const size_t i = static_cast<size_t>(d);
    return a.block[i] == 1 && a.pads[2 * i] == 0 && a.pads[2 * i + 1] == 0;
  };
  int64_t prefix = 0;
  while (prefix < m && trivial(prefix)) ++prefix;
  int64_t suffix = 0;
  while (suffix < m - prefix && trivial(m - 1 - suffix)) ++suffix;
  return m - prefix - suffix;
}

// Moves elements between the space tensor [B, S1..SM, rest] and the batch tensor
// [B * prod(block), T1..TM, rest], where space position s = t * block + offset - before.
// to_batch: space -> batch (positions outside the space tensor stay as allocated, zero);
// otherwise batch -> space (batch positions outside it, the crops, are dropped).
void MoveBlocks(const Tensor& space_t, const Tensor& batch_t, const BlockArgs& a, bool to_batch,
                Bytes* dst) {
  const size_t elem = DataTypeSize(space_t.dtype());
  const std::vector<int64_t>& sd = space_t.shape().dim_sizes();
  const std::vector<int64_t>& bd = batch_t.shape().dim_sizes();
  const size_t m = a.block.size();
  int64_t depth = 1;
  for (size_t d = m + 1; d < sd.size(); ++d) depth *= sd[d];
  const size_t row = static_cast<size_t>(depth) * elem;
  // Element strides of the spatial dims of each tensor (in units of rows).
  std::vector<int64_t> s_stride(m + 1, 1), b_stride(m + 1, 1);
  for (size_t d = m; d-- > 0;) {
    s_stride[d] = s_stride[d + 1] * sd[d + 1];
    b_stride[d] = b_stride[d + 1] * bd[d + 1];
  }
  // s_stride[0] / b_stride[0]: rows per batch entry.
  const auto* space = static_cast<const Bytes*>(space_t.raw_data());
  const auto* batch = static_cast<const Bytes*>(batch_t.raw_data());
  const int64_t space_batch = sd[0];
  const int64_t batch_positions = b_stride[0];
  std::vector<int64_t> offset(m), idx(m);
  for (int64_t b = 0; b < bd[0]; ++b) {
    int64_t block_index = b / space_batch;
    for (size_t d = m; d-- > 0;) {
      offset[d] = block_index % a.block[d];
      block_index /= a.block[d];
    }
    const int64_t s_base = (b % space_batch) * s_stride[0];
    const int64_t b_base = b * b_stride[0];
    std::fill(idx.begin(), idx.end(), 0);
    for (int64_t p = 0; p < batch_positions; ++p) {
      int64_t s_row = s_base;
      bool inside = true;
      for (size_t d = 0; d < m && inside; ++d) {
        const int64_t s = idx[d] * a.block[d] + offset[d] - a.pads[2 * d];
        inside = s >= 0 && s < sd[d + 1];
        s_row += s * s_stride[d + 1];
      }
      if (inside) {
        const int64_t b_row = b_base + p;
        if (to_batch) {
          std::memcpy(dst + static_cast<size_t>(b_row) * row,
                      space + static_cast<size_t>(s_row) * row, row);
        } else {
          std::memcpy(dst + static_cast<size_t>(s_row) * row,
                      batch + static_cast<size_t>(b_row) * row, row);
        }
      }
      for (size_t d = m; d-- > 0;) {
        if (++idx[d] < bd[d + 1]) break;
        idx[d] = 0;
      }
    }
  }
}

class SpaceBatchOp : public OpKernel {
 public:
  explicit SpaceBatchOp(OpKernelConstruction* c)
      : OpKernel(c), to_batch_(c->node().op == "SpaceToBatchND") {
    const DataType dt = c->input_types().empty() ? DataType::kInvalid : c->input_types()[0];
    CheckTypeAllowed(c, "T", dt, DispatchNumeric(dt, [](auto) {}),
                     "float, double, int32, int64, int8, uint8, int16");
  }

  void Compute(OpKernelContext* ctx) override {
    BlockArgs a;
    EMBER_OP_REQUIRES_OK(ctx, ReadBlockArgs(ctx, to_batch_ ? "paddings" : "crops", &a));
    if (to_batch_) {
      SpaceToBatch(ctx, a);
    } else {
      BatchToSpace(ctx, a);
    }
  }

 private:
  void SpaceToBatch(OpKernelContext* ctx, const BlockArgs& a) {
    const NodeDef& node = ctx->node();
    const Tensor& in = ctx->input(0);
    int64_t product = 1;
    for (size_t d = 0; d < a.block.size(); ++d) {
      if (a.block[d] < 1) {
        ctx->SetStatus(InvalidArg(node, "All values in block_shape must be positive, got value, " +
                                            std::to_string(a.block[d]) + " at index " +
                                            std::to_string(d) + "."));
        return;
      }
      product *= a.block[d];
    }
    if (!CheckInternalDims(ctx, a)) return;
    if (InternalBlockDims(a) == 0) {
      ctx->set_output(0, in);
      return;
    }
    std::vector<int64_t> od = in.shape().dim_sizes();
    od[0] *= product;
    for (size_t d = 0; d < a.block.size(); ++d) {
      const int64_t before = a.pads[2 * d], after = a.pads[2 * d + 1];
      if (before < 0 || after < 0) {
        ctx->SetStatus(InvalidArg(node, "Paddings must be non-negative"));
        return;
      }
      const int64_t padded = od[d + 1] + before + after;
      if (padded % a.block[d] != 0) {
        ctx->SetStatus(InvalidArg(node, "padded_shape[" + std::to_string(d) +
                                            "]=" + std::to_string(padded) +
                                            " is not divisible by block_shape[" +
                                            std::to_string(d) + "]=" + std::to_string(a.block[d])));
        return;
      }
      od[d + 1] = padded / a.block[d];
    }
    Tensor* out = nullptr;
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(od), &out));
    if (out->NumElements() == 0) return;
    MoveBlocks(in, *out, a, /*to_batch=*/true, static_cast<Bytes*>(out->raw_data()));
  }

  void BatchToSpace(OpKernelContext* ctx, const BlockArgs& a) {
    const NodeDef& node = ctx->node();
    const Tensor& in = ctx->input(0);
    int64_t product = 1;
    for (int64_t b : a.block) product *= b;
    // TensorFlow checks only the product here; a negative entry is refused too, as its functor
    // would index out of bounds with one.
    bool positive = product > 0;
    for (int64_t b : a.block) positive = positive && b > 0;
    if (!positive) {
      ctx->SetStatus(InvalidArg(
          node, "Product of block sizes must be positive, got " + std::to_string(product)));
      return;
    }
    if (in.dim_size(0) % product != 0) {
      ctx->SetStatus(InvalidArg(node, "Input batch dimension (" + std::to_string(in.dim_size(0)) +
                                          ") is not divisible by product of block sizes (" +
                                          std::to_string(product) + ")"));
      return;
    }
    if (!CheckInternalDims(ctx, a)) return;
    if (InternalBlockDims(a) == 0) {
      ctx->set_output(0, in);
      return;
    }
    std::vector<int64_t> od = in.shape().dim_sizes();
    od[0] /= product;
    for (size_t d = 0; d < a.block.size(); ++d) {
      const int64_t before = a.pads[2 * d], after = a.pads[2 * d + 1];
      if (before < 0 || after < 0) {
        ctx->SetStatus(InvalidArg(node, "Crops must be non-negative"));
        return;
      }
      const int64_t cropped = od[d + 1] * a.block[d] - before - after;
      if (cropped < 0) {
        ctx->SetStatus(InvalidArg(node, "cropped_shape[" + std::to_string(d) + "]=" +
                                            std::to_string(cropped) + " must be non-negative"));
        return;
      }
      od[d + 1] = cropped;
    }
    Tensor* out = nullptr;
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output_uninitialized(0, TensorShape(od), &out));
    if (out->NumElements() == 0) return;
    MoveBlocks(*out, in, a, /*to_batch=*/false, static_cast<Bytes*>(out->raw_data()));
  }

  static bool CheckInternalDims(OpKernelContext* ctx, const BlockArgs& a) {
    const int64_t n = InternalBlockDims(a);
    if (n <= kMaxBlockDims) return true;
    ctx->SetStatus(InvalidArg(ctx->node(), "Maximum number of non-combined block dimensions is " +
                                               std::to_string(n) + " but must not exceed " +
                                               std::to_string(kMaxBlockDims)));
    return false;
  }

  bool to_batch_;
};

// Output shape when the input shape and both index inputs are known; otherwise the rank, or
// nothing. Errors are left to the kernel, which reports them with TensorFlow's messages.
Status SpaceBatchShape(ShapeContext* c) {
  const bool to_batch = c->node->op == "SpaceToBatchND";
  c->output_shapes.assign(1, UnknownShape());
  if (!oputil::KnownRank(c, 0)) return Status::OK();
  std::vector<int64_t> d = c->input_shapes[0].dims;
  c->output_shapes[0] = KnownShape(std::vector<int64_t>(d.size(), -1));
  std::vector<int64_t> block, pads;
  if (!oputil::ConstVector(c, 1, &block) || c->input_values.size() < 3 ||
      c->input_values[2] == nullptr) {
    return Status::OK();
  }
  Tensor flat;
  flat.CopyFrom(*c->input_values[2], TensorShape({c->input_values[2]->NumElements()}));
  if (!ReadIndexVector(*c->node, flat, "paddings", &pads).ok() || pads.size() != 2 * block.size() ||
      d.size() < block.size() + 1) {
    return Status::OK();
  }
  const int64_t product = Product(block);
  if (product <= 0) return Status::OK();
  if (d[0] >= 0) d[0] = to_batch ? d[0] * product : d[0] / product;
  for (size_t i = 0; i < block.size(); ++i) {
    int64_t& s = d[i + 1];
    if (s < 0 || block[i] <= 0) {
      s = -1;
    } else if (to_batch) {
      const int64_t padded = s + pads[2 * i] + pads[2 * i + 1];
      s = padded % block[i] == 0 ? padded / block[i] : -1;
    } else {
      s = s * block[i] - pads[2 * i] - pads[2 * i + 1];
      if (s < 0) s = -1;
    }
  }
  c->output_shapes[0] = KnownShape(d);
  return Status::OK();
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterOp("SpaceToBatchND",
             {TypedArg("input", "T"), TypedArg("block_shape", "Tblock_shape"),
              TypedArg("paddings", "Tpaddings")},
             {TypedArg("output", "T")}, SpaceBatchShape);
  RegisterCpu<SpaceBatchOp>("SpaceToBatchND");
  RegisterOp("BatchToSpaceND",
             {TypedArg("input", "T"), TypedArg("block_shape", "Tblock_shape"),
              TypedArg("crops", "Tcrops")},
             {TypedArg("output", "T")}, SpaceBatchShape);
  RegisterCpu<SpaceBatchOp>("BatchToSpaceND");
  return true;
}();

}  // namespace
}  // namespace kernels
}  // namespace ember
