// Sum and Mean over `reduction_indices` (int32/int64, negative axes, keep_dims).
#include <algorithm>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "core/op_kernel.h"
#include "kernels/cpu/kernel_util.h"

namespace ember {
namespace kernels {
namespace {

class ReductionOp : public OpKernel {
 public:
  ReductionOp(OpKernelConstruction* c, bool mean) : OpKernel(c), mean_(mean) {
    dtype_ = c->input_types().empty() ? DataType::kInvalid : c->input_types()[0];
    CheckTypeAllowed(c, "T", dtype_, DispatchNumeric(dtype_, [](auto) {}),
                     "float, double, int32, int64, int8, uint8, int16");
    Status s = c->attrs().GetOr("keep_dims", &keep_dims_, false);
    if (!s.ok()) c->SetStatus(s);
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    if (in.dtype() != dtype_) {
      ctx->SetStatus(InvalidArg(ctx->node(), "input is " + DataTypeString(in.dtype()) +
                                                 ", but T is " + DataTypeString(dtype_)));
      return;
    }
    std::vector<int64_t> axes;
    Status s = ReadIndexVector(ctx->node(), ctx->input(1), "reduction_indices", &axes);
    if (!s.ok()) {
      ctx->SetStatus(s);
      return;
    }
    const int64_t rank = in.dims();
    std::vector<bool> reduce(static_cast<size_t>(rank), false);
    for (int64_t a : axes) {
      if (a < -rank || a >= rank) {
        ctx->SetStatus(InvalidArg(ctx->node(), "Invalid reduction dimension (" + std::to_string(a) +
                                                   " for input with " + std::to_string(rank) +
                                                   " dimension(s)"));
        return;
      }
      reduce[static_cast<size_t>(a < 0 ? a + rank : a)] = true;
    }
    std::vector<int64_t> out_dims;
    std::vector<int64_t> kept;  // input dims with reduced ones set to 1
    int64_t count = 1;
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t size = in.dim_size(static_cast<int>(d));
      if (reduce[static_cast<size_t>(d)]) {
        count *= size;
        kept.push_back(1);
        if (keep_dims_) out_dims.push_back(1);
      } else {
        kept.push_back(size);
        out_dims.push_back(size);
      }
    }
    Tensor* out = nullptr;
    s = ctx->allocate_output_uninitialized(0, TensorShape(out_dims), &out);
    if (!s.ok()) {
      ctx->SetStatus(s);
      return;
    }
    // Output strides over the input's index space: 0 along reduced dims.
    const std::vector<int64_t> in_dims = in.shape().dim_sizes();
    const std::vector<int64_t> ostride = BroadcastStrides(kept, in_dims);
    DispatchNumeric(dtype_, [&](auto tag) {
      using T = decltype(tag);
      using Acc =
          typename std::conditional<std::is_floating_point<T>::value, double, int64_t>::type;
      const int64_t n_out = out->NumElements();
      std::vector<Acc> acc(static_cast<size_t>(n_out), Acc(0));
      const T* x = in.data<T>();
      const int64_t total = in.NumElements();
      if (rank == 0) {
        if (total == 1) acc[0] = static_cast<Acc>(x[0]);
      } else if (total > 0) {
        const int64_t inner = in_dims[static_cast<size_t>(rank - 1)];
        const int64_t istep = ostride[static_cast<size_t>(rank - 1)];
        const int64_t rows = total / inner;
        for (int64_t r = 0; r < rows; ++r) {
          int64_t o = 0, rem = r;
          for (int64_t d = rank - 1; d-- > 0;) {
            o += (rem % in_dims[static_cast<size_t>(d)]) * ostride[static_cast<size_t>(d)];
            rem /= in_dims[static_cast<size_t>(d)];
          }
          const T* row = x + r * inner;
          if (istep == 0) {
            Acc sum = 0;
            for (int64_t j = 0; j < inner; ++j) sum += static_cast<Acc>(row[j]);
            acc[static_cast<size_t>(o)] += sum;
          } else {
            Acc* dst = acc.data() + o;
            for (int64_t j = 0; j < inner; ++j) dst[j] += static_cast<Acc>(row[j]);
          }
        }
      }
      T* y = out->data<T>();
      for (int64_t i = 0; i < n_out; ++i) {
        Acc v = acc[static_cast<size_t>(i)];
        if (mean_) {
          if constexpr (std::is_floating_point<T>::value) {
            v = count == 0 ? std::numeric_limits<Acc>::quiet_NaN() : v / static_cast<Acc>(count);
          } else {
            v = count == 0 ? Acc(0) : v / static_cast<Acc>(count);
          }
        }
        y[i] = static_cast<T>(v);
      }
    });
  }

 private:
  bool mean_;
  DataType dtype_;
  bool keep_dims_ = false;
};

ArgDef Arg(const char* name, const char* type_attr) {
  ArgDef a;
  a.name = name;
  a.type_attr = type_attr;
  return a;
}

// Known output shape when the axes are a known constant.
Status ReductionShape(ShapeContext* c) {
  c->output_shapes.assign(1, UnknownShape());
  if (c->input_shapes.empty() || c->input_shapes[0].unknown_rank || c->input_values.size() < 2 ||
      c->input_values[1] == nullptr) {
    return Status::OK();
  }
  std::vector<int64_t> axes;
  EMBER_RETURN_IF_ERROR(ReadIndexVector(*c->node, *c->input_values[1], "reduction_indices", &axes));
  const std::vector<int64_t>& in = c->input_shapes[0].dims;
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<bool> reduce(in.size(), false);
  for (int64_t a : axes) {
    if (a < -rank || a >= rank) {
      return InvalidArg(*c->node, "Invalid reduction dimension (" + std::to_string(a) +
                                      " for input with " + std::to_string(rank) + " dimension(s)");
    }
    reduce[static_cast<size_t>(a < 0 ? a + rank : a)] = true;
  }
  bool keep = false;
  EMBER_RETURN_IF_ERROR(AttrReader(*c->node).GetOr("keep_dims", &keep, false));
  std::vector<int64_t> out;
  for (size_t d = 0; d < in.size(); ++d) {
    if (!reduce[d]) {
      out.push_back(in[d]);
    } else if (keep) {
      out.push_back(1);
    }
  }
  c->output_shapes[0] = KnownShape(out);
  return Status::OK();
}

[[maybe_unused]] const bool kRegistered = [] {
  for (const char* op : {"Sum", "Mean"}) {
    const bool mean = std::string(op) == "Mean";
    OpDef def;
    def.name = op;
    def.inputs = {Arg("input", "T"), Arg("reduction_indices", "Tidx")};
    def.outputs = {Arg("output", "T")};
    def.shape_fn = ReductionShape;
    OpRegistry::Global()->Register(std::move(def));
    KernelRegistry::Global()->Register(op, "CPU", [mean](OpKernelConstruction* c) {
      return std::unique_ptr<OpKernel>(new ReductionOp(c, mean));
    });
  }
  return true;
}();

}  // namespace
}  // namespace kernels
}  // namespace ember
