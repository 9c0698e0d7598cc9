// Data-moving array ops: Transpose, ConcatV2 (both dtype-agnostic byte copies) and Cast.
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "core/op_kernel.h"
#include "core/thread_pool.h"
#include "kernels/cpu/kernel_util.h"

namespace ember {
namespace kernels {
namespace {

ArgDef Arg(const char* name, const char* type_attr, const char* number_attr = "") {
  ArgDef a;
  a.name = name;
  a.type_attr = type_attr;
  a.number_attr = number_attr;
  return a;
}

template <typename K>
void RegisterKernel(const char* op) {
  KernelRegistry::Global()->Register(
      op, "CPU", [](OpKernelConstruction* c) { return std::unique_ptr<OpKernel>(new K(c)); });
}

template <typename Word>
void TransposeWords(const Word* in, Word* out, const std::vector<int64_t>& out_dims,
                    const std::vector<int64_t>& in_strides_permuted, ThreadPool* pool) {
  const size_t rank = out_dims.size();
  const int64_t inner = out_dims[rank - 1];
  const int64_t inner_stride = in_strides_permuted[rank - 1];
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < rank; ++d) rows *= out_dims[d];
  ParallelFor(pool, rows, inner * 2, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      int64_t src = 0, rem = r;
      for (size_t d = rank - 1; d-- > 0;) {
        src += (rem % out_dims[d]) * in_strides_permuted[d];
        rem /= out_dims[d];
      }
      Word* o = out + r * inner;
      for (int64_t j = 0; j < inner; ++j) o[j] = in[src + j * inner_stride];
    }
  });
}

class TransposeOp : public OpKernel {
 public:
  explicit TransposeOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    std::vector<int64_t> perm;
    Status s = ReadIndexVector(ctx->node(), ctx->input(1), "perm", &perm);
    if (!s.ok()) {
      ctx->SetStatus(s);
      return;
    }
    const int rank = in.dims();
    if (static_cast<int>(perm.size()) != rank) {
      ctx->SetStatus(InvalidArg(
          ctx->node(), "transpose expects a vector of size " + std::to_string(rank) +
                           ". But input(1) is a vector of size " + std::to_string(perm.size())));
      return;
    }
    std::vector<bool> seen(static_cast<size_t>(rank), false);
    for (int64_t p : perm) {
      if (p < 0 || p >= rank || seen[static_cast<size_t>(p)]) {
        ctx->SetStatus(InvalidArg(ctx->node(), "perm " + DimsString(perm) +
                                                   " is not a permutation of 0.." +
                                                   std::to_string(rank - 1)));
        return;
      }
      seen[static_cast<size_t>(p)] = true;
    }
    std::vector<int64_t> in_strides(static_cast<size_t>(rank), 1);
    for (int d = rank - 2; d >= 0; --d) in_strides[d] = in_strides[d + 1] * in.dim_size(d + 1);
    std::vector<int64_t> out_dims, strides;
    for (int64_t p : perm) {
      out_dims.push_back(in.dim_size(static_cast<int>(p)));
      strides.push_back(in_strides[static_cast<size_t>(p)]);
    }
    Tensor* out = nullptr;
    s = ctx->allocate_output_uninitialized(0, TensorShape(out_dims), &out);
    if (!s.ok()) {
      ctx->SetStatus(s);
      return;
    }
    if (rank == 0 || in.NumElements() == 0) {
      std::memcpy(out->raw_data(), in.raw_data(), in.TotalBytes());
      return;
    }
    ThreadPool* pool = in.NumElements() > (1 << 16) ? ctx->intra_op_pool() : nullptr;
    switch (DataTypeSize(in.dtype())) {
      case 1:
        TransposeWords(in.data<uint8_t>(), out->data<uint8_t>(), out_dims, strides, pool);
        break;
      case 2:
        TransposeWords(in.data<uint16_t>(), out->data<uint16_t>(), out_dims, strides, pool);
        break;
      case 4:
        TransposeWords(in.data<uint32_t>(), out->data<uint32_t>(), out_dims, strides, pool);
        break;
      case 8:
        TransposeWords(in.data<uint64_t>(), out->data<uint64_t>(), out_dims, strides, pool);
        break;
      default:
        ctx->SetStatus(InvalidArg(
            ctx->node(), "Transpose of " + DataTypeString(in.dtype()) + " is not supported"));
    }
  }
};

class ConcatV2Op : public OpKernel {
 public:
  explicit ConcatV2Op(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const int n = ctx->num_inputs() - 1;
    if (n < 1) {
      ctx->SetStatus(InvalidArg(ctx->node(), "ConcatV2 needs at least one value input"));
      return;
    }
    std::vector<int64_t> axis_v;
    Status s = ReadIndexVector(ctx->node(), ctx->input(n), "axis", &axis_v);
    if (s.ok() && (axis_v.size() != 1 || ctx->input(n).dims() != 0)) {
      s = InvalidArg(ctx->node(), "Concat dim tensor should be a scalar integer, but got shape " +
                                      ctx->input(n).shape().DebugString());
    }
    if (!s.ok()) {
      ctx->SetStatus(s);
      return;
    }
    const Tensor& first = ctx->input(0);
    const int64_t rank = first.dims();
    int64_t axis = axis_v[0];
    if (axis < -rank || axis >= rank) {
      ctx->SetStatus(
          InvalidArg(ctx->node(), "ConcatOp : Expected concatenating dimensions in the range [" +
                                      std::to_string(-rank) + ", " + std::to_string(rank) +
                                      "), but got " + std::to_string(axis)));
      return;
    }
    if (axis < 0) axis += rank;
    std::vector<int64_t> out_dims = first.shape().dim_sizes();
    out_dims[static_cast<size_t>(axis)] = 0;
    for (int i = 0; i < n; ++i) {
      const Tensor& t = ctx->input(i);
      if (t.dtype() != first.dtype() || t.dims() != rank) {
        ctx->SetStatus(InvalidArg(
            ctx->node(), "ConcatOp : Ranks of all input tensors should match: shape[0] = " +
                             first.shape().DebugString() + " vs. shape[" + std::to_string(i) +
                             "] = " + t.shape().DebugString()));
        return;
      }
      for (int64_t d = 0; d < rank; ++d) {
        if (d != axis && t.dim_size(static_cast<int>(d)) != first.dim_size(static_cast<int>(d))) {
          ctx->SetStatus(InvalidArg(
              ctx->node(),
              "ConcatOp : Dimension " + std::to_string(d) +
                  " in both shapes must be equal: shape[0] = " + first.shape().DebugString() +
                  " vs. shape[" + std::to_string(i) + "] = " + t.shape().DebugString()));
          return;
        }
      }
      out_dims[static_cast<size_t>(axis)] += t.dim_size(static_cast<int>(axis));
    }
    Tensor* out = nullptr;
    s = ctx->allocate_output(0, TensorShape(out_dims), &out);
    if (!s.ok()) {
      ctx->SetStatus(s);
      return;
    }
    const size_t elem = DataTypeSize(first.dtype());
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= out_dims[static_cast<size_t>(d)];
    for (int64_t d = axis + 1; d < rank; ++d) inner *= out_dims[static_cast<size_t>(d)];
    unsigned char* dst = static_cast<unsigned char*>(out->raw_data());
    for (int64_t o = 0; o < outer; ++o) {
      for (int i = 0; i < n; ++i) {
        const Tensor& t = ctx->input(i);
        const size_t bytes = static_cast<size_t>(t.dim_size(static_cast<int>(axis)) * inner) * elem;
        std::memcpy(
            dst, static_cast<const unsigned char*>(t.raw_data()) + static_cast<size_t>(o) * bytes,
            bytes);
        dst += bytes;
      }
    }
  }
};

// Converts like a C++ static_cast, but without undefined behaviour for NaN or out-of-range
// floats going to integers (x86 gives the minimum value there, which is what TF shows).
template <typename To, typename From>
To CastValue(From v) {
  if constexpr (std::is_same<To, bool>::value) {
    return v != From(0);
  } else if constexpr (std::is_floating_point<From>::value && std::is_integral<To>::value) {
    if (std::isnan(v)) return std::numeric_limits<To>::min();
    const double d = static_cast<double>(v);
    if (sizeof(To) >= 4) {
      const double lo = static_cast<double>(std::numeric_limits<To>::min());
      const double hi = static_cast<double>(std::numeric_limits<To>::max()) + 1.0;
      if (d < lo || d >= hi) return std::numeric_limits<To>::min();
      return static_cast<To>(v);
    }
    // Narrow integers: convert through int32 and wrap, as the x86 instruction sequence does.
    if (d < -2147483648.0 || d >= 2147483648.0) return static_cast<To>(0);
    return static_cast<To>(static_cast<int32_t>(v));
  } else {
    return static_cast<To>(v);
  }
}

class CastOp : public OpKernel {
 public:
  explicit CastOp(OpKernelConstruction* c) : OpKernel(c) {
    Status s = c->GetAttr("SrcT", &src_);
    if (s.ok()) s = c->GetAttr("DstT", &dst_);
    if (!s.ok()) {
      c->SetStatus(s);
      return;
    }
    const char* allowed = "float, double, int32, int64, int8, uint8, int16, bool";
    CheckTypeAllowed(c, "SrcT", src_, DispatchPod(src_, [](auto) {}), allowed);
    CheckTypeAllowed(c, "DstT", dst_, DispatchPod(dst_, [](auto) {}), allowed);
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    if (in.dtype() != src_) {
      ctx->SetStatus(InvalidArg(ctx->node(), "input is " + DataTypeString(in.dtype()) +
                                                 ", SrcT is " + DataTypeString(src_)));
      return;
    }
    if (src_ == dst_) {
      ctx->set_output(0, in);
      return;
    }
    Tensor* out = nullptr;
    Status s = ctx->allocate_output(0, in.shape(), &out);
    if (!s.ok()) {
      ctx->SetStatus(s);
      return;
    }
    const int64_t n = in.NumElements();
    DispatchPod(src_, [&](auto src_tag) {
      using S = decltype(src_tag);
      DispatchPod(dst_, [&](auto dst_tag) {
        using D = decltype(dst_tag);
        const S* x = in.data<S>();
        D* y = out->data<D>();
        for (int64_t i = 0; i < n; ++i) y[i] = CastValue<D, S>(x[i]);
      });
    });
  }

 private:
  DataType src_ = DataType::kInvalid, dst_ = DataType::kInvalid;
};

// Permuted input dims when perm is a known constant; same rank, unknown dims otherwise.
Status TransposeShape(ShapeContext* c) {
  c->output_shapes.assign(1, UnknownShape());
  if (c->input_shapes.empty() || c->input_shapes[0].unknown_rank) return Status::OK();
  const std::vector<int64_t>& in = c->input_shapes[0].dims;
  if (c->input_values.size() < 2 || c->input_values[1] == nullptr) {
    c->output_shapes[0] = KnownShape(std::vector<int64_t>(in.size(), -1));
    return Status::OK();
  }
  std::vector<int64_t> perm;
  EMBER_RETURN_IF_ERROR(ReadIndexVector(*c->node, *c->input_values[1], "perm", &perm));
  if (perm.size() != in.size()) {
    return InvalidArg(*c->node, "transpose expects a vector of size " + std::to_string(in.size()) +
                                    ". But input(1) is a vector of size " +
                                    std::to_string(perm.size()));
  }
  std::vector<int64_t> out;
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(in.size())) {
      return InvalidArg(*c->node, "perm " + DimsString(perm) + " is not a permutation");
    }
    out.push_back(in[static_cast<size_t>(p)]);
  }
  c->output_shapes[0] = KnownShape(out);
  return Status::OK();
}

// Known when the axis is a known constant and every value input has a known rank.
Status ConcatShape(ShapeContext* c) {
  c->output_shapes.assign(1, UnknownShape());
  const size_t n = c->input_shapes.size();
  if (n < 2 || c->input_values.size() != n || c->input_values[n - 1] == nullptr)
    return Status::OK();
  std::vector<int64_t> axis_v;
  EMBER_RETURN_IF_ERROR(ReadIndexVector(*c->node, *c->input_values[n - 1], "axis", &axis_v));
  std::vector<int64_t> out;
  for (size_t i = 0; i + 1 < n; ++i) {
    const PartialShape& s = c->input_shapes[i];
    if (s.unknown_rank) return Status::OK();
    if (i == 0) out.assign(s.dims.size(), -1);
    if (s.dims.size() != out.size()) {
      return InvalidArg(
          *c->node, "ConcatOp : Ranks of all input tensors should match: shape[0] = " +
                        DimsString(c->input_shapes[0].dims) + " vs. shape[" + std::to_string(i) +
                        "] = " + DimsString(s.dims));
    }
  }
  const int64_t rank = static_cast<int64_t>(out.size());
  if (axis_v.size() != 1 || axis_v[0] < -rank || axis_v[0] >= rank) {
    return InvalidArg(*c->node, "ConcatOp : Expected concatenating dimensions in the range [" +
                                    std::to_string(-rank) + ", " + std::to_string(rank) +
                                    "), but got " + DimsString(axis_v));
  }
  const size_t axis = static_cast<size_t>(axis_v[0] < 0 ? axis_v[0] + rank : axis_v[0]);
  int64_t total = 0;
  for (size_t i = 0; i + 1 < n; ++i) {
    const std::vector<int64_t>& d = c->input_shapes[i].dims;
    for (size_t j = 0; j < d.size(); ++j) {
      if (j == axis) continue;
      if (out[j] < 0) {
        out[j] = d[j];
      } else if (d[j] >= 0 && d[j] != out[j]) {
        return InvalidArg(*c->node, "ConcatOp : Dimension " + std::to_string(j) +
                                        " in both shapes must be equal: shape[0] = " +
                                        DimsString(c->input_shapes[0].dims) + " vs. shape[" +
                                        std::to_string(i) + "] = " + DimsString(d));
      }
    }
    total = total < 0 || d[axis] < 0 ? -1 : total + d[axis];
  }
  out[axis] = total;
  c->output_shapes[0] = KnownShape(out);
  return Status::OK();
}

[[maybe_unused]] const bool kRegistered = [] {
  OpDef tr;
  tr.name = "Transpose";
  tr.inputs = {Arg("x", "T"), Arg("perm", "Tperm")};
  tr.outputs = {Arg("y", "T")};
  tr.shape_fn = TransposeShape;
  OpRegistry::Global()->Register(std::move(tr));
  RegisterKernel<TransposeOp>("Transpose");

  OpDef cc;
  cc.name = "ConcatV2";
  cc.inputs = {Arg("values", "T", "N"), Arg("axis", "Tidx")};
  cc.outputs = {Arg("output", "T")};
  cc.shape_fn = ConcatShape;
  OpRegistry::Global()->Register(std::move(cc));
  RegisterKernel<ConcatV2Op>("ConcatV2");

  OpDef cast;
  cast.name = "Cast";
  cast.inputs = {Arg("x", "SrcT")};
  cast.outputs = {Arg("y", "DstT")};
  cast.shape_fn = UnchangedShape();
  OpRegistry::Global()->Register(std::move(cast));
  RegisterKernel<CastOp>("Cast");
  return true;
}();

}  // namespace
}  // namespace kernels
}  // namespace ember
