#include "savedmodel/functional_if.h"

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/graph.h"
#include "core/op_kernel.h"

namespace ember {
namespace {

// Branch functions being inlined on this thread, outermost first: an If whose branch is already
// among them would be inlined forever. Lowering nests through LowerFunctionalWhile too (an If in
// a loop body in a branch), on the same thread.
thread_local std::vector<std::string> inlining;
constexpr size_t kMaxNesting = 64;

NodeDef MakeNode(const std::string& name, const std::string& op, std::vector<std::string> inputs,
                 DataType t) {
  NodeDef n;
  n.name = name;
  n.op = op;
  n.input = std::move(inputs);
  n.attr["T"] = TypeValue(t);
  return n;
}

NodeDef Placeholder(const std::string& name, DataType t) {
  NodeDef n;
  n.name = name;
  n.op = "Placeholder";
  n.attr["dtype"] = TypeValue(t);
  return n;
}

std::string NodeName(const std::string& input) {
  return ParseTensorName(input[0] == '^' ? input.substr(1) : input).node;
}

struct Branch {
  const char* attr;  // "then_branch" / "else_branch"
  AttrValue func;
  const FunctionDef* fn = nullptr;
};

Status CheckArgs(const std::string& what, const char* attr_name,
                 const std::vector<FunctionArg>& args, const std::vector<DataType>& types,
                 const char* noun) {
  bool lists = false;
  for (const FunctionArg& a : args) {
    lists = lists || !a.number_attr.empty() || !a.type_list_attr.empty();
  }
  if (!lists && args.size() != types.size()) {
    return errors::InvalidArgument(what + " has " + std::to_string(args.size()) + " " + noun +
                                   "s but attr " + attr_name + " lists " +
                                   std::to_string(types.size()) +
                                   " (both branches must match the If's " + attr_name + ")");
  }
  for (size_t k = 0; k < args.size() && k < types.size() && !lists; ++k) {
    if (args[k].type != DataType::kInvalid && args[k].type != types[k]) {
      return errors::InvalidArgument(what + " " + noun + " " + std::to_string(k) + " ('" +
                                     args[k].name + "') is " + DataTypeString(args[k].type) +
                                     " but " + attr_name + "[" + std::to_string(k) + "] is " +
                                     DataTypeString(types[k]));
    }
  }
  return Status::OK();
}

Status FindBranch(const FunctionDefLibrary& library, const NodeDef& node, const std::string& where,
                  const std::vector<DataType>& tin, const std::vector<DataType>& tout, Branch* b) {
  auto it = node.attr.find(b->attr);
  if (it == node.attr.end() || it->second.kind != AttrValue::Kind::kFunc || it->second.s.empty()) {
    return errors::InvalidArgument(where + " has no function attr '" + b->attr +
                                   "' (an If names its branch functions in then_branch and "
                                   "else_branch)");
  }
  b->func = it->second;
  b->fn = library.Find(b->func.s);
  if (b->fn == nullptr) {
    return errors::NotFound(where + ": its " + b->attr + " '" + b->func.s +
                            "' is not in the graph's function library (save the graph with its "
                            "functions: tf.saved_model.save, or the GraphDef of a concrete "
                            "function's graph)");
  }
  const std::string what = where + ": " + b->attr + " '" + b->func.s + "'";
  EMBER_RETURN_IF_ERROR(CheckArgs(what, "Tin", b->fn->input_arg, tin, "argument"));
  return CheckArgs(what, "Tout", b->fn->output_arg, tout, "output");
}

// Inlines one branch as PartitionedCall `call`(args..., ^pivot) and appends its body to `added`.
// The outer tensors it reads (the Switch outputs, the pivot, resource producers) are stand-in
// nodes of the same names in the branch's own graph, dropped afterwards: the body's inputs then
// name the real nodes as they are.
Status InlineBranch(const FunctionDefLibrary& library, const InlineOptions& options,
                    const ProducerLookup& producer, const std::string& where, const Branch& b,
                    const std::string& call, const std::string& pivot,
                    const std::vector<std::string>& args, const std::vector<DataType>& tin,
                    const std::vector<DataType>& tout, std::vector<NodeDef>* added,
                    std::vector<std::string>* rets, std::string* done) {
  const std::string& fname = b.func.s;
  if (std::find(inlining.begin(), inlining.end(), fname) != inlining.end()) {
    std::string chain;
    for (const std::string& f : inlining) chain += f + " -> ";
    return errors::InvalidArgument(where + ": its " + b.attr + " '" + fname +
                                   "' runs an If of itself (" + chain + fname +
                                   "); ember inlines both branches of a cond, so a recursive "
                                   "cond cannot run (write it as a tf.while_loop)");
  }
  if (inlining.size() >= kMaxNesting) {
    return errors::InvalidArgument(where + ": Ifs nest more than " + std::to_string(kMaxNesting) +
                                   " deep");
  }
  struct Push {
    explicit Push(const std::string& f) { inlining.push_back(f); }
    ~Push() { inlining.pop_back(); }
  } push(fname);

  GraphDef g;
  g.library = library;
  std::set<std::string> stand_ins;
  auto stand_in = [&](NodeDef n) {
    if (stand_ins.insert(n.name).second) g.node.push_back(std::move(n));
  };
  stand_in(Placeholder(pivot, DataType::kBool));
  for (size_t k = 0; k < args.size(); ++k) {
    if (tin[k] != DataType::kResource) {
      stand_in(Placeholder(NodeName(args[k]), tin[k]));
      continue;
    }
    // A variable: its own VarHandleOp, so that a loop inside the branch finds it too.
    const NodeDef* src = producer(args[k]);
    if (src != nullptr && src->op == "VarHandleOp") {
      NodeDef handle = *src;
      handle.input.clear();
      handle.device.clear();
      stand_in(std::move(handle));
    } else {
      stand_in(Placeholder(NodeName(args[k]), DataType::kResource));
    }
  }
  NodeDef c;
  c.name = call;
  c.op = "PartitionedCall";
  c.input = args;
  c.input.push_back("^" + pivot);
  c.attr["f"] = b.func;
  c.attr["Tin"] = TypeList(tin);
  c.attr["Tout"] = TypeList(tout);
  g.node.push_back(std::move(c));
  std::vector<std::string> roots;
  for (size_t j = 0; j < tout.size(); ++j) roots.push_back(call + ":" + std::to_string(j));
  roots.push_back("^" + call);
  GraphDef flat;
  std::vector<std::string> flat_roots;
  Status s = InlineFunctionCalls(g, roots, options, &flat, &flat_roots);
  if (!s.ok()) {
    return Status(s.code(), "In the " + std::string(b.attr) + " '" + fname + "' of " + where +
                                ": " + s.message());
  }
  for (NodeDef& n : flat.node) {
    if (stand_ins.count(n.name) == 0) added->push_back(std::move(n));
  }
  rets->assign(flat_roots.begin(), flat_roots.end() - 1);
  *done = flat_roots.back().substr(1);
  return Status::OK();
}

}  // namespace

Status LowerFunctionalIf(const FunctionDefLibrary& library, const InlineOptions& options,
                         const ProducerLookup& producer, NodeDef* node,
                         std::vector<NodeDef>* added) {
  const std::string where = node->op + " node '" + node->name + "'";
  AttrReader attrs(*node);
  std::vector<DataType> tin, tout;
  DataType tcond = DataType::kBool;
  EMBER_RETURN_IF_ERROR(attrs.Get("Tin", &tin));
  EMBER_RETURN_IF_ERROR(attrs.Get("Tout", &tout));
  EMBER_RETURN_IF_ERROR(attrs.GetOr("Tcond", &tcond, DataType::kBool));
  if (tcond != DataType::kBool) {
    return errors::Unimplemented(where + ": its cond is " + DataTypeString(tcond) +
                                 "; ember runs an If on a bool cond only (make the predicate "
                                 "bool, e.g. tf.not_equal(c, 0), before tf.cond)");
  }
  for (size_t j = 0; j < tout.size(); ++j) {
    if (tout[j] == DataType::kResource) {
      return errors::Unimplemented(where + ": output " + std::to_string(j) +
                                   " is a resource (attr Tout); ember passes variables into a "
                                   "cond but not out of it (return the variable's value)");
    }
  }
  Branch then_b{"then_branch", AttrValue(), nullptr};
  Branch else_b{"else_branch", AttrValue(), nullptr};
  EMBER_RETURN_IF_ERROR(FindBranch(library, *node, where, tin, tout, &then_b));
  EMBER_RETURN_IF_ERROR(FindBranch(library, *node, where, tin, tout, &else_b));
  std::vector<std::string> data, controls;
  for (const std::string& in : node->input) {
    if (in.empty()) return errors::InvalidArgument(where + " has an empty input name");
    (in[0] == '^' ? controls : data).push_back(in);
  }
  if (data.size() != tin.size() + 1) {
    return errors::InvalidArgument(
        where + " has " + std::to_string(data.size()) + " data inputs; its cond and the " +
        std::to_string(tin.size()) + " args that attr Tin lists make " +
        std::to_string(tin.size() + 1) + " (fix the node's inputs or Tin)");
  }
  const std::string& cond = data[0];
  const std::string p = node->name + "/_ember_if_";
  // The If's control inputs hold back the pivot and every Switch, so both branches wait too.
  auto with_controls = [&](std::vector<std::string> in) {
    in.insert(in.end(), controls.begin(), controls.end());
    return in;
  };
  added->push_back(MakeNode(p + "pivot", "Switch", with_controls({cond, cond}), DataType::kBool));
  added->push_back(MakeNode(p + "pivot_t", "Identity", {p + "pivot:1"}, DataType::kBool));
  added->push_back(MakeNode(p + "pivot_f", "Identity", {p + "pivot:0"}, DataType::kBool));
  std::vector<std::string> then_args, else_args;
  for (size_t k = 0; k < tin.size(); ++k) {
    const std::string& arg = data[k + 1];
    if (tin[k] == DataType::kResource) {  // variable kernels find the variable by its producer
      then_args.push_back(arg);
      else_args.push_back(arg);
      continue;
    }
    const std::string sw = p + "switch_" + std::to_string(k);
    added->push_back(MakeNode(sw, "Switch", with_controls({arg, cond}), tin[k]));
    then_args.push_back(sw + ":1");
    else_args.push_back(sw + ":0");
  }
  std::vector<std::string> then_rets, else_rets;
  std::string then_done, else_done;
  EMBER_RETURN_IF_ERROR(InlineBranch(library, options, producer, where, then_b, p + "then",
                                     p + "pivot_t", then_args, tin, tout, added, &then_rets,
                                     &then_done));
  EMBER_RETURN_IF_ERROR(InlineBranch(library, options, producer, where, else_b, p + "else",
                                     p + "pivot_f", else_args, tin, tout, added, &else_rets,
                                     &else_done));
  NodeDef lowered;
  lowered.name = node->name;
  for (size_t j = 0; j < tout.size(); ++j) {
    const std::string merge = p + "merge_" + std::to_string(j);
    NodeDef m = MakeNode(merge, "Merge", {else_rets[j], then_rets[j]}, tout[j]);
    m.attr["N"].kind = AttrValue::Kind::kI;
    m.attr["N"].i = 2;
    added->push_back(std::move(m));
    lowered.input.push_back(merge);
  }
  // Live once the taken branch has finished (a Merge waits for its control inputs but is not
  // killed by the untaken branch's dead ones): what "^N" consumers wait for.
  NodeDef executed =
      MakeNode(p + "executed", "Merge",
               {p + "pivot_f", p + "pivot_t", "^" + else_done, "^" + then_done}, DataType::kBool);
  executed.attr["N"].kind = AttrValue::Kind::kI;
  executed.attr["N"].i = 2;
  added->push_back(std::move(executed));
  lowered.input.push_back("^" + p + "executed");
  if (tout.empty()) {
    lowered.op = "NoOp";
  } else {
    lowered.op = "IdentityN";
    lowered.attr["T"] = TypeList(tout);
  }
  *node = std::move(lowered);
  return Status::OK();
}

}  // namespace ember
