// Normalisation and reduction ops with TensorFlow's semantics: FusedBatchNorm, V2 and V3
// (inference and training statistics, NHWC and NCHW), LogSoftmax, and the reductions Max, Min,
// Prod, All, Any (int32/int64 axes, negative axes, keep_dims).
#include <cmath>
#include <limits>
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
using oputil::RegisterCpu;
using oputil::RegisterOp;
using oputil::TypedArg;

class FusedBatchNormOp : public OpKernel {
 public:
  explicit FusedBatchNormOp(OpKernelConstruction* c) : OpKernel(c) {
    Status s = c->attrs().GetOr("epsilon", &epsilon_, 1e-4f);
    if (s.ok()) s = c->attrs().GetOr("is_training", &training_, true);
    if (s.ok()) s = c->attrs().GetOr("exponential_avg_factor", &avg_factor_, 1.0f);
    std::string fmt;
    if (s.ok()) s = c->attrs().GetOr<std::string>("data_format", &fmt, "NHWC");
    if (s.ok() && fmt != "NHWC" && fmt != "NCHW") {
      s = NodeError(c->node(), Code::kUnimplemented, "data_format " + fmt + " is not supported");
    }
    nchw_ = fmt == "NCHW";
    if (s.ok() && (c->input_types().empty() || c->input_types()[0] != DataType::kFloat)) {
      s = InvalidArg(c->node(), "FusedBatchNorm supports float inputs only");
    }
    if (!s.ok()) c->SetStatus(s);
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    if (x.dims() != 4) {
      ctx->SetStatus(
          InvalidArg(ctx->node(), "input must be 4-dimensional" + x.shape().DebugString()));
      return;
    }
    const int64_t c = x.dim_size(nchw_ ? 1 : 3);
    for (int i = 1; i < 5; ++i) {
      const Tensor& p = ctx->input(i);
      const bool stats = i >= 3;
      if (p.dims() != 1 || p.dtype() != DataType::kFloat ||
          (p.dim_size(0) != c && !(stats && training_ && p.dim_size(0) == 0))) {
        ctx->SetStatus(InvalidArg(ctx->node(), std::string(i == 1   ? "scale"
                                                           : i == 2 ? "offset"
                                                           : i == 3 ? "mean"
                                                                    : "variance") +
                                                   " must have the same number of elements as the "
                                                   "channels of x, got " +
                                                   std::to_string(p.NumElements()) + " and " +
                                                   std::to_string(c)));
        return;
      }
    }
    const float* scale = ctx->input(1).data<float>();
    const float* offset = ctx->input(2).data<float>();
    const int64_t n = x.NumElements();
    const int64_t rows = c == 0 ? 0 : n / c;
    const int64_t hw = nchw_ ? x.dim_size(2) * x.dim_size(3) : 1;
    std::vector<float> mean(static_cast<size_t>(c)), var(static_cast<size_t>(c));
    std::vector<float> out_var(static_cast<size_t>(c));
    const float* xd = x.data<float>();
    auto channel_of = [&](int64_t i) { return nchw_ ? (i / hw) % c : i % c; };
    if (training_) {
      std::vector<double> sum(static_cast<size_t>(c), 0.0), sq(static_cast<size_t>(c), 0.0);
      for (int64_t i = 0; i < n; ++i) sum[static_cast<size_t>(channel_of(i))] += xd[i];
      for (int64_t k = 0; k < c; ++k)
        mean[k] = static_cast<float>(sum[k] / static_cast<double>(rows));
      for (int64_t i = 0; i < n; ++i) {
        const double d = xd[i] - mean[static_cast<size_t>(channel_of(i))];
        sq[static_cast<size_t>(channel_of(i))] += d * d;
      }
      for (int64_t k = 0; k < c; ++k) {
        var[k] = static_cast<float>(sq[k] / static_cast<double>(rows));
        const double corr = rows > 1 ? static_cast<double>(rows) / (rows - 1) : 1.0;
        out_var[k] = static_cast<float>(var[k] * corr);
      }
      // Running statistics blended by exponential_avg_factor when given.
      if (avg_factor_ != 1.0f && ctx->input(3).NumElements() == c) {
        for (int64_t k = 0; k < c; ++k) {
          mean[k] = (1 - avg_factor_) * ctx->input(3).data<float>()[k] + avg_factor_ * mean[k];
          out_var[k] =
              (1 - avg_factor_) * ctx->input(4).data<float>()[k] + avg_factor_ * out_var[k];
        }
      }
    } else {
      for (int64_t k = 0; k < c; ++k) {
        mean[k] = ctx->input(3).data<float>()[k];
        var[k] = out_var[k] = ctx->input(4).data<float>()[k];
      }
    }
    std::vector<float> mul(static_cast<size_t>(c)), add(static_cast<size_t>(c));
    for (int64_t k = 0; k < c; ++k) {
      mul[k] = scale[k] / std::sqrt(var[k] + epsilon_);
      add[k] = offset[k] - mean[k] * mul[k];
    }
    Tensor* y = nullptr;
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output_uninitialized(0, x.shape(), &y));
    float* yd = y->data<float>();
    if (!nchw_) {
      for (int64_t r = 0; r < rows; ++r) {
        const float* xr = xd + r * c;
        float* yr = yd + r * c;
        for (int64_t k = 0; k < c; ++k) yr[k] = xr[k] * mul[k] + add[k];
      }
    } else {
      for (int64_t i = 0; i < n; ++i) {
        const int64_t k = channel_of(i);
        yd[i] = xd[i] * mul[k] + add[k];
      }
    }
    for (int o = 1; o < ctx->num_outputs(); ++o) {
      Tensor* t = nullptr;
      const bool reserve3 = o == 5;
      EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output(o, TensorShape({reserve3 ? 0 : c}), &t));
      if (reserve3) continue;
      const std::vector<float>& src = (o == 1 || o == 3) ? mean : (o == 2 ? out_var : var);
      for (int64_t k = 0; k < c; ++k) t->data<float>()[k] = src[static_cast<size_t>(k)];
    }
  }

 private:
  float epsilon_ = 1e-4f, avg_factor_ = 1.0f;
  bool training_ = true, nchw_ = false;
};

class LogSoftmaxOp : public OpKernel {
 public:
  explicit LogSoftmaxOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    if (x.dims() < 1) {
      ctx->SetStatus(InvalidArg(ctx->node(),
                                "logits must have >= 1 dimension, got " + x.shape().DebugString()));
      return;
    }
    Tensor* out = nullptr;
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &out));
    const int64_t depth = x.dim_size(x.dims() - 1);
    const int64_t rows = depth == 0 ? 0 : x.NumElements() / depth;
    bool ok = DispatchFloat(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      for (int64_t r = 0; r < rows; ++r) {
        const T* in = x.data<T>() + r * depth;
        T* o = out->data<T>() + r * depth;
        T m = in[0];
        for (int64_t j = 1; j < depth; ++j) m = in[j] > m ? in[j] : m;
        T sum = 0;
        for (int64_t j = 0; j < depth; ++j) sum += std::exp(in[j] - m);
        const T lse = std::log(sum);
        for (int64_t j = 0; j < depth; ++j) o[j] = (in[j] - m) - lse;
      }
    });
    if (!ok) ctx->SetStatus(InvalidArg(ctx->node(), "LogSoftmax supports float and double"));
  }
};

enum class Reduce { kMax, kMin, kProd, kAll, kAny };

class ReduceOp : public OpKernel {
 public:
  ReduceOp(OpKernelConstruction* c, Reduce kind) : OpKernel(c), kind_(kind) {
    Status s = c->attrs().GetOr("keep_dims", &keep_dims_, false);
    if (!s.ok()) c->SetStatus(s);
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    std::vector<int64_t> axes;
    EMBER_OP_REQUIRES_OK(ctx,
                         ReadIndexVector(ctx->node(), ctx->input(1), "reduction_indices", &axes));
    const int64_t rank = in.dims();
    std::vector<bool> red(static_cast<size_t>(rank), false);
    for (int64_t a : axes) {
      int64_t ax = a;
      if (!oputil::NormalizeAxis(&ax, rank)) {
        ctx->SetStatus(InvalidArg(ctx->node(), "Invalid reduction dimension (" + std::to_string(a) +
                                                   " for input with " + std::to_string(rank) +
                                                   " dimension(s)"));
        return;
      }
      red[static_cast<size_t>(ax)] = true;
    }
    const std::vector<int64_t>& d = in.shape().dim_sizes();
    std::vector<int64_t> out_dims, kept;
    for (size_t i = 0; i < d.size(); ++i) {
      kept.push_back(red[i] ? 1 : d[i]);
      if (!red[i]) out_dims.push_back(d[i]);
      if (red[i] && keep_dims_) out_dims.push_back(1);
    }
    Tensor* out = nullptr;
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(out_dims), &out));
    // Output strides over the input's dims, 0 on reduced dims.
    std::vector<int64_t> os = oputil::Strides(kept);
    for (size_t i = 0; i < d.size(); ++i) {
      if (red[i]) os[i] = 0;
    }
    const bool is_bool = kind_ == Reduce::kAll || kind_ == Reduce::kAny;
    bool ok = is_bool ? in.dtype() == DataType::kBool : DispatchNumeric(in.dtype(), [](auto) {});
    if (!ok) {
      ctx->SetStatus(InvalidArg(ctx->node(), "unsupported dtype " + DataTypeString(in.dtype())));
      return;
    }
    DispatchPod(in.dtype(), [&](auto tag) {
      using T = decltype(tag);
      T init;
      switch (kind_) {
        case Reduce::kMax:
          init = std::numeric_limits<T>::lowest();
          if constexpr (std::is_floating_point<T>::value)
            init = -std::numeric_limits<T>::infinity();
          break;
        case Reduce::kMin:
          init = std::numeric_limits<T>::max();
          if constexpr (std::is_floating_point<T>::value) init = std::numeric_limits<T>::infinity();
          break;
        case Reduce::kProd:
        case Reduce::kAll:
          init = T(1);
          break;
        default:
          init = T(0);
      }
      T* o = out->data<T>();
      for (int64_t i = 0; i < out->NumElements(); ++i) o[i] = init;
      const T* x = in.data<T>();
      const int64_t n = in.NumElements();
      const size_t r = d.size();
      std::vector<int64_t> idx(r, 0);
      int64_t oi = 0;
      for (int64_t i = 0; i < n; ++i) {
        const T v = x[i];
        T& acc = o[oi];
        switch (kind_) {
          case Reduce::kMax:
            if constexpr (std::is_floating_point<T>::value) {
              if (std::isnan(v)) acc = v;
            }
            acc = v > acc ? v : acc;
            break;
          case Reduce::kMin:
            if constexpr (std::is_floating_point<T>::value) {
              if (std::isnan(v)) acc = v;
            }
            acc = v < acc ? v : acc;
            break;
          case Reduce::kProd:
            acc = static_cast<T>(acc * v);
            break;
          case Reduce::kAll:
            acc = static_cast<T>(acc && v);
            break;
          case Reduce::kAny:
            acc = static_cast<T>(acc || v);
            break;
        }
        for (size_t k = r; k-- > 0;) {
          oi += os[k];
          if (++idx[k] < d[k]) break;
          oi -= os[k] * d[k];
          idx[k] = 0;
        }
      }
    });
  }

 private:
  Reduce kind_;
  bool keep_dims_ = false;
};

Status ReduceShape(ShapeContext* c) {
  c->output_shapes.assign(1, UnknownShape());
  std::vector<int64_t> axes;
  if (!oputil::KnownRank(c, 0) || !oputil::ConstVector(c, 1, &axes)) return Status::OK();
  const std::vector<int64_t>& in = c->input_shapes[0].dims;
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<bool> red(in.size(), false);
  for (int64_t a : axes) {
    int64_t ax = a;
    if (!oputil::NormalizeAxis(&ax, rank)) {
      return InvalidArg(*c->node, "Invalid reduction dimension (" + std::to_string(a) +
                                      " for input with " + std::to_string(rank) + " dimension(s)");
    }
    red[static_cast<size_t>(ax)] = true;
  }
  bool keep = false;
  EMBER_RETURN_IF_ERROR(AttrReader(*c->node).GetOr("keep_dims", &keep, false));
  std::vector<int64_t> out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (!red[i]) {
      out.push_back(in[i]);
    } else if (keep) {
      out.push_back(1);
    }
  }
  c->output_shapes[0] = KnownShape(out);
  return Status::OK();
}

[[maybe_unused]] const bool kRegistered = [] {
  struct BnVersion {
    const char* op;
    const char* stats_type;
    int outputs;
  };
  for (const BnVersion& v :
       {BnVersion{"FusedBatchNorm", "T", 5}, BnVersion{"FusedBatchNormV2", "U", 5},
        BnVersion{"FusedBatchNormV3", "U", 6}}) {
    std::vector<ArgDef> in = {TypedArg("x", "T"), TypedArg("scale", v.stats_type),
                              TypedArg("offset", v.stats_type), TypedArg("mean", v.stats_type),
                              TypedArg("variance", v.stats_type)};
    std::vector<ArgDef> out = {TypedArg("y", "T"), TypedArg("batch_mean", v.stats_type),
                               TypedArg("batch_variance", v.stats_type),
                               TypedArg("reserve_space_1", v.stats_type),
                               TypedArg("reserve_space_2", v.stats_type)};
    if (v.outputs == 6) out.push_back(TypedArg("reserve_space_3", v.stats_type));
    const int n = v.outputs;
    RegisterOp(v.op, in, out, [n](ShapeContext* c) {
      c->output_shapes.assign(static_cast<size_t>(n), KnownShape({-1}));
      c->output_shapes[0] = c->input_shapes.empty() ? UnknownShape() : c->input_shapes[0];
      return Status::OK();
    });
    RegisterCpu<FusedBatchNormOp>(v.op);
  }
  RegisterOp("LogSoftmax", {TypedArg("logits", "T")}, {TypedArg("logsoftmax", "T")},
             UnchangedShape());
  RegisterCpu<LogSoftmaxOp>("LogSoftmax");
  struct R {
    const char* op;
    Reduce kind;
  };
  for (const R& r : {R{"Max", Reduce::kMax}, R{"Min", Reduce::kMin}, R{"Prod", Reduce::kProd},
                     R{"All", Reduce::kAll}, R{"Any", Reduce::kAny}}) {
    const bool logical = r.kind == Reduce::kAll || r.kind == Reduce::kAny;
    RegisterOp(r.op,
               {logical ? FixedArg("input", DataType::kBool) : TypedArg("input", "T"),
                TypedArg("reduction_indices", "Tidx")},
               {logical ? FixedArg("output", DataType::kBool) : TypedArg("output", "T")},
               ReduceShape);
    const Reduce kind = r.kind;
    KernelRegistry::Global()->Register(r.op, "CPU", [kind](OpKernelConstruction* c) {
      return std::unique_ptr<OpKernel>(new ReduceOp(c, kind));
    });
  }
  return true;
}();

}  // namespace
}  // namespace kernels
}  // namespace ember
