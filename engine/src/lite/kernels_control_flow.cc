// WHILE and IF: run other subgraphs of the model, each prepared with its own arena
// (subgraph.cc). Loop variables move between the operator's tensors and the subgraphs' as byte
// copies listed at Prepare, so Invoke allocates nothing. Shapes are static: a body whose
// outputs differ in shape from its inputs (a loop LiteRT would resize as it runs) is refused.
#include <cstring>
#include <string>
#include <vector>

#include "lite/kernels.h"

namespace ember {
namespace lite {
namespace {

using ByteCopy = NodeState::ByteCopy;

void CopyAll(const std::vector<ByteCopy>& copies) {
  for (const ByteCopy& c : copies) std::memcpy(c.dst, c.src, c.bytes);
}

const TensorDef& Tensor(const SubgraphState& g, int32_t index) {
  return g.def->tensors[static_cast<size_t>(index)];
}

// `a` (the operator's) and `b` (a subgraph's) must have one shape.
Status SameShape(const NodeState& node, const TensorDef& a, const char* role, size_t i,
                 const SubgraphState& g, const TensorDef& b) {
  if (a.shape == b.shape) return Status::OK();
  return errors::InvalidArgument(node.what + ": " + role + " " + std::to_string(i) + " '" + a.name +
                                 "' has shape " + ShapeString(a.shape) + " but " + g.where +
                                 "tensor '" + b.name + "' has shape " + ShapeString(b.shape));
}

void AddCopy(std::vector<ByteCopy>* list, uint8_t* dst, const uint8_t* src, size_t bytes) {
  if (dst != src && bytes != 0) list->push_back({dst, src, bytes});
}

uint8_t* Data(const SubgraphState& g, int32_t index) { return g.data[static_cast<size_t>(index)]; }

size_t Bytes(const TensorDef& t) { return t.num_elements * TensorTypeSize(t.type); }

Status CheckCallees(const NodeState& node) {
  if (node.callees.size() != 2 || node.callees[0] == nullptr || node.callees[1] == nullptr) {
    return errors::Internal(node.what + ": its subgraphs were not prepared");
  }
  for (size_t i = 0; i < node.t.in.size(); ++i) {
    if (node.t.in[i] == nullptr) {
      return errors::InvalidArgument(node.what + ": input " + std::to_string(i) + " is absent");
    }
  }
  return Status::OK();
}

Status EvalWhile(NodeState* node) {
  SubgraphState* cond = node->callees[0];
  SubgraphState* body = node->callees[1];
  CopyAll(node->copies[0]);
  for (;;) {
    EMBER_RETURN_IF_ERROR(RunSubgraph(cond));
    if (*node->flag == 0) break;
    CopyAll(node->copies[1]);
    EMBER_RETURN_IF_ERROR(RunSubgraph(body));
    CopyAll(node->copies[2]);
  }
  CopyAll(node->copies[3]);
  return Status::OK();
}

Status EvalIf(NodeState* node) {
  const size_t branch = node->t.in_data[0][0] != 0 ? 0 : 1;
  CopyAll(node->copies[2 * branch]);
  EMBER_RETURN_IF_ERROR(RunSubgraph(node->callees[branch]));
  CopyAll(node->copies[2 * branch + 1]);
  return Status::OK();
}

}  // namespace

// The loop variables live in the cond subgraph's inputs between iterations: the operator's
// inputs are copied there, each iteration copies them into the body's inputs and the body's
// outputs back, and the operator's outputs are copied from there at the end. A body output may
// be one of the body's inputs, another loop variable's among them: the cond inputs are the
// staging copy, so no value is overwritten before it is read. A variable the body passes through
// unchanged (output k is input k, as the sequence an LSTM reads) is copied once per Invoke when
// no other operator runs the two subgraphs.
Status PrepareWhile(NodeState* node) {
  EMBER_RETURN_IF_ERROR(CheckCallees(*node));
  const SubgraphState& cond = *node->callees[0];
  const SubgraphState& body = *node->callees[1];
  const SubGraphDef& c = *cond.def;
  const SubGraphDef& b = *body.def;
  const size_t n = node->t.in.size();
  // Model::Parse checked the counts and types.
  const bool exclusive = cond.callers == 1 && body.callers == 1;
  for (auto& list : node->copies) list.clear();
  for (size_t k = 0; k < n; ++k) {
    const TensorDef& in = *node->t.in[k];
    const TensorDef& out = *node->t.out[k];
    const TensorDef& cin = Tensor(cond, c.inputs[k]);
    const TensorDef& bin = Tensor(body, b.inputs[k]);
    const TensorDef& bout = Tensor(body, b.outputs[k]);
    if (bout.shape != bin.shape) {
      return errors::Unimplemented(
          node->what + ": " + body.where + "output " + std::to_string(k) + " '" + bout.name +
          "' has shape " + ShapeString(bout.shape) + " but its input '" + bin.name + "' has " +
          ShapeString(bin.shape) + ": a loop whose variables change shape is not supported");
    }
    EMBER_RETURN_IF_ERROR(SameShape(*node, in, "input", k, cond, cin));
    EMBER_RETURN_IF_ERROR(SameShape(*node, in, "input", k, body, bin));
    EMBER_RETURN_IF_ERROR(SameShape(*node, out, "output", k, body, bout));
    const size_t bytes = Bytes(in);
    uint8_t* cin_data = Data(cond, c.inputs[k]);
    uint8_t* bin_data = Data(body, b.inputs[k]);
    AddCopy(&node->copies[0], cin_data, node->t.in_data[k], bytes);
    if (exclusive && b.outputs[k] == b.inputs[k]) {
      AddCopy(&node->copies[0], bin_data, node->t.in_data[k], bytes);
    } else {
      AddCopy(&node->copies[1], bin_data, cin_data, bytes);
      AddCopy(&node->copies[2], cin_data, Data(body, b.outputs[k]), bytes);
    }
    AddCopy(&node->copies[3], node->t.out_data[k], cin_data, bytes);
  }
  node->flag = Data(cond, c.outputs[0]);
  node->eval = EvalWhile;
  return Status::OK();
}

Status PrepareIf(NodeState* node) {
  EMBER_RETURN_IF_ERROR(CheckCallees(*node));
  for (auto& list : node->copies) list.clear();
  for (size_t branch = 0; branch < 2; ++branch) {
    const SubgraphState& g = *node->callees[branch];
    const SubGraphDef& d = *g.def;
    for (size_t k = 0; k < d.inputs.size(); ++k) {
      const TensorDef& in = *node->t.in[k + 1];
      EMBER_RETURN_IF_ERROR(SameShape(*node, in, "input", k + 1, g, Tensor(g, d.inputs[k])));
      AddCopy(&node->copies[2 * branch], Data(g, d.inputs[k]), node->t.in_data[k + 1], Bytes(in));
    }
    for (size_t k = 0; k < d.outputs.size(); ++k) {
      const TensorDef& out = *node->t.out[k];
      EMBER_RETURN_IF_ERROR(SameShape(*node, out, "output", k, g, Tensor(g, d.outputs[k])));
      AddCopy(&node->copies[2 * branch + 1], node->t.out_data[k], Data(g, d.outputs[k]),
              Bytes(out));
    }
  }
  node->eval = EvalIf;
  return Status::OK();
}

}  // namespace lite
}  // namespace ember
