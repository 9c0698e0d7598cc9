// Array-building ops with TensorFlow's semantics: Fill, Range, BroadcastTo, BroadcastArgs,
// Size, Rank, ShapeN, ZerosLike, OnesLike, OneHot, Pad, PadV2, MirrorPad, Where, IdentityN,
// Cumsum, ArgMax, ArgMin.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "core/op_kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/op_util.h"

namespace ember {
namespace kernels {
namespace {

using oputil::FixedArg;
using oputil::ListArg;
using oputil::Product;
using oputil::RegisterCpu;
using oputil::RegisterOp;
using oputil::Strides;
using oputil::TypedArg;
using Bytes = unsigned char;

// Writes int dims/values into an int32 or int64 tensor.
void StoreInts(Tensor* t, const std::vector<int64_t>& v) {
  DispatchIndex(t->dtype(), [&](auto tag) {
    using I = decltype(tag);
    for (size_t i = 0; i < v.size(); ++i) t->data<I>()[i] = static_cast<I>(v[i]);
  });
}

// Fills every element of `out` with the one element at `value`.
void FillBytes(Tensor* out, const void* value) {
  const size_t elem = DataTypeSize(out->dtype());
  auto* dst = static_cast<Bytes*>(out->raw_data());
  for (int64_t i = 0; i < out->NumElements(); ++i) {
    std::memcpy(dst + static_cast<size_t>(i) * elem, value, elem);
  }
}

class FillOp : public OpKernel {
 public:
  explicit FillOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    std::vector<int64_t> dims;
    EMBER_OP_REQUIRES_OK(ctx, ReadIndexVector(ctx->node(), ctx->input(0), "dims", &dims));
    if (ctx->input(1).NumElements() != 1 || ctx->input(1).dims() != 0) {
      ctx->SetStatus(InvalidArg(
          ctx->node(), "value must be a scalar, got shape " + ctx->input(1).shape().DebugString()));
      return;
    }
    Tensor* out = nullptr;
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(dims), &out));
    FillBytes(out, ctx->input(1).raw_data());
  }
};

class RangeOp : public OpKernel {
 public:
  explicit RangeOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const DataType dt = ctx->input(0).dtype();
    bool ok = true;
    DispatchNumeric(dt, [&](auto tag) {
      using T = decltype(tag);
      for (int i = 0; i < 3; ++i) {
        if (ctx->input(i).NumElements() != 1 || ctx->input(i).dtype() != dt) ok = false;
      }
      if (!ok) {
        ctx->SetStatus(
            InvalidArg(ctx->node(), "start, limit and delta must be scalars of one type"));
        return;
      }
      const T start = ctx->input(0).data<T>()[0], limit = ctx->input(1).data<T>()[0],
              delta = ctx->input(2).data<T>()[0];
      if (delta == 0) {
        ctx->SetStatus(InvalidArg(ctx->node(), "Requires delta != 0: " + std::to_string(delta)));
        return;
      }
      if (delta > 0 && start > limit) {
        ctx->SetStatus(InvalidArg(
            ctx->node(), "Requires start <= limit when delta > 0: " + std::to_string(start) + "/" +
                             std::to_string(limit)));
        return;
      }
      if (delta < 0 && start < limit) {
        ctx->SetStatus(InvalidArg(
            ctx->node(), "Requires start >= limit when delta < 0: " + std::to_string(start) + "/" +
                             std::to_string(limit)));
        return;
      }
      int64_t size;
      if constexpr (std::is_integral<T>::value) {
        const int64_t span =
            std::llabs(static_cast<long long>(limit) - static_cast<long long>(start));
        const int64_t d = std::llabs(static_cast<long long>(delta));
        size = (span + d - 1) / d;
      } else {
        size = static_cast<int64_t>(std::ceil(std::abs((limit - start) / delta)));
      }
      Tensor* out = nullptr;
      EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({size}), &out));
      T v = start;
      for (int64_t i = 0; i < size; ++i) {
        out->data<T>()[i] = v;
        v = static_cast<T>(v + delta);
      }
    });
  }
};

class BroadcastToOp : public OpKernel {
 public:
  explicit BroadcastToOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    std::vector<int64_t> dims, joint;
    EMBER_OP_REQUIRES_OK(ctx, ReadIndexVector(ctx->node(), ctx->input(1), "shape", &dims));
    const std::vector<int64_t>& id = in.shape().dim_sizes();
    if (id.size() > dims.size() || !BroadcastShapes(id, dims, &joint) || joint != dims) {
      ctx->SetStatus(InvalidArg(ctx->node(), "Unable to broadcast tensor of shape " +
                                                 in.shape().DebugString() + " to tensor of shape " +
                                                 DimsString(dims)));
      return;
    }
    Tensor* out = nullptr;
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(dims), &out));
    const int64_t total = Product(dims);
    if (total == 0) return;
    const size_t elem = DataTypeSize(in.dtype());
    const std::vector<int64_t> st = BroadcastStrides(id, dims);
    const auto* src = static_cast<const Bytes*>(in.raw_data());
    auto* dst = static_cast<Bytes*>(out->raw_data());
    const size_t rank = dims.size();
    if (rank == 0) {
      std::memcpy(dst, src, elem);
      return;
    }
    const int64_t inner = dims[rank - 1];
    std::vector<int64_t> idx(rank, 0);
    int64_t s = 0;
    for (int64_t row = 0; row < total / inner; ++row) {
      Bytes* o = dst + static_cast<size_t>(row * inner) * elem;
      if (st[rank - 1] == 1) {
        std::memcpy(o, src + static_cast<size_t>(s) * elem, static_cast<size_t>(inner) * elem);
      } else {
        for (int64_t j = 0; j < inner; ++j) std::memcpy(o + j * elem, src + s * elem, elem);
      }
      for (size_t d = rank - 1; d-- > 0;) {
        s += st[d];
        if (++idx[d] < dims[d]) break;
        s -= st[d] * dims[d];
        idx[d] = 0;
      }
    }
  }
};

class BroadcastArgsOp : public OpKernel {
 public:
  explicit BroadcastArgsOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    std::vector<int64_t> a, b, out_dims;
    EMBER_OP_REQUIRES_OK(ctx, ReadIndexVector(ctx->node(), ctx->input(0), "s0", &a));
    EMBER_OP_REQUIRES_OK(ctx, ReadIndexVector(ctx->node(), ctx->input(1), "s1", &b));
    if (!BroadcastShapes(a, b, &out_dims)) {
      ctx->SetStatus(InvalidArg(ctx->node(),
                                "Incompatible shapes: " + DimsString(a) + " vs. " + DimsString(b)));
      return;
    }
    Tensor* out = nullptr;
    EMBER_OP_REQUIRES_OK(
        ctx, ctx->allocate_output(0, TensorShape({static_cast<int64_t>(out_dims.size())}), &out));
    StoreInts(out, out_dims);
  }
};

// Size (out_type), Rank (int32), ShapeN (out_type, N outputs).
class ShapeInfoOp : public OpKernel {
 public:
  explicit ShapeInfoOp(OpKernelConstruction* c) : OpKernel(c), op_(c->node().op) {}
  void Compute(OpKernelContext* ctx) override {
    Tensor* out = nullptr;
    if (op_ == "ShapeN") {
      for (int i = 0; i < ctx->num_inputs(); ++i) {
        const std::vector<int64_t>& d = ctx->input(i).shape().dim_sizes();
        EMBER_OP_REQUIRES_OK(
            ctx, ctx->allocate_output(i, TensorShape({static_cast<int64_t>(d.size())}), &out));
        StoreInts(out, d);
      }
      return;
    }
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({}), &out));
    const Tensor& in = ctx->input(0);
    StoreInts(out, {op_ == "Size" ? in.NumElements() : static_cast<int64_t>(in.dims())});
  }

 private:
  std::string op_;
};

class FilledLikeOp : public OpKernel {
 public:
  explicit FilledLikeOp(OpKernelConstruction* c) : OpKernel(c), one_(c->node().op == "OnesLike") {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    Tensor* out = nullptr;
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, in.shape(), &out));
    bool ok = DispatchPod(in.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T v = one_ ? T(1) : T(0);
      for (int64_t i = 0; i < out->NumElements(); ++i) out->data<T>()[i] = v;
    });
    if (!ok)
      ctx->SetStatus(InvalidArg(ctx->node(), "unsupported dtype " + DataTypeString(in.dtype())));
  }

 private:
  bool one_;
};

class OneHotOp : public OpKernel {
 public:
  explicit OneHotOp(OpKernelConstruction* c) : OpKernel(c) {
    Status s = c->attrs().GetOr<int64_t>("axis", &axis_, -1);
    if (!s.ok()) c->SetStatus(s);
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& indices = ctx->input(0);
    int64_t depth = 0;
    EMBER_OP_REQUIRES_OK(ctx, oputil::ReadScalarIndex(ctx->node(), ctx->input(1), "depth", &depth));
    if (depth < 0) {
      ctx->SetStatus(
          InvalidArg(ctx->node(), "depth must be non-negative, got: " + std::to_string(depth)));
      return;
    }
    const int64_t rank = indices.dims();
    const int64_t axis = axis_ == -1 ? rank : axis_;
    if (axis < 0 || axis > rank) {
      ctx->SetStatus(InvalidArg(ctx->node(), "Expected axis to be -1 or between [0, " +
                                                 std::to_string(rank) +
                                                 "].  But received: " + std::to_string(axis_)));
      return;
    }
    std::vector<int64_t> dims = indices.shape().dim_sizes();
    dims.insert(dims.begin() + axis, depth);
    Tensor* out = nullptr;
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(dims), &out));
    std::vector<int64_t> idx;
    bool ok = DispatchPod(indices.dtype(), [&](auto tag) {
      using I = decltype(tag);
      for (int64_t i = 0; i < indices.NumElements(); ++i) {
        idx.push_back(static_cast<int64_t>(indices.data<I>()[i]));
      }
    });
    if (!ok) {
      ctx->SetStatus(InvalidArg(ctx->node(), "unsupported indices dtype"));
      return;
    }
    const size_t elem = DataTypeSize(out->dtype());
    const auto* on = static_cast<const Bytes*>(ctx->input(2).raw_data());
    const auto* off = static_cast<const Bytes*>(ctx->input(3).raw_data());
    int64_t prefix = 1, suffix = 1;
    for (int64_t d = 0; d < axis; ++d) prefix *= dims[static_cast<size_t>(d)];
    for (size_t d = static_cast<size_t>(axis) + 1; d < dims.size(); ++d) suffix *= dims[d];
    auto* dst = static_cast<Bytes*>(out->raw_data());
    for (int64_t p = 0; p < prefix; ++p) {
      for (int64_t k = 0; k < depth; ++k) {
        for (int64_t s = 0; s < suffix; ++s) {
          const bool hit = idx[static_cast<size_t>(p * suffix + s)] == k;
          std::memcpy(dst, hit ? on : off, elem);
          dst += elem;
        }
      }
    }
  }

 private:
  int64_t axis_ = -1;
};

// Pad, PadV2 (constant) and MirrorPad (REFLECT / SYMMETRIC).
class PadOp : public OpKernel {
 public:
  explicit PadOp(OpKernelConstruction* c) : OpKernel(c), op_(c->node().op) {
    if (op_ == "MirrorPad") {
      std::string mode;
      Status s = c->GetAttr("mode", &mode);
      if (s.ok() && mode != "REFLECT" && mode != "SYMMETRIC") {
        s = InvalidArg(c->node(), "mode must be either REFLECT or SYMMETRIC, got " + mode);
      }
      if (!s.ok()) c->SetStatus(s);
      symmetric_ = mode == "SYMMETRIC";
    }
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const Tensor& pads = ctx->input(1);
    const int64_t rank = in.dims();
    if (pads.dims() != 2 || pads.dim_size(0) != rank || pads.dim_size(1) != 2) {
      ctx->SetStatus(InvalidArg(ctx->node(),
                                "The first dimension of paddings must be the rank "
                                "of inputs[" +
                                    std::to_string(rank) + ",2], got " +
                                    pads.shape().DebugString()));
      return;
    }
    Tensor flat;
    flat.CopyFrom(pads, TensorShape({pads.NumElements()}));
    std::vector<int64_t> p;
    EMBER_OP_REQUIRES_OK(ctx, ReadIndexVector(ctx->node(), flat, "paddings", &p));
    const std::vector<int64_t>& id = in.shape().dim_sizes();
    std::vector<int64_t> od(id.size());
    const int64_t offset = op_ == "MirrorPad" ? (symmetric_ ? 0 : 1) : 0;
    for (size_t d = 0; d < id.size(); ++d) {
      const int64_t b = p[2 * d], a = p[2 * d + 1];
      if (b < 0 || a < 0) {
        ctx->SetStatus(InvalidArg(ctx->node(), "Paddings must be non-negative: " +
                                                   std::to_string(b) + " " + std::to_string(a)));
        return;
      }
      if (op_ == "MirrorPad" && (b > id[d] - offset || a > id[d] - offset)) {
        ctx->SetStatus(InvalidArg(ctx->node(), "paddings must be less than" +
                                                   std::string(symmetric_ ? " or equal to" : "") +
                                                   " the dimension size: " + std::to_string(b) +
                                                   ", " + std::to_string(a) + " not less than " +
                                                   std::to_string(id[d])));
        return;
      }
      od[d] = id[d] + b + a;
    }
    Tensor* out = nullptr;
    // Not zero-filled: ConstantPad and the MirrorPad loop write every element.
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output_uninitialized(0, TensorShape(od), &out));
    const int64_t total = out->NumElements();
    if (total == 0) return;
    const size_t elem = DataTypeSize(in.dtype());
    auto* dst = static_cast<Bytes*>(out->raw_data());
    const auto* src = static_cast<const Bytes*>(in.raw_data());
    const std::vector<int64_t> is = Strides(id);
    const size_t r = id.size();
    std::vector<Bytes> zero(elem, 0);
    const Bytes* fill = zero.data();
    if (op_ == "PadV2") {
      if (ctx->input(2).NumElements() != 1) {
        ctx->SetStatus(InvalidArg(ctx->node(), "constant_values must be a scalar"));
        return;
      }
      fill = static_cast<const Bytes*>(ctx->input(2).raw_data());
    }
    if (op_ != "MirrorPad") {
      ConstantPad(src, id, od, p, elem, fill, dst);
      return;
    }
    std::vector<int64_t> idx(r, 0);
    for (int64_t i = 0; i < total; ++i) {
      int64_t s = 0;
      bool inside = true;
      for (size_t d = 0; d < r; ++d) {
        int64_t j = idx[d] - p[2 * d];
        const int64_t n = id[d];
        if (j < 0 || j >= n) {
          if (op_ != "MirrorPad") {
            inside = false;
            break;
          }
          if (j < 0) j = symmetric_ ? -j - 1 : -j;
          if (j >= n) j = symmetric_ ? 2 * n - 1 - j : 2 * (n - 1) - j;
        }
        s += j * is[d];
      }
      std::memcpy(dst + static_cast<size_t>(i) * elem, inside ? src + s * elem : fill, elem);
      for (size_t d = r; d-- > 0;) {
        if (++idx[d] < od[d]) break;
        idx[d] = 0;
      }
    }
  }

 private:
  // Pad / PadV2: the output row by row (rows of the last dimension): each is the fill value,
  // or the left fill, one contiguous copy of the input row, and the right fill.
  static void ConstantPad(const Bytes* src, const std::vector<int64_t>& id,
                          const std::vector<int64_t>& od, const std::vector<int64_t>& p,
                          size_t elem, const Bytes* fill, Bytes* dst) {
    const size_t r = id.size();
    const int64_t width = r == 0 ? 1 : od[r - 1];
    const int64_t rows = width == 0 ? 0 : Product(od) / width;
    const int64_t left = r == 0 ? 0 : p[2 * (r - 1)];
    const int64_t in_width = r == 0 ? 1 : id[r - 1];
    bool zero_fill = true;
    for (size_t b = 0; b < elem; ++b) zero_fill &= fill[b] == 0;
    auto fill_run = [&](Bytes* out, int64_t n) {
      if (zero_fill) {
        std::memset(out, 0, static_cast<size_t>(n) * elem);
      } else {
        for (int64_t i = 0; i < n; ++i)
          std::memcpy(out + static_cast<size_t>(i) * elem, fill, elem);
      }
    };
    std::vector<int64_t> idx(r > 0 ? r - 1 : 0, 0);  // index of the row in the leading dims
    for (int64_t row = 0; row < rows; ++row) {
      Bytes* out = dst + static_cast<size_t>(row * width) * elem;
      int64_t src_row = 0;
      bool inside = true;
      for (size_t d = 0; d + 1 < r; ++d) {
        const int64_t j = idx[d] - p[2 * d];
        if (j < 0 || j >= id[d]) inside = false;
        src_row = src_row * id[d] + j;
      }
      if (!inside) {
        fill_run(out, width);
      } else {
        fill_run(out, left);
        std::memcpy(out + static_cast<size_t>(left) * elem,
                    src + static_cast<size_t>(src_row * in_width) * elem,
                    static_cast<size_t>(in_width) * elem);
        fill_run(out + static_cast<size_t>(left + in_width) * elem, width - left - in_width);
      }
      for (size_t d = idx.size(); d-- > 0;) {
        if (++idx[d] < od[d]) break;
        idx[d] = 0;
      }
    }
  }

  static int64_t Product(const std::vector<int64_t>& dims) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
  }

  std::string op_;
  bool symmetric_ = false;
};

class WhereOp : public OpKernel {
 public:
  explicit WhereOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    std::vector<int64_t> hits;
    bool ok = DispatchPod(in.dtype(), [&](auto tag) {
      using T = decltype(tag);
      for (int64_t i = 0; i < in.NumElements(); ++i) {
        if (in.data<T>()[i] != T(0)) hits.push_back(i);
      }
    });
    if (!ok) {
      ctx->SetStatus(InvalidArg(ctx->node(), "unsupported dtype " + DataTypeString(in.dtype())));
      return;
    }
    const int64_t rank = in.dims();
    Tensor* out = nullptr;
    EMBER_OP_REQUIRES_OK(
        ctx, ctx->allocate_output(0, TensorShape({static_cast<int64_t>(hits.size()), rank}), &out));
    const std::vector<int64_t> st = Strides(in.shape().dim_sizes());
    int64_t* o = out->data<int64_t>();
    for (int64_t h : hits) {
      for (int64_t d = 0; d < rank; ++d) {
        *o++ = h / st[static_cast<size_t>(d)];
        h %= st[static_cast<size_t>(d)];
      }
    }
  }
};

class IdentityNOp : public OpKernel {
 public:
  explicit IdentityNOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    for (int i = 0; i < ctx->num_inputs(); ++i) ctx->set_output(i, ctx->input(i));
  }
};

class CumsumOp : public OpKernel {
 public:
  explicit CumsumOp(OpKernelConstruction* c) : OpKernel(c), prod_(c->node().op == "Cumprod") {
    Status s = c->attrs().GetOr("exclusive", &exclusive_, false);
    if (s.ok()) s = c->attrs().GetOr("reverse", &reverse_, false);
    if (!s.ok()) c->SetStatus(s);
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    int64_t axis = 0;
    EMBER_OP_REQUIRES_OK(ctx, oputil::ReadScalarIndex(ctx->node(), ctx->input(1), "axis", &axis));
    const int64_t given = axis;
    if (!oputil::NormalizeAxis(&axis, in.dims())) {
      ctx->SetStatus(InvalidArg(ctx->node(), "ScanOp: Expected scan axis in the range [" +
                                                 std::to_string(-in.dims()) + ", " +
                                                 std::to_string(in.dims()) + "), but got " +
                                                 std::to_string(given)));
      return;
    }
    Tensor* out = nullptr;
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, in.shape(), &out));
    const std::vector<int64_t>& d = in.shape().dim_sizes();
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < axis; ++i) outer *= d[static_cast<size_t>(i)];
    for (size_t i = static_cast<size_t>(axis) + 1; i < d.size(); ++i) inner *= d[i];
    const int64_t n = d[static_cast<size_t>(axis)];
    bool ok = DispatchNumeric(in.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* x = in.data<T>();
      T* y = out->data<T>();
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t s = 0; s < inner; ++s) {
          T acc = prod_ ? T(1) : T(0);
          for (int64_t k0 = 0; k0 < n; ++k0) {
            const int64_t k = reverse_ ? n - 1 - k0 : k0;
            const int64_t at = (o * n + k) * inner + s;
            if (exclusive_) {
              y[at] = acc;
              acc = prod_ ? static_cast<T>(acc * x[at]) : static_cast<T>(acc + x[at]);
            } else {
              acc = prod_ ? static_cast<T>(acc * x[at]) : static_cast<T>(acc + x[at]);
              y[at] = acc;
            }
          }
        }
      }
    });
    if (!ok)
      ctx->SetStatus(InvalidArg(ctx->node(), "unsupported dtype " + DataTypeString(in.dtype())));
  }

 private:
  bool prod_;
  bool exclusive_ = false, reverse_ = false;
};

class ArgMinMaxOp : public OpKernel {
 public:
  explicit ArgMinMaxOp(OpKernelConstruction* c) : OpKernel(c), max_(c->node().op == "ArgMax") {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    int64_t axis = 0;
    EMBER_OP_REQUIRES_OK(ctx,
                         oputil::ReadScalarIndex(ctx->node(), ctx->input(1), "dimension", &axis));
    const int64_t given = axis;
    if (!oputil::NormalizeAxis(&axis, in.dims())) {
      ctx->SetStatus(InvalidArg(
          ctx->node(), "Expected dimension in the range [" + std::to_string(-in.dims()) + ", " +
                           std::to_string(in.dims()) + "), but got " + std::to_string(given)));
      return;
    }
    std::vector<int64_t> d = in.shape().dim_sizes();
    const int64_t n = d[static_cast<size_t>(axis)];
    if (n == 0) {
      ctx->SetStatus(InvalidArg(ctx->node(), "Reduction axis " + std::to_string(given) +
                                                 " is empty in shape " + in.shape().DebugString()));
      return;
    }
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < axis; ++i) outer *= d[static_cast<size_t>(i)];
    for (size_t i = static_cast<size_t>(axis) + 1; i < d.size(); ++i) inner *= d[i];
    d.erase(d.begin() + axis);
    Tensor* out = nullptr;
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(d), &out));
    std::vector<int64_t> res(static_cast<size_t>(outer * inner));
    bool ok = DispatchPod(in.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* x = in.data<T>();
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t s = 0; s < inner; ++s) {
          int64_t best = 0;
          T bv = x[o * n * inner + s];
          for (int64_t k = 1; k < n; ++k) {
            const T v = x[(o * n + k) * inner + s];
            if (max_ ? v > bv : v < bv) {
              bv = v;
              best = k;
            }
          }
          res[static_cast<size_t>(o * inner + s)] = best;
        }
      }
    });
    if (!ok) {
      ctx->SetStatus(InvalidArg(ctx->node(), "unsupported dtype " + DataTypeString(in.dtype())));
      return;
    }
    StoreInts(out, res);
  }

 private:
  bool max_;
};

PartialShape ConstDimsShape(const ShapeContext* c, size_t i) {
  std::vector<int64_t> d;
  return oputil::ConstVector(c, i, &d) ? KnownShape(d) : UnknownShape();
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterOp("Fill", {TypedArg("dims", "index_type"), TypedArg("value", "T")},
             {TypedArg("output", "T")}, [](ShapeContext* c) {
               c->output_shapes.assign(1, ConstDimsShape(c, 0));
               return Status::OK();
             });
  RegisterCpu<FillOp>("Fill");
  RegisterOp("Range",
             {TypedArg("start", "Tidx"), TypedArg("limit", "Tidx"), TypedArg("delta", "Tidx")},
             {TypedArg("output", "Tidx")}, [](ShapeContext* c) {
               c->output_shapes.assign(1, KnownShape({-1}));
               return Status::OK();
             });
  RegisterCpu<RangeOp>("Range");
  RegisterOp("BroadcastTo", {TypedArg("input", "T"), TypedArg("shape", "Tidx")},
             {TypedArg("output", "T")}, [](ShapeContext* c) {
               c->output_shapes.assign(1, ConstDimsShape(c, 1));
               return Status::OK();
             });
  RegisterCpu<BroadcastToOp>("BroadcastTo");
  RegisterOp("BroadcastArgs", {TypedArg("s0", "T"), TypedArg("s1", "T")}, {TypedArg("r0", "T")},
             [](ShapeContext* c) {
               c->output_shapes.assign(1, KnownShape({-1}));
               return Status::OK();
             });
  RegisterCpu<BroadcastArgsOp>("BroadcastArgs");
  auto scalar = [](ShapeContext* c) {
    c->output_shapes.assign(1, KnownShape({}));
    return Status::OK();
  };
  RegisterOp("Size", {TypedArg("input", "T")}, {TypedArg("output", "out_type")}, scalar);
  RegisterCpu<ShapeInfoOp>("Size");
  RegisterOp("Rank", {TypedArg("input", "T")}, {FixedArg("output", DataType::kInt32)}, scalar);
  RegisterCpu<ShapeInfoOp>("Rank");
  RegisterOp("ShapeN", {TypedArg("input", "T", "N")}, {TypedArg("output", "out_type", "N")},
             [](ShapeContext* c) {
               c->output_shapes.clear();
               for (const PartialShape& s : c->input_shapes) {
                 c->output_shapes.push_back(
                     KnownShape({s.unknown_rank ? -1 : static_cast<int64_t>(s.dims.size())}));
               }
               return Status::OK();
             });
  RegisterCpu<ShapeInfoOp>("ShapeN");
  for (const char* op : {"ZerosLike", "OnesLike"}) {
    RegisterOp(op, {TypedArg("x", "T")}, {TypedArg("y", "T")}, UnchangedShape());
    RegisterCpu<FilledLikeOp>(op);
  }
  RegisterOp("OneHot",
             {TypedArg("indices", "TI"), FixedArg("depth", DataType::kInt32),
              TypedArg("on_value", "T"), TypedArg("off_value", "T")},
             {TypedArg("output", "T")}, oputil::UnknownOutputs(1));
  RegisterCpu<OneHotOp>("OneHot");
  auto pad_shape = [](ShapeContext* c) {
    c->output_shapes.assign(1, UnknownShape());
    if (!oputil::KnownRank(c, 0)) return Status::OK();
    std::vector<int64_t> p, d = c->input_shapes[0].dims;
    if (c->input_values.size() > 1 && c->input_values[1] != nullptr) {
      Tensor flat;
      flat.CopyFrom(*c->input_values[1], TensorShape({c->input_values[1]->NumElements()}));
      if (ReadIndexVector(*c->node, flat, "paddings", &p).ok() && p.size() == 2 * d.size()) {
        for (size_t i = 0; i < d.size(); ++i) d[i] = d[i] < 0 ? -1 : d[i] + p[2 * i] + p[2 * i + 1];
        c->output_shapes[0] = KnownShape(d);
        return Status::OK();
      }
    }
    c->output_shapes[0] = KnownShape(std::vector<int64_t>(d.size(), -1));
    return Status::OK();
  };
  RegisterOp("Pad", {TypedArg("input", "T"), TypedArg("paddings", "Tpaddings")},
             {TypedArg("output", "T")}, pad_shape);
  RegisterCpu<PadOp>("Pad");
  RegisterOp(
      "PadV2",
      {TypedArg("input", "T"), TypedArg("paddings", "Tpaddings"), TypedArg("constant_values", "T")},
      {TypedArg("output", "T")}, pad_shape);
  RegisterCpu<PadOp>("PadV2");
  RegisterOp("MirrorPad", {TypedArg("input", "T"), TypedArg("paddings", "Tpaddings")},
             {TypedArg("output", "T")}, pad_shape);
  RegisterCpu<PadOp>("MirrorPad");
  RegisterOp("Where", {TypedArg("input", "T")}, {FixedArg("index", DataType::kInt64)},
             [](ShapeContext* c) {
               c->output_shapes.assign(
                   1, KnownShape({-1, oputil::KnownRank(c, 0)
                                          ? static_cast<int64_t>(c->input_shapes[0].dims.size())
                                          : -1}));
               return Status::OK();
             });
  RegisterCpu<WhereOp>("Where");
  RegisterOp("IdentityN", {ListArg("input", "T")}, {ListArg("output", "T")}, [](ShapeContext* c) {
    c->output_shapes = c->input_shapes;
    return Status::OK();
  });
  RegisterCpu<IdentityNOp>("IdentityN");
  for (const char* op : {"Cumsum", "Cumprod"}) {
    RegisterOp(op, {TypedArg("x", "T"), TypedArg("axis", "Tidx")}, {TypedArg("out", "T")},
               UnchangedShape());
    RegisterCpu<CumsumOp>(op);
  }
  for (const char* op : {"ArgMax", "ArgMin"}) {
    RegisterOp(op, {TypedArg("input", "T"), TypedArg("dimension", "Tidx")},
               {TypedArg("output", "output_type")}, [](ShapeContext* c) {
                 c->output_shapes.assign(1, UnknownShape());
                 std::vector<int64_t> a;
                 if (oputil::KnownRank(c, 0) && oputil::ConstVector(c, 1, &a) && a.size() == 1) {
                   std::vector<int64_t> d = c->input_shapes[0].dims;
                   int64_t ax = a[0];
                   if (oputil::NormalizeAxis(&ax, static_cast<int64_t>(d.size()))) {
                     d.erase(d.begin() + ax);
                     c->output_shapes[0] = KnownShape(d);
                   }
                 }
                 return Status::OK();
               });
    RegisterCpu<ArgMinMaxOp>(op);
  }
  return true;
}();

}  // namespace
}  // namespace kernels
}  // namespace ember
