// Elementwise CPU ops: Add, AddV2, Sub, Mul, RealDiv, Maximum, Minimum (NumPy broadcasting,
// TensorFlow's "Incompatible shapes" error) and Neg, Square, Sqrt, Exp, Tanh, Sigmoid, Relu, Relu6.
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <type_traits>

#include "core/op_kernel.h"
#include "kernels/cpu/cwise_util.h"
#include "kernels/cpu/kernel_util.h"

namespace ember {
namespace kernels {
namespace {

enum class TypeSet { kNumeric, kFloat };

bool InSet(TypeSet set, DataType dt) {
  if (set == TypeSet::kFloat) return dt == DataType::kFloat || dt == DataType::kDouble;
  return DispatchNumeric(dt, [](auto) {});
}
const char* SetNames(TypeSet set) {
  return set == TypeSet::kFloat ? "float, double"
                                : "float, double, int32, int64, int8, uint8, int16";
}

// ---- functors: one static template `Apply` each ----
struct AddF {
  template <typename T>
  static T Apply(T x, T y) {
    return static_cast<T>(x + y);
  }
};
struct SubF {
  template <typename T>
  static T Apply(T x, T y) {
    return static_cast<T>(x - y);
  }
};
struct MulF {
  template <typename T>
  static T Apply(T x, T y) {
    return static_cast<T>(x * y);
  }
};
struct DivF {
  template <typename T>
  static T Apply(T x, T y) {
    return static_cast<T>(x / y);
  }
};
struct MaxF {
  template <typename T>
  static T Apply(T x, T y) {
    if constexpr (std::is_floating_point<T>::value) {
      if (std::isnan(x) || std::isnan(y)) return x + y;  // NaN propagates, as in TensorFlow
    }
    return x > y ? x : y;
  }
};
struct MinF {
  template <typename T>
  static T Apply(T x, T y) {
    if constexpr (std::is_floating_point<T>::value) {
      if (std::isnan(x) || std::isnan(y)) return x + y;
    }
    return x < y ? x : y;
  }
};

struct NegF {
  template <typename T>
  static T Apply(T x) {
    return static_cast<T>(-x);
  }
};
struct SquareF {
  template <typename T>
  static T Apply(T x) {
    return static_cast<T>(x * x);
  }
};
struct SqrtF {
  template <typename T>
  static T Apply(T x) {
    return std::sqrt(x);
  }
};
struct ExpF {
  template <typename T>
  static T Apply(T x) {
    return std::exp(x);
  }
  // Eigen's vectorized exp, TensorFlow's CPU kernel's (within 1-2 ulp of std::exp).
  template <typename T>
  static void Block(const T* x, T* y, int64_t n) {
    using Array = Eigen::Array<T, Eigen::Dynamic, 1>;
    Eigen::Map<Array>(y, n) = Eigen::Map<const Array>(x, n).exp();
  }
};
struct TanhF {
  template <typename T>
  static T Apply(T x) {
    return std::tanh(x);
  }
  // Whole ranges of float or double through Eigen's vectorized tanh (what TensorFlow's CPU
  // kernel computes): a rational approximation a few ulp from std::tanh, 4-5x faster; BERT's
  // GELU spent a tenth of the model's time in std::tanh.
  template <typename T>
  static void Block(const T* x, T* y, int64_t n) {
    using Array = Eigen::Array<T, Eigen::Dynamic, 1>;
    Eigen::Map<Array>(y, n) = Eigen::Map<const Array>(x, n).tanh();
  }
};

struct SigmoidF {
  template <typename T>
  static T Apply(T x) {
    if (x >= T(0)) return T(1) / (T(1) + std::exp(-x));
    T e = std::exp(x);
    return e / (T(1) + e);
  }
  // Eigen's vectorized logistic, TensorFlow's CPU kernel's: for float a rational approximation
  // (e^x below -9, 1 above its upper cut-off); EfficientNet's swish ran std::exp per value.
  template <typename T>
  static void Block(const T* x, T* y, int64_t n) {
    using Array = Eigen::Array<T, Eigen::Dynamic, 1>;
    Eigen::Map<Array>(y, n) = Eigen::Map<const Array>(x, n).logistic();
  }
};

// Whether UnaryOp runs Functor::Block over ranges of T rather than Functor::Apply per element:
// the functors with an Eigen form (TanhF, ExpF, SigmoidF), for float and double.
template <typename Functor>
constexpr bool kHasBlock =
    std::is_same<Functor, TanhF>::value || std::is_same<Functor, ExpF>::value ||
    std::is_same<Functor, SigmoidF>::value;
template <typename Functor, typename T>
constexpr bool kUsesBlock = kHasBlock<Functor> &&
                            (std::is_same<T, float>::value || std::is_same<T, double>::value);

// Functor::Block over n values where kUsesBlock. A function template, so that Functor::Block is
// looked up only where it exists: clang (the macOS cells) rejects it inside UnaryOp's generic
// lambda for every functor, discarded branch or not.
template <typename Functor, typename T>
void BlockRange(const T* x, T* y, int64_t n) {
  if constexpr (kUsesBlock<Functor, T>) Functor::Block(x, y, n);
}
struct ReluF {
  template <typename T>
  static T Apply(T x) {
    return x > T(0) ? x : T(0);
  }
};
struct Relu6F {
  template <typename T>
  static T Apply(T x) {
    T r = x > T(0) ? x : T(0);
    return r < T(6) ? r : T(6);
  }
};

template <typename F>
bool DispatchSet(TypeSet set, DataType dt, F&& f) {
  return set == TypeSet::kFloat ? DispatchFloat(dt, f) : DispatchNumeric(dt, f);
}

template <typename Functor>
class BinaryOp : public OpKernel {
 public:
  BinaryOp(OpKernelConstruction* c, TypeSet set) : OpKernel(c), set_(set) {
    dtype_ = c->input_types().empty() ? DataType::kInvalid : c->input_types()[0];
    CheckTypeAllowed(c, "T", dtype_, InSet(set, dtype_), SetNames(set));
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
    std::vector<int64_t> out_dims;
    if (!BroadcastShapes(a.shape().dim_sizes(), b.shape().dim_sizes(), &out_dims)) {
      ctx->SetStatus(InvalidArg(ctx->node(), "Incompatible shapes: " + a.shape().DebugString() +
                                                 " vs. " + b.shape().DebugString()));
      return;
    }
    Tensor* out = nullptr;
    Status s = ctx->allocate_output_uninitialized(0, TensorShape(out_dims), &out);
    if (!s.ok()) {
      ctx->SetStatus(s);
      return;
    }
    DispatchSet(set_, dtype_, [&](auto tag) {
      using T = decltype(tag);
      BinaryLoop<T, T>(a, b, out_dims, out->data<T>(), ctx->intra_op_pool(),
                       [](T x, T y) { return Functor::Apply(x, y); });
    });
  }

 private:
  TypeSet set_;
  DataType dtype_;
};

template <typename Functor>
class UnaryOp : public OpKernel {
 public:
  UnaryOp(OpKernelConstruction* c, TypeSet set) : OpKernel(c), set_(set) {
    dtype_ = c->input_types().empty() ? DataType::kInvalid : c->input_types()[0];
    CheckTypeAllowed(c, "T", dtype_, InSet(set, dtype_), SetNames(set));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    if (x.dtype() != dtype_) {
      ctx->SetStatus(InvalidArg(ctx->node(), "expected a " + DataTypeString(dtype_) +
                                                 " input, got " + DataTypeString(x.dtype())));
      return;
    }
    Tensor* out = nullptr;
    Status s = ctx->allocate_output_uninitialized(0, x.shape(), &out);
    if (!s.ok()) {
      ctx->SetStatus(s);
      return;
    }
    DispatchSet(set_, dtype_, [&](auto tag) {
      using T = decltype(tag);
      const T* in = x.data<T>();
      T* y = out->data<T>();
      if constexpr (kUsesBlock<Functor, T>) {
        const auto body = [&](int64_t begin, int64_t end) {
          BlockRange<Functor>(in + begin, y + begin, end - begin);
        };
        const int64_t n = x.NumElements();
        if (ctx->intra_op_pool() == nullptr || n < kParallelGrain) {
          body(0, n);
        } else {
          ParallelFor(ctx->intra_op_pool(), n, 8, body);
        }
        return;
      }
      UnaryLoop(in, y, x.NumElements(), ctx->intra_op_pool(),
                [](T v) { return Functor::Apply(v); });
    });
  }

 private:
  TypeSet set_;
  DataType dtype_;
};

ArgDef TArg(const char* name) {
  ArgDef a;
  a.name = name;
  a.type_attr = "T";
  return a;
}

template <typename Functor>
void RegisterBinary(const char* op, TypeSet set) {
  OpDef def;
  def.name = op;
  def.inputs = {TArg("x"), TArg("y")};
  def.outputs = {TArg("z")};
  def.shape_fn = BroadcastBinaryShape();
  OpRegistry::Global()->Register(std::move(def));
  KernelRegistry::Global()->Register(op, "CPU", [set](OpKernelConstruction* c) {
    return std::unique_ptr<OpKernel>(new BinaryOp<Functor>(c, set));
  });
}

template <typename Functor>
void RegisterUnary(const char* op, TypeSet set, const char* in = "x", const char* out = "y") {
  OpDef def;
  def.name = op;
  def.inputs = {TArg(in)};
  def.outputs = {TArg(out)};
  def.shape_fn = UnchangedShape();
  OpRegistry::Global()->Register(std::move(def));
  KernelRegistry::Global()->Register(op, "CPU", [set](OpKernelConstruction* c) {
    return std::unique_ptr<OpKernel>(new UnaryOp<Functor>(c, set));
  });
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterBinary<AddF>("Add", TypeSet::kNumeric);
  RegisterBinary<AddF>("AddV2", TypeSet::kNumeric);
  RegisterBinary<SubF>("Sub", TypeSet::kNumeric);
  RegisterBinary<MulF>("Mul", TypeSet::kNumeric);
  RegisterBinary<DivF>("RealDiv", TypeSet::kFloat);
  RegisterBinary<MaxF>("Maximum", TypeSet::kNumeric);
  RegisterBinary<MinF>("Minimum", TypeSet::kNumeric);
  RegisterUnary<NegF>("Neg", TypeSet::kNumeric);
  RegisterUnary<SquareF>("Square", TypeSet::kNumeric);
  RegisterUnary<SqrtF>("Sqrt", TypeSet::kFloat);
  RegisterUnary<ExpF>("Exp", TypeSet::kFloat);
  RegisterUnary<TanhF>("Tanh", TypeSet::kFloat);
  RegisterUnary<SigmoidF>("Sigmoid", TypeSet::kFloat);
  RegisterUnary<ReluF>("Relu", TypeSet::kNumeric, "features", "activations");
  RegisterUnary<Relu6F>("Relu6", TypeSet::kNumeric, "features", "activations");
  return true;
}();

}  // namespace
}  // namespace kernels
}  // namespace ember
