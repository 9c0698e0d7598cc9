// Switch and Merge outside while loops: the nodes of a lowered tf.cond (TF1 control flow, and a
// TF2 If or StatelessIf once frozen by convert_variables_to_constants_v2). Switch(data, pred)
// sends data to output_true or output_false and leaves the other output dead; Merge passes on
// its live input and its index. Dead tensors are the executor's business (Executor::RunCondNode
// in src/core/executor.cc runs both ops itself); this file gives them their op definitions (types
// and shapes for Graph::Build) and kernels for placement, which the executor never calls.
// Switch and Merge inside a loop's frame are the loop's own, cut out by src/core/control_flow.cc.
#include <string>
#include <vector>

#include "core/op_kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/op_util.h"

namespace ember {
namespace kernels {
namespace {

using oputil::FixedArg;
using oputil::TypedArg;

class RunByExecutorOp : public OpKernel {
 public:
  explicit RunByExecutorOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    ctx->SetStatus(errors::Internal(ctx->node().op + " node '" + ctx->node().name +
                                    "' must be run by the executor"));
  }
};

bool SameShape(const PartialShape& a, const PartialShape& b) {
  return !a.unknown_rank && !b.unknown_rank && a.dims == b.dims;
}

[[maybe_unused]] const bool kRegistered = [] {
  oputil::RegisterOp("Switch", {TypedArg("data", "T"), FixedArg("pred", DataType::kBool)},
                     {TypedArg("output_false", "T"), TypedArg("output_true", "T")},
                     [](ShapeContext* c) {
                       c->output_shapes.assign(2, c->input_shapes[0]);
                       return Status::OK();
                     });
  oputil::RegisterCpu<RunByExecutorOp>("Switch");
  // The output's shape is the inputs' when they all agree (TensorFlow keeps the dims they share).
  oputil::RegisterOp(
      "Merge", {TypedArg("inputs", "T", "N")},
      {TypedArg("output", "T"), FixedArg("value_index", DataType::kInt32)}, [](ShapeContext* c) {
        PartialShape out = c->input_shapes.empty() ? UnknownShape() : c->input_shapes[0];
        for (const PartialShape& s : c->input_shapes) {
          if (!SameShape(s, out)) out = UnknownShape();
        }
        c->output_shapes = {out, KnownShape({})};
        return Status::OK();
      });
  oputil::RegisterCpu<RunByExecutorOp>("Merge");
  return true;
}();

}  // namespace
}  // namespace kernels
}  // namespace ember
