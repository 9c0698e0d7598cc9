// Assert with TensorFlow's semantics and message (core/kernels/logging_ops.cc): nothing when the
// scalar condition holds, otherwise INVALID_ARGUMENT "assertion failed: [d0] [d1] ...", each
// data tensor summarised as Tensor::SummarizeValue does (its first `summarize` entries, nested
// brackets per dim, "..." where entries were left out). tf.debugging.assert_* and
// tf.image.resize_with_pad leave these in frozen graphs, usually reached by control edges only.
// ember keeps no string contents, so a string tensor prints as "<string>".
#include <algorithm>
#include <cfloat>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/op_kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/op_util.h"

namespace ember {
namespace kernels {
namespace {

using oputil::FixedArg;
using oputil::ListArg;
using oputil::RegisterCpu;
using oputil::RegisterOp;

// The shortest of %.{digits}g and %.{digits + 3}g that reads back as v, as TensorFlow's
// FloatToBuffer / DoubleToBuffer.
template <typename T>
std::string Shortest(T v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*g", digits, static_cast<double>(v));
  if (static_cast<T>(std::strtod(buf, nullptr)) != v && v == v) {
    std::snprintf(buf, sizeof(buf), "%.*g", digits + 3, static_cast<double>(v));
  }
  return buf;
}

std::string Element(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::kFloat:
      return Shortest(t.data<float>()[i], FLT_DIG);
    case DataType::kDouble:
      return Shortest(t.data<double>()[i], DBL_DIG);
    case DataType::kBool:
      return t.data<bool>()[i] ? "1" : "0";
    default: {
      std::string s;
      DispatchNumeric(t.dtype(), [&](auto tag) {
        using T = decltype(tag);
        s = std::to_string(static_cast<int64_t>(t.data<T>()[i]));
      });
      return s;
    }
  }
}

// One dim of Tensor::SummarizeValue (TensorFlow's PrintOneDim).
void PrintDim(const Tensor& t, int dim, int64_t limit, int64_t* at, std::string* out) {
  if (*at >= limit) return;
  const int64_t n = t.dim_size(dim);
  if (dim == t.dims() - 1) {
    for (int64_t i = 0; i < n; ++i) {
      if (*at >= limit) {
        if (dim != 0) *out += "...";
        return;
      }
      if (i > 0) *out += " ";
      *out += Element(t, (*at)++);
    }
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    bool open = false;
    if (*at < limit) {
      *out += "[";
      open = true;
    }
    PrintDim(t, dim + 1, limit, at, out);
    if (*at < limit || open) *out += "]";
  }
}

std::string Summarize(const Tensor& t, int64_t max_entries) {
  const int64_t n = t.NumElements();
  if (t.dtype() == DataType::kString) return "<string>";
  if (DataTypeSize(t.dtype()) == 0) return "<" + DataTypeString(t.dtype()) + ">";
  const int64_t limit = max_entries < 0 ? n : std::min(max_entries, n);
  std::string s;
  if (t.dims() == 0) {
    for (int64_t i = 0; i < limit; ++i) {
      if (i > 0) s += " ";
      s += Element(t, i);
    }
  } else {
    int64_t at = 0;
    PrintDim(t, 0, limit, &at, &s);
  }
  if (n > limit) s += "...";
  return s;
}

class AssertOp : public OpKernel {
 public:
  explicit AssertOp(OpKernelConstruction* c) : OpKernel(c) {
    Status s = c->attrs().GetOr("summarize", &summarize_, int64_t{3});
    if (!s.ok()) c->SetStatus(s);
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& cond = ctx->input(0);
    if (cond.dims() != 0) {
      ctx->SetStatus(
          InvalidArg(ctx->node(), "In[0] should be a scalar: " + cond.shape().DebugString()));
      return;
    }
    if (cond.data<bool>()[0]) return;
    std::string msg = "assertion failed: ";
    for (int i = 1; i < ctx->num_inputs(); ++i) {
      msg += "[" + Summarize(ctx->input(i), summarize_) + "]";
      if (i < ctx->num_inputs() - 1) msg += " ";
    }
    ctx->SetStatus(InvalidArg(ctx->node(), msg));
  }

 private:
  int64_t summarize_ = 3;
};

[[maybe_unused]] const bool kRegistered = [] {
  RegisterOp("Assert", {FixedArg("condition", DataType::kBool), ListArg("data", "T")}, {},
             oputil::UnknownOutputs(0));
  RegisterCpu<AssertOp>("Assert");
  return true;
}();

}  // namespace
}  // namespace kernels
}  // namespace ember
