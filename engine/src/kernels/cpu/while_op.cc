// _EmberWhile: a TensorFlow while loop that LowerWhileLoops (src/core/control_flow.h) cut out
// of a graph. Its `body` attr is a GraphDef holding the condition and the body; the kernel
// runs both with ember's executor, inline on the calling thread, until the condition is false.
#include <memory>
#include <string>
#include <vector>

#include "core/control_flow.h"
#include "core/executor.h"
#include "core/graph.h"
#include "core/op_kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/op_util.h"

namespace ember {
namespace kernels {
namespace {

using oputil::ListArg;

class WhileOp : public OpKernel {
 public:
  explicit WhileOp(OpKernelConstruction* c) : OpKernel(c) {
    Status s = Init(c);
    if (!s.ok()) c->SetStatus(s);
  }

  void Compute(OpKernelContext* ctx) override {
    std::vector<Tensor> values(static_cast<size_t>(ctx->num_inputs()));
    for (int i = 0; i < ctx->num_inputs(); ++i) values[static_cast<size_t>(i)] = ctx->input(i);
    Executor::RunArgs args;
    args.resources = ctx->resources();
    args.intra_op_pool = ctx->intra_op_pool();
    args.allow_tf32 = ctx->allow_tf32();
    std::vector<Tensor> out;
    for (;;) {
      if (ctx->is_cancelled()) {
        ctx->SetStatus(errors::Cancelled("while loop " + frame_ + " was cancelled"));
        return;
      }
      EMBER_OP_REQUIRES_OK(ctx, cond_->Run(args, values, &out));
      const Tensor& pred = out[0];
      if (pred.dtype() != DataType::kBool || pred.NumElements() != 1) {
        ctx->SetStatus(InvalidArg(ctx->node(), "The condition of while loop " + frame_ +
                                                   " must be a bool scalar, got " +
                                                   DataTypeString(pred.dtype()) + " of shape " +
                                                   pred.shape().DebugString()));
        return;
      }
      if (!pred.data<bool>()[0]) break;
      if (body_ == nullptr) continue;  // no loop variables: the condition cannot change
      EMBER_OP_REQUIRES_OK(ctx, body_->Run(args, values, &out));
      for (size_t i = 0; i < num_vars_; ++i) values[i] = std::move(out[i]);
    }
    for (size_t i = 0; i < values.size(); ++i) ctx->set_output(static_cast<int>(i), values[i]);
  }

 private:
  Status Init(OpKernelConstruction* c) {
    // Building a body builds its loops' kernels: bound the nesting (a crafted graph could nest
    // deeply enough to exhaust the stack).
    static thread_local int depth = 0;
    struct Nest {
      int* d;
      explicit Nest(int* v) : d(v) { ++*d; }
      ~Nest() { --*d; }
    } nest(&depth);
    if (depth > kMaxNesting) {
      return InvalidArg(c->node(),
                        "while loops nest more than " + std::to_string(kMaxNesting) + " deep");
    }
    std::string bytes;
    EMBER_RETURN_IF_ERROR(c->GetAttr("body", &bytes));
    EMBER_RETURN_IF_ERROR(c->GetAttr("frame_name", &frame_));
    int64_t num_vars = 0;
    EMBER_RETURN_IF_ERROR(c->GetAttr("num_loop_vars", &num_vars));
    const size_t num_inputs = c->input_types().size();
    if (num_vars < 0 || static_cast<size_t>(num_vars) > num_inputs) {
      return InvalidArg(c->node(), "num_loop_vars " + std::to_string(num_vars) + " is not in [0, " +
                                       std::to_string(num_inputs) + "]");
    }
    num_vars_ = static_cast<size_t>(num_vars);
    GraphDef def;
    EMBER_RETURN_IF_ERROR(ParseGraphDefBinary(bytes.data(), bytes.size(), &def));
    auto graph = std::make_shared<Graph>();
    EMBER_RETURN_IF_ERROR(Graph::Build(def.node, GraphOptions(), graph.get()));
    Signature cond, body;
    for (size_t k = 0; k < num_inputs; ++k) {
      std::string arg = kWhileArgPrefix + std::to_string(k);
      int id = graph->FindNode(arg);
      if (id < 0 || graph->node(id).output_types.size() != 1 ||
          graph->node(id).output_types[0] != c->input_types()[k]) {
        return InvalidArg(c->node(), "The body of while loop " + frame_ + " has no placeholder " +
                                         arg + " of type " + DataTypeString(c->input_types()[k]));
      }
      cond.feeds.push_back(arg);
      body.feeds.push_back(arg);
    }
    cond.fetches = {kWhileCondName};
    for (size_t i = 0; i < num_vars_; ++i) {
      body.fetches.push_back(kWhileNextPrefix + std::to_string(i));
    }
    KernelProvider kernels = [](const Node& node, PlacedKernel* out) -> Status {
      std::unique_ptr<OpKernel> k;
      EMBER_RETURN_IF_ERROR(KernelRegistry::Global()->CreateKernel(node.def, "CPU", &k));
      out->kernel = std::move(k);
      return Status::OK();
    };
    EMBER_RETURN_IF_ERROR(Executor::Create(graph, cond, kernels, &cond_));
    if (num_vars_ > 0) {
      EMBER_RETURN_IF_ERROR(Executor::Create(graph, body, kernels, &body_));
    }
    return Status::OK();
  }

  static constexpr int kMaxNesting = 64;
  std::string frame_;
  size_t num_vars_ = 0;
  std::unique_ptr<Executor> cond_;
  std::unique_ptr<Executor> body_;
};

[[maybe_unused]] const bool kRegistered = [] {
  oputil::RegisterOp("_EmberWhile", {ListArg("input", "T")}, {ListArg("output", "T")},
                     [](ShapeContext* c) {
                       // Loop variables may change shape from one iteration to the next.
                       c->output_shapes.assign(c->input_shapes.size(), UnknownShape());
                       return Status::OK();
                     });
  oputil::RegisterCpu<WhileOp>("_EmberWhile");
  return true;
}();

}  // namespace
}  // namespace kernels
}  // namespace ember
