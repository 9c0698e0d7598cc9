// Bucketize (math_ops.cc's op, bucketize_op.cc's kernel): the index of the bucket of each value,
// the number of boundaries not above it (an upper bound), as int32. Keras's Discretization layer
// emits it. The boundaries must be sorted, which TensorFlow checks when it builds the kernel.
#include <algorithm>
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

class BucketizeOp : public OpKernel {
 public:
  explicit BucketizeOp(OpKernelConstruction* c) : OpKernel(c) {
    dtype_ = c->input_types().empty() ? DataType::kInvalid : c->input_types()[0];
    const auto it = c->node().attr.find("boundaries");
    if (it == c->node().attr.end() || it->second.kind != AttrValue::Kind::kList) {
      c->SetStatus(InvalidArg(c->node(), "missing list(float) attr 'boundaries'"));
      return;
    }
    boundaries_ = it->second.list.f;
    if (!std::is_sorted(boundaries_.begin(), boundaries_.end())) {
      c->SetStatus(InvalidArg(c->node(), "Expected sorted boundaries"));
      return;
    }
    const bool ok = DispatchFloat(dtype_, [](auto) {}) || DispatchIndex(dtype_, [](auto) {});
    CheckTypeAllowed(c, "T", dtype_, ok, "int32, int64, float, double");
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    Tensor* out = nullptr;
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output_uninitialized(0, in.shape(), &out));
    int32_t* y = out->data<int32_t>();
    const auto run = [&](auto tag) {
      using T = decltype(tag);
      const T* x = in.data<T>();
      for (int64_t i = 0; i < in.NumElements(); ++i) {
        // `value < boundary` in T and float's common type, as TensorFlow compares them.
        using C = typename std::common_type<T, float>::type;
        const auto pos =
            std::upper_bound(boundaries_.begin(), boundaries_.end(), x[i],
                             [](T v, float b) { return static_cast<C>(v) < static_cast<C>(b); });
        y[i] = static_cast<int32_t>(pos - boundaries_.begin());
      }
    };
    if (!DispatchFloat(in.dtype(), run)) DispatchIndex(in.dtype(), run);
  }

 private:
  DataType dtype_ = DataType::kInvalid;
  std::vector<float> boundaries_;
};

[[maybe_unused]] const bool kRegistered = [] {
  RegisterOp("Bucketize", {TypedArg("input", "T")}, {FixedArg("output", DataType::kInt32)},
             UnchangedShape());
  RegisterCpu<BucketizeOp>("Bucketize");
  return true;
}();

}  // namespace
}  // namespace kernels
}  // namespace ember
