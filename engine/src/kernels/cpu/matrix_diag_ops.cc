// MatrixDiagV3 and MatrixSetDiagV3 (tf.linalg.diag, tf.linalg.set_diag) with TensorFlow's
// validation messages (core/kernels/linalg/matrix_diag_op.cc, matrix_set_diag_op.cc), for the
// main diagonal (k = 0), which is what those functions use by default. Other diagonals are
// refused as UNIMPLEMENTED. Elements move as bytes, so one routine serves every dtype.
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

using oputil::FixedArg;
using oputil::RegisterCpu;
using oputil::RegisterOp;
using oputil::TypedArg;
using Bytes = unsigned char;

// Reads k (a scalar or [lower, upper]) and refuses anything but the main diagonal.
Status ReadMainDiagonal(const NodeDef& node, const Tensor& k) {
  if (k.dims() > 1) {
    return InvalidArg(
        node, "diag_index must be a scalar or vector, received shape: " + k.shape().DebugString());
  }
  std::vector<int64_t> v;
  EMBER_RETURN_IF_ERROR(ReadIndexVector(node, k, "k", &v));
  if (v.empty() || v.size() > 2) {
    return InvalidArg(node, "diag_index must have only one or two elements, received " +
                                std::to_string(v.size()) + " elements.");
  }
  const int64_t lower = v[0], upper = v.size() > 1 ? v[1] : v[0];
  if (lower > upper) {
    return InvalidArg(node, "lower_diag_index must not be larger than upper_diag_index: " +
                                std::to_string(lower) + " > " + std::to_string(upper));
  }
  if (lower != 0 || upper != 0) {
    return NodeError(node, Code::kUnimplemented,
                     node.op + " supports only the main diagonal (k = 0) in ember; got k = [" +
                         std::to_string(lower) + ", " + std::to_string(upper) + "]");
  }
  return Status::OK();
}

Status ReadScalarInt(const NodeDef& node, const Tensor& t, const char* what, int64_t* out) {
  if (t.dims() != 0) {
    return InvalidArg(
        node, std::string(what) + " must be a scalar, received shape: " + t.shape().DebugString());
  }
  return oputil::ReadScalarIndex(node, t, what, out);
}

// Writes diag[..., i] to out[..., i, i] of each [rows, cols] matrix.
void PlaceDiagonal(const Tensor& diag, int64_t rows, int64_t cols, Tensor* out) {
  const size_t elem = DataTypeSize(diag.dtype());
  const int64_t len = diag.dim_size(diag.dims() - 1);
  const int64_t batch = len == 0 ? 0 : diag.NumElements() / len;
  const Bytes* src = static_cast<const Bytes*>(diag.raw_data());
  Bytes* dst = static_cast<Bytes*>(out->raw_data());
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < len; ++i) {
      std::memcpy(dst + static_cast<size_t>((b * rows + i) * cols + i) * elem,
                  src + static_cast<size_t>(b * len + i) * elem, elem);
    }
  }
}

class MatrixDiagOp : public OpKernel {
 public:
  explicit MatrixDiagOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const NodeDef& node = ctx->node();
    const Tensor& diag = ctx->input(0);
    EMBER_OP_REQUIRES_OK(ctx, ReadMainDiagonal(node, ctx->input(1)));
    int64_t rows = -1, cols = -1;
    EMBER_OP_REQUIRES_OK(ctx, ReadScalarInt(node, ctx->input(2), "num_rows", &rows));
    EMBER_OP_REQUIRES_OK(ctx, ReadScalarInt(node, ctx->input(3), "num_cols", &cols));
    const Tensor& pad = ctx->input(4);
    if (pad.dtype() != diag.dtype()) {
      ctx->SetStatus(InvalidArg(node, "padding_value is " + DataTypeString(pad.dtype()) +
                                          " but diagonal is " + DataTypeString(diag.dtype())));
      return;
    }
    if (pad.dims() != 0) {
      ctx->SetStatus(InvalidArg(
          node, "padding_value must be a scalar, received shape: " + pad.shape().DebugString()));
      return;
    }
    if (diag.dims() < 1) {
      ctx->SetStatus(InvalidArg(
          node, "diagonal must be at least 1-dim, received shape: " + diag.shape().DebugString()));
      return;
    }
    const int64_t len = diag.dim_size(diag.dims() - 1);
    if (rows == -1 && cols == -1) {
      rows = cols = len;
    } else if (rows == -1) {
      rows = len;
    } else if (cols == -1) {
      cols = len;
    }
    if (rows < len) {
      ctx->SetStatus(InvalidArg(node, "The number of rows is too small."));
      return;
    }
    if (cols < len) {
      ctx->SetStatus(InvalidArg(node, "The number of columns is too small."));
      return;
    }
    if (rows != len && cols != len) {
      ctx->SetStatus(InvalidArg(node,
                                "The number of rows or columns is not consistent with the "
                                "specified d_lower, d_upper, and diagonal."));
      return;
    }
    std::vector<int64_t> od = diag.shape().dim_sizes();
    od.back() = rows;
    od.push_back(cols);
    Tensor* out = nullptr;
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output_uninitialized(0, TensorShape(od), &out));
    const int64_t n = out->NumElements();
    if (n == 0) return;
    const size_t elem = DataTypeSize(diag.dtype());
    Bytes* dst = static_cast<Bytes*>(out->raw_data());
    for (int64_t i = 0; i < n; ++i) {
      std::memcpy(dst + static_cast<size_t>(i) * elem, pad.raw_data(), elem);
    }
    PlaceDiagonal(diag, rows, cols, out);
  }
};

class MatrixSetDiagOp : public OpKernel {
 public:
  explicit MatrixSetDiagOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const NodeDef& node = ctx->node();
    const Tensor& in = ctx->input(0);
    const Tensor& diag = ctx->input(1);
    if (in.dims() < 2) {
      ctx->SetStatus(InvalidArg(
          node, "input must be at least 2-dim, received shape: " + in.shape().DebugString()));
      return;
    }
    if (diag.dims() < 1) {
      ctx->SetStatus(InvalidArg(
          node, "diagonal must be at least 1-dim, received shape: " + diag.shape().DebugString()));
      return;
    }
    if (diag.dtype() != in.dtype()) {
      ctx->SetStatus(InvalidArg(node, "diagonal is " + DataTypeString(diag.dtype()) +
                                          " but input is " + DataTypeString(in.dtype())));
      return;
    }
    EMBER_OP_REQUIRES_OK(ctx, ReadMainDiagonal(node, ctx->input(2)));
    const int64_t rows = in.dim_size(in.dims() - 2), cols = in.dim_size(in.dims() - 1);
    std::vector<int64_t> want = in.shape().dim_sizes();
    want.pop_back();
    want.back() = std::min(rows, cols);
    if (diag.shape().dim_sizes() != want) {
      ctx->SetStatus(InvalidArg(
          node,
          "Either first dimensions of diagonal don't match input.shape[:-2], or "
          "diagonal.shape[:-1] is not equal to the longests diagonal in range "
          "[lower_diag_index:upper_diag_index].\nInput shape: " +
              in.shape().DebugString() + "\nDiagonal shape: " + diag.shape().DebugString() +
              "\nExpected diagonal shape: " + DimsString(want)));
      return;
    }
    Tensor* out = nullptr;
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output_uninitialized(0, in.shape(), &out));
    if (in.NumElements() == 0) return;
    std::memcpy(out->raw_data(), in.raw_data(), in.TotalBytes());
    PlaceDiagonal(diag, rows, cols, out);
  }
};

[[maybe_unused]] const bool kRegistered = [] {
  RegisterOp("MatrixDiagV3",
             {TypedArg("diagonal", "T"), FixedArg("k", DataType::kInt32),
              FixedArg("num_rows", DataType::kInt32), FixedArg("num_cols", DataType::kInt32),
              TypedArg("padding_value", "T")},
             {TypedArg("output", "T")}, oputil::UnknownOutputs(1));
  RegisterCpu<MatrixDiagOp>("MatrixDiagV3");
  RegisterOp("MatrixSetDiagV3",
             {TypedArg("input", "T"), TypedArg("diagonal", "T"), FixedArg("k", DataType::kInt32)},
             {TypedArg("output", "T")}, UnchangedShape());
  RegisterCpu<MatrixSetDiagOp>("MatrixSetDiagV3");
  return true;
}();

}  // namespace
}  // namespace kernels
}  // namespace ember
