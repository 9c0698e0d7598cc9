// One subgraph's dataflow checks, arena plan and operator preparation (the main subgraph and
// those WHILE/IF run alike).
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>

#include "lite/kernels.h"

namespace ember {
namespace lite {

namespace {

Status TooBig(const InterpreterOptions& options) {
  return errors::ResourceExhausted("activations need more than " +
                                   std::to_string(options.max_arena_bytes) +
                                   " bytes (InterpreterOptions::max_arena_bytes)");
}

// A SLICE with a run-time begin or size may produce any part of its input: its output gets room
// for all of it (the kernel's Prepare decides whether the shape is static).
size_t RoomFor(const SubGraphDef& g, const std::vector<const TensorDef*>& defs, size_t tensor,
               const std::vector<int>& writer, size_t bytes) {
  const int w = writer[tensor];
  if (w < 0) return bytes;
  const OperatorDef& op = g.operators[static_cast<size_t>(w)];
  if (op.op != BuiltinOp::kSlice || op.inputs.empty() || op.inputs[0] < 0) return bytes;
  const TensorDef& in = *defs[static_cast<size_t>(op.inputs[0])];
  if (in.type != defs[tensor]->type) return bytes;
  return std::max(bytes, in.num_elements * TensorTypeSize(in.type));
}

// Sets a MUL's table_producer when one input is an int8 table activation (LOGISTIC, TANH,
// GELU, HARD_SWISH, LEAKY_RELU: a 256-entry table, scratch8) of the other input: swish's
// x * sigmoid(x), as EfficientNet's int8 blocks hold 49 times. PrepareAddMul then makes the MUL
// one table of that input's byte.
void FindTableProducer(NodeState& node, const std::vector<NodeState*>& producer) {
  const std::vector<int32_t>& in = node.op->inputs;
  if (in.size() != 2 || in[0] < 0 || in[1] < 0 || in[0] == in[1]) return;
  for (int k = 0; k < 2; ++k) {
    const NodeState* p = producer[static_cast<size_t>(in[static_cast<size_t>(1 - k)])];
    if (p == nullptr || p->op->inputs.size() != 1 ||
        p->op->inputs[0] != in[static_cast<size_t>(k)] || p->t.in[0] == nullptr ||
        p->t.in[0]->type != TensorType::kInt8 || p->scratch8.size() != 256) {
      continue;
    }
    const BuiltinOp op = p->op->op;
    if (op == BuiltinOp::kLogistic || op == BuiltinOp::kTanh || op == BuiltinOp::kGelu ||
        op == BuiltinOp::kHardSwish || op == BuiltinOp::kLeakyRelu) {
      node.table_producer = p;
      node.table_input = k;
      return;
    }
  }
}

Status SkipEval(NodeState*) { return Status::OK(); }

// A float MUL of x and LOGISTIC(x), all of one shape, where only this MUL reads the LOGISTIC's
// output (no other operator, not a graph output; `readers` counts both) and tensors are not
// preserved: the MUL computes swish from x (NodeState::swish) and the LOGISTIC is not run
// (EfficientNet's 49 swish activations wrote and read back a sigmoid each).
void FindSwish(NodeState& node, const std::vector<NodeState*>& producer,
               const std::vector<int>& readers, const SubgraphState& state) {
  const std::vector<int32_t>& in = node.op->inputs;
  if (state.preserve_all || in.size() != 2 || node.op->outputs.size() != 1 || in[0] < 0 ||
      in[1] < 0 || in[0] == in[1] || node.op->outputs[0] < 0) {
    return;
  }
  const TensorDef& out = *state.defs[static_cast<size_t>(node.op->outputs[0])];
  for (int k = 0; k < 2; ++k) {
    const size_t x = static_cast<size_t>(in[static_cast<size_t>(k)]);
    const size_t s = static_cast<size_t>(in[static_cast<size_t>(1 - k)]);
    NodeState* p = producer[s];
    if (p == nullptr || p->op->op != BuiltinOp::kLogistic || p->op->inputs.size() != 1 ||
        p->op->inputs[0] != in[static_cast<size_t>(k)] || readers[s] != 1) {
      continue;
    }
    const TensorDef& xt = *state.defs[x];
    const TensorDef& st = *state.defs[s];
    if (xt.type != TensorType::kFloat32 || st.type != TensorType::kFloat32 ||
        out.type != TensorType::kFloat32 || xt.shape != st.shape || xt.shape != out.shape) {
      continue;
    }
    node.swish = true;
    node.swish_input = k;
    p->eval = SkipEval;
    return;
  }
}

}  // namespace

Status PlanSubgraph(const SubGraphDef& g, int index, const InterpreterOptions& options,
                    SubgraphState* state, size_t* total_all) {
  state->def = &g;
  state->index = index;
  state->preserve_all = options.preserve_all_tensors;
  state->where = index == 0 ? "" : "subgraph " + std::to_string(index) + " ";
  const std::string& where = state->where;
  const size_t nt = g.tensors.size();
  state->data.assign(nt, nullptr);
  state->bytes.assign(nt, 0);
  state->dynamic.assign(nt, 0);
  state->dims.assign(nt, {});
  EMBER_RETURN_IF_ERROR(FoldConstantDequantize(g, state));
  RefineShapes(g, state);
  const std::vector<const TensorDef*>& defs = state->defs;
  // Which tensors are written at run time: graph inputs and operator outputs.
  std::vector<int> writer(nt, -2);  // -2 never written, -1 graph input, else operator index
  for (int32_t i : g.inputs) writer[static_cast<size_t>(i)] = -1;
  // Variables (an LSTM's state) are held like graph inputs: their own memory, for every Invoke.
  std::vector<int32_t> held = g.inputs;
  for (size_t i = 0; i < nt; ++i) {
    if (defs[i]->is_variable && writer[i] == -2) {
      writer[i] = -1;
      held.push_back(static_cast<int32_t>(i));
    }
  }
  for (size_t oi = 0; oi < g.operators.size(); ++oi) {
    const OperatorDef& op = g.operators[oi];
    if (state->folded_op[oi]) continue;
    for (int32_t in : op.inputs) {
      if (in < 0) continue;
      const TensorDef& t = *defs[static_cast<size_t>(in)];
      const int w = writer[static_cast<size_t>(in)];
      if (w == -2 && t.data == nullptr) {
        return errors::InvalidArgument(where + "operator " + std::to_string(oi) + " (" +
                                       BuiltinOpName(static_cast<int32_t>(op.op)) +
                                       ") reads tensor " + std::to_string(in) + " ('" + t.name +
                                       "'), which has no data and no earlier operator writes");
      }
    }
    for (int32_t out : op.outputs) {
      const TensorDef& t = *defs[static_cast<size_t>(out)];
      if (writer[static_cast<size_t>(out)] != -2 || t.data != nullptr) {
        return errors::InvalidArgument(
            where + "operator " + std::to_string(oi) + " writes tensor " + std::to_string(out) +
            " ('" + t.name + "'), which is constant, a graph input or written by another operator");
      }
      writer[static_cast<size_t>(out)] = static_cast<int>(oi);
    }
  }
  for (int32_t o : g.outputs) {
    const TensorDef& t = *defs[static_cast<size_t>(o)];
    if (writer[static_cast<size_t>(o)] == -2 && t.data == nullptr) {
      return errors::InvalidArgument(where + "graph output tensor " + std::to_string(o) + " ('" +
                                     t.name + "') is never written");
    }
  }
  // One arena, every run-time tensor at a 64-byte aligned offset. A tensor is live from the
  // operator that writes it to the last one that reads it; graph inputs and outputs for the
  // whole Invoke (and after it). Tensors whose lives do not overlap share memory, so the
  // activations a network passes along stay in the caches (preserve_all_tensors: none share).
  // WHILE relies on a subgraph's inputs and outputs keeping their own memory.
  const int nops = static_cast<int>(g.operators.size());
  std::vector<int> first(nt, 0), last(nt, -1);
  for (size_t i = 0; i < nt; ++i) {
    if (writer[i] >= 0) first[i] = last[i] = writer[i];
  }
  for (size_t oi = 0; oi < g.operators.size(); ++oi) {
    if (state->folded_op[oi]) continue;
    for (int32_t in : g.operators[oi].inputs) {
      if (in >= 0) last[static_cast<size_t>(in)] = static_cast<int>(oi);
    }
  }
  for (int32_t i : held) {
    first[static_cast<size_t>(i)] = 0;
    last[static_cast<size_t>(i)] = nops;
  }
  for (int32_t o : g.outputs) last[static_cast<size_t>(o)] = nops;
  std::vector<size_t> order;
  std::vector<size_t> aligned(nt, 0);
  for (size_t i = 0; i < nt; ++i) {
    const TensorDef& t = *defs[i];  // with the shape RefineShapes gave it
    if (writer[i] == -2) continue;
    const size_t elem = TensorTypeSize(t.type);
    if (elem == 0) {
      return errors::Unimplemented(where + "tensor " + std::to_string(i) + " ('" + t.name +
                                   "') has type " + TensorTypeName(t.type) +
                                   ", which ember lite cannot hold");
    }
    const size_t bytes = t.num_elements * elem;
    const size_t room = RoomFor(g, defs, i, writer, bytes);
    if (room > options.max_arena_bytes) return TooBig(options);
    state->bytes[i] = bytes;
    aligned[i] = (room + 63) / 64 * 64;
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
    if (options.preserve_all_tensors) {
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
    if (aligned[i] > options.max_arena_bytes || at > options.max_arena_bytes - aligned[i]) {
      return TooBig(options);
    }
    offset[i] = at;
    total = std::max(total, at + aligned[i]);
    placed.push_back(i);
  }
  if (total > options.max_arena_bytes - std::min(options.max_arena_bytes, *total_all)) {
    return TooBig(options);
  }
  *total_all += total;
  std::free(state->arena_block);
  // The arena starts on a 64-byte boundary, so every tensor does: calloc's own 16-byte alignment
  // put each 64-byte vector load of a large tensor across two cache lines (56x56x96 float
  // depthwise: 1.35x slower). calloc, not aligned_alloc and memset: a large arena's fresh pages
  // stay untouched until a tensor is written. 64 bytes of slack past the last tensor, as before.
  state->arena_block = std::calloc(total + 128, 1);
  if (state->arena_block == nullptr) {
    state->arena = nullptr;
    return errors::ResourceExhausted("cannot allocate the tensor arena");
  }
  const uintptr_t block = reinterpret_cast<uintptr_t>(state->arena_block);
  state->arena = static_cast<uint8_t*>(state->arena_block) + ((64 - block % 64) % 64);
  state->arena_bytes = total;
  for (size_t i = 0; i < nt; ++i) {
    const TensorDef& t = *defs[i];
    if (writer[i] != -2) {
      state->data[i] = state->arena + offset[i];
    } else if (t.data != nullptr) {
      state->data[i] = const_cast<uint8_t*>(t.data);  // read-only: no operator writes constants
      state->bytes[i] = t.data_size;
    }
  }
  return Status::OK();
}

Status PrepareSubgraph(SubgraphState* state,
                       const std::vector<std::unique_ptr<SubgraphState>>& graphs,
                       ThreadPool* pool) {
  const SubGraphDef& g = *state->def;
  state->nodes.clear();
  // The node that writes each tensor, among those prepared so far.
  std::vector<NodeState*> producer(g.tensors.size(), nullptr);
  // How many times each tensor is read: by the operators that run, and as a graph output.
  std::vector<int> readers(g.tensors.size(), 0);
  for (size_t oi = 0; oi < g.operators.size(); ++oi) {
    if (state->folded_op[oi]) continue;
    for (int32_t in : g.operators[oi].inputs) {
      if (in >= 0) ++readers[static_cast<size_t>(in)];
    }
  }
  for (int32_t o : g.outputs) ++readers[static_cast<size_t>(o)];
  for (size_t oi = 0; oi < g.operators.size(); ++oi) {
    if (state->folded_op[oi]) continue;  // computed once at PlanSubgraph
    auto node = std::make_unique<NodeState>();
    node->op = &g.operators[oi];
    node->index = static_cast<int>(oi);
    node->pool = pool;
    node->threads = pool->num_threads();
    node->what = state->where + "operator " + std::to_string(oi) + " (" +
                 BuiltinOpName(static_cast<int32_t>(node->op->op)) + ")";
    const TensorDef* dynamic_in = nullptr;
    for (int32_t in : node->op->inputs) {
      const size_t i = static_cast<size_t>(in);
      node->t.in.push_back(in < 0 ? nullptr : state->defs[i]);
      node->t.in_data.push_back(in < 0 ? nullptr : state->data[i]);
      const bool dyn = in >= 0 && state->dynamic[i] != 0;
      node->t.in_dims.push_back(dyn ? &state->dims[i] : nullptr);
      if (dyn && dynamic_in == nullptr) dynamic_in = state->defs[i];
    }
    for (int32_t out : node->op->outputs) {
      const size_t o = static_cast<size_t>(out);
      node->t.out.push_back(state->defs[o]);
      node->t.out_data.push_back(state->data[o]);
      node->t.out_dims.push_back(&state->dims[o]);
    }
    // Only CONCATENATION reads run-time shapes (a loop body's TensorListSetItem: the slices
    // before and after the item, and the item).
    if (dynamic_in != nullptr && node->op->op != BuiltinOp::kConcatenation) {
      return errors::Unimplemented(node->what + ": input '" + dynamic_in->name +
                                   "' has a shape known only at run time (a SLICE with a run-time "
                                   "begin or size); ember lite reads such tensors only in "
                                   "CONCATENATION");
    }
    if (node->op->op == BuiltinOp::kWhile || node->op->op == BuiltinOp::kIf) {
      const bool is_while = node->op->op == BuiltinOp::kWhile;
      for (int32_t callee :
           {is_while ? node->op->options.cond_subgraph : node->op->options.then_subgraph,
            is_while ? node->op->options.body_subgraph : node->op->options.else_subgraph}) {
        // Model::Parse checked the indices; every callee of a subgraph that runs is planned.
        node->callees.push_back(graphs[static_cast<size_t>(callee)].get());
      }
    }
    if (node->op->op == BuiltinOp::kMul) {
      FindTableProducer(*node, producer);
      FindSwish(*node, producer, readers, *state);
    }
    EMBER_RETURN_IF_ERROR(PrepareNode(node.get()));
    for (int32_t out : node->op->outputs) producer[static_cast<size_t>(out)] = node.get();
    if (node->dynamic_out) {
      for (int32_t out : node->op->outputs) state->dynamic[static_cast<size_t>(out)] = 1;
    }
    state->nodes.push_back(std::move(node));
  }
  for (int32_t o : g.outputs) {
    if (state->dynamic[static_cast<size_t>(o)] != 0) {
      return errors::Unimplemented(state->where + "output '" +
                                   g.tensors[static_cast<size_t>(o)].name +
                                   "' has a shape known only at run time, which ember lite "
                                   "does not support");
    }
  }
  return Status::OK();
}

}  // namespace lite
}  // namespace ember
