#include "savedmodel/function_inline.h"

#include <deque>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>
#include <utility>

#include "core/graph.h"
#include "core/op_kernel.h"
#include "savedmodel/functional_if.h"
#include "savedmodel/functional_while.h"
#include "savedmodel/op_defaults.h"

namespace ember {

namespace {

constexpr int kMaxCallDepth = 256;

bool IsCallOp(const std::string& op) {
  return op == "StatefulPartitionedCall" || op == "PartitionedCall";
}

struct CallState {
  enum { kNone, kBusy, kDone } state = kNone;
  std::vector<std::string> rets;  // flat tensor names, one per output
  std::string done;               // flat NoOp standing for the call as a control dependency
};

// One instantiated body (or the top-level graph, where fn == nullptr).
struct Frame {
  const FunctionDef* fn = nullptr;
  std::string prefix;          // "" at the top level, "call/" inside a call's body
  std::vector<NodeDef> nodes;  // with attr placeholders substituted
  std::unordered_map<std::string, size_t> index;
  std::map<std::string, std::vector<std::string>> args;  // input arg -> flat tensors
  std::vector<std::string> start_controls;               // "^x" added to every body node
  std::unordered_map<std::string, CallState> calls;
  int depth = 0;
};

std::string Where(const Frame& f, const std::string& node) {
  if (f.fn == nullptr) return "node '" + node + "'";
  return "function '" + f.fn->name + "' node '" + node + "'";
}

class Inliner {
 public:
  Inliner(const GraphDef& graph, const InlineOptions& options) : graph_(graph), options_(options) {}

  Status Run(const std::vector<std::string>& roots, GraphDef* out,
             std::vector<std::string>* flat_roots);

 private:
  bool IsCall(const NodeDef& n) const {
    return IsCallOp(n.op) || graph_.library.Find(n.op) != nullptr;
  }
  Status Resolve(Frame* f, const std::string& ref, std::string* flat);
  Status ResolveControl(Frame* f, const std::string& name, std::string* flat);
  Status EnsureCall(Frame* f, const std::string& name, CallState** out);
  Status Emit(Frame* f, const NodeDef& n);
  Status EmitBody(Frame* f);

  const GraphDef& graph_;
  InlineOptions options_;
  std::vector<NodeDef> out_;
  std::vector<std::string> origin_;  // "function 'f' node 'n'" per emitted node
  std::vector<std::unique_ptr<Frame>> frames_;
  int active_calls_ = 0;  // EnsureCall recursion (nesting and call-to-call chains)
};

Status SubstituteAttrs(const Frame& f, const std::map<std::string, AttrValue>& inst, NodeDef* n) {
  for (auto& kv : n->attr) {
    if (kv.second.kind != AttrValue::Kind::kPlaceholder) continue;
    auto it = inst.find(kv.second.s);
    if (it == inst.end()) {
      return errors::InvalidArgument(Where(f, n->name) + ": attr '" + kv.first +
                                     "' refers to function attr '" + kv.second.s +
                                     "', which the call does not set");
    }
    kv.second = it->second;
  }
  return Status::OK();
}

// Body refs: "arg", "arg:i", "node:out_arg:i"; top level: "node", "node:i".
Status Inliner::Resolve(Frame* f, const std::string& ref, std::string* flat) {
  if (f->fn != nullptr) {
    size_t c1 = ref.find(':');
    std::string head = ref.substr(0, c1);
    auto arg = f->args.find(head);
    if (arg != f->args.end()) {
      size_t i = 0;
      if (c1 != std::string::npos) {
        TensorId id = ParseTensorName(ref);
        i = static_cast<size_t>(id.index);
      }
      if (i >= arg->second.size()) {
        return errors::InvalidArgument("function '" + f->fn->name + "': input '" + ref +
                                       "' is past the end of argument '" + head + "'");
      }
      *flat = arg->second[i];
      return Status::OK();
    }
    size_t c2 = c1 == std::string::npos ? std::string::npos : ref.find(':', c1 + 1);
    std::string out_arg = c2 == std::string::npos ? "" : ref.substr(c1 + 1, c2 - c1 - 1);
    int idx = 0;
    if (c2 != std::string::npos) {
      idx = ParseTensorName("x:" + ref.substr(c2 + 1)).index;
    } else if (c1 != std::string::npos) {
      idx = ParseTensorName(ref).index;
    }
    auto it = f->index.find(head);
    if (it == f->index.end()) {
      return errors::InvalidArgument("function '" + f->fn->name + "': input '" + ref +
                                     "' names neither an argument nor a node of the body");
    }
    const NodeDef& src = f->nodes[it->second];
    if (IsCall(src)) {
      CallState* call;
      EMBER_RETURN_IF_ERROR(EnsureCall(f, head, &call));
      if (idx < 0 || static_cast<size_t>(idx) >= call->rets.size()) {
        return errors::InvalidArgument(Where(*f, head) + ": output " + std::to_string(idx) +
                                       " requested, the function has " +
                                       std::to_string(call->rets.size()));
      }
      *flat = call->rets[static_cast<size_t>(idx)];
      return Status::OK();
    }
    int start = 0, count = 1;
    const OpDef* op = OpRegistry::Global()->Lookup(src.op);
    if (op != nullptr && !out_arg.empty()) {
      Status s = OutputArgRange(src, *op, out_arg, &start, &count);
      if (!s.ok()) return Status(s.code(), "function '" + f->fn->name + "': " + s.message());
      if (idx >= count) {
        return errors::InvalidArgument("function '" + f->fn->name + "': '" + ref +
                                       "' is past the end of output arg '" + out_arg + "'");
      }
    }
    // An op ember lacks: assume one output arg; the node is reported if it is kept.
    *flat = f->prefix + head + ":" + std::to_string(start + idx);
    return Status::OK();
  }
  TensorId id = ParseTensorName(ref);
  auto it = f->index.find(id.node);
  if (it == f->index.end()) {
    return errors::InvalidArgument("The graph has no node '" + id.node + "' (input '" + ref + "')");
  }
  if (IsCall(f->nodes[it->second])) {
    CallState* call;
    EMBER_RETURN_IF_ERROR(EnsureCall(f, id.node, &call));
    if (id.index < 0 || static_cast<size_t>(id.index) >= call->rets.size()) {
      return errors::InvalidArgument(Where(*f, id.node) + ": output " + std::to_string(id.index) +
                                     " requested, the function has " +
                                     std::to_string(call->rets.size()));
    }
    *flat = call->rets[static_cast<size_t>(id.index)];
    return Status::OK();
  }
  *flat = id.ToString();
  return Status::OK();
}

Status Inliner::ResolveControl(Frame* f, const std::string& name, std::string* flat) {
  auto it = f->index.find(name);
  if (it == f->index.end()) {
    return errors::InvalidArgument((f->fn ? "function '" + f->fn->name + "': " : std::string()) +
                                   "control input '^" + name + "' names no node");
  }
  if (IsCall(f->nodes[it->second])) {
    CallState* call;
    EMBER_RETURN_IF_ERROR(EnsureCall(f, name, &call));
    *flat = "^" + call->done;
    return Status::OK();
  }
  *flat = "^" + f->prefix + name;
  return Status::OK();
}

Status Inliner::EnsureCall(Frame* f, const std::string& name, CallState** out) {
  CallState& st = f->calls[name];
  *out = &st;
  if (st.state == CallState::kDone) return Status::OK();
  if (st.state == CallState::kBusy) {
    return errors::InvalidArgument(Where(*f, name) + ": function calls form a cycle");
  }
  if (active_calls_ >= kMaxCallDepth) {
    return errors::InvalidArgument(Where(*f, name) + ": function calls nest or chain more than " +
                                   std::to_string(kMaxCallDepth) + " deep");
  }
  struct Active {
    int* n;
    explicit Active(int* c) : n(c) { ++*n; }
    ~Active() { --*n; }
  } active(&active_calls_);
  st.state = CallState::kBusy;
  const NodeDef& call = f->nodes[f->index.at(name)];
  std::string fname = call.op;
  std::map<std::string, AttrValue> inst = call.attr;
  if (IsCallOp(call.op)) {
    auto fa = call.attr.find("f");
    if (fa == call.attr.end() || fa->second.kind != AttrValue::Kind::kFunc) {
      return errors::InvalidArgument(Where(*f, name) + " (" + call.op +
                                     ") has no function attr 'f'");
    }
    fname = fa->second.s;
    inst = fa->second.func_attr ? *fa->second.func_attr : std::map<std::string, AttrValue>();
  }
  const FunctionDef* fn = graph_.library.Find(fname);
  if (fn == nullptr) {
    return errors::NotFound(Where(*f, name) + " calls function '" + fname +
                            "', which is not in the graph's function library");
  }
  auto child = std::make_unique<Frame>();
  child->fn = fn;
  child->prefix = f->prefix + name + "/";
  child->depth = f->depth + 1;
  std::vector<std::string> data;
  for (const std::string& in : call.input) {
    std::string flat;
    if (!in.empty() && in[0] == '^') {
      EMBER_RETURN_IF_ERROR(ResolveControl(f, in.substr(1), &flat));
      child->start_controls.push_back(flat);
    } else {
      EMBER_RETURN_IF_ERROR(Resolve(f, in, &flat));
      data.push_back(flat);
    }
  }
  for (const std::string& c : f->start_controls) child->start_controls.push_back(c);
  size_t pos = 0;
  for (const FunctionArg& a : fn->input_arg) {
    size_t n = 1;
    if (!a.number_attr.empty() || !a.type_list_attr.empty()) {
      NodeDef holder;
      holder.name = name;
      holder.attr = inst;
      AttrReader attrs(holder);
      if (!a.number_attr.empty()) {
        int64_t v = 0;
        EMBER_RETURN_IF_ERROR(attrs.Get(a.number_attr, &v));
        n = v < 0 ? 0 : static_cast<size_t>(v);
      } else {
        std::vector<DataType> types;
        EMBER_RETURN_IF_ERROR(attrs.Get(a.type_list_attr, &types));
        n = types.size();
      }
    }
    if (pos + n > data.size()) break;
    child->args[a.name].assign(data.begin() + static_cast<std::ptrdiff_t>(pos),
                               data.begin() + static_cast<std::ptrdiff_t>(pos + n));
    pos += n;
  }
  if (pos != data.size() || child->args.size() != fn->input_arg.size()) {
    return errors::InvalidArgument(Where(*f, name) + " passes " + std::to_string(data.size()) +
                                   " inputs to function '" + fname + "', which takes " +
                                   std::to_string(fn->input_arg.size()) + " arguments");
  }
  child->nodes = fn->node_def;
  for (size_t i = 0; i < child->nodes.size(); ++i) {
    EMBER_RETURN_IF_ERROR(SubstituteAttrs(*child, inst, &child->nodes[i]));
    if (options_.add_default_attrs) AddDefaultAttrs(&child->nodes[i]);
    if (!child->index.emplace(child->nodes[i].name, i).second) {
      return errors::InvalidArgument("function '" + fname + "' has two nodes named '" +
                                     child->nodes[i].name + "'");
    }
  }
  Frame* body = child.get();
  frames_.push_back(std::move(child));
  EMBER_RETURN_IF_ERROR(EmitBody(body));
  // The rets, then a NoOp that stands for the whole call as a control dependency (or, for a
  // kept top-level call, an IdentityN of the rets that its consumers read).
  NodeDef done;
  done.name = f->prefix + name;
  done.op = "NoOp";
  std::vector<DataType> types;
  bool keep = options_.keep_top_level_calls && f->fn == nullptr;
  for (const FunctionArg& a : fn->output_arg) {
    auto r = fn->ret.find(a.name);
    if (r == fn->ret.end()) {
      return errors::InvalidArgument("function '" + fname + "' has no ret for output '" + a.name +
                                     "'");
    }
    std::string flat;
    EMBER_RETURN_IF_ERROR(Resolve(body, r->second, &flat));
    st.rets.push_back(flat);
    DataType t = a.type;
    auto ta = a.type_attr.empty() ? inst.end() : inst.find(a.type_attr);
    if (ta != inst.end() && ta->second.kind == AttrValue::Kind::kType) t = ta->second.type;
    if (t == DataType::kInvalid || t == DataType::kResource) keep = false;
    types.push_back(t);
  }
  if (keep && !st.rets.empty()) {
    done.op = "IdentityN";
    done.input = st.rets;
    done.attr["T"] = TypeList(types);
    for (size_t i = 0; i < st.rets.size(); ++i) {
      st.rets[i] = done.name + (i == 0 ? "" : ":" + std::to_string(i));
    }
  } else {
    for (const std::string& r : st.rets) done.input.push_back("^" + ParseTensorName(r).node);
  }
  for (const auto& cr : fn->control_ret) {
    std::string flat;
    EMBER_RETURN_IF_ERROR(ResolveControl(body, cr.second, &flat));
    done.input.push_back(flat);
  }
  st.done = done.name;
  out_.push_back(std::move(done));
  origin_.push_back(Where(*f, name));
  st.state = CallState::kDone;
  *out = &f->calls[name];
  return Status::OK();
}

// ResourceGather(resource, indices) reads the variable and gathers along axis batch_dims:
// emitted as ReadVariableOp + GatherV2 (same output arg name, "output"), so no resource-aware
// gather kernel is needed.
bool RewriteResourceGather(const NodeDef& flat, std::vector<NodeDef>* out) {
  if (flat.op != "ResourceGather" || flat.input.size() < 2) return false;
  auto dtype = flat.attr.find("dtype");
  if (dtype == flat.attr.end()) return false;
  int64_t batch_dims = 0;
  auto b = flat.attr.find("batch_dims");
  if (b != flat.attr.end() && b->second.kind == AttrValue::Kind::kI) batch_dims = b->second.i;
  NodeDef read;
  read.name = flat.name + "/ember_read";
  read.op = "ReadVariableOp";
  read.input = {flat.input[0]};
  read.attr["dtype"] = dtype->second;
  NodeDef axis;
  axis.name = flat.name + "/ember_axis";
  axis.op = "Const";
  axis.attr["dtype"].kind = AttrValue::Kind::kType;
  axis.attr["dtype"].type = DataType::kInt32;
  axis.attr["value"].kind = AttrValue::Kind::kTensor;
  axis.attr["value"].tensor = Tensor(DataType::kInt32, TensorShape());
  axis.attr["value"].tensor.data<int32_t>()[0] = static_cast<int32_t>(batch_dims);
  NodeDef gather = flat;
  gather.op = "GatherV2";
  gather.input = {read.name, flat.input[1], axis.name};
  for (size_t i = 2; i < flat.input.size(); ++i) gather.input.push_back(flat.input[i]);
  gather.attr.erase("dtype");
  gather.attr.erase("validate_indices");
  gather.attr["Tparams"] = dtype->second;
  gather.attr["Taxis"] = axis.attr["dtype"];
  gather.attr["batch_dims"].kind = AttrValue::Kind::kI;
  gather.attr["batch_dims"].i = batch_dims;
  for (const std::string& in : flat.input) {
    if (!in.empty() && in[0] == '^') {
      read.input.push_back(in);
      axis.input.push_back(in);
    }
  }
  out->push_back(std::move(read));
  out->push_back(std::move(axis));
  out->push_back(std::move(gather));
  return true;
}

Status Inliner::Emit(Frame* f, const NodeDef& n) {
  NodeDef flat;
  flat.name = f->prefix + n.name;
  flat.op = n.op;
  flat.attr = n.attr;
  if (options_.add_default_attrs) AddDefaultAttrs(&flat);
  if (f->fn == nullptr) flat.device = n.device;
  std::vector<std::string> controls;
  for (const std::string& in : n.input) {
    std::string r;
    if (!in.empty() && in[0] == '^') {
      EMBER_RETURN_IF_ERROR(ResolveControl(f, in.substr(1), &r));
      controls.push_back(r);
    } else {
      EMBER_RETURN_IF_ERROR(Resolve(f, in, &r));
      flat.input.push_back(r);
    }
  }
  for (const std::string& c : controls) flat.input.push_back(c);
  for (const std::string& c : f->start_controls) flat.input.push_back(c);
  std::vector<NodeDef> rewritten;
  if (RewriteResourceGather(flat, &rewritten)) {
    for (NodeDef& r : rewritten) {
      out_.push_back(std::move(r));
      origin_.push_back(Where(*f, n.name));
    }
    return Status::OK();
  }
  out_.push_back(std::move(flat));
  origin_.push_back(Where(*f, n.name));
  return Status::OK();
}

Status Inliner::EmitBody(Frame* f) {
  for (size_t i = 0; i < f->nodes.size(); ++i) {
    const NodeDef& n = f->nodes[i];
    if (IsCall(n)) {
      CallState* call;
      EMBER_RETURN_IF_ERROR(EnsureCall(f, n.name, &call));
    } else {
      EMBER_RETURN_IF_ERROR(Emit(f, n));
    }
  }
  return Status::OK();
}

std::string NodeOf(const std::string& input) {
  std::string s = !input.empty() && input[0] == '^' ? input.substr(1) : input;
  return ParseTensorName(s).node;
}

Status Inliner::Run(const std::vector<std::string>& roots, GraphDef* out,
                    std::vector<std::string>* flat_roots) {
  auto top = std::make_unique<Frame>();
  top->nodes = graph_.node;
  for (size_t i = 0; i < top->nodes.size(); ++i) {
    if (!top->index.emplace(top->nodes[i].name, i).second) {
      return errors::InvalidArgument("Node '" + top->nodes[i].name + "' is not unique");
    }
  }
  Frame* f = top.get();
  frames_.push_back(std::move(top));
  // Top-level nodes the roots reach (walking through calls' inputs, not into bodies).
  std::vector<bool> needed(f->nodes.size(), false);
  std::deque<size_t> queue;
  for (const std::string& r : roots) {
    auto it = f->index.find(NodeOf(r));
    if (it == f->index.end()) {
      return errors::NotFound("The graph has no node '" + NodeOf(r) + "' (wanted as '" + r + "')");
    }
    if (!needed[it->second]) queue.push_back(it->second);
    needed[it->second] = true;
  }
  while (!queue.empty()) {
    size_t i = queue.front();
    queue.pop_front();
    for (const std::string& in : f->nodes[i].input) {
      auto it = f->index.find(NodeOf(in));
      if (it != f->index.end() && !needed[it->second]) {
        needed[it->second] = true;
        queue.push_back(it->second);
      }
    }
  }
  for (size_t i = 0; i < f->nodes.size(); ++i) {
    if (!needed[i]) continue;
    if (IsCall(f->nodes[i])) {
      CallState* call;
      EMBER_RETURN_IF_ERROR(EnsureCall(f, f->nodes[i].name, &call));
    } else {
      EMBER_RETURN_IF_ERROR(Emit(f, f->nodes[i]));
    }
  }
  flat_roots->clear();
  for (const std::string& r : roots) {
    std::string flat;
    if (!r.empty() && r[0] == '^') {
      EMBER_RETURN_IF_ERROR(ResolveControl(f, r.substr(1), &flat));
    } else {
      EMBER_RETURN_IF_ERROR(Resolve(f, r, &flat));
    }
    flat_roots->push_back(flat);
  }
  // Resource Identity nodes pass their input through: variable kernels find the variable by the
  // node that produces their resource input.
  std::unordered_map<std::string, size_t> index;
  for (size_t i = 0; i < out_.size(); ++i) {
    if (!index.emplace(out_[i].name, i).second) {
      return errors::InvalidArgument("Inlining made two nodes named '" + out_[i].name + "' (from " +
                                     origin_[i] + ")");
    }
  }
  auto forward = [&](std::string* in) {
    for (int hops = 0; hops < 64; ++hops) {
      if (!in->empty() && (*in)[0] == '^') return;
      auto it = index.find(ParseTensorName(*in).node);
      if (it == index.end()) return;
      const NodeDef& src = out_[it->second];
      auto t = src.attr.find("T");
      if (src.op != "Identity" || src.input.empty() || t == src.attr.end() ||
          t->second.kind != AttrValue::Kind::kType || t->second.type != DataType::kResource) {
        return;
      }
      *in = src.input[0];
    }
  };
  for (NodeDef& n : out_) {
    for (std::string& in : n.input) forward(&in);
  }
  for (std::string& r : *flat_roots) forward(&r);
  // Functional loops become _EmberWhile nodes now that their resource inputs name variables.
  ProducerLookup producer = [&](const std::string& in) -> const NodeDef* {
    auto it = index.find(ParseTensorName(in).node);
    return it == index.end() ? nullptr : &out_[it->second];
  };
  for (size_t i = 0; i < out_.size(); ++i) {
    if (!IsFunctionalWhile(out_[i].op)) continue;
    Status s = LowerFunctionalWhile(graph_.library, options_, producer, &out_[i]);
    if (!s.ok()) return Status(s.code(), origin_[i] + ": " + s.message());
  }
  // Functional conds become Switch/Merge with both branches inlined (functional_if.h).
  for (size_t i = 0, n = out_.size(); i < n; ++i) {
    if (!IsFunctionalIf(out_[i].op)) continue;
    std::vector<NodeDef> added;
    const std::string where = origin_[i];
    Status s = LowerFunctionalIf(graph_.library, options_, producer, &out_[i], &added);
    if (!s.ok()) return Status(s.code(), where + ": " + s.message());
    for (NodeDef& a : added) {
      if (!index.emplace(a.name, out_.size()).second) {
        return errors::InvalidArgument("Inlining made two nodes named '" + a.name + "' (from " +
                                       where + ")");
      }
      out_.push_back(std::move(a));
      origin_.push_back(where);
    }
  }
  // Keep what the roots reach.
  std::vector<bool> keep(out_.size(), false);
  for (const std::string& r : *flat_roots) {
    auto it = index.find(NodeOf(r));
    if (it == index.end()) return errors::Internal("inlined root '" + r + "' has no node");
    if (!keep[it->second]) queue.push_back(it->second);
    keep[it->second] = true;
  }
  while (!queue.empty()) {
    size_t i = queue.front();
    queue.pop_front();
    for (const std::string& in : out_[i].input) {
      auto it = index.find(NodeOf(in));
      if (it == index.end()) {
        return errors::InvalidArgument(origin_[i] + ": input '" + in + "' names no node");
      }
      if (!keep[it->second]) {
        keep[it->second] = true;
        queue.push_back(it->second);
      }
    }
  }
  *out = GraphDef();
  out->producer = graph_.producer;
  out->min_consumer = graph_.min_consumer;
  std::string missing;
  std::set<std::string> missing_ops;
  for (size_t i = 0; i < out_.size(); ++i) {
    if (!keep[i]) continue;
    if (options_.check_ops && OpRegistry::Global()->Lookup(out_[i].op) == nullptr &&
        missing_ops.insert(out_[i].op).second) {
      missing += (missing.empty() ? "" : "; ") + std::string("op '") + out_[i].op + "' used by " +
                 origin_[i];
    }
    out->node.push_back(std::move(out_[i]));
  }
  if (!missing.empty()) {
    return errors::NotFound("ember cannot run this model: " + missing +
                            " (not registered in ember; add a kernel in engine/src/kernels/cpu/)");
  }
  return Status::OK();
}

}  // namespace

Status InlineFunctionCalls(const GraphDef& graph, const std::vector<std::string>& roots,
                           const InlineOptions& options, GraphDef* out,
                           std::vector<std::string>* flat_roots) {
  Inliner inliner(graph, options);
  return inliner.Run(roots, out, flat_roots);
}

}  // namespace ember
