// Interpreter: tensor allocation, operator preparation and execution.
#include "ember/lite/interpreter.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <utility>

#include "lite/kernels.h"
#include "lite/thread_pool.h"

namespace ember {
namespace lite {

std::string ShapeString(const std::vector<int32_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

Status CheckShape(const NodeState& node, const TensorDef& t, const std::vector<int32_t>& expected,
                  const char* role) {
  if (t.shape != expected) {
    return errors::InvalidArgument(node.what + ": " + role + " '" + t.name + "' has shape " +
                                   ShapeString(t.shape) + " but the operator produces " +
                                   ShapeString(expected));
  }
  return Status::OK();
}

Status CheckType(const NodeState& node, const TensorDef& t, TensorType type, const char* role) {
  if (t.type != type) {
    return errors::InvalidArgument(node.what + ": " + role + " '" + t.name + "' is " +
                                   TensorTypeName(t.type) + ", expected " + TensorTypeName(type));
  }
  return Status::OK();
}

Status NeedQuant(const NodeState& node, const TensorDef& t, const char* role) {
  if (t.quant.scale.empty() || t.quant.zero_point.empty()) {
    return errors::InvalidArgument(node.what + ": " + role + " '" + t.name +
                                   "' is quantized but has no scale/zero_point");
  }
  for (float s : t.quant.scale) {
    if (!(s > 0.0f) || !std::isfinite(s)) {
      return errors::InvalidArgument(node.what + ": " + role + " '" + t.name +
                                     "' has a non-positive or non-finite scale");
    }
  }
  const int64_t lo = t.type == TensorType::kUInt8 ? 0 : -128;
  const int64_t hi = t.type == TensorType::kUInt8 ? 255 : 127;
  for (int64_t z : t.quant.zero_point) {
    if (z < lo || z > hi) {
      return errors::InvalidArgument(node.what + ": " + role + " '" + t.name + "' has zero point " +
                                     std::to_string(z) + " outside the 8-bit range");
    }
  }
  return Status::OK();
}

Status NeedPerTensorQuant(const NodeState& node, const TensorDef& t, const char* role) {
  EMBER_RETURN_IF_ERROR(NeedQuant(node, t, role));
  if (t.quant.scale.size() != 1 || t.quant.zero_point.size() != 1) {
    return errors::Unimplemented(node.what + ": " + role + " '" + t.name + "' is quantized per " +
                                 "channel (" + std::to_string(t.quant.scale.size()) +
                                 " scales); this operator takes one scale and zero point");
  }
  return Status::OK();
}

Status NeedFixedOutputQuant(const NodeState& node, const TensorDef& out, float scale,
                            std::optional<int64_t> zero_point, const char* needs) {
  EMBER_RETURN_IF_ERROR(NeedPerTensorQuant(node, out, "output"));
  const float s = out.quant.scale[0];
  const int64_t zp = out.quant.zero_point[0];
  if (s == scale && (!zero_point.has_value() || zp == *zero_point)) return Status::OK();
  return errors::InvalidArgument(
      node.what + ": int8 output '" + out.name + "' has scale " + std::to_string(s) +
      (zero_point.has_value() ? " and zero point " + std::to_string(zp) : std::string()) + "; " +
      BuiltinOpName(static_cast<int32_t>(node.op->op)) + " needs " + needs);
}

void FloatActivationRange(Activation act, float* lo, float* hi) {
  switch (act) {
    case Activation::kRelu:
      *lo = 0.0f;
      *hi = std::numeric_limits<float>::max();
      break;
    case Activation::kReluN1To1:
      *lo = -1.0f;
      *hi = 1.0f;
      break;
    case Activation::kRelu6:
      *lo = 0.0f;
      *hi = 6.0f;
      break;
    default:
      *lo = std::numeric_limits<float>::lowest();
      *hi = std::numeric_limits<float>::max();
  }
}

int ComputeOutSize(Padding padding, int in, int filter, int stride, int dilation) {
  const int64_t eff = static_cast<int64_t>(filter - 1) * dilation + 1;
  if (stride <= 0) return -1;
  if (padding == Padding::kSame) return static_cast<int>((in + stride - 1) / stride);
  return static_cast<int>((in - eff + stride) / stride);
}

int ComputePadding(int stride, int dilation, int in, int filter, int out) {
  const int64_t eff = static_cast<int64_t>(filter - 1) * dilation + 1;
  const int64_t pad = ((static_cast<int64_t>(out) - 1) * stride + eff - in) / 2;
  return pad > 0 ? static_cast<int>(pad) : 0;
}

namespace {
// The least work per task, in a GEMM's multiply-adds (about 0.5-1 us; TaskCount weighs other
// kernels' units against these).
// EMBER_LITE_SPLIT_ALL=1 (read once per process; tests) makes it 1, so that the small test
// models run the threaded paths of every kernel.
std::atomic<int64_t>& MinTaskCost() {
  static std::atomic<int64_t> cost{[] {
    const char* v = std::getenv("EMBER_LITE_SPLIT_ALL");
    return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0 ? int64_t{1} : int64_t{32768};
  }()};
  return cost;
}
}  // namespace

void SetMinTaskCostForTesting(int64_t cost) { MinTaskCost().store(std::max<int64_t>(1, cost)); }

int TaskCount(const NodeState& node, int64_t units, int64_t cost_per_unit) {
  if (node.threads <= 1 || units <= 1) return 1;
  // A depthwise multiply-add costs several of a GEMM's: each input value loaded serves one
  // multiply-add, not a row of output channels (here about 12 per ns against a GEMM's 30-70).
  // Weighed as one, MobileNet's last depthwise layers (3-6 output rows) ran on one thread;
  // split, they gained 1.3-1.6x with two.
  const int64_t weight = node.op != nullptr && node.op->op == BuiltinOp::kDepthwiseConv2D ? 8 : 1;
  const int64_t by_cost = units * std::max<int64_t>(1, cost_per_unit) * weight /
                          MinTaskCost().load(std::memory_order_relaxed);
  const int64_t tasks = std::min<int64_t>({units, by_cost, int64_t{4} * node.threads});
  return static_cast<int>(std::max<int64_t>(1, tasks));
}

Status PrepareNode(NodeState* node) {
  switch (node->op->op) {
    case BuiltinOp::kFullyConnected:
      return PrepareFullyConnected(node);
    case BuiltinOp::kConv2D:
      return PrepareConv2D(node);
    case BuiltinOp::kDepthwiseConv2D:
      return PrepareDepthwiseConv2D(node);
    case BuiltinOp::kAdd:
    case BuiltinOp::kMul:
      // Integer index arithmetic (int32/int64) of transformer models: kernels_misc.cc.
      if (!node->t.in.empty() && node->t.in[0] != nullptr &&
          (node->t.in[0]->type == TensorType::kInt32 ||
           node->t.in[0]->type == TensorType::kInt64)) {
        return PrepareMiscBinary(node);
      }
      return PrepareAddMul(node);
    case BuiltinOp::kRelu:
    case BuiltinOp::kRelu6:
      return PrepareActivation(node);
    case BuiltinOp::kQuantize:
      return PrepareQuantize(node);
    case BuiltinOp::kDequantize:
      return PrepareDequantize(node);
    case BuiltinOp::kReshape:
      return PrepareReshape(node);
    case BuiltinOp::kConcatenation:
      for (const std::vector<int32_t>* dims : node->t.in_dims) {
        if (dims != nullptr) return PrepareConcatDynamic(node);
      }
      return PrepareConcatenation(node);
    case BuiltinOp::kSoftmax:
      return PrepareSoftmax(node);
    case BuiltinOp::kAveragePool2D:
    case BuiltinOp::kMaxPool2D:
      return PreparePool(node);
    case BuiltinOp::kMean:
      return PrepareMean(node);
    case BuiltinOp::kTanh:
    case BuiltinOp::kLogistic:
    case BuiltinOp::kExp:
    case BuiltinOp::kNeg:
    case BuiltinOp::kLog:
    case BuiltinOp::kSqrt:
    case BuiltinOp::kRsqrt:
    case BuiltinOp::kSquare:
    case BuiltinOp::kAbs:
    case BuiltinOp::kLogicalNot:
    case BuiltinOp::kGelu:
    case BuiltinOp::kHardSwish:
    case BuiltinOp::kLeakyRelu:
    case BuiltinOp::kElu:
    case BuiltinOp::kFloor:
    case BuiltinOp::kCeil:
    case BuiltinOp::kRound:
    case BuiltinOp::kSin:
    case BuiltinOp::kCos:
    case BuiltinOp::kSign:
      return PrepareMiscUnary(node);
    case BuiltinOp::kPad:
    case BuiltinOp::kPadV2:
      return PreparePad(node);
    case BuiltinOp::kSub:
    case BuiltinOp::kDiv:
    case BuiltinOp::kMaximum:
    case BuiltinOp::kMinimum:
    case BuiltinOp::kPow:
    case BuiltinOp::kSquaredDifference:
    case BuiltinOp::kLess:
    case BuiltinOp::kLessEqual:
    case BuiltinOp::kGreater:
    case BuiltinOp::kGreaterEqual:
    case BuiltinOp::kEqual:
    case BuiltinOp::kNotEqual:
    case BuiltinOp::kLogicalAnd:
    case BuiltinOp::kLogicalOr:
      return PrepareMiscBinary(node);
    case BuiltinOp::kSelect:
    case BuiltinOp::kSelectV2:
      return PrepareSelect(node);
    case BuiltinOp::kCast:
      return PrepareCast(node);
    case BuiltinOp::kGather:
      return PrepareGather(node);
    case BuiltinOp::kTranspose:
      return PrepareTranspose(node);
    case BuiltinOp::kStridedSlice:
      return PrepareStridedSlice(node);
    case BuiltinOp::kBatchMatMul:
      return PrepareBatchMatMul(node);
    case BuiltinOp::kPrelu:
      return PreparePrelu(node);
    case BuiltinOp::kSqueeze:
    case BuiltinOp::kExpandDims:
      return PrepareShapeCopy(node);
    case BuiltinOp::kSplit:
    case BuiltinOp::kSplitV:
    case BuiltinOp::kUnpack:
      return PrepareSplit(node);
    case BuiltinOp::kPack:
      return PreparePack(node);
    case BuiltinOp::kTile:
      return PrepareTile(node);
    case BuiltinOp::kTransposeConv:
      return PrepareTransposeConv(node);
    case BuiltinOp::kConv3D:
      return PrepareConv3D(node);
    case BuiltinOp::kConv3DTranspose:
      return PrepareConv3DTranspose(node);
    case BuiltinOp::kSlice:
      return PrepareSlice(node);
    case BuiltinOp::kReverseV2:
      return PrepareReverse(node);
    case BuiltinOp::kDynamicUpdateSlice:
      return PrepareDynamicUpdateSlice(node);
    case BuiltinOp::kWhile:
      return PrepareWhile(node);
    case BuiltinOp::kIf:
      return PrepareIf(node);
    case BuiltinOp::kDepthToSpace:
      return PrepareDepthToSpace(node);
    case BuiltinOp::kSpaceToDepth:
      return PrepareSpaceToDepth(node);
    case BuiltinOp::kTopKV2:
      return PrepareTopK(node);
    case BuiltinOp::kBroadcastTo:
      return PrepareBroadcastTo(node);
    case BuiltinOp::kFloorDiv:
      return PrepareFloorDiv(node);
    case BuiltinOp::kFloorMod:
      return PrepareFloorMod(node);
    case BuiltinOp::kOneHot:
      return PrepareOneHot(node);
    case BuiltinOp::kGatherNd:
      return PrepareGatherNd(node);
    case BuiltinOp::kScatterNd:
      return PrepareScatterNd(node);
    case BuiltinOp::kCumsum:
      return PrepareCumsum(node);
    case BuiltinOp::kArgMax:
    case BuiltinOp::kArgMin:
      return PrepareArgMinMax(node);
    case BuiltinOp::kShape:
      return PrepareShape(node);
    case BuiltinOp::kFill:
      return PrepareFill(node);
    case BuiltinOp::kUnidirectionalSequenceLstm:
      return PrepareUnidirectionalSequenceLstm(node);
    case BuiltinOp::kSpaceToBatchNd:
    case BuiltinOp::kBatchToSpaceNd:
      return PrepareSpaceBatchNd(node);
    case BuiltinOp::kLogSoftmax:
      return PrepareLogSoftmax(node);
    case BuiltinOp::kL2Normalization:
      return PrepareL2Normalization(node);
    case BuiltinOp::kMirrorPad:
      return PrepareMirrorPad(node);
    case BuiltinOp::kReduceProd:
      return PrepareReduceProd(node);
    case BuiltinOp::kResizeBilinear:
    case BuiltinOp::kResizeNearestNeighbor:
      return PrepareResize(node);
    case BuiltinOp::kSum:
    case BuiltinOp::kReduceMax:
    case BuiltinOp::kReduceMin:
    case BuiltinOp::kReduceAny:
    case BuiltinOp::kReduceAll:
      return PrepareReduce(node);
  }
  return errors::Unimplemented(node->what + ": no kernel");
}

Interpreter::~Interpreter() = default;

StatusOr<std::unique_ptr<Interpreter>> Interpreter::Create(std::shared_ptr<const Model> model,
                                                           InterpreterOptions options) {
  if (model == nullptr) return errors::InvalidArgument("Interpreter::Create: null model");
  if (options.num_threads < -1 || options.num_threads > InterpreterOptions::kMaxThreads) {
    return errors::InvalidArgument(
        "num_threads is " + std::to_string(options.num_threads) +
        ": it must be -1 (the default), 0 or 1 (the calling thread only), or at most " +
        std::to_string(InterpreterOptions::kMaxThreads));
  }
  std::unique_ptr<Interpreter> interp(new Interpreter());
  interp->model_ = std::move(model);
  interp->options_ = options;
  interp->pool_ = std::make_unique<ThreadPool>(std::max(1, options.num_threads));
  return interp;
}

Status Interpreter::AllocateTensors() {
  allocated_ = false;
  graphs_.clear();
  const std::vector<SubGraphDef>& defs = model_->subgraphs();
  // The subgraphs that run: the main one and those its WHILE/IF operators reach, each counted
  // once per operator that runs it (Model::Parse refused out-of-range indices and cycles).
  std::vector<int> callers(defs.size(), 0);
  std::vector<char> reached(defs.size(), 0);
  std::vector<size_t> todo = {0};
  reached[0] = 1;
  while (!todo.empty()) {
    const size_t g = todo.back();
    todo.pop_back();
    for (const OperatorDef& op : defs[g].operators) {
      if (op.op != BuiltinOp::kWhile && op.op != BuiltinOp::kIf) continue;
      const bool is_while = op.op == BuiltinOp::kWhile;
      for (int32_t c : {is_while ? op.options.cond_subgraph : op.options.then_subgraph,
                        is_while ? op.options.body_subgraph : op.options.else_subgraph}) {
        const size_t ci = static_cast<size_t>(c);
        ++callers[ci];
        if (!reached[ci]) {
          reached[ci] = 1;
          todo.push_back(ci);
        }
      }
    }
  }
  std::vector<std::unique_ptr<SubgraphState>> graphs(defs.size());
  size_t total = 0;
  for (size_t g = 0; g < defs.size(); ++g) {
    if (!reached[g]) continue;
    graphs[g] = std::make_unique<SubgraphState>();
    graphs[g]->callers = callers[g];
    EMBER_RETURN_IF_ERROR(
        PlanSubgraph(defs[g], static_cast<int>(g), options_, graphs[g].get(), &total));
  }
  for (size_t g = 0; g < defs.size(); ++g) {
    if (graphs[g] != nullptr) {
      EMBER_RETURN_IF_ERROR(PrepareSubgraph(graphs[g].get(), graphs, pool_.get()));
    }
  }
  graphs_ = std::move(graphs);
  allocated_ = true;
  return Status::OK();
}

Status Interpreter::Invoke() {
  if (!allocated_) {
    return errors::FailedPrecondition("Invoke called before a successful AllocateTensors");
  }
  std::vector<std::unique_ptr<NodeState>>& nodes = graphs_[0]->nodes;
  if (!profiling_) {
    for (auto& node : nodes) EMBER_RETURN_IF_ERROR(node->eval(node.get()));
    return Status::OK();
  }
  if (op_times_.size() != nodes.size()) {
    op_times_.assign(nodes.size(), OperatorTime());
    for (size_t i = 0; i < nodes.size(); ++i) {
      const NodeState& n = *nodes[i];
      std::string label = n.what;
      if (!n.t.out.empty()) {
        label += " -> [";
        for (size_t d = 0; d < n.t.out[0]->shape.size(); ++d) {
          label += (d ? ", " : "") + std::to_string(n.t.out[0]->shape[d]);
        }
        label += "] " + TensorTypeName(n.t.out[0]->type);
      }
      op_times_[i].label = std::move(label);
    }
  }
  using Clock = std::chrono::steady_clock;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Clock::time_point start = Clock::now();
    EMBER_RETURN_IF_ERROR(nodes[i]->eval(nodes[i].get()));
    op_times_[i].total_us +=
        std::chrono::duration<double, std::micro>(Clock::now() - start).count();
    ++op_times_[i].calls;
  }
  return Status::OK();
}

void Interpreter::EnableProfiling(bool on) {
  profiling_ = on;
  op_times_.clear();
}

int Interpreter::num_threads() const { return pool_->num_threads(); }

TensorView Interpreter::tensor(int32_t index) const {
  TensorView v;
  const SubGraphDef& g = model_->graph();
  if (index < 0 || static_cast<size_t>(index) >= g.tensors.size()) return v;
  v.def = &g.tensors[static_cast<size_t>(index)];
  if (graphs_.empty()) return v;                         // before AllocateTensors
  v.def = graphs_[0]->defs[static_cast<size_t>(index)];  // with shapes refined at planning
  v.data = graphs_[0]->data[static_cast<size_t>(index)];
  v.bytes = graphs_[0]->bytes[static_cast<size_t>(index)];
  return v;
}

TensorView Interpreter::input(size_t i) const {
  const auto& ins = model_->graph().inputs;
  return i < ins.size() ? tensor(ins[i]) : TensorView();
}

TensorView Interpreter::output(size_t i) const {
  const auto& outs = model_->graph().outputs;
  return i < outs.size() ? tensor(outs[i]) : TensorView();
}

namespace {
StatusOr<size_t> FindByName(const SubGraphDef& g, const std::vector<int32_t>& list,
                            const std::string& name, const char* kind) {
  std::string known;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string& n = g.tensors[static_cast<size_t>(list[i])].name;
    if (n == name) return i;
    known += (i ? ", '" : "'") + n + "'";
  }
  return errors::NotFound(std::string("no ") + kind + " named '" + name + "' (the model has " +
                          known + ")");
}
}  // namespace

StatusOr<size_t> Interpreter::InputIndex(const std::string& name) const {
  return FindByName(model_->graph(), model_->graph().inputs, name, "input");
}

StatusOr<size_t> Interpreter::OutputIndex(const std::string& name) const {
  return FindByName(model_->graph(), model_->graph().outputs, name, "output");
}

}  // namespace lite
}  // namespace ember
