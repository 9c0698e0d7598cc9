// Smaller ops common models use, with TensorFlow's semantics and validation messages: Atan2
// (cwise_op_atan2.cc), ReverseSequence (reverse_sequence_op.cc) and Unique (unique_op.cc).
// MatrixDiagV3 / MatrixSetDiagV3 are in matrix_diag_ops.cc, SegmentSum and the other segment
// reductions in segment_ops.cc.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/op_kernel.h"
#include "kernels/cpu/cwise_util.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/op_util.h"

namespace ember {
namespace kernels {
namespace {

using oputil::RegisterCpu;
using oputil::RegisterOp;
using oputil::TypedArg;
using Bytes = unsigned char;

class Atan2Op : public OpKernel {
 public:
  explicit Atan2Op(OpKernelConstruction* c) : OpKernel(c) {
    const DataType dt = c->input_types().empty() ? DataType::kInvalid : c->input_types()[0];
    CheckTypeAllowed(c, "T", dt, DispatchFloat(dt, [](auto) {}), "float, double");
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& y = ctx->input(0);
    const Tensor& x = ctx->input(1);
    if (y.dtype() != x.dtype()) {
      ctx->SetStatus(InvalidArg(ctx->node(), "expected two " + DataTypeString(y.dtype()) +
                                                 " inputs, got " + DataTypeString(y.dtype()) +
                                                 " and " + DataTypeString(x.dtype())));
      return;
    }
    std::vector<int64_t> dims;
    if (!BroadcastShapes(y.shape().dim_sizes(), x.shape().dim_sizes(), &dims)) {
      ctx->SetStatus(InvalidArg(ctx->node(), "Incompatible shapes: " + y.shape().DebugString() +
                                                 " vs. " + x.shape().DebugString()));
      return;
    }
    Tensor* out = nullptr;
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output_uninitialized(0, TensorShape(dims), &out));
    DispatchFloat(y.dtype(), [&](auto tag) {
      using T = decltype(tag);
      BinaryLoop<T, T>(y, x, dims, out->data<T>(), ctx->intra_op_pool(),
                       [](T a, T b) { return std::atan2(a, b); });
    });
  }
};

// Reverses the first seq_lengths[b] entries along seq_dim of each batch_dim slice b.
class ReverseSequenceOp : public OpKernel {
 public:
  explicit ReverseSequenceOp(OpKernelConstruction* c) : OpKernel(c) {
    Status s = c->GetAttr("seq_dim", &seq_dim_);
    if (s.ok()) s = c->attrs().GetOr("batch_dim", &batch_dim_, int64_t{0});
    if (!s.ok()) c->SetStatus(s);
  }

  void Compute(OpKernelContext* ctx) override {
    const NodeDef& node = ctx->node();
    const Tensor& in = ctx->input(0);
    const Tensor& lens_t = ctx->input(1);
    if (lens_t.dims() != 1) {
      ctx->SetStatus(
          InvalidArg(node, "seq_lengths must be 1-dim, not " + std::to_string(lens_t.dims())));
      return;
    }
    std::vector<int64_t> lens;
    EMBER_OP_REQUIRES_OK(ctx, ReadIndexVector(node, lens_t, "seq_lengths", &lens));
    const int64_t rank = in.dims();
    if (batch_dim_ == seq_dim_) {
      ctx->SetStatus(InvalidArg(node, "batch_dim == seq_dim == " + std::to_string(seq_dim_)));
      return;
    }
    if (seq_dim_ < 0 || seq_dim_ >= rank) {
      ctx->SetStatus(InvalidArg(node, "seq_dim must be < input rank ( " + std::to_string(seq_dim_) +
                                          " vs. " + std::to_string(rank) + ")"));
      return;
    }
    if (batch_dim_ < 0 || batch_dim_ >= rank) {
      ctx->SetStatus(InvalidArg(node, "batch_dim must be < input rank ( " +
                                          std::to_string(batch_dim_) + " vs. " +
                                          std::to_string(rank) + ")"));
      return;
    }
    const int bd = static_cast<int>(batch_dim_), sd = static_cast<int>(seq_dim_);
    if (static_cast<int64_t>(lens.size()) != in.dim_size(bd)) {
      ctx->SetStatus(InvalidArg(node, "Length of seq_lengths != input.dims(" + std::to_string(bd) +
                                          "), (" + std::to_string(lens.size()) + " vs. " +
                                          std::to_string(in.dim_size(bd)) + ")"));
      return;
    }
    for (size_t d = 0; d < lens.size(); ++d) {
      if (lens[d] < 0) {
        ctx->SetStatus(InvalidArg(node, "seq_lens(" + std::to_string(d) + ") < 0"));
        return;
      }
      if (lens[d] > in.dim_size(sd)) {
        ctx->SetStatus(InvalidArg(
            node, "seq_lens(" + std::to_string(d) + ") > input.dims(" + std::to_string(sd) + ")"));
        return;
      }
    }
    Tensor* out = nullptr;
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output_uninitialized(0, in.shape(), &out));
    const int64_t n = in.NumElements();
    if (n == 0) return;
    const size_t elem = DataTypeSize(in.dtype());
    const std::vector<int64_t>& dims = in.shape().dim_sizes();
    const std::vector<int64_t> strides = oputil::Strides(dims);
    const Bytes* src = static_cast<const Bytes*>(in.raw_data());
    Bytes* dst = static_cast<Bytes*>(out->raw_data());
    std::vector<int64_t> idx(dims.size(), 0);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t len = lens[static_cast<size_t>(idx[static_cast<size_t>(bd)])];
      const int64_t s = idx[static_cast<size_t>(sd)];
      int64_t from = i;
      if (s < len) from += (len - 1 - 2 * s) * strides[static_cast<size_t>(sd)];
      std::memcpy(dst + static_cast<size_t>(i) * elem, src + static_cast<size_t>(from) * elem,
                  elem);
      for (size_t d = dims.size(); d-- > 0;) {
        if (++idx[d] < dims[d]) break;
        idx[d] = 0;
      }
    }
  }

 private:
  int64_t seq_dim_ = 0, batch_dim_ = 0;
};

// The distinct values of a vector in order of first occurrence, and each entry's position in
// them. Equal floats (0.0 and -0.0) are one value; every NaN is its own.
class UniqueOp : public OpKernel {
 public:
  explicit UniqueOp(OpKernelConstruction* c) : OpKernel(c) {
    const DataType dt = c->input_types().empty() ? DataType::kInvalid : c->input_types()[0];
    CheckTypeAllowed(c, "T", dt, DispatchPod(dt, [](auto) {}),
                     "float, double, int32, int64, int8, uint8, int16, bool");
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    if (x.dims() != 1) {
      ctx->SetStatus(InvalidArg(ctx->node(), "unique expects a 1D vector."));
      return;
    }
    DispatchPod(x.dtype(), [&](auto tag) { Run<decltype(tag)>(ctx, x); });
  }

 private:
  template <typename T>
  static void Run(OpKernelContext* ctx, const Tensor& x) {
    const int64_t n = x.NumElements();
    const T* v = x.data<T>();
    std::unordered_map<T, int64_t> seen;
    std::vector<int64_t> idx(static_cast<size_t>(n));
    std::vector<T> uniq;
    for (int64_t i = 0; i < n; ++i) {
      auto it = seen.find(v[i]);
      if (it == seen.end()) {
        it = seen.emplace(v[i], static_cast<int64_t>(uniq.size())).first;
        idx[static_cast<size_t>(i)] = static_cast<int64_t>(uniq.size());
        uniq.push_back(v[i]);
        continue;
      }
      idx[static_cast<size_t>(i)] = it->second;
    }
    Tensor* y = nullptr;
    Tensor* pos = nullptr;
    EMBER_OP_REQUIRES_OK(
        ctx, ctx->allocate_output(0, TensorShape({static_cast<int64_t>(uniq.size())}), &y));
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output(1, x.shape(), &pos));
    T* yd = y->data<T>();
    for (size_t i = 0; i < uniq.size(); ++i) yd[i] = uniq[i];
    DispatchIndex(pos->dtype(), [&](auto itag) {
      using I = decltype(itag);
      I* p = pos->data<I>();
      for (int64_t i = 0; i < n; ++i) p[i] = static_cast<I>(idx[static_cast<size_t>(i)]);
    });
  }
};

Status UniqueShape(ShapeContext* c) {
  c->output_shapes.assign(2, KnownShape({-1}));
  if (oputil::KnownRank(c, 0)) c->output_shapes[1] = c->input_shapes[0];
  return Status::OK();
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterOp("Atan2", {TypedArg("y", "T"), TypedArg("x", "T")}, {TypedArg("z", "T")},
             BroadcastBinaryShape());
  RegisterCpu<Atan2Op>("Atan2");
  RegisterOp("ReverseSequence", {TypedArg("input", "T"), TypedArg("seq_lengths", "Tlen")},
             {TypedArg("output", "T")}, UnchangedShape());
  RegisterCpu<ReverseSequenceOp>("ReverseSequence");
  RegisterOp("Unique", {TypedArg("x", "T")}, {TypedArg("y", "T"), TypedArg("idx", "out_idx")},
             UniqueShape);
  RegisterCpu<UniqueOp>("Unique");
  return true;
}();

}  // namespace
}  // namespace kernels
}  // namespace ember
