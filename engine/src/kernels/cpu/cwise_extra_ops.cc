// More elementwise CPU ops, with TensorFlow's semantics and NumPy broadcasting:
//   unary float: Rsqrt, Erf, Erfc, Log, Log1p, Expm1, Reciprocal/Inv, Softplus, Softsign, Elu,
//     Selu, LeakyRelu, Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh, Lgamma,
//     Floor, Ceil, Round, Rint; IsNan/IsInf/IsFinite (to bool);
//   unary numeric: Abs, Sign; LogicalNot;
//   binary: Pow, SquaredDifference, FloorDiv, FloorMod, TruncateDiv, TruncateMod, Div, DivNoNan,
//     Xlogy, Xdivy,
//     Less/LessEqual/Greater/GreaterEqual/Equal/NotEqual (to bool), LogicalAnd/LogicalOr;
//   Select, SelectV2 (three-way broadcasting), AddN, ClipByValue.
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "core/op_kernel.h"
#include "kernels/cpu/cwise_util.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/op_util.h"

namespace ember {
namespace kernels {
namespace {

using oputil::FixedArg;
using oputil::RegisterOp;
using oputil::TypedArg;

// kReal: float, double, int32, int64 (TruncateMod's CPU kernels).
enum class Set { kFloat, kNumeric, kPod, kBool, kInt, kReal };

template <Set S, typename F>
bool DispatchSet(DataType dt, F&& f) {
  switch (S) {
    case Set::kFloat:
      if constexpr (S == Set::kFloat) return DispatchFloat(dt, f);
      return false;
    case Set::kNumeric:
      if constexpr (S == Set::kNumeric) return DispatchNumeric(dt, f);
      return false;
    case Set::kPod:
      if constexpr (S == Set::kPod) return DispatchPod(dt, f);
      return false;
    case Set::kBool:
      if constexpr (S == Set::kBool) {
        if (dt != DataType::kBool) return false;
        f(bool{});
        return true;
      }
      return false;
    case Set::kInt:
      if constexpr (S == Set::kInt) {
        switch (dt) {
          case DataType::kInt32:
            f(int32_t{});
            return true;
          case DataType::kInt64:
            f(int64_t{});
            return true;
          case DataType::kInt8:
            f(int8_t{});
            return true;
          case DataType::kUInt8:
            f(uint8_t{});
            return true;
          case DataType::kInt16:
            f(int16_t{});
            return true;
          default:
            return false;
        }
      }
      return false;
    case Set::kReal:
      if constexpr (S == Set::kReal) {
        return DispatchFloat(dt, f) || DispatchIndex(dt, f);
      }
      return false;
  }
  return false;
}
const char* SetNames(Set s) {
  switch (s) {
    case Set::kFloat:
      return "float, double";
    case Set::kNumeric:
      return "float, double, int32, int64, int8, uint8, int16";
    case Set::kPod:
      return "float, double, int32, int64, int8, uint8, int16, bool";
    case Set::kBool:
      return "bool";
    case Set::kInt:
      return "int32, int64, int8, uint8, int16";
    case Set::kReal:
      return "float, double, int32, int64";
  }
  return "";
}

DataType FirstInputType(OpKernelConstruction* c) {
  return c->input_types().empty() ? DataType::kInvalid : c->input_types()[0];
}

// ---- unary ----
// `Fn` maps a T to an Out; `Out` is void to mean "same as T".
template <Set kSet, typename Fn, bool kToBool>
class Unary : public OpKernel {
 public:
  Unary(OpKernelConstruction* c, Fn fn) : OpKernel(c), fn_(fn) {
    dtype_ = FirstInputType(c);
    CheckTypeAllowed(c, "T", dtype_, DispatchSet<kSet>(dtype_, [](auto) {}), SetNames(kSet));
    if (c->attrs().Has("alpha")) {
      Status s = c->GetAttr("alpha", &alpha_);
      if (!s.ok()) c->SetStatus(s);
    }
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    if (x.dtype() != dtype_) {
      ctx->SetStatus(InvalidArg(ctx->node(), "expected a " + DataTypeString(dtype_) +
                                                 " input, got " + DataTypeString(x.dtype())));
      return;
    }
    Tensor* out = nullptr;
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output_uninitialized(0, x.shape(), &out));
    const float alpha = alpha_;
    DispatchSet<kSet>(dtype_, [&](auto tag) {
      using T = decltype(tag);
      using O = typename std::conditional<kToBool, bool, T>::type;
      const Fn& fn = fn_;
      UnaryLoop(x.data<T>(), out->data<O>(), x.NumElements(), ctx->intra_op_pool(),
                [&fn, alpha](T v) { return static_cast<O>(fn(v, alpha)); });
    });
  }

 private:
  Fn fn_;
  DataType dtype_;
  float alpha_ = 0.2f;
};

template <bool kToBool, Set set, typename Fn>
void RegUnary(const char* op, Fn fn, const char* in = "x", const char* out = "y") {
  // The logical ops have fixed bool arguments and no "T" attr.
  const bool fixed = set == Set::kBool;
  RegisterOp(op, {fixed ? FixedArg(in, DataType::kBool) : TypedArg(in, "T")},
             {kToBool || fixed ? FixedArg(out, DataType::kBool) : TypedArg(out, "T")},
             UnchangedShape());
  KernelRegistry::Global()->Register(op, "CPU", [fn](OpKernelConstruction* c) {
    return std::unique_ptr<OpKernel>(new Unary<set, Fn, kToBool>(c, fn));
  });
}

// ---- binary with broadcasting ----
// `Fn(x, y, &error)` returns the result; it sets `error` for integer division by zero.
template <Set kSet, typename Fn, bool kToBool>
class Binary : public OpKernel {
 public:
  Binary(OpKernelConstruction* c, Fn fn) : OpKernel(c), fn_(fn) {
    dtype_ = FirstInputType(c);
    CheckTypeAllowed(c, "T", dtype_, DispatchSet<kSet>(dtype_, [](auto) {}), SetNames(kSet));
    if (c->attrs().Has("incompatible_shape_error")) {
      Status s = c->GetAttr("incompatible_shape_error", &shape_error_);
      if (!s.ok()) c->SetStatus(s);
    }
    not_equal_ = c->node().op == "NotEqual";
    pow_ = c->node().op == "Pow";
    truncate_ = c->node().op == "TruncateDiv" || c->node().op == "TruncateMod";
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    if (a.dtype() != dtype_ || b.dtype() != dtype_) {
      ctx->SetStatus(InvalidArg(ctx->node(), "expected two " + DataTypeString(dtype_) +
                                                 " inputs, got " + DataTypeString(a.dtype()) +
                                                 " and " + DataTypeString(b.dtype())));
      return;
    }
    std::vector<int64_t> dims;
    Tensor* out = nullptr;
    if (!BroadcastShapes(a.shape().dim_sizes(), b.shape().dim_sizes(), &dims)) {
      if (!shape_error_) {  // Equal/NotEqual with incompatible_shape_error=false: a scalar
        EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({}), &out));
        out->data<bool>()[0] = not_equal_;
        return;
      }
      ctx->SetStatus(InvalidArg(ctx->node(), "Incompatible shapes: " + a.shape().DebugString() +
                                                 " vs. " + b.shape().DebugString()));
      return;
    }
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output_uninitialized(0, TensorShape(dims), &out));
    if (pow_ && SmallIntegerPow(a, b, out, ctx->intra_op_pool())) return;
    bool error = false;
    DispatchSet<kSet>(dtype_, [&](auto tag) {
      using T = decltype(tag);
      using O = typename std::conditional<kToBool, bool, T>::type;
      const Fn& fn = fn_;
      bool* err = &error;
      BinaryLoop<T, O>(a, b, dims, out->data<O>(), ctx->intra_op_pool(),
                       [&fn, err](T x, T y) { return static_cast<O>(fn(x, y, err)); });
    });
    if (!error) return;
    // TensorFlow's BinaryOp names the error only for Div, FloorDiv, Mod and FloorMod; its
    // truncating kernels fail with INTERNAL instead.
    ctx->SetStatus(truncate_ ? NodeError(ctx->node(), Code::kInternal,
                                         "Unexpected error in binary operator (only integer div "
                                         "and mod should have errors)")
                             : InvalidArg(ctx->node(), "Integer division by zero"));
  }

  // Pow of a float tensor by the scalar 2 or 3 (GELU's x^3, a variance's x^2) as products:
  // std::pow took 8% of a BERT encoder's time. Within 2 ulp of std::pow's value; the same
  // infinities, NaN and signed zeros. False where it does not apply.
  template <typename T>
  static bool SmallIntegerPowOf(const Tensor& a, const Tensor& b, Tensor* out, ThreadPool* pool) {
    const T e = b.data<T>()[0];
    if (e != T(2) && e != T(3)) return false;
    const T* x = a.data<T>();
    T* y = out->data<T>();
    const bool cube = e == T(3);
    UnaryLoop(x, y, a.NumElements(), pool, [cube](T v) { return cube ? v * v * v : v * v; });
    return true;
  }
  static bool SmallIntegerPow(const Tensor& a, const Tensor& b, Tensor* out, ThreadPool* pool) {
    if (b.NumElements() != 1 || a.NumElements() != out->NumElements()) return false;
    if (a.dtype() == DataType::kFloat) return SmallIntegerPowOf<float>(a, b, out, pool);
    if (a.dtype() == DataType::kDouble) return SmallIntegerPowOf<double>(a, b, out, pool);
    return false;
  }

 private:
  Fn fn_;
  DataType dtype_;
  bool shape_error_ = true;
  bool not_equal_ = false;
  bool pow_ = false;
  bool truncate_ = false;
};

template <bool kToBool, Set set, typename Fn>
void RegBinary(const char* op, Fn fn) {
  constexpr bool fixed = set == Set::kBool;
  auto in = [](const char* name) {
    return fixed ? FixedArg(name, DataType::kBool) : TypedArg(name, "T");
  };
  RegisterOp(op, {in("x"), in("y")},
             {kToBool || fixed ? FixedArg("z", DataType::kBool) : TypedArg("z", "T")},
             BroadcastBinaryShape());
  KernelRegistry::Global()->Register(op, "CPU", [fn](OpKernelConstruction* c) {
    return std::unique_ptr<OpKernel>(new Binary<set, Fn, kToBool>(c, fn));
  });
}

// Integer x^y by squaring; TensorFlow rejects negative exponents for integers (we give 0/1/-1
// like the C++ functor's truncation would only for |x| == 1, else 0).
template <typename T>
T IntPow(T x, T y) {
  if (std::is_signed<T>::value && y < T(0)) {
    if (x == 1) return 1;
    if (x == static_cast<T>(-1)) return (y % 2 == 0) ? 1 : static_cast<T>(-1);
    return 0;
  }
  T r = 1;
  T base = x;
  while (y > 0) {
    if (y & 1) r = static_cast<T>(r * base);
    base = static_cast<T>(base * base);
    y = static_cast<T>(y >> 1);
  }
  return r;
}

// ---- Select / SelectV2 ----
class SelectOp : public OpKernel {
 public:
  SelectOp(OpKernelConstruction* c, bool v2) : OpKernel(c), v2_(v2) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& cond = ctx->input(0);
    const Tensor& t = ctx->input(1);
    const Tensor& e = ctx->input(2);
    if (cond.dtype() != DataType::kBool) {
      ctx->SetStatus(InvalidArg(ctx->node(), "condition must be bool"));
      return;
    }
    if (t.dtype() != e.dtype()) {
      ctx->SetStatus(InvalidArg(ctx->node(), "then and else have different dtypes"));
      return;
    }
    const size_t elem = DataTypeSize(t.dtype());
    const bool* c = cond.data<bool>();
    const auto* pt = static_cast<const unsigned char*>(t.raw_data());
    const auto* pe = static_cast<const unsigned char*>(e.raw_data());
    Tensor* out = nullptr;
    if (!v2_) {
      if (t.shape() != e.shape()) {
        ctx->SetStatus(InvalidArg(ctx->node(),
                                  "'then' and 'else' must have the same size.  but received: " +
                                      t.shape().DebugString() + " vs. " + e.shape().DebugString()));
        return;
      }
      EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, t.shape(), &out));
      auto* po = static_cast<unsigned char*>(out->raw_data());
      const int64_t n = t.NumElements();
      if (cond.dims() == 0) {
        std::memcpy(po, c[0] ? pt : pe, static_cast<size_t>(n) * elem);
      } else if (cond.shape() == t.shape()) {
        for (int64_t i = 0; i < n; ++i) {
          std::memcpy(po + i * elem, (c[i] ? pt : pe) + i * elem, elem);
        }
      } else if (cond.dims() == 1 && t.dims() >= 1 && cond.dim_size(0) == t.dim_size(0)) {
        const int64_t rows = t.dim_size(0);
        const size_t row_bytes = rows == 0 ? 0 : static_cast<size_t>(n / rows) * elem;
        for (int64_t r = 0; r < rows; ++r) {
          std::memcpy(po + r * row_bytes, (c[r] ? pt : pe) + r * row_bytes, row_bytes);
        }
      } else {
        ctx->SetStatus(InvalidArg(ctx->node(),
                                  "'cond' and 'then' must have the same shape or "
                                  "cond must be a vector matching then's first "
                                  "dimension, got " +
                                      cond.shape().DebugString() + " and " +
                                      t.shape().DebugString()));
      }
      return;
    }
    std::vector<int64_t> ce, dims;
    if (!BroadcastShapes(t.shape().dim_sizes(), e.shape().dim_sizes(), &ce) ||
        !BroadcastShapes(cond.shape().dim_sizes(), ce, &dims)) {
      ctx->SetStatus(InvalidArg(ctx->node(), "condition " + cond.shape().DebugString() + ", then " +
                                                 t.shape().DebugString() + ", and else " +
                                                 e.shape().DebugString() +
                                                 " must be broadcastable"));
      return;
    }
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(dims), &out));
    auto* po = static_cast<unsigned char*>(out->raw_data());
    const int64_t total = oputil::Product(dims);
    if (total == 0) return;
    const std::vector<int64_t> sc = BroadcastStrides(cond.shape().dim_sizes(), dims);
    const std::vector<int64_t> st = BroadcastStrides(t.shape().dim_sizes(), dims);
    const std::vector<int64_t> se = BroadcastStrides(e.shape().dim_sizes(), dims);
    const size_t rank = dims.size();
    std::vector<int64_t> idx(rank, 0);
    int64_t ic = 0, it = 0, ie = 0;
    for (int64_t i = 0; i < total; ++i) {
      std::memcpy(po + i * elem, c[ic] ? pt + it * elem : pe + ie * elem, elem);
      for (size_t d = rank; d-- > 0;) {
        ic += sc[d];
        it += st[d];
        ie += se[d];
        if (++idx[d] < dims[d]) break;
        ic -= sc[d] * dims[d];
        it -= st[d] * dims[d];
        ie -= se[d] * dims[d];
        idx[d] = 0;
      }
    }
  }

 private:
  bool v2_;
};

Status SelectShape(ShapeContext* c, bool v2) {
  c->output_shapes.assign(1, UnknownShape());
  if (c->input_shapes.size() < 3) return Status::OK();
  if (!v2) {
    c->output_shapes[0] = c->input_shapes[1];
    return Status::OK();
  }
  for (const auto& s : c->input_shapes) {
    if (s.unknown_rank) return Status::OK();
  }
  ShapeContext tmp;
  tmp.node = c->node;
  tmp.input_shapes = {c->input_shapes[1], c->input_shapes[2]};
  EMBER_RETURN_IF_ERROR(BroadcastBinaryShape()(&tmp));
  tmp.input_shapes = {c->input_shapes[0], tmp.output_shapes[0]};
  EMBER_RETURN_IF_ERROR(BroadcastBinaryShape()(&tmp));
  c->output_shapes[0] = tmp.output_shapes[0];
  return Status::OK();
}

// ---- AddN ----
class AddNOp : public OpKernel {
 public:
  explicit AddNOp(OpKernelConstruction* c) : OpKernel(c) {
    dtype_ = FirstInputType(c);
    CheckTypeAllowed(c, "T", dtype_, DispatchNumeric(dtype_, [](auto) {}), SetNames(Set::kNumeric));
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& first = ctx->input(0);
    for (int i = 1; i < ctx->num_inputs(); ++i) {
      if (ctx->input(i).shape() != first.shape()) {
        ctx->SetStatus(InvalidArg(ctx->node(),
                                  "Inputs to operation AddN must have the same size "
                                  "and shape.  Input 0: " +
                                      first.shape().DebugString() + " != input " +
                                      std::to_string(i) + ": " +
                                      ctx->input(i).shape().DebugString()));
        return;
      }
    }
    Tensor* out = nullptr;
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, first.shape(), &out));
    DispatchNumeric(dtype_, [&](auto tag) {
      using T = decltype(tag);
      T* o = out->data<T>();
      const int64_t n = first.NumElements();
      for (int64_t j = 0; j < n; ++j) o[j] = first.data<T>()[j];
      for (int i = 1; i < ctx->num_inputs(); ++i) {
        const T* x = ctx->input(i).data<T>();
        for (int64_t j = 0; j < n; ++j) o[j] = static_cast<T>(o[j] + x[j]);
      }
    });
  }

 private:
  DataType dtype_;
};

// ---- ClipByValue: min/max are scalars or t's shape ----
class ClipOp : public OpKernel {
 public:
  explicit ClipOp(OpKernelConstruction* c) : OpKernel(c) {
    dtype_ = FirstInputType(c);
    CheckTypeAllowed(c, "T", dtype_, DispatchNumeric(dtype_, [](auto) {}), SetNames(Set::kNumeric));
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& t = ctx->input(0);
    const Tensor& lo = ctx->input(1);
    const Tensor& hi = ctx->input(2);
    for (const Tensor* b : {&lo, &hi}) {
      if (b->NumElements() != 1 && b->shape() != t.shape()) {
        ctx->SetStatus(InvalidArg(ctx->node(),
                                  "clip_value_min and clip_value_max must be either "
                                  "scalars or have the same shape as the input: " +
                                      b->shape().DebugString() + " vs. " +
                                      t.shape().DebugString()));
        return;
      }
    }
    Tensor* out = nullptr;
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, t.shape(), &out));
    DispatchNumeric(dtype_, [&](auto tag) {
      using T = decltype(tag);
      const T* x = t.data<T>();
      const T* l = lo.data<T>();
      const T* h = hi.data<T>();
      const bool ls = lo.NumElements() == 1, hs = hi.NumElements() == 1;
      T* o = out->data<T>();
      for (int64_t i = 0; i < t.NumElements(); ++i) {
        T v = x[i];
        const T lv = l[ls ? 0 : i], hv = h[hs ? 0 : i];
        v = v < lv ? lv : v;
        o[i] = v > hv ? hv : v;
      }
    });
  }

 private:
  DataType dtype_;
};

template <typename T>
T FloorDivInt(T x, T y, bool* err) {
  if (y == 0) {
    *err = true;
    return 0;
  }
  if constexpr (std::is_signed<T>::value) {
    T q = static_cast<T>(x / y);
    if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
    return q;
  } else {
    return static_cast<T>(x / y);
  }
}

[[maybe_unused]] const bool kRegistered = [] {
  auto f = [](auto fn) { return fn; };
  // Unary float.
  RegUnary<false, Set::kFloat>("Rsqrt",
                               f([](auto x, float) { return decltype(x)(1) / std::sqrt(x); }));
  RegUnary<false, Set::kFloat>("Erf", f([](auto x, float) { return std::erf(x); }));
  RegUnary<false, Set::kFloat>("Erfc", f([](auto x, float) { return std::erfc(x); }));
  RegUnary<false, Set::kFloat>("Log", f([](auto x, float) { return std::log(x); }));
  RegUnary<false, Set::kFloat>("Log1p", f([](auto x, float) { return std::log1p(x); }));
  RegUnary<false, Set::kFloat>("Expm1", f([](auto x, float) { return std::expm1(x); }));
  RegUnary<false, Set::kFloat>("Sin", f([](auto x, float) { return std::sin(x); }));
  RegUnary<false, Set::kFloat>("Cos", f([](auto x, float) { return std::cos(x); }));
  RegUnary<false, Set::kFloat>("Tan", f([](auto x, float) { return std::tan(x); }));
  RegUnary<false, Set::kFloat>("Asin", f([](auto x, float) { return std::asin(x); }));
  RegUnary<false, Set::kFloat>("Acos", f([](auto x, float) { return std::acos(x); }));
  RegUnary<false, Set::kFloat>("Atan", f([](auto x, float) { return std::atan(x); }));
  RegUnary<false, Set::kFloat>("Sinh", f([](auto x, float) { return std::sinh(x); }));
  RegUnary<false, Set::kFloat>("Cosh", f([](auto x, float) { return std::cosh(x); }));
  RegUnary<false, Set::kFloat>("Asinh", f([](auto x, float) { return std::asinh(x); }));
  RegUnary<false, Set::kFloat>("Acosh", f([](auto x, float) { return std::acosh(x); }));
  RegUnary<false, Set::kFloat>("Atanh", f([](auto x, float) { return std::atanh(x); }));
  RegUnary<false, Set::kFloat>("Lgamma", f([](auto x, float) { return std::lgamma(x); }));
  RegUnary<false, Set::kFloat>("Floor", f([](auto x, float) { return std::floor(x); }));
  RegUnary<false, Set::kFloat>("Ceil", f([](auto x, float) { return std::ceil(x); }));
  RegUnary<false, Set::kFloat>("Rint", f([](auto x, float) { return std::nearbyint(x); }));
  // Round: half to even for floats, identity for integers.
  RegUnary<false, Set::kNumeric>("Round", f([](auto x, float) {
                                   using T = decltype(x);
                                   if constexpr (std::is_floating_point<T>::value)
                                     return std::nearbyint(x);
                                   return x;
                                 }));
  for (const char* op : {"Reciprocal", "Inv"}) {
    RegUnary<false, Set::kFloat>(op, f([](auto x, float) { return decltype(x)(1) / x; }));
  }
  RegUnary<false, Set::kFloat>("Softplus", f([](auto x, float) {
                                 using T = decltype(x);
                                 const T threshold =
                                     std::log(std::numeric_limits<T>::epsilon()) + T(2);
                                 if (x > -threshold) return x;
                                 if (x < threshold) return std::exp(x);
                                 return std::log1p(std::exp(x));
                               }),
                               "features", "activations");
  RegUnary<false, Set::kFloat>("Softsign",
                               f([](auto x, float) { return x / (decltype(x)(1) + std::abs(x)); }),
                               "features", "activations");
  RegUnary<false, Set::kFloat>("Elu", f([](auto x, float) { return x < 0 ? std::expm1(x) : x; }),
                               "features", "activations");
  RegUnary<false, Set::kFloat>("Selu", f([](auto x, float) {
                                 using T = decltype(x);
                                 const T scale = T(1.0507009873554804934193349852946);
                                 const T alpha = T(1.6732632423543772848170429916717);
                                 return x < 0 ? scale * alpha * std::expm1(x) : scale * x;
                               }),
                               "features", "activations");
  RegUnary<false, Set::kFloat>("LeakyRelu", f([](auto x, float alpha) {
                                 using T = decltype(x);
                                 return x < T(0) ? static_cast<T>(alpha) * x : x;
                               }),
                               "features", "activations");
  RegUnary<true, Set::kFloat>("IsNan", f([](auto x, float) { return std::isnan(x); }));
  RegUnary<true, Set::kFloat>("IsInf", f([](auto x, float) { return std::isinf(x); }));
  RegUnary<true, Set::kFloat>("IsFinite", f([](auto x, float) { return std::isfinite(x); }));
  // Unary numeric.
  RegUnary<false, Set::kNumeric>("Abs", f([](auto x, float) {
                                   using T = decltype(x);
                                   if constexpr (std::is_unsigned<T>::value) return x;
                                   return static_cast<T>(x < T(0) ? -x : x);
                                 }));
  RegUnary<false, Set::kNumeric>("Sign", f([](auto x, float) {
                                   using T = decltype(x);
                                   if constexpr (std::is_floating_point<T>::value) {
                                     if (std::isnan(x)) return x;
                                   }
                                   return static_cast<T>((T(0) < x) - (x < T(0)));
                                 }));
  RegUnary<false, Set::kBool>("LogicalNot", f([](auto x, float) { return !x; }));

  // Binary.
  RegBinary<false, Set::kNumeric>("Pow", f([](auto x, auto y, bool*) {
                                    using T = decltype(x);
                                    if constexpr (std::is_floating_point<T>::value) {
                                      return std::pow(x, y);
                                    } else {
                                      return IntPow<T>(x, y);
                                    }
                                  }));
  RegBinary<false, Set::kNumeric>("SquaredDifference", f([](auto x, auto y, bool*) {
                                    using T = decltype(x);
                                    const T d = static_cast<T>(x - y);
                                    return static_cast<T>(d * d);
                                  }));
  RegBinary<false, Set::kNumeric>("FloorDiv", f([](auto x, auto y, bool* err) {
                                    using T = decltype(x);
                                    if constexpr (std::is_floating_point<T>::value) {
                                      return std::floor(x / y);
                                    } else {
                                      return FloorDivInt<T>(x, y, err);
                                    }
                                  }));
  RegBinary<false, Set::kNumeric>("FloorMod", f([](auto x, auto y, bool* err) {
                                    using T = decltype(x);
                                    if constexpr (std::is_floating_point<T>::value) {
                                      T m = std::fmod(x, y);
                                      if (m != 0 && ((y < 0) != (m < 0))) m += y;
                                      return m;
                                    } else {
                                      if (y == 0) {
                                        *err = true;
                                        return T(0);
                                      }
                                      T m = static_cast<T>(x % y);
                                      if constexpr (std::is_signed<T>::value) {
                                        if (m != 0 && ((y < 0) != (m < 0)))
                                          m = static_cast<T>(m + y);
                                      }
                                      return m;
                                    }
                                  }));
  for (const char* op : {"TruncateDiv", "Div"}) {
    RegBinary<false, Set::kNumeric>(op, f([](auto x, auto y, bool* err) {
                                      using T = decltype(x);
                                      if constexpr (std::is_integral<T>::value) {
                                        if (y == 0) {
                                          *err = true;
                                          return T(0);
                                        }
                                      }
                                      return static_cast<T>(x / y);
                                    }));
  }
  RegBinary<false, Set::kReal>("TruncateMod", f([](auto x, auto y, bool* err) {
                                 using T = decltype(x);
                                 if constexpr (std::is_floating_point<T>::value) {
                                   return std::fmod(x, y);
                                 } else {
                                   if (y == 0) {
                                     *err = true;
                                     return T(0);
                                   }
                                   return static_cast<T>(x % y);
                                 }
                               }));
  // 0 where x is 0, whatever y is (NaN included), as TensorFlow defines them.
  RegBinary<false, Set::kFloat>(
      "Xlogy", f([](auto x, auto y, bool*) { return x == 0 ? decltype(x)(0) : x * std::log(y); }));
  RegBinary<false, Set::kFloat>(
      "Xdivy", f([](auto x, auto y, bool*) { return x == 0 ? decltype(x)(0) : x / y; }));
  RegBinary<false, Set::kFloat>(
      "DivNoNan", f([](auto x, auto y, bool*) { return y == 0 ? decltype(x)(0) : x / y; }));
  RegBinary<true, Set::kNumeric>("Less", f([](auto x, auto y, bool*) { return x < y; }));
  RegBinary<true, Set::kNumeric>("LessEqual", f([](auto x, auto y, bool*) { return x <= y; }));
  RegBinary<true, Set::kNumeric>("Greater", f([](auto x, auto y, bool*) { return x > y; }));
  RegBinary<true, Set::kNumeric>("GreaterEqual", f([](auto x, auto y, bool*) { return x >= y; }));
  RegBinary<true, Set::kPod>("Equal", f([](auto x, auto y, bool*) { return x == y; }));
  RegBinary<true, Set::kPod>("NotEqual", f([](auto x, auto y, bool*) { return x != y; }));
  RegBinary<false, Set::kBool>("LogicalAnd", f([](auto x, auto y, bool*) { return x && y; }));
  RegBinary<false, Set::kBool>("LogicalOr", f([](auto x, auto y, bool*) { return x || y; }));

  RegisterOp("Select",
             {FixedArg("condition", DataType::kBool), TypedArg("t", "T"), TypedArg("e", "T")},
             {TypedArg("output", "T")}, [](ShapeContext* c) { return SelectShape(c, false); });
  KernelRegistry::Global()->Register("Select", "CPU", [](OpKernelConstruction* c) {
    return std::unique_ptr<OpKernel>(new SelectOp(c, false));
  });
  RegisterOp("SelectV2",
             {FixedArg("condition", DataType::kBool), TypedArg("t", "T"), TypedArg("e", "T")},
             {TypedArg("output", "T")}, [](ShapeContext* c) { return SelectShape(c, true); });
  KernelRegistry::Global()->Register("SelectV2", "CPU", [](OpKernelConstruction* c) {
    return std::unique_ptr<OpKernel>(new SelectOp(c, true));
  });
  RegisterOp("AddN", {TypedArg("inputs", "T", "N")}, {TypedArg("sum", "T")}, UnchangedShape());
  oputil::RegisterCpu<AddNOp>("AddN");
  RegisterOp("ClipByValue",
             {TypedArg("t", "T"), TypedArg("clip_value_min", "T"), TypedArg("clip_value_max", "T")},
             {TypedArg("output", "T")}, UnchangedShape());
  oputil::RegisterCpu<ClipOp>("ClipByValue");
  return true;
}();

}  // namespace
}  // namespace kernels
}  // namespace ember
