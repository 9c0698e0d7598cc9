// AttrReader, OpRegistry, InOutTypesForNode, KernelRegistry and OpKernelContext.
#include <algorithm>

#include "core/device.h"
#include "core/op_kernel.h"

namespace ember {

int KernelAnchorSum();  // generated: references every kernel file (cmake/EmberKernelAnchors.cmake)

namespace {

const char* KindName(AttrValue::Kind k) {
  switch (k) {
    case AttrValue::Kind::kNone:
      return "none";
    case AttrValue::Kind::kS:
      return "string";
    case AttrValue::Kind::kI:
      return "int";
    case AttrValue::Kind::kF:
      return "float";
    case AttrValue::Kind::kB:
      return "bool";
    case AttrValue::Kind::kType:
      return "type";
    case AttrValue::Kind::kShape:
      return "shape";
    case AttrValue::Kind::kTensor:
      return "tensor";
    case AttrValue::Kind::kList:
      return "list";
    case AttrValue::Kind::kPlaceholder:
      return "placeholder";
    case AttrValue::Kind::kFunc:
      return "func";
  }
  return "?";
}

Status FindAttr(const NodeDef& node, const std::string& name, AttrValue::Kind want,
                const AttrValue** out) {
  auto it = node.attr.find(name);
  if (it == node.attr.end()) {
    return errors::InvalidArgument("NodeDef missing attr '" + name + "' from node '" + node.name +
                                   "' (op " + node.op + "); add the attr to the NodeDef");
  }
  const AttrValue& v = it->second;
  bool ok = v.kind == want;
  // An empty list may arrive as kList whatever its element type.
  if (want == AttrValue::Kind::kList && v.kind == AttrValue::Kind::kNone) ok = true;
  if (!ok) {
    return errors::InvalidArgument("Attr '" + name + "' of node '" + node.name + "' (op " +
                                   node.op + ") has kind " + KindName(v.kind) + ", expected " +
                                   KindName(want));
  }
  *out = &v;
  return Status::OK();
}

}  // namespace

Status AttrReader::Get(const std::string& name, DataType* out) const {
  const AttrValue* v;
  EMBER_RETURN_IF_ERROR(FindAttr(node_, name, AttrValue::Kind::kType, &v));
  *out = v->type;
  return Status::OK();
}
Status AttrReader::Get(const std::string& name, int64_t* out) const {
  const AttrValue* v;
  EMBER_RETURN_IF_ERROR(FindAttr(node_, name, AttrValue::Kind::kI, &v));
  *out = v->i;
  return Status::OK();
}
Status AttrReader::Get(const std::string& name, float* out) const {
  const AttrValue* v;
  EMBER_RETURN_IF_ERROR(FindAttr(node_, name, AttrValue::Kind::kF, &v));
  *out = v->f;
  return Status::OK();
}
Status AttrReader::Get(const std::string& name, bool* out) const {
  const AttrValue* v;
  EMBER_RETURN_IF_ERROR(FindAttr(node_, name, AttrValue::Kind::kB, &v));
  *out = v->b;
  return Status::OK();
}
Status AttrReader::Get(const std::string& name, std::string* out) const {
  const AttrValue* v;
  EMBER_RETURN_IF_ERROR(FindAttr(node_, name, AttrValue::Kind::kS, &v));
  *out = v->s;
  return Status::OK();
}
Status AttrReader::Get(const std::string& name, Tensor* out) const {
  const AttrValue* v;
  EMBER_RETURN_IF_ERROR(FindAttr(node_, name, AttrValue::Kind::kTensor, &v));
  *out = v->tensor;
  return Status::OK();
}
Status AttrReader::Get(const std::string& name, PartialShape* out) const {
  const AttrValue* v;
  EMBER_RETURN_IF_ERROR(FindAttr(node_, name, AttrValue::Kind::kShape, &v));
  *out = v->shape;
  return Status::OK();
}
Status AttrReader::Get(const std::string& name, std::vector<int64_t>* out) const {
  const AttrValue* v;
  EMBER_RETURN_IF_ERROR(FindAttr(node_, name, AttrValue::Kind::kList, &v));
  *out = v->list.i;
  return Status::OK();
}
Status AttrReader::Get(const std::string& name, std::vector<DataType>* out) const {
  const AttrValue* v;
  EMBER_RETURN_IF_ERROR(FindAttr(node_, name, AttrValue::Kind::kList, &v));
  *out = v->list.type;
  return Status::OK();
}

OpRegistry* OpRegistry::Global() {
  static OpRegistry* registry = [] {
    // Keeps every kernel object linked in static builds; the value itself is irrelevant.
    static volatile int anchors = KernelAnchorSum();
    (void)anchors;
    return new OpRegistry();
  }();
  return registry;
}

void OpRegistry::Register(OpDef def) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& existing : ops_) {
    if (existing->name == def.name) {
      *existing = std::move(def);  // the last registration wins (tests may override)
      return;
    }
  }
  ops_.push_back(std::make_unique<OpDef>(std::move(def)));
}

const OpDef* OpRegistry::Lookup(const std::string& op) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& d : ops_) {
    if (d->name == op) return d.get();
  }
  return nullptr;
}

std::vector<std::string> OpRegistry::ListOps() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> names;
  for (const auto& d : ops_) names.push_back(d->name);
  std::sort(names.begin(), names.end());
  return names;
}

namespace {
Status AddArgTypes(const NodeDef& node, const ArgDef& arg, std::vector<DataType>* types) {
  AttrReader attrs(node);
  if (!arg.type_list_attr.empty()) {
    std::vector<DataType> list;
    EMBER_RETURN_IF_ERROR(attrs.Get(arg.type_list_attr, &list));
    types->insert(types->end(), list.begin(), list.end());
    return Status::OK();
  }
  DataType dt = arg.type;
  if (dt == DataType::kInvalid) {
    if (arg.type_attr.empty()) {
      return errors::Internal("ArgDef '" + arg.name + "' of op " + node.op + " has no type");
    }
    EMBER_RETURN_IF_ERROR(attrs.Get(arg.type_attr, &dt));
  }
  int64_t n = 1;
  if (!arg.number_attr.empty()) {
    EMBER_RETURN_IF_ERROR(attrs.Get(arg.number_attr, &n));
    if (n < 0 || n > (1 << 20)) {
      return errors::InvalidArgument("Attr '" + arg.number_attr + "' of node '" + node.name +
                                     "' is " + std::to_string(n) + ", must be in [0, 2^20]");
    }
  }
  types->insert(types->end(), static_cast<size_t>(n), dt);
  return Status::OK();
}
}  // namespace

Status InOutTypesForNode(const NodeDef& node, const OpDef& op, std::vector<DataType>* inputs,
                         std::vector<DataType>* outputs) {
  inputs->clear();
  outputs->clear();
  for (const ArgDef& a : op.inputs) EMBER_RETURN_IF_ERROR(AddArgTypes(node, a, inputs));
  for (const ArgDef& a : op.outputs) EMBER_RETURN_IF_ERROR(AddArgTypes(node, a, outputs));
  return Status::OK();
}

KernelRegistry* KernelRegistry::Global() {
  static KernelRegistry* registry = new KernelRegistry();
  return registry;
}

void KernelRegistry::Register(const std::string& op, const std::string& device,
                              KernelFactory factory,
                              std::vector<std::pair<std::string, DataType>> type_constraints,
                              std::vector<int> host_memory_inputs) {
  std::lock_guard<std::mutex> lock(mu_);
  entries_.push_back(
      {op, device, std::move(factory), std::move(type_constraints), std::move(host_memory_inputs)});
}

Status KernelRegistry::CreateKernel(const NodeDef& node, const std::string& device,
                                    std::unique_ptr<OpKernel>* out,
                                    std::vector<int>* host_memory_inputs) const {
  const OpDef* op = OpRegistry::Global()->Lookup(node.op);
  if (op == nullptr) {
    return errors::NotFound("Op type not registered '" + node.op + "' in binary running node '" +
                            node.name + "'");
  }
  std::vector<DataType> in_types, out_types;
  EMBER_RETURN_IF_ERROR(InOutTypesForNode(node, *op, &in_types, &out_types));
  KernelFactory factory;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const Entry& e : entries_) {
      if (e.op != node.op || e.device != device) continue;
      bool match = true;
      for (const auto& c : e.constraints) {
        auto it = node.attr.find(c.first);
        if (it == node.attr.end() || it->second.kind != AttrValue::Kind::kType ||
            it->second.type != c.second) {
          match = false;
          break;
        }
      }
      if (match) {
        factory = e.factory;
        if (host_memory_inputs != nullptr) *host_memory_inputs = e.host_memory_inputs;
        break;
      }
    }
  }
  if (!factory) {
    std::string types;
    for (const auto& kv : node.attr) {
      if (kv.second.kind == AttrValue::Kind::kType) {
        types += (types.empty() ? "" : ", ") + kv.first + "=" + DataTypeString(kv.second.type);
      }
    }
    return errors::NotFound("No registered '" + node.op + "' OpKernel for '" + device +
                            "' devices compatible with node {{node " + node.name + "}}" +
                            (types.empty() ? "" : " (" + types + ")"));
  }
  OpKernelConstruction construction(node, in_types, out_types);
  std::unique_ptr<OpKernel> kernel = factory(&construction);
  if (!construction.status().ok()) return construction.status();
  if (!kernel) return errors::Internal("Kernel factory for node '" + node.name + "' returned null");
  *out = std::move(kernel);
  return Status::OK();
}

Status OpKernelContext::AllocateOutput(int i, const TensorShape& shape, bool zero, Tensor** out) {
  if (i < 0 || i >= num_outputs()) {
    return errors::Internal("Node '" + node().name + "' allocated output " + std::to_string(i) +
                            " but has " + std::to_string(num_outputs()) + " outputs");
  }
  int64_t n = 1;
  for (int64_t d : shape.dim_sizes()) {
    if (d < 0) return errors::InvalidArgument("Node '" + node().name + "': negative dimension");
    n *= d;
  }
  size_t elem = DataTypeSize(expected_output_dtype(i));
  if (elem != 0 && n > static_cast<int64_t>((1ull << 40) / elem)) {
    return errors::ResourceExhausted("Node '" + node().name + "': output " + std::to_string(i) +
                                     " of shape " + shape.DebugString() + " is too large");
  }
  if (params_.device != nullptr && !params_.device->host_memory()) {
    Status s = params_.device->Allocate(expected_output_dtype(i), shape,
                                        &outputs_[static_cast<size_t>(i)]);
    if (!s.ok()) {
      return Status(s.code(), "Node '" + node().name + "': output " + std::to_string(i) + " on " +
                                  params_.device->name() + ": " + s.message());
    }
    *out = &outputs_[static_cast<size_t>(i)];
    return Status::OK();
  }
  Tensor t = zero ? Tensor(expected_output_dtype(i), shape)
                  : Tensor::Uninitialized(expected_output_dtype(i), shape);
  if (t.raw_data() == nullptr) {
    return errors::ResourceExhausted("OOM allocating output of shape " + shape.DebugString() +
                                     " for node '" + node().name + "'");
  }
  outputs_[static_cast<size_t>(i)] = std::move(t);
  *out = &outputs_[static_cast<size_t>(i)];
  return Status::OK();
}

void OpKernelContext::set_output(int i, const Tensor& t) {
  if (i < 0 || i >= num_outputs()) {
    SetStatus(errors::Internal("Node '" + node().name + "' set output " + std::to_string(i) +
                               " but has " + std::to_string(num_outputs()) + " outputs"));
    return;
  }
  outputs_[static_cast<size_t>(i)] = t;
}

}  // namespace ember
