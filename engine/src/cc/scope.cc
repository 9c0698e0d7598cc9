#include "ember/cc/scope.h"

#include <cstring>
#include <mutex>

#include "core/op_kernel.h"

namespace ember {

struct Scope::Graph {
  std::mutex mu;
  std::vector<NodeDef> nodes;
  std::map<std::string, std::vector<DataType>> output_types;
  std::map<std::string, int> name_counts;
  Status status;
};

Input::Initializer::Initializer(const std::initializer_list<Initializer>& rows) {
  if (rows.size() == 0) {
    status = errors::InvalidArgument("Initializer list is empty");
    return;
  }
  const Tensor& first = rows.begin()->tensor;
  std::vector<int64_t> dims{static_cast<int64_t>(rows.size())};
  for (int64_t d : first.shape().dim_sizes()) dims.push_back(d);
  for (const Initializer& r : rows) {
    if (!r.status.ok()) {
      status = r.status;
      return;
    }
    if (r.tensor.dtype() != first.dtype() || r.tensor.shape() != first.shape()) {
      status = errors::InvalidArgument("Initializer list rows must have the same type and shape");
      return;
    }
  }
  tensor = Tensor(first.dtype(), TensorShape(dims));
  size_t row_bytes = first.TotalBytes();
  char* out = static_cast<char*>(tensor.raw_data());
  for (const Initializer& r : rows) {
    if (row_bytes > 0) std::memcpy(out, r.tensor.raw_data(), row_bytes);
    out += row_bytes;
  }
}

Scope Scope::NewRootScope() { return Scope(std::make_shared<Graph>()); }

Scope Scope::WithOpName(const std::string& name) const {
  Scope s = *this;
  s.name_ = name;
  return s;
}

Scope Scope::NewSubScope(const std::string& name) const {
  Scope s = *this;
  s.name_.clear();
  if (!name.empty()) s.prefix_ += name + "/";
  return s;
}

Scope Scope::WithDevice(const std::string& device) const {
  Scope s = *this;
  s.device_ = device;
  return s;
}

Scope Scope::WithControlDependencies(const std::vector<Operation>& deps) const {
  Scope s = *this;
  for (const Operation& op : deps) s.control_deps_.push_back(op.name());
  return s;
}

bool Scope::ok() const { return status().ok(); }

Status Scope::status() const {
  std::lock_guard<std::mutex> lock(graph_->mu);
  return graph_->status;
}

void Scope::UpdateStatus(const Status& s) const {
  std::lock_guard<std::mutex> lock(graph_->mu);
  if (graph_->status.ok()) graph_->status = s;
}

Status Scope::ToGraphDef(GraphDef* out) const {
  std::lock_guard<std::mutex> lock(graph_->mu);
  if (!graph_->status.ok()) return graph_->status;
  out->node = graph_->nodes;
  return Status::OK();
}

size_t Scope::num_nodes() const {
  std::lock_guard<std::mutex> lock(graph_->mu);
  return graph_->nodes.size();
}

std::vector<NodeDef> Scope::NodesFrom(size_t first) const {
  std::lock_guard<std::mutex> lock(graph_->mu);
  if (first >= graph_->nodes.size()) return {};
  return std::vector<NodeDef>(graph_->nodes.begin() + static_cast<std::ptrdiff_t>(first),
                              graph_->nodes.end());
}

std::vector<DataType> Scope::OutputTypes(const std::string& op_name) const {
  std::lock_guard<std::mutex> lock(graph_->mu);
  auto it = graph_->output_types.find(op_name);
  return it == graph_->output_types.end() ? std::vector<DataType>() : it->second;
}

Operation Scope::AddNode(NodeDef node, const std::string& default_name) const {
  std::lock_guard<std::mutex> lock(graph_->mu);
  std::string base = prefix_ + (name_.empty() ? default_name : name_);
  std::string unique = base;
  if (name_.empty()) {
    int& count = graph_->name_counts[base];
    if (count > 0) unique = base + "_" + std::to_string(count);
    ++count;
    while (graph_->output_types.count(unique) != 0) unique = base + "_" + std::to_string(count++);
  } else if (graph_->output_types.count(unique) != 0) {
    if (graph_->status.ok()) {
      graph_->status = errors::AlreadyExists("Duplicate node name in graph: '" + unique + "'");
    }
  }
  node.name = unique;
  if (!device_.empty()) node.device = device_;
  for (const std::string& dep : control_deps_) node.input.push_back("^" + dep);
  std::vector<DataType> in_types, out_types;
  const OpDef* def = OpRegistry::Global()->Lookup(node.op);
  if (def == nullptr) {
    if (graph_->status.ok()) {
      graph_->status =
          errors::NotFound("Op type not registered '" + node.op + "' (node '" + unique + "')");
    }
  } else {
    Status s = InOutTypesForNode(node, *def, &in_types, &out_types);
    if (!s.ok() && graph_->status.ok()) graph_->status = s;
  }
  graph_->output_types[unique] = out_types;
  graph_->nodes.push_back(std::move(node));
  return Operation(unique, static_cast<int>(out_types.size()));
}

Output Scope::AsOutput(const Input& in) const {
  if (in.is_output()) return in.output();
  const Input::Initializer& init = in.initializer();
  if (!init.status.ok()) {
    UpdateStatus(init.status);
    return Output();
  }
  NodeDef n;
  n.op = "Const";
  AttrValue value;
  value.kind = AttrValue::Kind::kTensor;
  value.tensor = init.tensor;
  AttrValue dtype;
  dtype.kind = AttrValue::Kind::kType;
  dtype.type = init.tensor.dtype();
  n.attr["value"] = value;
  n.attr["dtype"] = dtype;
  Scope plain = *this;
  plain.name_.clear();
  plain.control_deps_.clear();
  Operation op = plain.AddNode(std::move(n), "Const");
  return Output(op, 0, init.tensor.dtype());
}

}  // namespace ember
