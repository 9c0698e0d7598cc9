// Interpreter: tensor allocation, operator preparation and execution.
#include "ember/lite/interpreter.h"

#include <algorithm>
#include <atomic>
#include <chrono>
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
    if (!(s > 0.0f) || s > 1e30f) {
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

Interpreter::~Interpreter() { std::free(arena_); }

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
  const SubGraphDef& g = interp->model_->graph();
  interp->data_.assign(g.tensors.size(), nullptr);
  interp->bytes_.assign(g.tensors.size(), 0);
  return interp;
}

Status Interpreter::AllocateTensors() {
  const SubGraphDef& g = model_->graph();
  const size_t nt = g.tensors.size();
  // Which tensors are written at run time: graph inputs and operator outputs.
  std::vector<int> writer(nt, -2);  // -2 never written, -1 graph input, else operator index
  for (int32_t i : g.inputs) writer[static_cast<size_t>(i)] = -1;
  for (size_t oi = 0; oi < g.operators.size(); ++oi) {
    const OperatorDef& op = g.operators[oi];
    for (int32_t in : op.inputs) {
      if (in < 0) continue;
      const TensorDef& t = g.tensors[static_cast<size_t>(in)];
      const int w = writer[static_cast<size_t>(in)];
      if (w == -2 && t.data == nullptr) {
        return errors::InvalidArgument("operator " + std::to_string(oi) + " (" +
                                       BuiltinOpName(static_cast<int32_t>(op.op)) +
                                       ") reads tensor " + std::to_string(in) + " ('" + t.name +
                                       "'), which has no data and no earlier operator writes");
      }
    }
    for (int32_t out : op.outputs) {
      const TensorDef& t = g.tensors[static_cast<size_t>(out)];
      if (writer[static_cast<size_t>(out)] != -2 || t.data != nullptr) {
        return errors::InvalidArgument(
            "operator " + std::to_string(oi) + " writes tensor " + std::to_string(out) + " ('" +
            t.name + "'), which is constant, a graph input or written by another operator");
      }
      writer[static_cast<size_t>(out)] = static_cast<int>(oi);
    }
  }
  for (int32_t o : g.outputs) {
    const TensorDef& t = g.tensors[static_cast<size_t>(o)];
    if (writer[static_cast<size_t>(o)] == -2 && t.data == nullptr) {
      return errors::InvalidArgument("graph output tensor " + std::to_string(o) + " ('" + t.name +
                                     "') is never written");
    }
  }
  // One arena, every run-time tensor at a 64-byte aligned offset. A tensor is live from the
  // operator that writes it to the last one that reads it; graph inputs and outputs for the
  // whole Invoke (and after it). Tensors whose lives do not overlap share memory, so the
  // activations a network passes along stay in the caches (preserve_all_tensors: none share).
  const int nops = static_cast<int>(g.operators.size());
  std::vector<int> first(nt, 0), last(nt, -1);
  for (size_t i = 0; i < nt; ++i) {
    if (writer[i] >= 0) first[i] = last[i] = writer[i];
  }
  for (size_t oi = 0; oi < g.operators.size(); ++oi) {
    for (int32_t in : g.operators[oi].inputs) {
      if (in >= 0) last[static_cast<size_t>(in)] = static_cast<int>(oi);
    }
  }
  for (int32_t i : g.inputs) {
    first[static_cast<size_t>(i)] = 0;
    last[static_cast<size_t>(i)] = nops;
  }
  for (int32_t o : g.outputs) last[static_cast<size_t>(o)] = nops;
  std::vector<size_t> order;
  std::vector<size_t> aligned(nt, 0);
  for (size_t i = 0; i < nt; ++i) {
    const TensorDef& t = g.tensors[i];
    if (writer[i] == -2) continue;
    const size_t elem = TensorTypeSize(t.type);
    if (elem == 0) {
      return errors::Unimplemented("tensor " + std::to_string(i) + " ('" + t.name + "') has type " +
                                   TensorTypeName(t.type) + ", which ember lite cannot hold");
    }
    const size_t bytes = t.num_elements * elem;
    if (bytes > options_.max_arena_bytes) {
      return errors::ResourceExhausted("activations need more than " +
                                       std::to_string(options_.max_arena_bytes) +
                                       " bytes (InterpreterOptions::max_arena_bytes)");
    }
    bytes_[i] = bytes;
    aligned[i] = (bytes + 63) / 64 * 64;
    order.push_back(i);
  }
  // Largest first, each at the lowest offset clear of the tensors already placed whose lives
  // overlap its own (TFLite's arena planner does the same greedy placement).
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return aligned[a] > aligned[b]; });
  size_t total = 0;
  std::vector<size_t> offset(nt, 0);
  std::vector<size_t> placed;
  std::vector<std::pair<size_t, size_t>> busy;  // [begin, end) of overlapping placed tensors
  for (size_t i : order) {
    size_t at = 0;
    if (options_.preserve_all_tensors) {
      at = total;
    } else {
      busy.clear();
      for (size_t j : placed) {
        if (first[j] <= last[i] && first[i] <= last[j]) {
          busy.emplace_back(offset[j], offset[j] + aligned[j]);
        }
      }
      std::sort(busy.begin(), busy.end());
      for (const auto& b : busy) {
        if (b.first >= at + aligned[i]) break;  // the gap before this one fits
        at = std::max(at, b.second);
      }
    }
    if (aligned[i] > options_.max_arena_bytes || at > options_.max_arena_bytes - aligned[i]) {
      return errors::ResourceExhausted("activations need more than " +
                                       std::to_string(options_.max_arena_bytes) +
                                       " bytes (InterpreterOptions::max_arena_bytes)");
    }
    offset[i] = at;
    total = std::max(total, at + aligned[i]);
    placed.push_back(i);
  }
  std::free(arena_);
  arena_ = static_cast<uint8_t*>(std::calloc(total + 64, 1));
  if (arena_ == nullptr) return errors::ResourceExhausted("cannot allocate the tensor arena");
  for (size_t i = 0; i < nt; ++i) {
    const TensorDef& t = g.tensors[i];
    if (writer[i] != -2) {
      data_[i] = arena_ + offset[i];
    } else if (t.data != nullptr) {
      data_[i] = const_cast<uint8_t*>(t.data);  // read-only: no operator writes constants
      bytes_[i] = t.data_size;
    }
  }
  nodes_.clear();
  for (size_t oi = 0; oi < g.operators.size(); ++oi) {
    auto node = std::make_unique<NodeState>();
    node->op = &g.operators[oi];
    node->index = static_cast<int>(oi);
    node->pool = pool_.get();
    node->threads = pool_->num_threads();
    node->what = "operator " + std::to_string(oi) + " (" +
                 BuiltinOpName(static_cast<int32_t>(node->op->op)) + ")";
    for (int32_t in : node->op->inputs) {
      node->t.in.push_back(in < 0 ? nullptr : &g.tensors[static_cast<size_t>(in)]);
      node->t.in_data.push_back(in < 0 ? nullptr : data_[static_cast<size_t>(in)]);
    }
    for (int32_t out : node->op->outputs) {
      node->t.out.push_back(&g.tensors[static_cast<size_t>(out)]);
      node->t.out_data.push_back(data_[static_cast<size_t>(out)]);
    }
    Status s = PrepareNode(node.get());
    if (!s.ok()) {
      allocated_ = false;
      return s;
    }
    nodes_.push_back(std::move(node));
  }
  allocated_ = true;
  return Status::OK();
}

Status Interpreter::Invoke() {
  if (!allocated_) {
    return errors::FailedPrecondition("Invoke called before a successful AllocateTensors");
  }
  if (!profiling_) {
    for (auto& node : nodes_) EMBER_RETURN_IF_ERROR(node->eval(node.get()));
    return Status::OK();
  }
  if (op_times_.size() != nodes_.size()) {
    op_times_.assign(nodes_.size(), OperatorTime());
    for (size_t i = 0; i < nodes_.size(); ++i) {
      const NodeState& n = *nodes_[i];
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
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Clock::time_point start = Clock::now();
    EMBER_RETURN_IF_ERROR(nodes_[i]->eval(nodes_[i].get()));
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
  v.data = data_[static_cast<size_t>(index)];
  v.bytes = bytes_[static_cast<size_t>(index)];
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
