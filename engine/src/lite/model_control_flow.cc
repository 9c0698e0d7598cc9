// WHILE/IF checks of a parsed model (Model::Parse): see model_control_flow.h.
#include "lite/model_control_flow.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace ember {
namespace lite {
namespace {

std::string Str(uint64_t v) { return std::to_string(v); }

Status Bad(const std::string& what) {
  return errors::InvalidArgument("invalid .tflite model: " + what);
}

// The subgraphs that operator `op` runs (WHILE: cond, body; IF: then, else), with the option
// field names for messages; empty for other operators.
std::vector<std::pair<int32_t, const char*>> Callees(const OperatorDef& op) {
  if (op.op == BuiltinOp::kWhile) {
    return {{op.options.cond_subgraph, "cond_subgraph_index"},
            {op.options.body_subgraph, "body_subgraph_index"}};
  }
  if (op.op == BuiltinOp::kIf) {
    return {{op.options.then_subgraph, "then_subgraph_index"},
            {op.options.else_subgraph, "else_subgraph_index"}};
  }
  return {};
}

// Subgraphs that run each other nest Invoke's calls: a chain deeper than this is refused so
// that a hostile model cannot exhaust the stack.
constexpr size_t kMaxNesting = 64;

// Depth-first search (iterative: the model sets the depth) for a subgraph that runs itself,
// and for chains of subgraphs deeper than kMaxNesting.
Status CheckCalls(const std::vector<std::vector<size_t>>& calls) {
  const size_t n = calls.size();
  std::vector<int> mark(n, 0);                   // 0 unvisited, 1 on the stack, 2 done
  std::vector<size_t> depth(n);                  // subgraphs in the longest chain it starts
  std::vector<std::pair<size_t, size_t>> stack;  // (subgraph, next callee to visit)
  for (size_t root = 0; root < n; ++root) {
    if (mark[root] != 0) continue;
    mark[root] = 1;
    stack.emplace_back(root, 0);
    while (!stack.empty()) {
      const size_t g = stack.back().first;
      if (stack.back().second < calls[g].size()) {
        const size_t c = calls[g][stack.back().second++];
        if (mark[c] == 1) {
          std::string chain;
          bool on = false;
          for (const auto& entry : stack) {
            on = on || entry.first == c;
            if (on) chain += "subgraph " + Str(entry.first) + " -> ";
          }
          return Bad("subgraph " + Str(c) + " runs itself (" + chain + "subgraph " + Str(c) +
                     "): recursive WHILE/IF subgraphs are not supported");
        }
        if (mark[c] == 0) {
          mark[c] = 1;
          stack.emplace_back(c, 0);
        }
        continue;
      }
      depth[g] = 1;
      for (size_t c : calls[g]) depth[g] = std::max(depth[g], depth[c] + 1);
      if (depth[g] > kMaxNesting) {
        return Bad("subgraph " + Str(g) + " starts a chain of " + Str(depth[g]) +
                   " subgraphs run by WHILE/IF operators; ember lite runs at most " +
                   Str(kMaxNesting));
      }
      mark[g] = 2;
      stack.pop_back();
    }
  }
  return Status::OK();
}

// The caller's tensors have[skip + i] (-1: absent) against the callee's want[i], by type.
Status SameTypes(const SubGraphDef& caller, const std::vector<int32_t>& have, size_t skip,
                 const SubGraphDef& callee, const std::vector<int32_t>& want,
                 const std::string& what, const std::string& role) {
  for (size_t i = 0; i < want.size(); ++i) {
    const int32_t a = have[i + skip];
    if (a < 0) return Bad(what + ": " + role + " " + Str(i + skip) + " is absent");
    const TensorDef& ta = caller.tensors[static_cast<size_t>(a)];
    const TensorDef& tb = callee.tensors[static_cast<size_t>(want[i])];
    if (ta.type != tb.type) {
      return Bad(what + ": " + role + " " + Str(i + skip) + " '" + ta.name + "' is " +
                 TensorTypeName(ta.type) + " but subgraph tensor '" + tb.name + "' is " +
                 TensorTypeName(tb.type));
    }
  }
  return Status::OK();
}

Status CheckWhile(const std::vector<SubGraphDef>& graphs, const SubGraphDef& caller,
                  const OperatorDef& op, const std::string& what) {
  const size_t n = op.inputs.size();
  const int32_t ci = op.options.cond_subgraph, bi = op.options.body_subgraph;
  if (ci == bi) {
    return Bad(what + ": cond_subgraph_index and body_subgraph_index are both " +
               std::to_string(ci));
  }
  const SubGraphDef& cond = graphs[static_cast<size_t>(ci)];
  const SubGraphDef& body = graphs[static_cast<size_t>(bi)];
  auto count = [&](size_t got, const std::string& field) -> Status {
    if (got != n) {
      return Bad(what + ": it has " + Str(n) + " inputs but " + field + " has " + Str(got));
    }
    return Status::OK();
  };
  EMBER_RETURN_IF_ERROR(count(op.outputs.size(), "the operator's outputs"));
  EMBER_RETURN_IF_ERROR(
      count(cond.inputs.size(), "cond subgraph " + std::to_string(ci) + "'s inputs"));
  EMBER_RETURN_IF_ERROR(
      count(body.inputs.size(), "body subgraph " + std::to_string(bi) + "'s inputs"));
  EMBER_RETURN_IF_ERROR(
      count(body.outputs.size(), "body subgraph " + std::to_string(bi) + "'s outputs"));
  if (cond.outputs.size() != 1) {
    return Bad(what + ": cond subgraph " + std::to_string(ci) + " has " + Str(cond.outputs.size()) +
               " outputs; it must have one (a BOOL)");
  }
  const TensorDef& c = cond.tensors[static_cast<size_t>(cond.outputs[0])];
  if (c.type != TensorType::kBool || c.num_elements != 1) {
    return Bad(what + ": cond subgraph " + std::to_string(ci) + "'s output '" + c.name + "' is " +
               TensorTypeName(c.type) + " " + ShapeString(c.shape) + ", not one BOOL");
  }
  for (size_t i = 0; i < n; ++i) {
    const TensorDef& a = cond.tensors[static_cast<size_t>(cond.inputs[i])];
    const TensorDef& b = body.tensors[static_cast<size_t>(body.inputs[i])];
    const TensorDef& o = body.tensors[static_cast<size_t>(body.outputs[i])];
    if (a.type != b.type || b.type != o.type) {
      return Bad(what + ": loop variable " + Str(i) + " is " + TensorTypeName(a.type) +
                 " in cond subgraph " + std::to_string(ci) + ", " + TensorTypeName(b.type) +
                 " in body subgraph " + std::to_string(bi) + "'s inputs and " +
                 TensorTypeName(o.type) + " in its outputs");
    }
  }
  EMBER_RETURN_IF_ERROR(SameTypes(caller, op.inputs, 0, cond, cond.inputs, what, "input"));
  return SameTypes(caller, op.outputs, 0, body, body.outputs, what, "output");
}

Status CheckIf(const std::vector<SubGraphDef>& graphs, const SubGraphDef& caller,
               const OperatorDef& op, const std::string& what) {
  if (op.inputs.empty() || op.inputs[0] < 0) return Bad(what + ": it has no condition input");
  const TensorDef& c = caller.tensors[static_cast<size_t>(op.inputs[0])];
  if (c.type != TensorType::kBool || c.num_elements != 1) {
    return Bad(what + ": condition input '" + c.name + "' is " + TensorTypeName(c.type) + " " +
               ShapeString(c.shape) + ", not one BOOL");
  }
  for (const int32_t g : {op.options.then_subgraph, op.options.else_subgraph}) {
    const SubGraphDef& branch = graphs[static_cast<size_t>(g)];
    const std::string name =
        (g == op.options.then_subgraph ? "then subgraph " : "else subgraph ") + std::to_string(g);
    if (branch.inputs.size() != op.inputs.size() - 1) {
      return Bad(what + ": it passes " + Str(op.inputs.size() - 1) + " inputs (after the " +
                 "condition) but " + name + " has " + Str(branch.inputs.size()));
    }
    if (branch.outputs.size() != op.outputs.size()) {
      return Bad(what + ": it has " + Str(op.outputs.size()) + " outputs but " + name + " has " +
                 Str(branch.outputs.size()));
    }
    EMBER_RETURN_IF_ERROR(SameTypes(caller, op.inputs, 1, branch, branch.inputs, what, "input"));
    EMBER_RETURN_IF_ERROR(SameTypes(caller, op.outputs, 0, branch, branch.outputs, what, "output"));
  }
  return Status::OK();
}

}  // namespace

Status CheckControlFlow(const std::vector<SubGraphDef>& graphs) {
  const size_t n = graphs.size();
  std::vector<std::vector<size_t>> calls(n);
  for (size_t g = 0; g < n; ++g) {
    for (size_t oi = 0; oi < graphs[g].operators.size(); ++oi) {
      const OperatorDef& op = graphs[g].operators[oi];
      if (op.op != BuiltinOp::kWhile && op.op != BuiltinOp::kIf) continue;
      const std::string what = "subgraph " + Str(g) + " operator " + Str(oi) + " (" +
                               (op.op == BuiltinOp::kWhile ? "WHILE" : "IF") + ")";
      for (const auto& callee : Callees(op)) {
        if (callee.first < 0 || static_cast<size_t>(callee.first) >= n) {
          return Bad(what + ": " + callee.second + " " + std::to_string(callee.first) +
                     " is out of range (the model has " + Str(n) + " subgraphs)");
        }
        if (callee.first == 0) {
          return Bad(what + ": " + callee.second + " is 0, the main subgraph");
        }
        calls[g].push_back(static_cast<size_t>(callee.first));
      }
      if (op.op == BuiltinOp::kWhile) {
        EMBER_RETURN_IF_ERROR(CheckWhile(graphs, graphs[g], op, what));
      } else if (op.op == BuiltinOp::kIf) {
        EMBER_RETURN_IF_ERROR(CheckIf(graphs, graphs[g], op, what));
      }
    }
  }
  return CheckCalls(calls);
}

}  // namespace lite
}  // namespace ember
