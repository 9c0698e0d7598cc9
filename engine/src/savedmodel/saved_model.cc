// LoadSavedModel: saved_model.pb -> flat graph (functions inlined) -> Session, then the
// variables restored from the TensorBundle checkpoint.
//
// How TF 2.x wires variables (seen in saved_model.pb files written by tf.saved_model.save): the
// top-level graph holds one VarHandleOp per variable; each signature is a StatefulPartitionedCall
// that takes the signature's Placeholders plus those handles (captured inputs). The SaverDef's
// restore_op_name is another call, of `__inference__traced_restore_*`, taking the checkpoint
// prefix and the same handles; its body runs RestoreV2(prefix, tensor_names, shape_and_slices)
// and AssignVariableOp(handle_arg_k, Identity(RestoreV2:tensors:j)). ember does not execute that
// function: it inlines it and reads which checkpoint key (tensor_names[j]) each handle is
// assigned, then assigns the values read from the bundle itself. Keras 3 models restore copies
// there (Variable_N), not the handles the signatures capture, so the object graph comes first:
// a signature call's last inputs are its captured variables, bound_inputs names their object
// graph nodes, and the checkpoint's _CHECKPOINTABLE_OBJECT_GRAPH gives each node's key.
#include "ember/saved_model.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <unordered_map>

#include "core/graph.h"
#include "savedmodel/function_inline.h"
#include "savedmodel/saved_model_proto.h"
#include "savedmodel/tensor_bundle.h"

namespace ember {

namespace {

constexpr const char kInitOpSignature[] = "__saved_model_init_op";

struct VariableRestore {
  std::string var_node;  // the VarHandleOp (or TF1 VariableV2) in the flat graph
  std::string key;       // checkpoint key
};

bool IsVariableOp(const std::string& op) {
  return op == "VarHandleOp" || op == "VariableV2" || op == "Variable";
}

std::string NodeOf(const std::string& input) {
  std::string s = !input.empty() && input[0] == '^' ? input.substr(1) : input;
  return ParseTensorName(s).node;
}

// Follows Identity nodes back from `tensor`; returns the producing node.
const NodeDef* TraceIdentity(const std::unordered_map<std::string, const NodeDef*>& nodes,
                             std::string* tensor) {
  for (int hops = 0; hops < 64; ++hops) {
    auto it = nodes.find(NodeOf(*tensor));
    if (it == nodes.end()) return nullptr;
    const NodeDef* n = it->second;
    if (n->op != "Identity" || n->input.empty()) return n;
    *tensor = n->input[0];
  }
  return nullptr;
}

// String entry `index` of the Const that produces `tensor` (through Identities).
Status ConstString(const std::unordered_map<std::string, const NodeDef*>& nodes, std::string tensor,
                   size_t index, const std::string& what, std::string* out) {
  const NodeDef* c = TraceIdentity(nodes, &tensor);
  if (c == nullptr || c->op != "Const") {
    return errors::Unimplemented("SavedModel restore function: " + what +
                                 " is not a constant; cannot tell which checkpoint key to read");
  }
  auto v = c->attr.find("value");
  if (v == c->attr.end() || v->second.kind != AttrValue::Kind::kTensor) {
    return errors::InvalidArgument("SavedModel restore function: Const '" + c->name +
                                   "' has no tensor value");
  }
  const std::vector<std::string>& s = v->second.string_val;
  if (s.empty()) return errors::InvalidArgument("Const '" + c->name + "' holds no strings");
  *out = s[index < s.size() ? index : s.size() - 1];  // a filled constant repeats its last value
  return Status::OK();
}

// Which checkpoint key the restore op assigns to each variable.
Status FindRestores(const MetaGraphInfo& mg, std::vector<VariableRestore>* out) {
  out->clear();
  if (!mg.has_saver || mg.saver.restore_op_name.empty()) return Status::OK();
  GraphDef restore;
  std::vector<std::string> roots;
  InlineOptions options;
  options.check_ops = false;
  EMBER_RETURN_IF_ERROR(InlineFunctionCalls(mg.graph, {"^" + NodeOf(mg.saver.restore_op_name)},
                                            options, &restore, &roots));
  std::unordered_map<std::string, const NodeDef*> nodes;
  for (const NodeDef& n : restore.node) nodes[n.name] = &n;
  for (const NodeDef& n : restore.node) {
    // TF2: AssignVariableOp(handle, value); TF1 (tf.compat.v1 savers): Assign(ref, value).
    if ((n.op != "AssignVariableOp" && n.op != "Assign") || n.input.size() < 2) continue;
    std::string handle = n.input[0];
    const NodeDef* var = TraceIdentity(nodes, &handle);
    if (var == nullptr || !IsVariableOp(var->op)) continue;
    std::string value = n.input[1];
    const NodeDef* src = TraceIdentity(nodes, &value);
    if (src == nullptr || (src->op != "RestoreV2" && src->op != "Restore")) continue;
    if (src->input.size() < 3) {
      return errors::InvalidArgument("SavedModel restore function: " + src->name +
                                     " has too few inputs");
    }
    size_t index = static_cast<size_t>(ParseTensorName(value).index);
    VariableRestore r;
    r.var_node = var->name;
    EMBER_RETURN_IF_ERROR(ConstString(nodes, src->input[1], index, "tensor_names", &r.key));
    std::string slice;
    EMBER_RETURN_IF_ERROR(ConstString(nodes, src->input[2], index, "shape_and_slices", &slice));
    if (!slice.empty()) {
      return errors::Unimplemented("variable '" + var->name + "' is restored from a slice (" +
                                   slice + ") of \"" + r.key +
                                   "\"; partitioned variables are not "
                                   "supported");
    }
    out->push_back(std::move(r));
  }
  return Status::OK();
}

// TF2's own mechanism (the Python loader's): a top-level call's last inputs are the variables
// its function captures, listed as object-graph node ids in bound_inputs; the checkpoint's
// object graph gives each node's key. Keras 3 models need this: their saver restores copies
// of the variables (Variable_N) rather than the handles the signatures read.
Status FindCapturedVariables(const MetaGraphInfo& mg, const TensorBundleReader& reader,
                             std::vector<VariableRestore>* out) {
  out->clear();
  if (mg.bound_inputs.empty() || !reader.Contains("_CHECKPOINTABLE_OBJECT_GRAPH")) {
    return Status::OK();
  }
  std::vector<std::string> graph_bytes;
  EMBER_RETURN_IF_ERROR(reader.LookupStrings("_CHECKPOINTABLE_OBJECT_GRAPH", &graph_bytes));
  if (graph_bytes.size() != 1) return Status::OK();
  std::vector<std::string> keys;
  EMBER_RETURN_IF_ERROR(
      ParseTrackableObjectGraph("_CHECKPOINTABLE_OBJECT_GRAPH", graph_bytes[0], &keys));
  std::unordered_map<std::string, const NodeDef*> nodes;
  for (const NodeDef& n : mg.graph.node) nodes[n.name] = &n;
  for (const NodeDef& n : mg.graph.node) {
    auto f = n.attr.find("f");
    if (f == n.attr.end() || f->second.kind != AttrValue::Kind::kFunc) continue;
    auto bound = mg.bound_inputs.find(f->second.s);
    if (bound == mg.bound_inputs.end()) continue;
    std::vector<std::string> data;
    for (const std::string& in : n.input) {
      if (in.empty() || in[0] != '^') data.push_back(in);
    }
    const std::vector<int>& ids = bound->second;
    if (ids.size() > data.size()) continue;
    for (size_t i = 0; i < ids.size(); ++i) {
      std::string handle = data[data.size() - ids.size() + i];
      const NodeDef* var = TraceIdentity(nodes, &handle);
      size_t id = static_cast<size_t>(ids[i]);
      if (var == nullptr || var->op != "VarHandleOp" || id >= keys.size() || keys[id].empty()) {
        continue;
      }
      out->push_back({var->name, keys[id]});
    }
  }
  return Status::OK();
}

Status ReadWholeFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return errors::NotFound("Cannot read " + path + ": " + std::strerror(errno));
  std::ostringstream buf;
  buf << in.rdbuf();
  *out = buf.str();
  return Status::OK();
}

bool HasAllTags(const MetaGraphInfo& mg, const std::vector<std::string>& tags) {
  for (const std::string& t : tags) {
    bool found = false;
    for (const std::string& have : mg.tags) found = found || have == t;
    if (!found) return false;
  }
  return true;
}

}  // namespace

bool IsSavedModelDirectory(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;
  return stat((path + "/saved_model.pb").c_str(), &st) == 0;
}

Status LoadSavedModel(const SessionOptions& options, const std::string& export_dir,
                      const std::vector<std::string>& tags, SavedModelBundle* bundle) {
  *bundle = SavedModelBundle();
  std::string pb = export_dir + "/saved_model.pb";
  std::string bytes;
  Status read = ReadWholeFile(pb, &bytes);
  if (!read.ok()) {
    return errors::NotFound(read.message() + " (a SavedModel directory holds saved_model.pb)");
  }
  std::vector<MetaGraphInfo> metas;
  EMBER_RETURN_IF_ERROR(ParseSavedModel(pb, bytes, &metas));
  const MetaGraphInfo* mg = nullptr;
  std::string available;
  for (const MetaGraphInfo& m : metas) {
    std::string t;
    for (const std::string& x : m.tags) t += (t.empty() ? "" : ",") + x;
    available += " {" + t + "}";
    if (mg == nullptr && HasAllTags(m, tags)) mg = &m;
  }
  if (mg == nullptr) {
    std::string want;
    for (const std::string& x : tags) want += (want.empty() ? "" : ",") + x;
    return errors::NotFound(pb + ": no MetaGraph with tags {" + want + "}; it has" +
                            (available.empty() ? " none" : available));
  }
  // Each signature is flattened alone first, so that one whose functions use an op ember lacks
  // only fails when it is run; the session then holds every signature that can run.
  std::vector<std::string> roots;
  std::vector<std::string> keys;
  Status first_error;
  for (const auto& kv : mg->signatures) {
    if (kv.first == kInitOpSignature) continue;
    std::vector<std::string> sig_roots;
    for (const auto& in : kv.second.inputs) sig_roots.push_back(in.second.name);
    for (const auto& o : kv.second.outputs) sig_roots.push_back(o.second.name);
    GraphDef probe;
    std::vector<std::string> probe_roots;
    Status s = InlineFunctionCalls(mg->graph, sig_roots, InlineOptions(), &probe, &probe_roots);
    if (!s.ok()) {
      s = Status(s.code(), pb + ": signature '" + kv.first + "': " + s.message());
      if (first_error.ok()) first_error = s;
      bundle->signature_errors[kv.first] = s;
      continue;
    }
    keys.push_back(kv.first);
    roots.insert(roots.end(), sig_roots.begin(), sig_roots.end());
  }
  if (keys.empty()) {
    if (!first_error.ok()) return first_error;
    return errors::InvalidArgument(pb + ": the MetaGraph has no signatures");
  }
  GraphDef flat;
  std::vector<std::string> flat_roots;
  Status s = InlineFunctionCalls(mg->graph, roots, InlineOptions(), &flat, &flat_roots);
  if (!s.ok()) return Status(s.code(), pb + ": " + s.message());
  size_t k = 0;
  for (const std::string& key : keys) {
    SignatureDef sig = mg->signatures.at(key);
    for (auto& in : sig.inputs) in.second.name = flat_roots[k++];
    for (auto& o : sig.outputs) o.second.name = flat_roots[k++];
    bundle->signatures[key] = std::move(sig);
  }
  // Variables: which checkpoint key each VarHandleOp of the flat graph is restored from.
  std::vector<VariableRestore> restores;
  s = FindRestores(*mg, &restores);
  if (!s.ok()) return Status(s.code(), pb + ": " + s.message());
  std::unordered_map<std::string, std::string> flat_nodes;  // name -> op (flat.node grows below)
  for (const NodeDef& n : flat.node) flat_nodes[n.name] = n.op;
  std::vector<std::pair<std::string, Tensor>> feeds;
  std::vector<std::string> targets;
  TensorBundleReader reader;
  bool needs_variables = false;
  for (const NodeDef& n : flat.node) needs_variables = needs_variables || IsVariableOp(n.op);
  if (needs_variables) {
    EMBER_RETURN_IF_ERROR(reader.Open(export_dir + "/variables/variables"));
    std::vector<VariableRestore> captured;
    EMBER_RETURN_IF_ERROR(FindCapturedVariables(*mg, reader, &captured));
    // Object-graph keys first; the saver's restore function fills in the rest.
    captured.insert(captured.end(), restores.begin(), restores.end());
    restores.swap(captured);
  }
  std::set<std::string> restored;
  for (const VariableRestore& r : restores) {
    if (flat_nodes.count(r.var_node) == 0) continue;  // no signature reads it
    if (!restored.insert(r.var_node).second) continue;
    Tensor value;
    EMBER_RETURN_IF_ERROR(reader.Lookup(r.key, &value));
    std::string base = "ember_restore/" + std::to_string(targets.size());
    NodeDef ph;
    ph.name = base + "/value";
    ph.op = "Placeholder";
    ph.attr["dtype"].kind = AttrValue::Kind::kType;
    ph.attr["dtype"].type = value.dtype();
    NodeDef assign;
    assign.name = base + "/assign";
    assign.input = {r.var_node, ph.name};
    if (flat_nodes.at(r.var_node) == "VarHandleOp") {
      assign.op = "AssignVariableOp";
      assign.attr["dtype"] = ph.attr["dtype"];
    } else {  // a TF1 reference variable
      assign.op = "Assign";
      assign.attr["T"] = ph.attr["dtype"];
    }
    flat.node.push_back(std::move(ph));
    flat.node.push_back(std::move(assign));
    feeds.emplace_back(base + "/value", std::move(value));
    targets.push_back(base + "/assign");
  }
  Status ns;
  Session* session = nullptr;
  ns = NewSession(options, &session);
  if (!ns.ok()) return ns;
  bundle->session.reset(session);
  s = bundle->session->Create(flat);
  if (!s.ok()) return Status(s.code(), pb + ": " + s.message());
  if (!targets.empty()) {
    s = bundle->session->Run(feeds, {}, targets, nullptr);
    if (!s.ok()) return Status(s.code(), pb + ": restoring the variables: " + s.message());
  }
  bundle->graph = std::move(flat);
  return Status::OK();
}

Status SavedModelBundle::Run(const std::string& signature_key,
                             const std::vector<std::pair<std::string, Tensor>>& inputs,
                             std::vector<std::string>* output_keys,
                             std::vector<Tensor>* outputs) const {
  if (!session) return errors::FailedPrecondition("The SavedModel bundle is not loaded");
  auto it = signatures.find(signature_key);
  auto failed = signature_errors.find(signature_key);
  if (it == signatures.end() && failed != signature_errors.end()) return failed->second;
  if (it == signatures.end()) {
    std::string names;
    for (const auto& kv : signatures) names += (names.empty() ? "" : ", ") + kv.first;
    for (const auto& kv : signature_errors) names += (names.empty() ? "" : ", ") + kv.first;
    return errors::NotFound("No signature '" + signature_key + "'; the SavedModel has [" + names +
                            "]");
  }
  const SignatureDef& sig = it->second;
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const auto& in : inputs) {
    auto k = sig.inputs.find(in.first);
    if (k == sig.inputs.end()) {
      std::string names;
      for (const auto& kv : sig.inputs) names += (names.empty() ? "" : ", ") + kv.first;
      return errors::InvalidArgument("Signature '" + signature_key + "' has no input '" + in.first +
                                     "'; its inputs are [" + names + "]");
    }
    feeds.emplace_back(k->second.name, in.second);
  }
  std::vector<std::string> keys;
  if (output_keys == nullptr || output_keys->empty()) {
    for (const auto& kv : sig.outputs) keys.push_back(kv.first);
  } else {
    keys = *output_keys;
  }
  std::vector<std::string> fetches;
  for (const std::string& key : keys) {
    auto k = sig.outputs.find(key);
    if (k == sig.outputs.end()) {
      std::string names;
      for (const auto& kv : sig.outputs) names += (names.empty() ? "" : ", ") + kv.first;
      return errors::InvalidArgument("Signature '" + signature_key + "' has no output '" + key +
                                     "'; its outputs are [" + names + "]");
    }
    fetches.push_back(k->second.name);
  }
  if (output_keys != nullptr) *output_keys = keys;
  return session->Run(feeds, fetches, {}, outputs);
}

}  // namespace ember
