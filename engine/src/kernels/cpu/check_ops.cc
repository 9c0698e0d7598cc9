// Ops that pass their input through after checking it, with TensorFlow's messages:
// EnsureShape (tf.ensure_shape, array_ops.cc's EnsureShapeOp) and CheckNumerics / CheckNumericsV2
// (tf.debugging.check_numerics, check_numerics_op.cc). The output shares the input's buffer.
#include <cmath>
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

// PartialTensorShape::DebugString: "[?,3]", "<unknown>".
std::string PartialString(const PartialShape& s) {
  if (s.unknown_rank) return "<unknown>";
  std::string out = "[";
  for (size_t i = 0; i < s.dims.size(); ++i) {
    if (i > 0) out += ",";
    out += s.dims[i] < 0 ? "?" : std::to_string(s.dims[i]);
  }
  return out + "]";
}

bool Compatible(const PartialShape& want, const std::vector<int64_t>& dims) {
  if (want.unknown_rank) return true;
  if (want.dims.size() != dims.size()) return false;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (want.dims[i] >= 0 && want.dims[i] != dims[i]) return false;
  }
  return true;
}

class EnsureShapeOp : public OpKernel {
 public:
  explicit EnsureShapeOp(OpKernelConstruction* c) : OpKernel(c) {
    Status s = c->GetAttr("shape", &shape_);
    if (!s.ok()) c->SetStatus(s);
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    if (!Compatible(shape_, in.shape().dim_sizes())) {
      const NodeDef& node = ctx->node();
      const std::string name = node.input.empty() ? std::string() : node.input[0];
      ctx->SetStatus(InvalidArg(node, "Shape of tensor " + name + " " + in.shape().DebugString() +
                                          " is not compatible with expected shape " +
                                          PartialString(shape_) + "."));
      return;
    }
    ctx->set_output(0, in);
  }

 private:
  PartialShape shape_;
};

// The attr shape, with the dims it leaves unknown taken from the input where it knows them.
Status EnsureShapeShape(ShapeContext* c) {
  PartialShape want;
  EMBER_RETURN_IF_ERROR(AttrReader(*c->node).Get("shape", &want));
  if (oputil::KnownRank(c, 0)) {
    const PartialShape& in = c->input_shapes[0];
    if (want.unknown_rank) {
      want = in;
    } else if (in.dims.size() == want.dims.size()) {
      for (size_t i = 0; i < in.dims.size(); ++i) {
        if (want.dims[i] < 0) want.dims[i] = in.dims[i];
      }
    }
  }
  c->output_shapes.assign(1, want);
  return Status::OK();
}

// V1 reports "Inf" and "NaN"; V2 tells -Inf from +Inf.
class CheckNumericsOp : public OpKernel {
 public:
  explicit CheckNumericsOp(OpKernelConstruction* c) : OpKernel(c) {
    v2_ = c->node().op == "CheckNumericsV2";
    dtype_ = c->input_types().empty() ? DataType::kInvalid : c->input_types()[0];
    Status s = c->GetAttr("message", &message_);
    if (!s.ok()) c->SetStatus(s);
    CheckTypeAllowed(c, "T", dtype_, DispatchFloat(dtype_, [](auto) {}), "float, double");
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    bool nan = false, neg_inf = false, pos_inf = false;
    DispatchFloat(in.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* x = in.data<T>();
      for (int64_t i = 0; i < in.NumElements(); ++i) {
        if (std::isnan(x[i])) {
          nan = true;
        } else if (std::isinf(x[i])) {
          (x[i] < 0 ? neg_inf : pos_inf) = true;
        }
      }
    });
    std::vector<std::string> found;
    if (v2_) {
      if (neg_inf) found.push_back("-Inf");
      if (pos_inf) found.push_back("+Inf");
    } else if (neg_inf || pos_inf) {
      found.push_back("Inf");
    }
    if (nan) found.push_back("NaN");
    if (found.empty()) {
      ctx->set_output(0, in);
      return;
    }
    std::string what = found[0];
    for (size_t i = 1; i < found.size(); ++i) what += " and " + found[i];
    ctx->SetStatus(InvalidArg(ctx->node(), message_ + " : Tensor had " + what + " values"));
  }

 private:
  bool v2_ = false;
  DataType dtype_ = DataType::kInvalid;
  std::string message_;
};

[[maybe_unused]] const bool kRegistered = [] {
  RegisterOp("EnsureShape", {TypedArg("input", "T")}, {TypedArg("output", "T")}, EnsureShapeShape);
  RegisterCpu<EnsureShapeOp>("EnsureShape");
  for (const char* op : {"CheckNumerics", "CheckNumericsV2"}) {
    RegisterOp(op, {TypedArg("tensor", "T")}, {TypedArg("output", "T")}, UnchangedShape());
    RegisterCpu<CheckNumericsOp>(op);
  }
  return true;
}();

}  // namespace
}  // namespace kernels
}  // namespace ember
