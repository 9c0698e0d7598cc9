#include "savedmodel/functional_while.h"

#include <set>
#include <string>
#include <vector>

#include "core/control_flow.h"
#include "core/graph.h"
#include "core/op_kernel.h"

namespace ember {
namespace {

Status FuncAttr(const NodeDef& node, const char* name, AttrValue* out) {
  auto it = node.attr.find(name);
  if (it == node.attr.end() || it->second.kind != AttrValue::Kind::kFunc || it->second.s.empty()) {
    return errors::InvalidArgument(node.op + " node '" + node.name + "' has no function attr '" +
                                   name + "'");
  }
  *out = it->second;
  return Status::OK();
}

NodeDef Call(const std::string& name, const AttrValue& f, const std::vector<std::string>& args,
             const std::vector<DataType>& in, const std::vector<DataType>& out) {
  NodeDef n;
  n.name = name;
  n.op = "PartitionedCall";
  n.input = args;
  n.attr["f"] = f;
  n.attr["Tin"] = TypeList(in);
  n.attr["Tout"] = TypeList(out);
  return n;
}

NodeDef Identity(const std::string& name, const std::string& input, DataType t) {
  NodeDef n;
  n.name = name;
  n.op = "Identity";
  n.input = {input};
  n.attr["T"] = TypeValue(t);
  return n;
}

}  // namespace

Status LowerFunctionalWhile(const FunctionDefLibrary& library, const InlineOptions& options,
                            const ProducerLookup& producer, NodeDef* node) {
  const std::string where = node->op + " node '" + node->name + "'";
  // A body that runs a While of itself would recurse forever: bound the nesting.
  static thread_local int depth = 0;
  struct Nest {
    int* d;
    explicit Nest(int* v) : d(v) { ++*d; }
    ~Nest() { --*d; }
  } nest(&depth);
  constexpr int kMaxNesting = 64;
  if (depth > kMaxNesting) {
    return errors::InvalidArgument(where + ": While loops nest more than " +
                                   std::to_string(kMaxNesting) +
                                   " deep (does a loop body run itself?)");
  }
  std::vector<DataType> types;
  EMBER_RETURN_IF_ERROR(AttrReader(*node).Get("T", &types));
  AttrValue cond, body;
  EMBER_RETURN_IF_ERROR(FuncAttr(*node, "cond", &cond));
  EMBER_RETURN_IF_ERROR(FuncAttr(*node, "body", &body));
  size_t num_data = 0;
  while (num_data < node->input.size() && !node->input[num_data].empty() &&
         node->input[num_data][0] != '^') {
    ++num_data;
  }
  if (num_data != types.size()) {
    return errors::InvalidArgument(where + " has " + std::to_string(num_data) +
                                   " data inputs but " + std::to_string(types.size()) +
                                   " types in attr 'T'");
  }
  GraphDef loop;
  loop.library = library;
  std::vector<std::string> args, roots;
  std::set<std::string> copied;
  for (size_t k = 0; k < types.size(); ++k) {
    const std::string arg = kWhileArgPrefix + std::to_string(k);
    NodeDef p;
    p.name = arg;
    p.op = "Placeholder";
    p.attr["dtype"] = TypeValue(types[k]);
    loop.node.push_back(std::move(p));
    roots.push_back("^" + arg);
    if (types[k] != DataType::kResource) {
      args.push_back(arg);
      continue;
    }
    // Variable kernels find their variable by the node producing their resource input: the body
    // reads the outer VarHandleOp itself (same name, same attrs), not the placeholder.
    const NodeDef* src = producer(node->input[k]);
    if (src == nullptr || src->op != "VarHandleOp") {
      return errors::Unimplemented(
          where + ": input " + std::to_string(k) + " ('" + node->input[k] +
          "') is a resource that does not come from a VarHandleOp; ember passes only variables "
          "into loops");
    }
    if (copied.insert(src->name).second) {
      NodeDef handle = *src;
      handle.input.clear();
      handle.device.clear();  // the loop kernel runs its body on the CPU
      loop.node.push_back(std::move(handle));
    }
    args.push_back(src->name);
  }
  loop.node.push_back(Call("_ember_cond_call", cond, args, types, {DataType::kBool}));
  loop.node.push_back(Identity(kWhileCondName, "_ember_cond_call", DataType::kBool));
  loop.node.push_back(Call("_ember_body_call", body, args, types, types));
  roots.push_back(kWhileCondName);
  for (size_t i = 0; i < types.size(); ++i) {
    const std::string next = kWhileNextPrefix + std::to_string(i);
    loop.node.push_back(Identity(next, "_ember_body_call:" + std::to_string(i), types[i]));
    roots.push_back(next);
  }
  GraphDef flat;
  std::vector<std::string> flat_roots;
  Status s = InlineFunctionCalls(loop, roots, options, &flat, &flat_roots);
  if (!s.ok()) return Status(s.code(), "In the loop of " + where + ": " + s.message());
  // Inlining forwards a resource Identity to the handle it passes on, leaving no node of that
  // name: the loop kernel fetches the condition and the next values by name.
  std::set<std::string> names;
  for (const NodeDef& n : flat.node) names.insert(n.name);
  const size_t first_value = types.size();
  for (size_t j = first_value; j < roots.size(); ++j) {
    if (names.count(roots[j]) != 0) continue;
    DataType t = j == first_value ? DataType::kBool : types[j - first_value - 1];
    flat.node.push_back(Identity(roots[j], flat_roots[j], t));
  }
  Graph check;
  s = Graph::Build(flat.node, GraphOptions(), &check);
  if (!s.ok()) return Status(s.code(), "In the loop of " + where + ": " + s.message());

  NodeDef w;
  w.name = node->name;
  w.op = "_EmberWhile";
  w.input = node->input;
  w.device = node->device;
  w.attr["T"] = TypeList(types);
  w.attr["body"].kind = AttrValue::Kind::kS;
  w.attr["body"].s = SerializeGraphDefBinary(flat);
  w.attr["frame_name"].kind = AttrValue::Kind::kS;
  w.attr["frame_name"].s = node->name;
  w.attr["num_loop_vars"].kind = AttrValue::Kind::kI;
  w.attr["num_loop_vars"].i = static_cast<int64_t>(types.size());
  *node = std::move(w);
  return Status::OK();
}

}  // namespace ember
