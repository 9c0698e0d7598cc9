#include "core/control_flow.h"

#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>

#include "core/graph.h"
#include "core/op_kernel.h"

namespace ember {
namespace {

Status Invalid(const std::string& message) { return errors::InvalidArgument(message); }

std::string Quoted(const std::string& s) { return "'" + s + "'"; }

const AttrValue* FindAttr(const NodeDef& n, const char* name) {
  auto it = n.attr.find(name);
  return it == n.attr.end() ? nullptr : &it->second;
}

bool IsConstantEnter(const NodeDef& n) {
  const AttrValue* a = FindAttr(n, "is_constant");
  return a != nullptr && a->kind == AttrValue::Kind::kB && a->b;
}

// The graph's edges by node index; -1 for an input naming no node (Graph::Build reports it).
struct Edges {
  std::unordered_map<std::string, int> index;
  std::vector<std::vector<std::pair<int, int>>> data;  // (source, output) per input slot
  std::vector<std::vector<int>> control;

  explicit Edges(const std::vector<NodeDef>& nodes) : data(nodes.size()), control(nodes.size()) {
    for (size_t i = 0; i < nodes.size(); ++i) index.emplace(nodes[i].name, static_cast<int>(i));
    for (size_t i = 0; i < nodes.size(); ++i) {
      for (const std::string& in : nodes[i].input) {
        if (!in.empty() && in[0] == '^') {
          control[i].push_back(Find(in.substr(1)));
        } else {
          TensorId id = ParseTensorName(in);
          data[i].push_back({Find(id.node), id.index});
        }
      }
    }
  }
  int Find(const std::string& name) const {
    auto it = index.find(name);
    return it == index.end() ? -1 : it->second;
  }
};

// Which while-loop frame each node runs in ("" is the root), as TensorFlow's executor derives
// it: an Enter starts its frame_name, an Exit returns to the parent frame, any other node runs
// in the deepest frame among its inputs.
struct Frames {
  std::vector<std::string> of;
  std::map<std::string, std::string> parent;

  int Depth(const std::string& frame) const {
    int depth = 0;
    std::string f = frame;
    while (!f.empty() && depth <= static_cast<int>(parent.size())) {
      auto it = parent.find(f);
      f = it == parent.end() ? "" : it->second;
      ++depth;
    }
    return depth;
  }
  std::string Parent(const std::string& frame) const {
    auto it = parent.find(frame);
    return it == parent.end() ? "" : it->second;
  }
  bool IsAncestorOrSelf(const std::string& ancestor, std::string frame) const {
    for (size_t steps = 0; steps <= parent.size(); ++steps) {
      if (frame == ancestor) return true;
      if (frame.empty()) return false;
      frame = Parent(frame);
    }
    return false;
  }
};

Status AssignFrames(const std::vector<NodeDef>& nodes, const Edges& edges, Frames* fr) {
  fr->of.assign(nodes.size(), "");
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].op != "Enter") continue;
    const AttrValue* name = FindAttr(nodes[i], "frame_name");
    if (name == nullptr || name->kind != AttrValue::Kind::kS || name->s.empty()) {
      return Invalid("Enter node " + Quoted(nodes[i].name) +
                     " has no attr 'frame_name' naming its while loop");
    }
    fr->of[i] = name->s;
    fr->parent.emplace(name->s, "");
  }
  auto inputs_of = [&](size_t i, auto&& visit) {
    for (const auto& in : edges.data[i]) {
      if (in.first >= 0) visit(in.first);
    }
    for (int c : edges.control[i]) {
      if (c >= 0) visit(c);
    }
  };
  // A worklist: a node is revisited when an input's frame deepens (frames only deepen, so this
  // ends), and everything when a frame gains a parent (its depth, and its nodes', changed).
  std::vector<std::vector<size_t>> consumers(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    inputs_of(i, [&](int src) { consumers[static_cast<size_t>(src)].push_back(i); });
  }
  std::deque<size_t> work;
  std::vector<char> queued(nodes.size(), 1);
  for (size_t i = 0; i < nodes.size(); ++i) work.push_back(i);
  auto push = [&](size_t i) {
    if (!queued[i]) {
      queued[i] = 1;
      work.push_back(i);
    }
  };
  size_t reparented = 0;
  while (!work.empty()) {
    const size_t i = work.front();
    work.pop_front();
    queued[i] = 0;
    const std::string& op = nodes[i].op;
    if (op == "Enter") {
      const std::string& frame = fr->of[i];
      Status s;
      bool moved = false;
      inputs_of(i, [&](int src) {
        const std::string& outer = fr->of[static_cast<size_t>(src)];
        if (!s.ok() || fr->Depth(outer) <= fr->Depth(fr->parent[frame])) return;
        if (fr->IsAncestorOrSelf(frame, outer)) {
          s = Invalid("Enter node " + Quoted(nodes[i].name) + " of while loop " + Quoted(frame) +
                      " reads " + Quoted(nodes[static_cast<size_t>(src)].name) +
                      ", which is inside that loop");
          return;
        }
        fr->parent[frame] = outer;
        moved = true;
      });
      EMBER_RETURN_IF_ERROR(s);
      if (moved) {
        if (++reparented > fr->parent.size() * fr->parent.size() + 1) {
          return Invalid(
              "the while-loop frames of the graph do not settle: its Enter/Exit nesting is "
              "inconsistent");
        }
        for (size_t k = 0; k < nodes.size(); ++k) push(k);
      }
      continue;
    }
    std::string best = fr->of[i];
    int best_depth = fr->Depth(best);
    inputs_of(i, [&](int src) {
      std::string cand = fr->of[static_cast<size_t>(src)];
      if (op == "Exit") cand = fr->Parent(cand);
      int d = fr->Depth(cand);
      if (d > best_depth) {
        best = cand;
        best_depth = d;
      }
    });
    if (best != fr->of[i]) {
      fr->of[i] = best;
      for (size_t c : consumers[i]) push(c);
    }
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    const std::string& op = nodes[i].op;
    if (op == "Exit") {
      if (edges.data[i].size() != 1 || edges.data[i][0].first < 0) {
        return Invalid("Exit node " + Quoted(nodes[i].name) + " must have one data input");
      }
      int src = edges.data[i][0].first;
      if (fr->of[static_cast<size_t>(src)].empty()) {
        return Invalid("Exit node " + Quoted(nodes[i].name) +
                       " is not inside a while loop: its input " +
                       Quoted(nodes[static_cast<size_t>(src)].name) +
                       " is in no loop frame (a loop is Enter -> Merge -> Switch -> Exit)");
      }
    } else if ((op == "NextIteration" || op == "LoopCond") && fr->of[i].empty()) {
      return Invalid("Node " + Quoted(nodes[i].name) + " (op " + op +
                     ") is not inside a while loop: no Enter leads to it");
    }
  }
  return Status::OK();
}

Status OutputType(const NodeDef& node, int output, DataType* out) {
  const OpDef* op = OpRegistry::Global()->Lookup(node.op);
  if (op == nullptr) {
    return errors::NotFound("Op type not registered '" + node.op + "' in binary running node '" +
                            node.name + "'");
  }
  std::vector<DataType> ins, outs;
  EMBER_RETURN_IF_ERROR(InOutTypesForNode(node, *op, &ins, &outs));
  if (output < 0 || static_cast<size_t>(output) >= outs.size()) {
    return Invalid("Node " + Quoted(node.name) + " has no output " + std::to_string(output));
  }
  *out = outs[static_cast<size_t>(output)];
  return Status::OK();
}

Status TypeAttr(const NodeDef& node, DataType* out) {
  AttrReader r(node);
  return r.Get("T", out);
}

AttrValue TypeValue(DataType t) {
  AttrValue v;
  v.kind = AttrValue::Kind::kType;
  v.type = t;
  return v;
}

NodeDef IdentityNode(const std::string& name, const std::string& input, DataType t) {
  NodeDef n;
  n.name = name;
  n.op = "Identity";
  n.input = {input};
  n.attr["T"] = TypeValue(t);
  return n;
}

std::string TensorName(const NodeDef& node, int output) {
  return output == 0 ? node.name : node.name + ":" + std::to_string(output);
}

// One loop frame being cut out of the graph.
class LoopLowering {
 public:
  LoopLowering(std::vector<NodeDef>* nodes, const Edges& edges, const Frames& frames,
               std::string frame)
      : nodes_(*nodes), edges_(edges), frames_(frames), frame_(std::move(frame)) {}

  Status Run() {
    EMBER_RETURN_IF_ERROR(Classify());
    EMBER_RETURN_IF_ERROR(MatchLoopVars());
    EMBER_RETURN_IF_ERROR(MatchExits());
    GraphDef body;
    EMBER_RETURN_IF_ERROR(BuildBody(&body));
    return Replace(body);
  }

 private:
  struct LoopVar {
    int enter = -1, merge = -1, next = -1, sw = -1;
    DataType type = DataType::kInvalid;
  };

  const NodeDef& node(int i) const { return nodes_[static_cast<size_t>(i)]; }
  std::string Where() const { return "while loop " + Quoted(frame_); }

  Status Classify() {
    member_.assign(nodes_.size(), 0);
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (frames_.of[i] != frame_) continue;
      int id = static_cast<int>(i);
      const std::string& op = nodes_[i].op;
      member_[i] = 1;
      if (op == "Enter") {
        (IsConstantEnter(nodes_[i]) ? invariants_ : var_enters_).push_back(id);
      } else if (op == "Merge") {
        merges_.push_back(id);
      } else if (op == "Switch") {
        switches_.push_back(id);
      } else if (op == "NextIteration") {
        nexts_.push_back(id);
      } else if (op == "LoopCond") {
        if (loop_cond_ >= 0) {
          return Invalid(Where() + " has two LoopCond nodes, " + Quoted(node(loop_cond_).name) +
                         " and " + Quoted(nodes_[i].name));
        }
        loop_cond_ = id;
      } else if (op == "Exit") {
        return Invalid("Exit node " + Quoted(nodes_[i].name) + " in " + Where() +
                       " leaves a loop ember did not recognise");
      } else {
        body_.insert(id);
      }
    }
    // A tf.cond inside the body: its Switch nodes read another predicate than the LoopCond and
    // its Merge nodes no NextIteration. They are body nodes, run with dead tensors by the body's
    // executor (Executor::RunCondNode).
    if (loop_cond_ >= 0) {
      std::vector<int> loop_switches, loop_merges;
      for (int s : switches_) {
        const auto& in = edges_.data[static_cast<size_t>(s)];
        (in.size() == 2 && in[1].first == loop_cond_ ? loop_switches : cond_nodes_).push_back(s);
      }
      for (int m : merges_) {
        bool next = false;
        for (const auto& in : edges_.data[static_cast<size_t>(m)]) {
          next = next || (in.first >= 0 && member_[static_cast<size_t>(in.first)] &&
                          node(in.first).op == "NextIteration");
        }
        (next ? loop_merges : cond_nodes_).push_back(m);
      }
      switches_ = std::move(loop_switches);
      merges_ = std::move(loop_merges);
      body_.insert(cond_nodes_.begin(), cond_nodes_.end());
    }
    if (loop_cond_ < 0) {
      return Invalid(Where() + " (entered by " + Quoted(FirstEnterName()) +
                     ") has no LoopCond node; ember runs while loops of the form Enter -> Merge "
                     "<- NextIteration, Switch(Merge, LoopCond) -> Exit");
    }
    if (edges_.data[static_cast<size_t>(loop_cond_)].size() != 1) {
      return Invalid("LoopCond node " + Quoted(node(loop_cond_).name) +
                     " must have one data input");
    }
    for (size_t i = 0; i < nodes_.size(); ++i) {
      for (size_t k = 0; k < edges_.data[i].size(); ++k) {
        int src = edges_.data[i][k].first;
        if (src >= 0) uses_[{src, edges_.data[i][k].second}].push_back(static_cast<int>(i));
      }
    }
    return Status::OK();
  }

  std::string FirstEnterName() const {
    if (!var_enters_.empty()) return node(var_enters_[0]).name;
    if (!invariants_.empty()) return node(invariants_[0]).name;
    return "?";
  }

  const std::vector<int>& Uses(int src, int output) const {
    static const std::vector<int> kNone;
    auto it = uses_.find({src, output});
    return it == uses_.end() ? kNone : it->second;
  }

  Status MatchLoopVars() {
    std::set<int> claimed;
    for (int m : merges_) {
      const auto& ins = edges_.data[static_cast<size_t>(m)];
      LoopVar v;
      v.merge = m;
      for (const auto& in : ins) {
        if (in.first < 0) continue;
        const NodeDef& src = node(in.first);
        if (src.op == "Enter" && member_[static_cast<size_t>(in.first)] && !IsConstantEnter(src)) {
          v.enter = in.first;
        } else if (src.op == "NextIteration" && member_[static_cast<size_t>(in.first)]) {
          v.next = in.first;
        }
      }
      const std::string what = "Merge node " + Quoted(node(m).name) + " in " + Where();
      if (ins.size() != 2) {
        return Invalid(what + " has " + std::to_string(ins.size()) +
                       " inputs; a loop Merge has two (Enter, NextIteration)");
      }
      if (v.next < 0) return Invalid(what + " has no NextIteration input");
      if (v.enter < 0) return Invalid(what + " has no Enter input");
      if (!claimed.insert(v.enter).second || !claimed.insert(v.next).second) {
        return Invalid(what + " shares its Enter or NextIteration with another Merge");
      }
      for (int u : Uses(m, 0)) {
        // The loop's own Switch; a tf.cond's in the body may read the variable too.
        if (std::find(switches_.begin(), switches_.end(), u) == switches_.end()) continue;
        if (v.sw >= 0) {
          return Invalid(what + " feeds two Switch nodes, " + Quoted(node(v.sw).name) + " and " +
                         Quoted(node(u).name));
        }
        v.sw = u;
      }
      if (v.sw < 0) return Invalid(what + " feeds no Switch");
      const auto& sw_in = edges_.data[static_cast<size_t>(v.sw)];
      if (sw_in.size() != 2 || sw_in[0].first != m || sw_in[1].first != loop_cond_) {
        return Invalid("Switch node " + Quoted(node(v.sw).name) + " in " + Where() +
                       " must read its Merge and the LoopCond " + Quoted(node(loop_cond_).name));
      }
      if (!Uses(m, 1).empty()) {
        return Invalid(what + ": its value_index output is read by " +
                       Quoted(node(Uses(m, 1)[0]).name) + "; ember does not provide it");
      }
      EMBER_RETURN_IF_ERROR(TypeAttr(node(m), &v.type));
      switch_var_[v.sw] = static_cast<int>(vars_.size());
      vars_.push_back(v);
    }
    for (int e : var_enters_) {
      if (claimed.count(e) == 0) {
        std::string why;
        for (int u : Uses(e, 0)) {
          if (node(u).op == "Merge") {
            why = " (Merge node " + Quoted(node(u).name) + " has no NextIteration input)";
          }
        }
        return Invalid("Enter node " + Quoted(node(e).name) + " of " + Where() +
                       " (is_constant false) feeds no loop Merge" + why);
      }
      for (int u : Uses(e, 0)) {
        if (node(u).op != "Merge") {
          return Invalid("Enter node " + Quoted(node(e).name) + " of " + Where() +
                         " (is_constant false) is read by " + Quoted(node(u).name) +
                         "; only its Merge may read it");
        }
      }
    }
    for (int n : nexts_) {
      if (claimed.count(n) == 0) {
        return Invalid("NextIteration node " + Quoted(node(n).name) + " of " + Where() +
                       " feeds no loop Merge");
      }
    }
    for (int s : switches_) {
      if (switch_var_.count(s) == 0) {
        return Invalid("Switch node " + Quoted(node(s).name) + " in " + Where() +
                       " reads the LoopCond but no loop Merge");
      }
    }
    for (int x : var_enters_) {
      if (edges_.data[static_cast<size_t>(x)].size() != 1) {
        return Invalid("Enter node " + Quoted(node(x).name) + " must have one data input");
      }
    }
    for (int x : invariants_) {
      if (edges_.data[static_cast<size_t>(x)].size() != 1) {
        return Invalid("Enter node " + Quoted(node(x).name) + " must have one data input");
      }
    }
    return Status::OK();
  }

  Status MatchExits() {
    for (const LoopVar& v : vars_) {
      for (int u : Uses(v.sw, 0)) {
        if (node(u).op != "Exit") {
          return Invalid("Node " + Quoted(node(u).name) + " reads the loop-exit output of Switch " +
                         Quoted(node(v.sw).name) + " of " + Where() + "; only an Exit may");
        }
      }
    }
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (nodes_[i].op != "Exit" || member_[i]) continue;
      auto in = edges_.data[i][0];
      if (frames_.of[static_cast<size_t>(in.first)] != frame_) continue;
      auto it = switch_var_.find(in.first);
      if (it == switch_var_.end() || in.second != 0) {
        return Invalid("Exit node " + Quoted(nodes_[i].name) + " reads " +
                       Quoted(nodes_[i].input[0]) + ", not the false output of a Switch of " +
                       Where());
      }
      exit_var_[static_cast<int>(i)] = it->second;
    }
    return Status::OK();
  }

  // The body graph's name for tensor `output` of node `src`, read by `reader`.
  Status MapInput(int src, int output, const std::string& reader, std::string* out) {
    if (src < 0) return Invalid("Node " + Quoted(reader) + " reads a node that does not exist");
    if (body_.count(src) != 0) {
      *out = TensorName(node(src), output);
      return Status::OK();
    }
    const NodeDef& s = node(src);
    if (s.op == "Merge" && output == 0) {
      for (size_t i = 0; i < vars_.size(); ++i) {
        if (vars_[i].merge == src) return Arg(static_cast<int>(i), out);
      }
    }
    if (s.op == "Switch" && output == 1 && switch_var_.count(src) != 0) {
      return Arg(switch_var_[src], out);
    }
    for (size_t j = 0; j < invariants_.size(); ++j) {
      if (invariants_[j] == src && output == 0) return Arg(static_cast<int>(vars_.size() + j), out);
    }
    const std::string& src_frame = frames_.of[static_cast<size_t>(src)];
    if (!member_[static_cast<size_t>(src)] && exit_var_.count(src) == 0 &&
        frames_.IsAncestorOrSelf(src_frame, frames_.Parent(frame_))) {
      // A tensor of an enclosing frame read directly: one more invariant input.
      std::string name = TensorName(s, output);
      auto it = external_index_.find(name);
      if (it == external_index_.end()) {
        DataType t = DataType::kInvalid;
        EMBER_RETURN_IF_ERROR(OutputType(s, output, &t));
        it = external_index_.emplace(name, static_cast<int>(externals_.size())).first;
        externals_.push_back(name);
        external_types_.push_back(t);
      }
      return Arg(static_cast<int>(vars_.size() + invariants_.size()) + it->second, out);
    }
    return Invalid("Node " + Quoted(reader) + " in " + Where() + " reads " +
                   Quoted(TensorName(s, output)) +
                   ", which is not a loop variable, an invariant or a node of the loop body");
  }

  Status Arg(int k, std::string* out) {
    *out = std::string(kWhileArgPrefix) + std::to_string(k);
    return Status::OK();
  }

  // Control inputs of a body node: kept inside the body, dropped on loop plumbing (ready at the
  // start of every iteration), moved to the while node when they come from outside.
  void MapControl(int src, std::vector<std::string>* out) {
    if (src < 0) return;
    if (body_.count(src) != 0) {
      if (out != nullptr) out->push_back("^" + node(src).name);
    } else if (!member_[static_cast<size_t>(src)] && exit_var_.count(src) == 0) {
      outer_control_.insert("^" + node(src).name);
    }
  }

  Status BuildBody(GraphDef* body) {
    for (int b : body_) {
      NodeDef def = node(b);
      def.input.clear();
      def.device.clear();  // the loop kernel runs its body on the CPU
      for (const auto& in : edges_.data[static_cast<size_t>(b)]) {
        std::string name;
        EMBER_RETURN_IF_ERROR(MapInput(in.first, in.second, node(b).name, &name));
        def.input.push_back(name);
      }
      for (int c : edges_.control[static_cast<size_t>(b)]) MapControl(c, &def.input);
      body->node.push_back(std::move(def));
    }
    const auto& pred = edges_.data[static_cast<size_t>(loop_cond_)][0];
    std::string pred_name;
    EMBER_RETURN_IF_ERROR(MapInput(pred.first, pred.second, node(loop_cond_).name, &pred_name));
    body->node.push_back(IdentityNode(kWhileCondName, pred_name, DataType::kBool));
    for (size_t i = 0; i < vars_.size(); ++i) {
      const auto& ins = edges_.data[static_cast<size_t>(vars_[i].next)];
      const NodeDef& next = node(vars_[i].next);
      if (ins.size() != 1) {
        return Invalid("NextIteration node " + Quoted(next.name) + " must have one data input");
      }
      std::string name;
      EMBER_RETURN_IF_ERROR(MapInput(ins[0].first, ins[0].second, next.name, &name));
      NodeDef id = IdentityNode(kWhileNextPrefix + std::to_string(i), name, vars_[i].type);
      for (int c : edges_.control[static_cast<size_t>(vars_[i].next)]) MapControl(c, &id.input);
      body->node.push_back(std::move(id));
    }
    for (size_t k = 0; k < NumInputs(); ++k) {
      NodeDef p;
      p.name = kWhileArgPrefix + std::to_string(k);
      p.op = "Placeholder";
      p.attr["dtype"] = TypeValue(InputType(k));
      body->node.push_back(std::move(p));
    }
    // Checked here, at load time, so that a malformed body names the loop.
    Graph check;
    Status s = Graph::Build(body->node, GraphOptions(), &check);
    if (!s.ok()) return Status(s.code(), "In the body of " + Where() + ": " + s.message());
    return Status::OK();
  }

  size_t NumInputs() const { return vars_.size() + invariants_.size() + externals_.size(); }
  DataType InputType(size_t k) const {
    if (k < vars_.size()) return vars_[k].type;
    k -= vars_.size();
    if (k < invariants_.size()) {
      DataType t = DataType::kInvalid;
      (void)TypeAttr(node(invariants_[k]), &t);
      return t;
    }
    return external_types_[k - invariants_.size()];
  }

  Status Replace(const GraphDef& body) {
    std::set<std::string> names;
    for (const NodeDef& n : nodes_) names.insert(n.name);
    std::string name = frame_ + "/_ember_while";
    for (int k = 1; names.count(name) != 0; ++k) {
      name = frame_ + "/_ember_while_" + std::to_string(k);
    }
    NodeDef w;
    w.name = name;
    w.op = "_EmberWhile";
    std::vector<int> enters;
    for (const LoopVar& v : vars_) enters.push_back(v.enter);
    enters.insert(enters.end(), invariants_.begin(), invariants_.end());
    for (int e : enters) {
      const auto& in = edges_.data[static_cast<size_t>(e)][0];
      if (in.first < 0) return Invalid("Enter node " + Quoted(node(e).name) + " reads no node");
      w.input.push_back(TensorName(node(in.first), in.second));
      for (int c : edges_.control[static_cast<size_t>(e)]) MapControl(c, nullptr);
    }
    w.input.insert(w.input.end(), externals_.begin(), externals_.end());
    w.input.insert(w.input.end(), outer_control_.begin(), outer_control_.end());
    AttrValue types;
    types.kind = AttrValue::Kind::kList;
    for (size_t k = 0; k < NumInputs(); ++k) types.list.type.push_back(InputType(k));
    w.attr["T"] = types;
    AttrValue graph;
    graph.kind = AttrValue::Kind::kS;
    graph.s = SerializeGraphDefBinary(body);
    w.attr["body"] = graph;
    AttrValue frame;
    frame.kind = AttrValue::Kind::kS;
    frame.s = frame_;
    w.attr["frame_name"] = frame;
    AttrValue num_vars;
    num_vars.kind = AttrValue::Kind::kI;
    num_vars.i = static_cast<int64_t>(vars_.size());
    w.attr["num_loop_vars"] = num_vars;

    std::vector<NodeDef> out;
    out.reserve(nodes_.size());
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (member_[i]) continue;
      auto exit = exit_var_.find(static_cast<int>(i));
      if (exit != exit_var_.end()) {
        NodeDef id = IdentityNode(nodes_[i].name, w.name + ":" + std::to_string(exit->second),
                                  vars_[static_cast<size_t>(exit->second)].type);
        out.push_back(std::move(id));
        continue;
      }
      NodeDef def = std::move(nodes_[i]);
      const auto& data = edges_.data[i];
      for (size_t k = 0; k < data.size(); ++k) {
        int src = data[k].first;
        if (src >= 0 && member_[static_cast<size_t>(src)]) {
          return Invalid("Node " + Quoted(def.name) + " reads " + Quoted(def.input[k]) +
                         " inside " + Where() + " without going through an Exit");
        }
      }
      std::vector<std::string> inputs;
      std::set<std::string> seen;
      for (const std::string& in : def.input) {
        if (in.empty() || in[0] != '^') {
          inputs.push_back(in);
          continue;
        }
        int c = edges_.Find(in.substr(1));
        std::string ctl = c >= 0 && member_[static_cast<size_t>(c)] ? "^" + w.name : in;
        if (seen.insert(ctl).second) inputs.push_back(ctl);
      }
      def.input = std::move(inputs);
      out.push_back(std::move(def));
    }
    out.push_back(std::move(w));
    nodes_ = std::move(out);
    return Status::OK();
  }

  std::vector<NodeDef>& nodes_;
  const Edges& edges_;
  const Frames& frames_;
  std::string frame_;
  std::vector<char> member_;
  std::vector<int> var_enters_, invariants_, merges_, switches_, nexts_;
  std::vector<int> cond_nodes_;  // Switch and Merge of a tf.cond in the body
  int loop_cond_ = -1;
  std::set<int> body_;
  std::map<std::pair<int, int>, std::vector<int>> uses_;
  std::vector<LoopVar> vars_;
  std::map<int, int> switch_var_;  // Switch node -> loop var
  std::map<int, int> exit_var_;    // Exit node -> loop var
  std::vector<std::string> externals_;
  std::vector<DataType> external_types_;
  std::map<std::string, int> external_index_;
  std::set<std::string> outer_control_;
};

bool HasLoopOps(const std::vector<NodeDef>& nodes) {
  for (const NodeDef& n : nodes) {
    if (n.op == "Enter" || n.op == "Exit" || n.op == "NextIteration" || n.op == "LoopCond") {
      return true;
    }
  }
  return false;
}

}  // namespace

Status LowerWhileLoops(std::vector<NodeDef>* nodes) {
  while (HasLoopOps(*nodes)) {
    Edges edges(*nodes);
    Frames frames;
    EMBER_RETURN_IF_ERROR(AssignFrames(*nodes, edges, &frames));
    std::string deepest;
    int depth = 0;
    for (const std::string& f : frames.of) {
      int d = frames.Depth(f);
      if (d > depth) {
        deepest = f;
        depth = d;
      }
    }
    if (deepest.empty()) {
      // Loop ops but no Enter: AssignFrames has named the stray Exit/NextIteration/LoopCond.
      return Invalid("the graph has loop ops but no Enter node");
    }
    LoopLowering lowering(nodes, edges, frames, deepest);
    EMBER_RETURN_IF_ERROR(lowering.Run());
  }
  return Status::OK();
}

}  // namespace ember
