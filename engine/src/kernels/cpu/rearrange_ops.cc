// Ops that mask, rotate or place elements by position, with TensorFlow's semantics and
// validation messages: MatrixBandPart (core/kernels/linalg/matrix_band_part_op.cc), Roll
// (roll_op.cc) and XlaDynamicUpdateSlice (what TensorFlow's CPU runs through tf2xla). Keras-hub
// decoders build causal masks with MatrixBandPart (tf.linalg.band_part); Swin's shifted windows
// are Roll, and its attention mask is built with keras.ops.slice_update, which is
// XlaDynamicUpdateSlice. All move elements as bytes, so one routine serves every dtype (a zero
// element is all-zero bytes).
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

using oputil::RegisterCpu;
using oputil::RegisterOp;
using oputil::TypedArg;
using Bytes = unsigned char;

// Reads a rank-0 int32/int64 input (num_lower, num_upper).
Status ReadBandScalar(const NodeDef& node, const Tensor& t, const char* what, int64_t* out) {
  if (t.dims() != 0) {
    return InvalidArg(node,
                      std::string(what) + " must be scalar, got shape " + t.shape().DebugString());
  }
  return oputil::ReadScalarIndex(node, t, what, out);
}

// Keeps, in each innermost [M, N] matrix, the entries with -num_lower <= n - m <= num_upper (a
// negative bound keeps that whole triangle) and zeroes the rest.
class MatrixBandPartOp : public OpKernel {
 public:
  explicit MatrixBandPartOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const NodeDef& node = ctx->node();
    const Tensor& in = ctx->input(0);
    if (in.dims() < 2) {
      ctx->SetStatus(InvalidArg(
          node, "input must be at least 2-dim, received shape: " + in.shape().DebugString()));
      return;
    }
    const int64_t rows = in.dim_size(in.dims() - 2), cols = in.dim_size(in.dims() - 1);
    int64_t lower = 0, upper = 0;
    EMBER_OP_REQUIRES_OK(ctx, ReadBandScalar(node, ctx->input(1), "num_lower", &lower));
    if (lower > rows) {
      ctx->SetStatus(
          InvalidArg(node, "num_lower must be negative or less or equal to number of rows (" +
                               std::to_string(rows) + ") got: " + std::to_string(lower)));
      return;
    }
    EMBER_OP_REQUIRES_OK(ctx, ReadBandScalar(node, ctx->input(2), "num_upper", &upper));
    if (upper > cols) {
      ctx->SetStatus(
          InvalidArg(node, "num_upper must be negative or less or equal to number of columns (" +
                               std::to_string(cols) + ") got: " + std::to_string(upper)));
      return;
    }
    if ((lower < 0 || lower == rows) && (upper < 0 || upper == cols)) {
      ctx->set_output(0, in);  // the whole matrix is in the band
      return;
    }
    Tensor* out = nullptr;
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output_uninitialized(0, in.shape(), &out));
    const int64_t n = in.NumElements();
    if (n == 0) return;
    const size_t elem = DataTypeSize(in.dtype());
    const Bytes* src = static_cast<const Bytes*>(in.raw_data());
    Bytes* dst = static_cast<Bytes*>(out->raw_data());
    const int64_t row_bytes = cols * static_cast<int64_t>(elem);
    for (int64_t r = 0; r < n / cols; ++r) {
      const int64_t m = r % rows;
      const int64_t begin = lower < 0 ? 0 : std::max<int64_t>(0, m - lower);
      const int64_t end = upper < 0 ? cols : std::min<int64_t>(cols, m + upper + 1);
      const Bytes* s = src + r * row_bytes;
      Bytes* d = dst + r * row_bytes;
      if (begin >= end) {
        std::memset(d, 0, static_cast<size_t>(row_bytes));
        continue;
      }
      std::memset(d, 0, static_cast<size_t>(begin) * elem);
      std::memcpy(d + begin * static_cast<int64_t>(elem), s + begin * static_cast<int64_t>(elem),
                  static_cast<size_t>(end - begin) * elem);
      std::memset(d + end * static_cast<int64_t>(elem), 0, static_cast<size_t>(cols - end) * elem);
    }
  }
};

// output[..., (i + shift) mod dim, ...] = input[..., i, ...] along each axis; several shifts of
// one axis add up, and negative axes count from the end.
class RollOp : public OpKernel {
 public:
  explicit RollOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const NodeDef& node = ctx->node();
    const Tensor& in = ctx->input(0);
    const Tensor& shift = ctx->input(1);
    const Tensor& axis = ctx->input(2);
    if (in.dims() < 1) {
      ctx->SetStatus(InvalidArg(node, "input must be 1-D or higher"));
      return;
    }
    if (shift.dims() > 1) {
      ctx->SetStatus(InvalidArg(
          node, "shift must be a scalar or a 1-D vector. Found: " + shift.shape().DebugString()));
      return;
    }
    if (axis.dims() > 1) {
      ctx->SetStatus(InvalidArg(
          node, "axis must be a scalar or a 1-D vector. Found: " + axis.shape().DebugString()));
      return;
    }
    if (shift.shape() != axis.shape()) {
      ctx->SetStatus(InvalidArg(node, "shift and axis must have the same size"));
      return;
    }
    std::vector<int64_t> shifts, axes;
    EMBER_OP_REQUIRES_OK(ctx, ReadIndexVector(node, shift, "shift", &shifts));
    EMBER_OP_REQUIRES_OK(ctx, ReadIndexVector(node, axis, "axis", &axes));
    const std::vector<int64_t> dims = in.shape().dim_sizes();
    const int64_t rank = in.dims();
    std::vector<int64_t> by(dims.size(), 0);  // the total shift of each axis, in [0, dim)
    for (size_t i = 0; i < axes.size(); ++i) {
      int64_t a = axes[i];
      if (a < 0) a += rank;
      if (a < 0 || a >= rank) {
        ctx->SetStatus(InvalidArg(node, "axis " + std::to_string(a) + " is out of range"));
        return;
      }
      const int64_t d = dims[static_cast<size_t>(a)];
      if (d == 0) continue;
      int64_t& s = by[static_cast<size_t>(a)];
      s = ((s + shifts[i]) % d + d) % d;
    }
    Tensor* out = nullptr;
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output_uninitialized(0, in.shape(), &out));
    const int64_t n = in.NumElements();
    if (n == 0) return;
    const size_t elem = DataTypeSize(in.dtype());
    const std::vector<int64_t> strides = oputil::Strides(dims);
    const Bytes* src = static_cast<const Bytes*>(in.raw_data());
    Bytes* dst = static_cast<Bytes*>(out->raw_data());
    // Each innermost row of the output comes from one input row (the outer coordinates shifted
    // back), rotated by the last axis's shift: two copies per row.
    const size_t last = dims.size() - 1;
    const int64_t inner = dims[last], rot = by[last];
    std::vector<int64_t> idx(dims.size(), 0);
    for (int64_t row = 0; row < n / inner; ++row) {
      int64_t from = 0;
      for (size_t d = 0; d < last; ++d) {
        const int64_t s = idx[d] - by[d];
        from += (s < 0 ? s + dims[d] : s) * strides[d];
      }
      const Bytes* s = src + from * static_cast<int64_t>(elem);
      Bytes* o = dst + row * inner * static_cast<int64_t>(elem);
      // output[j] = input[j - rot]: the row's last `rot` inputs come first.
      std::memcpy(o, s + (inner - rot) * static_cast<int64_t>(elem),
                  static_cast<size_t>(rot) * elem);
      std::memcpy(o + rot * static_cast<int64_t>(elem), s, static_cast<size_t>(inner - rot) * elem);
      for (size_t d = last; d-- > 0;) {
        if (++idx[d] < dims[d]) break;
        idx[d] = 0;
      }
    }
  }
};

// A copy of `input` with `update` written at `indices`, each start clamped (as XLA's
// DynamicUpdateSlice) so that the update lies inside the input.
class XlaDynamicUpdateSliceOp : public OpKernel {
 public:
  explicit XlaDynamicUpdateSliceOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const NodeDef& node = ctx->node();
    const Tensor& in = ctx->input(0);
    const Tensor& update = ctx->input(1);
    const Tensor& indices = ctx->input(2);
    if (indices.dims() != 1 || indices.dim_size(0) != in.dims()) {
      ctx->SetStatus(InvalidArg(
          node, "index must be a vector with length equal to the number of input dimensions"));
      return;
    }
    if (update.dims() != in.dims()) {
      ctx->SetStatus(InvalidArg(node, "input and update must have the same rank, input shape is " +
                                          in.shape().DebugString() + "; update shape is " +
                                          update.shape().DebugString()));
      return;
    }
    if (update.dtype() != in.dtype()) {
      ctx->SetStatus(InvalidArg(node, "update is " + DataTypeString(update.dtype()) +
                                          " but input is " + DataTypeString(in.dtype())));
      return;
    }
    std::vector<int64_t> start;
    EMBER_OP_REQUIRES_OK(ctx, ReadIndexVector(node, indices, "indices", &start));
    const std::vector<int64_t> dims = in.shape().dim_sizes(), ud = update.shape().dim_sizes();
    for (size_t d = 0; d < dims.size(); ++d) {
      if (ud[d] > dims[d]) {
        ctx->SetStatus(InvalidArg(
            node, "Update dim size " + std::to_string(ud[d]) +
                      " greater than dynamic slice dimension: " + std::to_string(dims[d]) + "."));
        return;
      }
      start[d] = std::clamp<int64_t>(start[d], 0, dims[d] - ud[d]);
    }
    Tensor* out = nullptr;
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output_uninitialized(0, in.shape(), &out));
    const size_t elem = DataTypeSize(in.dtype());
    const int64_t n = in.NumElements(), un = update.NumElements();
    if (n == 0) return;
    Bytes* dst = static_cast<Bytes*>(out->raw_data());
    std::memcpy(dst, in.raw_data(), static_cast<size_t>(n) * elem);
    if (un == 0) return;
    if (dims.empty()) {  // a scalar update replaces a scalar input
      std::memcpy(dst, update.raw_data(), elem);
      return;
    }
    const std::vector<int64_t> strides = oputil::Strides(dims);
    const Bytes* src = static_cast<const Bytes*>(update.raw_data());
    const size_t last = dims.size() - 1;
    const size_t row_bytes = static_cast<size_t>(ud[last]) * elem;
    std::vector<int64_t> idx(dims.size(), 0);
    for (int64_t row = 0; row < un / ud[last]; ++row) {
      int64_t at = start[last];
      for (size_t d = 0; d < last; ++d) at += (start[d] + idx[d]) * strides[d];
      std::memcpy(dst + at * static_cast<int64_t>(elem), src + static_cast<size_t>(row) * row_bytes,
                  row_bytes);
      for (size_t d = last; d-- > 0;) {
        if (++idx[d] < ud[d]) break;
        idx[d] = 0;
      }
    }
  }
};

[[maybe_unused]] const bool kRegistered = [] {
  RegisterOp(
      "MatrixBandPart",
      {TypedArg("input", "T"), TypedArg("num_lower", "Tindex"), TypedArg("num_upper", "Tindex")},
      {TypedArg("band", "T")}, UnchangedShape());
  RegisterCpu<MatrixBandPartOp>("MatrixBandPart");
  RegisterOp("Roll",
             {TypedArg("input", "T"), TypedArg("shift", "Tshift"), TypedArg("axis", "Taxis")},
             {TypedArg("output", "T")}, UnchangedShape());
  RegisterCpu<RollOp>("Roll");
  RegisterOp("XlaDynamicUpdateSlice",
             {TypedArg("input", "T"), TypedArg("update", "T"), TypedArg("indices", "Tindices")},
             {TypedArg("output", "T")}, UnchangedShape());
  RegisterCpu<XlaDynamicUpdateSliceOp>("XlaDynamicUpdateSlice");
  return true;
}();

}  // namespace
}  // namespace kernels
}  // namespace ember
