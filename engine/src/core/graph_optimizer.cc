#include "core/graph_optimizer.h"

#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "core/device.h"
#include "core/op_kernel.h"
#include "core/resource_mgr.h"

namespace ember {
namespace {

// Ops whose value is a pure function of constant inputs: what a frozen batch norm's
// statistics pass through (ReadVariableOp becomes Identity when a model is frozen).
const std::set<std::string>& FoldableOps() {
  static const std::set<std::string> ops = {
      "Const", "Identity", "Add",    "AddV2", "Sub",     "Mul",        "RealDiv", "Rsqrt",
      "Sqrt",  "Neg",      "Square", "Cast",  "Reshape", "Reciprocal", "Squeeze"};
  return ops;
}

// Evaluates constant sub-graphs by running their kernels once, memoised per tensor.
class ConstantEvaluator {
 public:
  ConstantEvaluator(const Graph& graph, const std::set<std::string>& fed_nodes)
      : graph_(graph), fed_nodes_(fed_nodes) {}

  // The value of output `index` of node `id`, or false when it is not a constant.
  bool Evaluate(int id, int index, Tensor* out) { return Eval(id, index, 0, out); }

 private:
  bool Eval(int id, int index, int depth, Tensor* out) {
    auto key = std::make_pair(id, index);
    auto hit = values_.find(key);
    if (hit != values_.end()) {
      *out = hit->second;
      return true;
    }
    if (failed_.count(id) != 0 || depth > 64) return false;
    const Node& node = graph_.node(id);
    bool ok = FoldableOps().count(node.def.op) != 0 && fed_nodes_.count(node.name()) == 0 &&
              node.control_inputs.empty() && (node.def.op == "Const" || !node.inputs.empty());
    std::vector<Tensor> inputs(node.inputs.size());
    for (size_t i = 0; ok && i < node.inputs.size(); ++i) {
      ok = Eval(node.inputs[i].node, node.inputs[i].output, depth + 1, &inputs[i]);
    }
    std::vector<Tensor> outputs;
    if (ok) ok = Run(node, inputs, &outputs);
    if (!ok) {
      failed_.insert(id);
      return false;
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      values_[std::make_pair(id, static_cast<int>(i))] = outputs[i];
    }
    if (index < 0 || static_cast<size_t>(index) >= outputs.size()) return false;
    *out = outputs[static_cast<size_t>(index)];
    return true;
  }

  bool Run(const Node& node, const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs) {
    std::unique_ptr<OpKernel> kernel;
    if (!KernelRegistry::Global()->CreateKernel(node.def, "CPU", &kernel).ok()) return false;
    OpKernelContext::Params p;
    p.node = &node.def;
    for (const Tensor& t : inputs) p.inputs.push_back(&t);
    p.output_types = node.output_types;
    p.resources = &resources_;
    OpKernelContext ctx(std::move(p));
    kernel->Compute(&ctx);
    if (!ctx.status().ok()) return false;
    for (const Tensor& t : ctx.outputs()) {
      if (!t.IsInitialized()) return false;
    }
    *outputs = ctx.outputs();
    return true;
  }

  const Graph& graph_;
  const std::set<std::string>& fed_nodes_;
  ResourceMgr resources_;
  std::map<std::pair<int, int>, Tensor> values_;
  std::set<int> failed_;
};

bool IsFloat(const Node& n) {
  auto it = n.def.attr.find("T");
  return it != n.def.attr.end() && it->second.kind == AttrValue::Kind::kType &&
         it->second.type == DataType::kFloat;
}

bool AttrIs(const NodeDef& def, const std::string& name, const std::string& value,
            const std::string& fallback) {
  auto it = def.attr.find(name);
  if (it == def.attr.end()) return value == fallback;
  return it->second.kind == AttrValue::Kind::kS && it->second.s == value;
}

bool AttrBool(const NodeDef& def, const std::string& name, bool fallback) {
  auto it = def.attr.find(name);
  if (it == def.attr.end()) return fallback;
  return it->second.kind == AttrValue::Kind::kB ? it->second.b : !fallback;
}

// A per-output-channel constant: a scalar, or [..., 1, C] / [C] with every leading dim 1.
// Fills `out` with `channels` values; false when `t` broadcasts any other way.
bool PerChannel(const Tensor& t, int64_t channels, int out_rank, std::vector<float>* out) {
  if (t.dtype() != DataType::kFloat || t.dims() > out_rank) return false;
  for (int d = 0; d + 1 < t.dims(); ++d) {
    if (t.dim_size(d) != 1) return false;
  }
  const int64_t n = t.NumElements();
  if (n != 1 && !(t.dims() >= 1 && n == channels)) return false;
  out->resize(static_cast<size_t>(channels));
  const float* v = t.data<float>();
  for (int64_t c = 0; c < channels; ++c) (*out)[static_cast<size_t>(c)] = n == 1 ? v[0] : v[c];
  return true;
}

struct Chain {
  int head = -1;
  std::vector<int> members;  // head first, the node that will be replaced last
  Tensor filter;             // folded weights (a copy)
  std::vector<float> bias;   // folded shift, one per output channel
  std::string activation;    // "", "Relu" or "Relu6"
  int pad = -1;              // a zero Pad before the convolution, folded into its padding
  int64_t pads[4] = {};      // its EXPLICIT padding: top, bottom, left, right
  // pad is a SpaceToBatchND (and members[1] its BatchToSpaceND): the convolution dilated by
  // `block`; `padded` its paddings' sums (height, width), which the input must fill whole blocks
  // with.
  bool space_to_batch = false;
  int64_t block[2] = {1, 1}, padded[2] = {};
};

class Optimizer {
 public:
  Optimizer(const Graph& graph, const std::vector<std::string>& feeds,
            const std::vector<std::string>& fetches, const std::vector<std::string>& targets)
      : graph_(graph), evaluator_(graph, fed_nodes_) {
    for (const std::string& f : feeds) {
      fed_nodes_.insert(ParseTensorName(f).node);
    }
    for (const std::string& f : fetches) pinned_.insert(ParseTensorName(f).node);
    for (const std::string& t : targets) pinned_.insert(t);
    consumers_.resize(graph.nodes().size());
    for (size_t i = 0; i < graph.nodes().size(); ++i) {
      const Node& n = graph.nodes()[i];
      for (const Node::Input& in : n.inputs) {
        consumers_[static_cast<size_t>(in.node)].push_back({static_cast<int>(i), in.output});
      }
      for (int c : n.control_inputs) {
        consumers_[static_cast<size_t>(c)].push_back({static_cast<int>(i), -1});
      }
    }
  }

  // The rewritten node list, or empty when nothing changed.
  std::vector<NodeDef> Run(OptimizerStats* stats) {
    std::vector<NodeDef> defs;
    std::set<int> absorbed;
    std::map<int, NodeDef> replaced;
    for (size_t i = 0; i < graph_.nodes().size(); ++i) {
      const int id = static_cast<int>(i);
      if (absorbed.count(id) != 0) continue;
      Chain chain;
      if (!Grow(id, &chain)) continue;
      for (int m : chain.members) absorbed.insert(m);
      replaced[chain.members.back()] = FusedDef(chain);
      if (stats != nullptr) {
        stats->fused++;
        stats->folded_nodes += static_cast<int>(chain.members.size()) + (chain.pad >= 0 ? 1 : 0);
      }
    }
    // Control edges from inert nodes order nothing that can be observed: dropped, so a frozen
    // function's NoOp and the variable reads it waits for (one Const and one Identity per
    // weight; 645 nodes in ResNet50, 531 in MobileNetV2) no longer run at every step.
    std::map<int, std::vector<std::string>> inputs;
    for (size_t i = 0; i < graph_.nodes().size(); ++i) {
      const Node& n = graph_.nodes()[i];
      if (n.control_inputs.empty()) continue;
      std::vector<std::string> kept;
      for (const std::string& in : n.def.input) {
        const int c = !in.empty() && in[0] == '^' ? graph_.FindNode(in.substr(1)) : -1;
        if (c < 0 || !Inert(c)) kept.push_back(in);
      }
      const int dropped = static_cast<int>(n.def.input.size() - kept.size());
      if (dropped == 0) continue;
      inputs[static_cast<int>(i)] = std::move(kept);
      if (stats != nullptr) stats->dropped_control_edges += dropped;
    }
    if (replaced.empty() && inputs.empty()) return defs;
    defs.reserve(graph_.nodes().size());
    for (size_t i = 0; i < graph_.nodes().size(); ++i) {
      auto it = replaced.find(static_cast<int>(i));
      defs.push_back(it != replaced.end() ? it->second : graph_.nodes()[i].def);
      auto in = inputs.find(static_cast<int>(i));
      if (it == replaced.end() && in != inputs.end()) defs.back().input = in->second;
    }
    return defs;
  }

 private:
  struct Use {
    int node;
    int output;  // -1: a control edge
  };

  // True when running `id` does nothing but make its outputs, cannot fail, and waits only for
  // nodes of the same kind: a Const, or an Identity or NoOp over such nodes (a frozen
  // ReadVariableOp is an Identity of a Const). Fed nodes are not inert: a feed replaces them.
  bool Inert(int id, int depth = 0) {
    auto hit = inert_.find(id);
    if (hit != inert_.end()) return hit->second;
    const Node& n = graph_.node(id);
    const std::string& op = n.def.op;
    bool inert = depth <= 64 && fed_nodes_.count(n.name()) == 0 &&
                 (op == "Const" || op == "Identity" || op == "NoOp");
    for (size_t k = 0; inert && k < n.inputs.size(); ++k) {
      inert = Inert(n.inputs[k].node, depth + 1);
    }
    for (size_t k = 0; inert && k < n.control_inputs.size(); ++k) {
      inert = Inert(n.control_inputs[k], depth + 1);
    }
    inert_[id] = inert;  // a chain deeper than 64 counts as not inert (its edges stay)
    return inert;
  }

  // The single data consumer of output 0 of `id`, when `id` may be folded into what follows:
  // nothing else reads it, it is not fetched, fed or a target, and it has no control edges.
  int SoleConsumer(int id) const {
    const Node& n = graph_.node(id);
    if (pinned_.count(n.name()) != 0 || fed_nodes_.count(n.name()) != 0) return -1;
    const auto& uses = consumers_[static_cast<size_t>(id)];
    if (uses.size() != 1 || uses[0].output != 0) return -1;
    const Node& next = graph_.node(uses[0].node);
    if (!next.control_inputs.empty() || next.def.device != n.def.device) return -1;
    return uses[0].node;
  }

  // True when `n` names no device or a CPU one.
  static bool OnCpu(const Node& n) {
    if (n.def.device.empty()) return true;
    DeviceSpec spec;
    return ParseDeviceSpec(n.def.device, &spec) && (spec.type.empty() || spec.type == "CPU");
  }

  bool Constant(const Node& n, int input, Tensor* out) {
    const Node::Input& in = n.inputs[static_cast<size_t>(input)];
    return evaluator_.Evaluate(in.node, in.output, out);
  }

  // Starts a chain at `id` (a float Conv2D / DepthwiseConv2dNative / MatMul with a constant
  // filter) and extends it over the per-channel affine ops and activation that follow.
  bool Grow(int id, Chain* chain) {
    const Node& head = graph_.node(id);
    const std::string& op = head.def.op;
    if (op != "Conv2D" && op != "DepthwiseConv2dNative" && op != "MatMul") return false;
    if (!IsFloat(head) || head.inputs.size() != 2 || !head.control_inputs.empty()) return false;
    // The fused kernels are CPU kernels: a chain placed on a GPU stays as written.
    if (!OnCpu(head)) return false;
    if (op != "MatMul" && !AttrIs(head.def, "data_format", "NHWC", "NHWC")) return false;
    const bool explicit_padding = AttrIs(head.def, "padding", "EXPLICIT", "");
    if (op != "MatMul" && !AttrIs(head.def, "padding", "SAME", "") &&
        !AttrIs(head.def, "padding", "VALID", "") && !explicit_padding) {
      return false;
    }
    if (op == "MatMul" && AttrBool(head.def, "transpose_a", false)) return false;
    if (explicit_padding && !ExplicitPadding(head, chain->pads)) return false;
    // A zero Pad of the image's height and width before a VALID or EXPLICIT convolution
    // becomes its EXPLICIT padding (Keras's ZeroPadding2D before a strided convolution).
    if (op != "MatMul" && !AttrIs(head.def, "padding", "SAME", "")) {
      chain->pad = ZeroPad(id, chain->pads);
    }
    // TensorFlow's atrous convolution (Keras's dilated Conv2D and DepthwiseConv2D):
    // SpaceToBatchND, a VALID undilated stride-1 convolution, BatchToSpaceND.
    const int b2s = op != "MatMul" && chain->pad < 0 && AttrIs(head.def, "padding", "VALID", "")
                        ? SpaceToBatch(id, chain)
                        : -1;
    // Cheap structural check before any constant is evaluated.
    if (SoleConsumer(id) < 0 && chain->pad < 0) return false;
    Tensor w;
    if (!Constant(head, 1, &w) || w.dtype() != DataType::kFloat) return false;
    const bool transpose_b = op == "MatMul" && AttrBool(head.def, "transpose_b", false);
    int64_t channels = 0;
    if (op == "MatMul") {
      if (w.dims() != 2) return false;
      channels = w.dim_size(transpose_b ? 0 : 1);
    } else {
      if (w.dims() != 4) return false;
      channels = op == "Conv2D" ? w.dim_size(3) : w.dim_size(2) * w.dim_size(3);
    }
    if (channels <= 0) return false;
    const int out_rank = op == "MatMul" ? 2 : 4;
    chain->head = id;
    chain->members = {id};
    chain->filter = w.Clone();
    chain->bias.assign(static_cast<size_t>(channels), 0.f);
    int cur = id;
    if (b2s >= 0) {
      chain->members.push_back(b2s);
      cur = b2s;
    }
    for (;;) {
      const int next = SoleConsumer(cur);
      if (next < 0) break;
      const Node& n = graph_.node(next);
      if (!IsFloat(n) || fed_nodes_.count(n.name()) != 0) break;
      const std::string& nop = n.def.op;
      if (nop == "Relu" || nop == "Relu6") {
        chain->activation = nop;
        chain->members.push_back(next);
        break;
      }
      // The side of a binary op that is not the chain.
      int other = -1;
      if (n.inputs.size() == 2) {
        if (n.inputs[0].node == cur && n.inputs[1].node != cur) other = 1;
        if (n.inputs[1].node == cur && n.inputs[0].node != cur && nop != "Sub" &&
            nop != "BiasAdd") {
          other = 0;
        }
      }
      std::vector<float> v;
      if ((nop == "BiasAdd" || nop == "Add" || nop == "AddV2" || nop == "Sub" || nop == "Mul") &&
          other >= 0) {
        if (nop == "BiasAdd" && !AttrIs(n.def, "data_format", "NHWC", "NHWC")) break;
        Tensor c;
        if (!Constant(n, other, &c) || !PerChannel(c, channels, out_rank, &v)) break;
        if (nop == "Mul") {
          Scale(v, transpose_b, chain);
        } else {
          const float sign = nop == "Sub" ? -1.f : 1.f;
          for (size_t k = 0; k < v.size(); ++k) chain->bias[k] += sign * v[k];
        }
      } else if ((nop == "FusedBatchNorm" || nop == "FusedBatchNormV2" ||
                  nop == "FusedBatchNormV3") &&
                 n.inputs.size() == 5 && n.inputs[0].node == cur && out_rank == 4) {
        if (AttrBool(n.def, "is_training", true) || !AttrIs(n.def, "data_format", "NHWC", "NHWC")) {
          break;
        }
        // Only output 0 may be read (SoleConsumer checked the edges of `cur`, not of `n`).
        bool side_outputs = false;
        for (const Use& u : consumers_[static_cast<size_t>(next)]) side_outputs |= u.output != 0;
        if (side_outputs) break;
        std::vector<float> scale, offset, mean, var;
        Tensor t[4];
        bool ok = true;
        for (int k = 0; k < 4 && ok; ++k) ok = Constant(n, k + 1, &t[k]);
        if (!ok || !PerChannel(t[0], channels, 1, &scale) ||
            !PerChannel(t[1], channels, 1, &offset) || !PerChannel(t[2], channels, 1, &mean) ||
            !PerChannel(t[3], channels, 1, &var)) {
          break;
        }
        float eps = 1e-4f;
        auto e = n.def.attr.find("epsilon");
        if (e != n.def.attr.end() && e->second.kind == AttrValue::Kind::kF) eps = e->second.f;
        std::vector<float> mul(scale.size());
        for (size_t k = 0; k < scale.size(); ++k) mul[k] = scale[k] / std::sqrt(var[k] + eps);
        Scale(mul, transpose_b, chain);
        for (size_t k = 0; k < mul.size(); ++k) chain->bias[k] += offset[k] - mean[k] * mul[k];
      } else {
        break;
      }
      chain->members.push_back(next);
      cur = next;
    }
    return chain->members.size() > 1 || chain->pad >= 0;
  }

  // The amounts of `n`'s EXPLICIT padding (top, bottom, left, right; batch and depth 0).
  static bool ExplicitPadding(const Node& n, int64_t* pads) {
    auto it = n.def.attr.find("explicit_paddings");
    if (it == n.def.attr.end() || it->second.kind != AttrValue::Kind::kList) return false;
    const std::vector<int64_t>& v = it->second.list.i;
    if (v.size() != 8 || v[0] != 0 || v[1] != 0 || v[6] != 0 || v[7] != 0) return false;
    for (int k = 0; k < 4; ++k) {
      if (v[static_cast<size_t>(k) + 2] < 0) return false;
      pads[k] = v[static_cast<size_t>(k) + 2];
    }
    return true;
  }

  // The Pad (or PadV2 by a constant 0) of float NHWC height and width by constant amounts
  // that convolution `id` alone reads as its image, its amounts added to `pads`; -1 if none.
  int ZeroPad(int id, int64_t* pads) {
    const Node& head = graph_.node(id);
    const int p = head.inputs[0].node;
    const Node& pad = graph_.node(p);
    if ((pad.def.op != "Pad" && pad.def.op != "PadV2") || !IsFloat(pad) ||
        head.inputs[0].output != 0 || !pad.control_inputs.empty() || SoleConsumer(p) != id ||
        pad.inputs.size() != (pad.def.op == "Pad" ? 2u : 3u)) {
      return -1;
    }
    Tensor amounts, value;
    if (!Constant(pad, 1, &amounts) || amounts.NumElements() != 8 || amounts.dims() != 2) {
      return -1;
    }
    int64_t v[8];
    for (int k = 0; k < 8; ++k) {
      if (amounts.dtype() == DataType::kInt32) {
        v[k] = amounts.data<int32_t>()[k];
      } else if (amounts.dtype() == DataType::kInt64) {
        v[k] = amounts.data<int64_t>()[k];
      } else {
        return -1;
      }
      if (v[k] < 0) return -1;
    }
    if (v[0] != 0 || v[1] != 0 || v[6] != 0 || v[7] != 0) return -1;
    if (pad.def.op == "PadV2" && (!Constant(pad, 2, &value) || value.dtype() != DataType::kFloat ||
                                  value.NumElements() != 1 || value.data<float>()[0] != 0.f)) {
      return -1;
    }
    for (int k = 0; k < 4; ++k) pads[k] += v[k + 2];
    return p;
  }

  // The integer values of a constant input (int32 or int64) of `n`; false if it is not one.
  bool IntValues(const Node& n, int input, std::vector<int64_t>* out) {
    Tensor t;
    if (!Constant(n, input, &t)) return false;
    out->clear();
    for (int64_t k = 0; k < t.NumElements(); ++k) {
      if (t.dtype() == DataType::kInt32) {
        out->push_back(t.data<int32_t>()[k]);
      } else if (t.dtype() == DataType::kInt64) {
        out->push_back(t.data<int64_t>()[k]);
      } else {
        return false;
      }
    }
    return true;
  }

  static bool AllOnes(const NodeDef& def, const std::string& name) {
    auto it = def.attr.find(name);
    if (it == def.attr.end()) return true;
    if (it->second.kind != AttrValue::Kind::kList) return false;
    for (int64_t v : it->second.list.i) {
      if (v != 1) return false;
    }
    return true;
  }

  // Where convolution `id` (VALID) reads a SpaceToBatchND of float NHWC height and width by a
  // constant block with constant paddings, has strides and dilations of 1, and is read only by a
  // BatchToSpaceND by the same block with constant crops no larger than those paddings: the
  // three are one convolution dilated by the block whose EXPLICIT padding is the paddings less
  // the crops (the same sums, as LiteRT's converter folds them). Fills chain->pad (the
  // SpaceToBatchND), pads, block and padded, and returns the BatchToSpaceND; -1 where not.
  int SpaceToBatch(int id, Chain* chain) {
    const Node& head = graph_.node(id);
    if (!AllOnes(head.def, "strides") || !AllOnes(head.def, "dilations")) return -1;
    const int s = head.inputs[0].node;
    const Node& s2b = graph_.node(s);
    if (s2b.def.op != "SpaceToBatchND" || !IsFloat(s2b) || head.inputs[0].output != 0 ||
        !s2b.control_inputs.empty() || s2b.inputs.size() != 3 || SoleConsumer(s) != id) {
      return -1;
    }
    const int b = SoleConsumer(id);
    if (b < 0) return -1;
    const Node& b2s = graph_.node(b);
    if (b2s.def.op != "BatchToSpaceND" || !IsFloat(b2s) || b2s.inputs.size() != 3 ||
        b2s.inputs[0].node != id || fed_nodes_.count(b2s.name()) != 0) {
      return -1;
    }
    std::vector<int64_t> block, block2, paddings, crops;
    if (!IntValues(s2b, 1, &block) || !IntValues(b2s, 1, &block2) ||
        !IntValues(s2b, 2, &paddings) || !IntValues(b2s, 2, &crops) || block.size() != 2 ||
        block != block2 || paddings.size() != 4 || crops.size() != 4) {
      return -1;
    }
    for (int k = 0; k < 4; ++k) {
      if (block[static_cast<size_t>(k / 2)] < 1 || crops[static_cast<size_t>(k)] < 0 ||
          paddings[static_cast<size_t>(k)] < crops[static_cast<size_t>(k)]) {
        return -1;
      }
    }
    chain->pad = s;
    chain->space_to_batch = true;
    for (int k = 0; k < 4; ++k) {
      chain->pads[k] = paddings[static_cast<size_t>(k)] - crops[static_cast<size_t>(k)];
    }
    for (int d = 0; d < 2; ++d) {
      chain->block[d] = block[static_cast<size_t>(d)];
      chain->padded[d] =
          paddings[static_cast<size_t>(2 * d)] + paddings[static_cast<size_t>(2 * d + 1)];
    }
    return b;
  }

  // Multiplies output channel c of the filter and of the bias by s[c].
  static void Scale(const std::vector<float>& s, bool transpose_b, Chain* chain) {
    float* w = chain->filter.data<float>();
    const int64_t n = static_cast<int64_t>(s.size());
    const int64_t total = chain->filter.NumElements();
    if (transpose_b) {  // MatMul filter [channels, k]
      const int64_t k = total / n;
      for (int64_t c = 0; c < n; ++c) {
        for (int64_t p = 0; p < k; ++p) w[c * k + p] *= s[static_cast<size_t>(c)];
      }
    } else {  // the channel is the fastest-moving index of the flattened filter
      for (int64_t i = 0; i < total; i += n) {
        for (int64_t c = 0; c < n; ++c) w[i + c] *= s[static_cast<size_t>(c)];
      }
    }
    for (size_t c = 0; c < s.size(); ++c) chain->bias[c] *= s[c];
  }

  NodeDef FusedDef(const Chain& chain) const {
    const Node& head = graph_.node(chain.head);
    const Node& last = graph_.node(chain.members.back());
    NodeDef def;
    def.name = last.name();
    def.op = "_EmberFused" + head.def.op;
    def.device = last.def.device;
    def.input = {chain.pad >= 0 ? graph_.node(chain.pad).def.input[0] : head.def.input[0]};
    def.attr = head.def.attr;
    if (chain.pad >= 0) {
      AttrValue padding, amounts;
      padding.kind = AttrValue::Kind::kS;
      padding.s = "EXPLICIT";
      amounts.kind = AttrValue::Kind::kList;
      amounts.list.i = {0, 0, chain.pads[0], chain.pads[1], chain.pads[2], chain.pads[3], 0, 0};
      def.attr["padding"] = padding;
      def.attr["explicit_paddings"] = amounts;
    }
    if (chain.space_to_batch) {
      AttrValue dilations, check;
      dilations.kind = check.kind = AttrValue::Kind::kList;
      dilations.list.i = {1, chain.block[0], chain.block[1], 1};
      // The folded SpaceToBatchND's own check, made by the fused kernel (conv_ops.cc).
      check.list.i = {chain.block[0], chain.block[1], chain.padded[0], chain.padded[1]};
      def.attr["dilations"] = dilations;
      def.attr["space_to_batch"] = check;
    }
    AttrValue filter;
    filter.kind = AttrValue::Kind::kTensor;
    filter.tensor = chain.filter;
    def.attr["filter"] = filter;
    AttrValue bias;
    bias.kind = AttrValue::Kind::kTensor;
    bias.tensor =
        Tensor::From<float>(TensorShape({static_cast<int64_t>(chain.bias.size())}), chain.bias);
    def.attr["bias"] = bias;
    AttrValue act;
    act.kind = AttrValue::Kind::kS;
    act.s = chain.activation;
    def.attr["activation"] = act;
    return def;
  }

  const Graph& graph_;
  std::set<std::string> fed_nodes_;
  std::set<std::string> pinned_;
  std::vector<std::vector<Use>> consumers_;
  std::map<int, bool> inert_;
  ConstantEvaluator evaluator_;
};

}  // namespace

Status OptimizeGraphForInference(const std::shared_ptr<const Graph>& graph,
                                 const std::vector<std::string>& feeds,
                                 const std::vector<std::string>& fetches,
                                 const std::vector<std::string>& targets,
                                 std::shared_ptr<const Graph>* out, OptimizerStats* stats) {
  *out = graph;
  if (graph == nullptr) return Status::OK();
  Optimizer optimizer(*graph, feeds, fetches, targets);
  std::vector<NodeDef> defs = optimizer.Run(stats);
  if (defs.empty()) return Status::OK();
  auto g = std::make_shared<Graph>();
  EMBER_RETURN_IF_ERROR(Graph::Build(defs, graph->options(), g.get()));
  *out = std::move(g);
  return Status::OK();
}

}  // namespace ember
