#include "core/graph.h"

#include <algorithm>
#include <cctype>
#include <deque>

#include "core/device.h"

namespace ember {

TensorId ParseTensorName(const std::string& name) {
  TensorId id;
  size_t colon = name.rfind(':');
  // At most 9 digits, so that std::stoi cannot overflow (and throw).
  if (colon != std::string::npos && colon + 1 < name.size() && colon + 10 > name.size()) {
    bool digits = true;
    for (size_t i = colon + 1; i < name.size(); ++i) {
      digits = digits && std::isdigit(static_cast<unsigned char>(name[i]));
    }
    if (digits) {
      id.node = name.substr(0, colon);
      id.index = std::stoi(name.substr(colon + 1));
      return id;
    }
  }
  id.node = name;
  return id;
}

Status OutputArgRange(const NodeDef& node, const OpDef& op, const std::string& arg, int* start,
                      int* count) {
  AttrReader attrs(node);
  int pos = 0;
  for (const ArgDef& a : op.outputs) {
    int n = 1;
    if (!a.number_attr.empty()) {
      int64_t v = 0;
      EMBER_RETURN_IF_ERROR(attrs.Get(a.number_attr, &v));
      if (v < 0 || v > (1 << 20)) {
        return errors::InvalidArgument("Attr '" + a.number_attr + "' of node '" + node.name +
                                       "' is " + std::to_string(v));
      }
      n = static_cast<int>(v);
    } else if (!a.type_list_attr.empty()) {
      std::vector<DataType> types;
      EMBER_RETURN_IF_ERROR(attrs.Get(a.type_list_attr, &types));
      n = static_cast<int>(types.size());
    }
    if (a.name == arg || op.outputs.size() == 1) {
      *start = pos;
      *count = n;
      return Status::OK();
    }
    pos += n;
  }
  std::string names;
  for (const ArgDef& a : op.outputs) names += (names.empty() ? "" : ", ") + a.name;
  return errors::InvalidArgument("Node '" + node.name + "' (op " + node.op +
                                 ") has no output arg '" + arg + "'; its output args are [" +
                                 names + "]");
}

Status CheckDevice(const NodeDef& node, const GraphOptions& options) {
  if (node.device.empty()) return Status::OK();
  DeviceSpec spec;
  bool ok = false;
  std::string why;
  if (!ParseDeviceSpec(node.device, &spec)) {
    std::string d;
    for (char c : node.device)
      d.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    // Not a device name at all: only job/replica/task-like parts mean "any local device".
    ok = d.find("gpu") == std::string::npos && d.find("cpu") == std::string::npos &&
         d.find("device:") == std::string::npos;
  } else if (spec.type.empty()) {
    ok = true;  // only job/replica/task parts: any local device
  } else if (spec.type == "CPU") {
    ok = spec.index < options.num_cpu_devices;
  } else {
    // Another device type: present, or soft placement moves the node to the CPU.
    ok = FindDevice(spec.type, spec.index, &why) != nullptr || options.allow_soft_placement;
  }
  if (ok) return Status::OK();
  std::string available;
  for (const std::string& name : ListDeviceNames(options.num_cpu_devices)) available += " " + name;
  return errors::InvalidArgument(
      "Cannot assign a device for operation " + node.name + ": {{node " + node.name +
      "}} was explicitly assigned to " + node.device + " but available devices are [" + available +
      " ]. Make sure the device specification refers to a valid device." +
      (why.empty() ? "" : " (" + why + ")"));
}

Status Graph::Build(const std::vector<NodeDef>& defs, const GraphOptions& options, Graph* out) {
  Graph g;
  g.options_ = options;
  g.nodes_.reserve(defs.size());
  for (const NodeDef& def : defs) {
    if (def.name.empty())
      return errors::InvalidArgument("A node has an empty name (op " + def.op + ")");
    if (!g.index_.emplace(def.name, static_cast<int>(g.nodes_.size())).second) {
      return errors::InvalidArgument("Node '" + def.name + "' is not unique");
    }
    Node n;
    n.def = def;
    n.op = OpRegistry::Global()->Lookup(def.op);
    if (n.op == nullptr) {
      return errors::NotFound("Op type not registered '" + def.op + "' in binary running node '" +
                              def.name +
                              "'. ember does not implement this op; remove it from the "
                              "graph or add a kernel in engine/src/kernels/cpu/");
    }
    EMBER_RETURN_IF_ERROR(InOutTypesForNode(def, *n.op, &n.input_types, &n.output_types));
    if (!options.place_pruned_graph) EMBER_RETURN_IF_ERROR(CheckDevice(def, options));
    g.nodes_.push_back(std::move(n));
  }
  for (Node& n : g.nodes_) {
    for (const std::string& in : n.def.input) {
      if (!in.empty() && in[0] == '^') {
        int src = g.FindNode(in.substr(1));
        if (src < 0) {
          return errors::InvalidArgument("Node '" + n.name() + "': Unknown input node '" + in +
                                         "'");
        }
        n.control_inputs.push_back(src);
        continue;
      }
      if (!n.control_inputs.empty()) {
        return errors::InvalidArgument("Node '" + n.name() + "': data input '" + in +
                                       "' after a control input; control inputs must come last");
      }
      TensorId id = ParseTensorName(in);
      int src = g.FindNode(id.node);
      if (src < 0) {
        return errors::InvalidArgument("Node '" + n.name() + "': Unknown input node '" + in + "'");
      }
      const Node& s = g.nodes_[static_cast<size_t>(src)];
      if (id.index >= static_cast<int>(s.output_types.size())) {
        return errors::InvalidArgument("Node '" + n.name() + "': Connecting to invalid output " +
                                       std::to_string(id.index) + " of source node " + s.name() +
                                       " which has " + std::to_string(s.output_types.size()) +
                                       " outputs.");
      }
      n.inputs.push_back({src, id.index});
    }
    if (n.inputs.size() != n.input_types.size()) {
      std::string expected;
      for (DataType t : n.input_types)
        expected += (expected.empty() ? "" : ", ") + DataTypeString(t);
      return errors::InvalidArgument("NodeDef expected inputs '" + expected + "' do not match " +
                                     std::to_string(n.inputs.size()) + " inputs specified; node '" +
                                     n.name() + "' (op " + n.def.op + ")");
    }
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const Node& s = g.nodes_[static_cast<size_t>(n.inputs[i].node)];
      DataType have = s.output_types[static_cast<size_t>(n.inputs[i].output)];
      if (!TypesCompatible(have, n.input_types[i])) {
        return errors::InvalidArgument(
            "Input " + std::to_string(i) + " of node " + n.name() + " was passed " +
            DataTypeString(have) + " from " + s.name() + ":" + std::to_string(n.inputs[i].output) +
            " incompatible with expected " + DataTypeString(n.input_types[i]) + ".");
      }
    }
  }
  // Kahn's algorithm: whatever never becomes ready sits on (or behind) a cycle.
  std::vector<int> pending(g.nodes_.size(), 0);
  std::vector<std::vector<int>> outs(g.nodes_.size());
  for (size_t i = 0; i < g.nodes_.size(); ++i) {
    const Node& n = g.nodes_[i];
    for (const Node::Input& in : n.inputs)
      outs[static_cast<size_t>(in.node)].push_back(static_cast<int>(i));
    for (int c : n.control_inputs) outs[static_cast<size_t>(c)].push_back(static_cast<int>(i));
    pending[i] = static_cast<int>(n.inputs.size() + n.control_inputs.size());
  }
  std::deque<int> ready;
  for (size_t i = 0; i < pending.size(); ++i) {
    if (pending[i] == 0) ready.push_back(static_cast<int>(i));
  }
  size_t processed = 0;
  while (!ready.empty()) {
    int u = ready.front();
    ready.pop_front();
    ++processed;
    for (int v : outs[static_cast<size_t>(u)]) {
      if (--pending[static_cast<size_t>(v)] == 0) ready.push_back(v);
    }
  }
  if (processed != g.nodes_.size()) {
    return errors::InvalidArgument("GraphDef has " + std::to_string(g.nodes_.size() - processed) +
                                   " nodes in a cycle");
  }
  *out = std::move(g);
  return Status::OK();
}

}  // namespace ember
