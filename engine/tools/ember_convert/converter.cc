// GraphDef -> float32 TFLite graph.
#include "tools/ember_convert/converter.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

namespace ember {
namespace convert {

using lite::Activation;
using lite::BuiltinOp;
using lite::OperatorDef;
using lite::TensorType;

int32_t LiteGraph::AddTensor(const std::string& name, TensorType type, std::vector<int32_t> shape,
                             const void* bytes, size_t size) {
  lite::TensorDef t;
  t.name = name;
  t.type = type;
  t.shape = std::move(shape);
  t.num_elements = 1;
  for (int32_t d : t.shape) t.num_elements *= static_cast<size_t>(d);
  if (bytes != nullptr && size != 0) {
    storage.emplace_back(static_cast<const uint8_t*>(bytes),
                         static_cast<const uint8_t*>(bytes) + size);
    t.data = storage.back().data();
    t.data_size = size;
  }
  graph.tensors.push_back(std::move(t));
  return static_cast<int32_t>(graph.tensors.size() - 1);
}

namespace {

// A TF tensor during conversion: a folded constant (float or int) or a lite tensor.
struct Value {
  bool is_const = false;
  std::vector<int64_t> shape;
  std::vector<float> f;    // float constants
  std::vector<int64_t> i;  // integer constants
  bool is_int = false;
  int32_t tensor = -1;  // lite tensor index when not constant
  int producer = -1;    // lite operator index
};

std::string Canonical(const std::string& in) {
  return in.find(':') == std::string::npos ? in + ":0" : in;
}

std::vector<int32_t> To32(const std::vector<int64_t>& v) {
  return std::vector<int32_t>(v.begin(), v.end());
}

class FloatConverter {
 public:
  FloatConverter(const GraphDef& g, const std::vector<std::string>& inputs,
                 const std::vector<std::string>& outputs)
      : g_(g), inputs_(inputs), outputs_(outputs), out_(new LiteGraph()) {}

  StatusOr<std::unique_ptr<LiteGraph>> Run() {
    for (const NodeDef& n : g_.node) nodes_[n.name] = &n;
    for (const NodeDef& n : g_.node) {
      for (const std::string& in : n.input) {
        if (!in.empty() && in[0] != '^') ++consumers_[Canonical(in)];
      }
    }
    for (const std::string& o : outputs_) ++consumers_[Canonical(o)];
    for (const std::string& in : inputs_) {
      auto it = nodes_.find(in);
      if (it == nodes_.end())
        return errors::NotFound("--input '" + in + "': no such node in the graph");
      EMBER_RETURN_IF_ERROR(AddInput(*it->second));
    }
    for (const std::string& o : outputs_) {
      Value* v;
      EMBER_RETURN_IF_ERROR(Get(Canonical(o), &v));
      if (v->is_const) return errors::InvalidArgument("--output '" + o + "' is a constant");
      out_->graph.tensors[static_cast<size_t>(v->tensor)].name = o;
      out_->graph.outputs.push_back(v->tensor);
    }
    return std::move(out_);
  }

 private:
  Status AddInput(const NodeDef& n) {
    auto sh = n.attr.find("shape");
    if (sh == n.attr.end() || sh->second.shape.unknown_rank) {
      return errors::InvalidArgument("input '" + n.name +
                                     "' needs a known rank (its 'shape' attr)");
    }
    auto dt = n.attr.find("dtype");
    if (dt != n.attr.end() && dt->second.type != DataType::kFloat) {
      return errors::Unimplemented("input '" + n.name + "' must be float32");
    }
    Value v;
    for (int64_t d : sh->second.shape.dims) v.shape.push_back(d < 0 ? 1 : d);  // unknown batch -> 1
    v.tensor = out_->AddTensor(n.name, TensorType::kFloat32, To32(v.shape));
    out_->graph.inputs.push_back(v.tensor);
    values_[n.name + ":0"] = v;
    return Status::OK();
  }

  Status Get(const std::string& name, Value** out) {
    auto it = values_.find(name);
    if (it == values_.end()) {
      const std::string node = name.substr(0, name.rfind(':'));
      if (visiting_.count(node))
        return errors::InvalidArgument("the graph has a cycle through '" + node + "'");
      auto n = nodes_.find(node);
      if (n == nodes_.end())
        return errors::NotFound("node '" + node + "' (an input of the graph) does not exist");
      visiting_.insert(node);
      Status s = Convert(*n->second);
      visiting_.erase(node);
      if (!s.ok()) return s;
      it = values_.find(name);
      if (it == values_.end())
        return errors::NotFound("'" + name + "' is not an output of its node");
    }
    *out = &it->second;
    return Status::OK();
  }

  Status Inputs(const NodeDef& n, size_t count, std::vector<Value*>* vals) {
    vals->clear();
    for (const std::string& in : n.input) {
      if (in.empty() || in[0] == '^') continue;
      Value* v;
      EMBER_RETURN_IF_ERROR(Get(Canonical(in), &v));
      vals->push_back(v);
    }
    if (count != 0 && vals->size() != count) {
      return errors::InvalidArgument(Where(n) + "expects " + std::to_string(count) +
                                     " inputs, has " + std::to_string(vals->size()));
    }
    return Status::OK();
  }

  static std::string Where(const NodeDef& n) { return "node '" + n.name + "' (" + n.op + "): "; }

  Status ConstFromNode(const NodeDef& n, Value* v) {
    auto it = n.attr.find("value");
    if (it == n.attr.end())
      return errors::InvalidArgument(Where(n) + "Const without a 'value' attr");
    const Tensor& t = it->second.tensor;
    v->is_const = true;
    v->shape = t.shape().dim_sizes();
    const int64_t count = t.NumElements();
    switch (t.dtype()) {
      case DataType::kFloat:
        v->f.assign(t.data<float>(), t.data<float>() + count);
        break;
      case DataType::kInt32:
        v->is_int = true;
        v->i.assign(t.data<int32_t>(), t.data<int32_t>() + count);
        break;
      case DataType::kInt64:
        v->is_int = true;
        v->i.assign(t.data<int64_t>(), t.data<int64_t>() + count);
        break;
      default:
        return errors::Unimplemented(Where(n) + "constants of type " + DataTypeString(t.dtype()) +
                                     " are not supported");
    }
    return Status::OK();
  }

  // A lite tensor for `v` (constants become constant tensors).
  int32_t Materialize(Value* v, const std::string& name) {
    if (!v->is_const) return v->tensor;
    if (v->is_int) {
      std::vector<int32_t> data(v->i.begin(), v->i.end());
      return out_->AddTensor(name, TensorType::kInt32, To32(v->shape), data.data(),
                             data.size() * 4);
    }
    return out_->AddTensor(name, TensorType::kFloat32, To32(v->shape), v->f.data(),
                           v->f.size() * 4);
  }

  Value& Emit(const NodeDef& n, BuiltinOp op, std::vector<int32_t> ins, std::vector<int64_t> shape,
              lite::OpOptions options = {}) {
    OperatorDef od;
    od.op = op;
    od.version = 1;
    od.inputs = std::move(ins);
    Value v;
    v.shape = std::move(shape);
    v.tensor = out_->AddTensor(n.name, TensorType::kFloat32, To32(v.shape));
    od.outputs = {v.tensor};
    od.options = std::move(options);
    out_->graph.operators.push_back(std::move(od));
    v.producer = static_cast<int>(out_->graph.operators.size() - 1);
    values_[n.name + ":0"] = v;
    return values_[n.name + ":0"];
  }

  // Re-binds node n to the output of an earlier op it was fused into.
  void Alias(const NodeDef& n, Value* v) {
    out_->graph.tensors[static_cast<size_t>(v->tensor)].name = n.name;
    values_[n.name + ":0"] = *v;
  }

  static std::vector<int64_t> IntList(const NodeDef& n, const char* attr) {
    auto it = n.attr.find(attr);
    if (it == n.attr.end()) return {};
    return it->second.list.i;
  }

  Status Padding(const NodeDef& n, lite::Padding* p) {
    auto it = n.attr.find("padding");
    const std::string s = it == n.attr.end() ? "" : it->second.s;
    if (s == "SAME") {
      *p = lite::Padding::kSame;
    } else if (s == "VALID") {
      *p = lite::Padding::kValid;
    } else {
      return errors::Unimplemented(Where(n) + "padding '" + s +
                                   "' is not supported (SAME, VALID are)");
    }
    auto df = n.attr.find("data_format");
    if (df != n.attr.end() && df->second.s != "NHWC") {
      return errors::Unimplemented(Where(n) + "data_format '" + df->second.s +
                                   "': only NHWC is supported");
    }
    return Status::OK();
  }

  static int64_t OutSize(lite::Padding p, int64_t in, int64_t k, int64_t s, int64_t d) {
    const int64_t eff = (k - 1) * d + 1;
    return p == lite::Padding::kSame ? (in + s - 1) / s : (in - eff + s) / s;
  }

  Status Spatial(const NodeDef& n, const Value& x, int64_t kh, int64_t kw, lite::OpOptions* o,
                 std::vector<int64_t>* hw) {
    EMBER_RETURN_IF_ERROR(Padding(n, &o->padding));
    const std::vector<int64_t> st = IntList(n, "strides");
    if (st.size() != 4 || st[0] != 1 || st[3] != 1) {
      return errors::Unimplemented(Where(n) + "strides must be [1, h, w, 1]");
    }
    o->stride_h = static_cast<int32_t>(st[1]);
    o->stride_w = static_cast<int32_t>(st[2]);
    const std::vector<int64_t> dl = IntList(n, "dilations");
    if (dl.size() == 4) {
      o->dilation_h = static_cast<int32_t>(dl[1]);
      o->dilation_w = static_cast<int32_t>(dl[2]);
    }
    if (x.shape.size() != 4)
      return errors::InvalidArgument(Where(n) + "input must be rank 4 (NHWC)");
    *hw = {OutSize(o->padding, x.shape[1], kh, o->stride_h, o->dilation_h),
           OutSize(o->padding, x.shape[2], kw, o->stride_w, o->dilation_w)};
    if ((*hw)[0] <= 0 || (*hw)[1] <= 0)
      return errors::InvalidArgument(Where(n) + "filter larger than input");
    return Status::OK();
  }

  Status Convert(const NodeDef& n);
  Status ConvertBinary(const NodeDef& n, bool add);
  Status ConvertActivation(const NodeDef& n, Activation act);

  const GraphDef& g_;
  std::vector<std::string> inputs_, outputs_;
  std::unique_ptr<LiteGraph> out_;
  std::map<std::string, const NodeDef*> nodes_;
  std::map<std::string, Value> values_;
  std::map<std::string, int> consumers_;
  std::set<std::string> visiting_;
};

std::vector<int64_t> BroadcastShape(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                                    bool* ok) {
  const size_t r = std::max(a.size(), b.size());
  std::vector<int64_t> out(r, 1);
  *ok = true;
  for (size_t k = 0; k < r; ++k) {
    const int64_t x = k < r - a.size() ? 1 : a[k - (r - a.size())];
    const int64_t y = k < r - b.size() ? 1 : b[k - (r - b.size())];
    if (x != y && x != 1 && y != 1) *ok = false;
    out[k] = x == 1 ? y : x;
  }
  return out;
}

Status FloatConverter::ConvertBinary(const NodeDef& n, bool add) {
  std::vector<Value*> in;
  EMBER_RETURN_IF_ERROR(Inputs(n, 2, &in));
  Value* a = in[0];
  Value* b = in[1];
  bool ok;
  const std::vector<int64_t> shape = BroadcastShape(a->shape, b->shape, &ok);
  if (!ok) return errors::InvalidArgument(Where(n) + "shapes do not broadcast");
  if (a->is_const && b->is_const) {  // constant folding
    if (a->is_int || b->is_int)
      return errors::Unimplemented(Where(n) + "cannot fold integer arithmetic");
    size_t total = 1;
    for (int64_t d : shape) total *= static_cast<size_t>(d);
    if (a->f.size() != total && a->f.size() != 1)
      return errors::Unimplemented(Where(n) + "cannot fold this broadcast");
    if (b->f.size() != total && b->f.size() != 1)
      return errors::Unimplemented(Where(n) + "cannot fold this broadcast");
    Value v;
    v.is_const = true;
    v.shape = shape;
    v.f.resize(total);
    for (size_t k = 0; k < total; ++k) {
      const float x = a->f[a->f.size() == 1 ? 0 : k], y = b->f[b->f.size() == 1 ? 0 : k];
      v.f[k] = add ? x + y : x * y;
    }
    values_[n.name + ":0"] = v;
    return Status::OK();
  }
  if (b->is_const && !add) std::swap(a, b);  // keep the activation first for MUL
  if (add && a->is_const) std::swap(a, b);
  // BiasAdd fusion: a per-channel constant added to a CONV/DEPTHWISE/FC output.
  if (add && b->is_const && !b->is_int && b->shape.size() == 1 && !a->shape.empty() &&
      b->shape[0] == a->shape.back() && a->producer >= 0 &&
      consumers_[Canonical(n.input[a == in[0] ? 0 : 1])] == 1) {
    OperatorDef& op = out_->graph.operators[static_cast<size_t>(a->producer)];
    const bool weighted = op.op == BuiltinOp::kConv2D || op.op == BuiltinOp::kDepthwiseConv2D ||
                          op.op == BuiltinOp::kFullyConnected;
    if (weighted && op.options.activation == Activation::kNone) {
      lite::TensorDef& bias = out_->graph.tensors[static_cast<size_t>(op.inputs[2])];
      float* bd = reinterpret_cast<float*>(const_cast<uint8_t*>(bias.data));
      for (size_t k = 0; k < b->f.size(); ++k) bd[k] += b->f[k];
      Alias(n, a);
      return Status::OK();
    }
  }
  const int32_t ta = Materialize(a, n.name + "/x");
  const int32_t tb = Materialize(b, n.name + "/y");
  Emit(n, add ? BuiltinOp::kAdd : BuiltinOp::kMul, {ta, tb}, shape);
  return Status::OK();
}

Status FloatConverter::ConvertActivation(const NodeDef& n, Activation act) {
  std::vector<Value*> in;
  EMBER_RETURN_IF_ERROR(Inputs(n, 1, &in));
  Value* x = in[0];
  if (x->is_const)
    return errors::Unimplemented(Where(n) + "cannot fold an activation of a constant");
  if (x->producer >= 0 && consumers_[Canonical(n.input[0])] == 1) {
    OperatorDef& op = out_->graph.operators[static_cast<size_t>(x->producer)];
    const bool fusable = op.op == BuiltinOp::kConv2D || op.op == BuiltinOp::kDepthwiseConv2D ||
                         op.op == BuiltinOp::kFullyConnected || op.op == BuiltinOp::kAdd ||
                         op.op == BuiltinOp::kMul || op.op == BuiltinOp::kAveragePool2D ||
                         op.op == BuiltinOp::kMaxPool2D;
    if (fusable && op.options.activation == Activation::kNone) {
      op.options.activation = act;
      Alias(n, x);
      return Status::OK();
    }
  }
  Emit(n, act == Activation::kRelu ? BuiltinOp::kRelu : BuiltinOp::kRelu6, {x->tensor}, x->shape);
  return Status::OK();
}

Status FloatConverter::Convert(const NodeDef& n) {
  const std::string& op = n.op;
  std::vector<Value*> in;
  if (op == "Const") {
    Value v;
    EMBER_RETURN_IF_ERROR(ConstFromNode(n, &v));
    values_[n.name + ":0"] = v;
    return Status::OK();
  }
  if (op == "Placeholder") {
    return errors::InvalidArgument(Where(n) +
                                   "this Placeholder is needed but not listed with --input");
  }
  if (op == "Identity" || op == "StopGradient" || op == "Snapshot") {
    EMBER_RETURN_IF_ERROR(Inputs(n, 1, &in));
    values_[n.name + ":0"] = *in[0];
    return Status::OK();
  }
  if (op == "Add" || op == "AddV2" || op == "BiasAdd") return ConvertBinary(n, true);
  if (op == "Mul") return ConvertBinary(n, false);
  if (op == "Relu") return ConvertActivation(n, Activation::kRelu);
  if (op == "Relu6") return ConvertActivation(n, Activation::kRelu6);
  if (op == "MatMul") {
    EMBER_RETURN_IF_ERROR(Inputs(n, 2, &in));
    auto flag = [&](const char* a) {
      auto it = n.attr.find(a);
      return it != n.attr.end() && it->second.b;
    };
    if (flag("transpose_a"))
      return errors::Unimplemented(Where(n) + "transpose_a is not supported");
    const Value& x = *in[0];
    const Value& w = *in[1];
    if (x.is_const || !w.is_const || w.is_int || w.shape.size() != 2 || x.shape.size() != 2) {
      return errors::Unimplemented(
          Where(n) + "only activation[B,K] x constant float weights[K,N] is supported");
    }
    const bool tb = flag("transpose_b");
    const int64_t k = tb ? w.shape[1] : w.shape[0], units = tb ? w.shape[0] : w.shape[1];
    if (k != x.shape[1]) return errors::InvalidArgument(Where(n) + "inner dimensions differ");
    std::vector<float> wt(static_cast<size_t>(units * k));
    for (int64_t u = 0; u < units; ++u) {
      for (int64_t j = 0; j < k; ++j) {
        wt[static_cast<size_t>(u * k + j)] =
            tb ? w.f[static_cast<size_t>(u * k + j)] : w.f[static_cast<size_t>(j * units + u)];
      }
    }
    const int32_t wi = out_->AddTensor(n.name + "/weights", TensorType::kFloat32,
                                       {static_cast<int32_t>(units), static_cast<int32_t>(k)},
                                       wt.data(), wt.size() * 4);
    std::vector<float> zeros(static_cast<size_t>(units), 0.0f);
    const int32_t bi =
        out_->AddTensor(n.name + "/bias", TensorType::kFloat32, {static_cast<int32_t>(units)},
                        zeros.data(), zeros.size() * 4);
    Emit(n, BuiltinOp::kFullyConnected, {x.tensor, wi, bi}, {x.shape[0], units});
    return Status::OK();
  }
  if (op == "Conv2D" || op == "DepthwiseConv2dNative") {
    EMBER_RETURN_IF_ERROR(Inputs(n, 2, &in));
    const Value& x = *in[0];
    const Value& w = *in[1];
    if (x.is_const || !w.is_const || w.is_int || w.shape.size() != 4) {
      return errors::Unimplemented(Where(n) +
                                   "needs an activation input and a constant float HWIO filter");
    }
    const int64_t kh = w.shape[0], kw = w.shape[1], ci = w.shape[2], co = w.shape[3];
    lite::OpOptions o;
    std::vector<int64_t> hw;
    EMBER_RETURN_IF_ERROR(Spatial(n, x, kh, kw, &o, &hw));
    const bool dw = op == "DepthwiseConv2dNative";
    // Conv2D may be grouped (Keras Conv2D(groups=g)): the filter's depth divides the input's,
    // and each of the g groups of co / g output channels reads its own ci input channels. The
    // lite CONV_2D takes the same [co, kh, kw, ci] filter and infers the groups.
    if (dw ? x.shape[3] != ci : (ci <= 0 || x.shape[3] % ci != 0 || co % (x.shape[3] / ci) != 0)) {
      return errors::InvalidArgument(
          Where(n) + "filter depth " + std::to_string(ci) +
          (dw ? " differs from the input's depth " + std::to_string(x.shape[3])
              : " does not split the input depth " + std::to_string(x.shape[3]) + " and " +
                    std::to_string(co) + " output channels into equal groups"));
    }
    const int64_t out_c = dw ? ci * co : co;
    std::vector<float> f(w.f.size());
    if (dw) {
      f = w.f;  // [H,W,I,M] is already [1,H,W,I*M] in memory
      o.depth_multiplier = static_cast<int32_t>(co);
    } else {
      for (int64_t a = 0; a < kh; ++a)
        for (int64_t b = 0; b < kw; ++b)
          for (int64_t c = 0; c < ci; ++c)
            for (int64_t d = 0; d < co; ++d)
              f[static_cast<size_t>(((d * kh + a) * kw + b) * ci + c)] =
                  w.f[static_cast<size_t>(((a * kw + b) * ci + c) * co + d)];
    }
    const std::vector<int32_t> fshape =
        dw ? std::vector<int32_t>{1, static_cast<int32_t>(kh), static_cast<int32_t>(kw),
                                  static_cast<int32_t>(out_c)}
           : std::vector<int32_t>{static_cast<int32_t>(co), static_cast<int32_t>(kh),
                                  static_cast<int32_t>(kw), static_cast<int32_t>(ci)};
    const int32_t wi =
        out_->AddTensor(n.name + "/filter", TensorType::kFloat32, fshape, f.data(), f.size() * 4);
    std::vector<float> zeros(static_cast<size_t>(out_c), 0.0f);
    const int32_t bi =
        out_->AddTensor(n.name + "/bias", TensorType::kFloat32, {static_cast<int32_t>(out_c)},
                        zeros.data(), zeros.size() * 4);
    Emit(n, dw ? BuiltinOp::kDepthwiseConv2D : BuiltinOp::kConv2D, {x.tensor, wi, bi},
         {x.shape[0], hw[0], hw[1], out_c}, o);
    return Status::OK();
  }
  if (op == "AvgPool" || op == "MaxPool") {
    EMBER_RETURN_IF_ERROR(Inputs(n, 1, &in));
    const std::vector<int64_t> ks = IntList(n, "ksize");
    if (ks.size() != 4 || ks[0] != 1 || ks[3] != 1)
      return errors::Unimplemented(Where(n) + "ksize must be [1, h, w, 1]");
    lite::OpOptions o;
    std::vector<int64_t> hw;
    EMBER_RETURN_IF_ERROR(Spatial(n, *in[0], ks[1], ks[2], &o, &hw));
    o.filter_h = static_cast<int32_t>(ks[1]);
    o.filter_w = static_cast<int32_t>(ks[2]);
    const Value& x = *in[0];
    Emit(n, op == "AvgPool" ? BuiltinOp::kAveragePool2D : BuiltinOp::kMaxPool2D, {x.tensor},
         {x.shape[0], hw[0], hw[1], x.shape[3]}, o);
    return Status::OK();
  }
  if (op == "Softmax") {
    EMBER_RETURN_IF_ERROR(Inputs(n, 1, &in));
    lite::OpOptions o;
    o.beta = 1.0f;
    Emit(n, BuiltinOp::kSoftmax, {in[0]->tensor}, in[0]->shape, o);
    return Status::OK();
  }
  if (op == "Reshape" || op == "Squeeze") {
    EMBER_RETURN_IF_ERROR(Inputs(n, op == "Reshape" ? 2 : 1, &in));
    Value* x = in[0];
    std::vector<int64_t> shape;
    int64_t total = 1;
    for (int64_t d : x->shape) total *= d;
    if (op == "Squeeze") {
      const std::vector<int64_t> dims = IntList(n, "squeeze_dims");
      for (size_t d = 0; d < x->shape.size(); ++d) {
        const bool listed =
            std::find(dims.begin(), dims.end(), static_cast<int64_t>(d)) != dims.end() ||
            std::find(dims.begin(), dims.end(),
                      static_cast<int64_t>(d) - static_cast<int64_t>(x->shape.size())) !=
                dims.end();
        if (!(x->shape[d] == 1 && (dims.empty() || listed))) shape.push_back(x->shape[d]);
      }
    } else {
      if (!in[1]->is_const || !in[1]->is_int)
        return errors::Unimplemented(Where(n) + "the shape must be a constant");
      shape = in[1]->i;
      int64_t known = 1;
      int unknown = -1;
      for (size_t d = 0; d < shape.size(); ++d) {
        if (shape[d] == -1)
          unknown = static_cast<int>(d);
        else
          known *= shape[d];
      }
      if (unknown >= 0 && known > 0) shape[static_cast<size_t>(unknown)] = total / known;
    }
    int64_t check = 1;
    for (int64_t d : shape) check *= d;
    if (check != total)
      return errors::InvalidArgument(Where(n) + "cannot reshape " + std::to_string(total) +
                                     " elements");
    if (x->is_const) {
      Value v = *x;
      v.shape = shape;
      values_[n.name + ":0"] = v;
      return Status::OK();
    }
    lite::OpOptions o;
    o.new_shape = To32(shape);
    Emit(n, BuiltinOp::kReshape, {x->tensor}, shape, o);
    return Status::OK();
  }
  if (op == "ConcatV2") {
    EMBER_RETURN_IF_ERROR(Inputs(n, 0, &in));
    if (in.size() < 2 || !in.back()->is_const || !in.back()->is_int) {
      return errors::Unimplemented(Where(n) + "the axis must be a constant");
    }
    const int rank = static_cast<int>(in[0]->shape.size());
    int64_t axis = in.back()->i[0];
    if (axis < 0) axis += rank;
    std::vector<int64_t> shape = in[0]->shape;
    shape[static_cast<size_t>(axis)] = 0;
    std::vector<int32_t> ts;
    for (size_t k = 0; k + 1 < in.size(); ++k) {
      shape[static_cast<size_t>(axis)] += in[k]->shape[static_cast<size_t>(axis)];
      ts.push_back(Materialize(in[k], n.name + "/in" + std::to_string(k)));
    }
    lite::OpOptions o;
    o.axis = static_cast<int32_t>(axis);
    Emit(n, BuiltinOp::kConcatenation, ts, shape, o);
    return Status::OK();
  }
  if (op == "Mean") {
    EMBER_RETURN_IF_ERROR(Inputs(n, 2, &in));
    if (!in[1]->is_const || !in[1]->is_int)
      return errors::Unimplemented(Where(n) + "the axis must be a constant");
    auto kd = n.attr.find("keep_dims");
    lite::OpOptions o;
    o.keep_dims = kd != n.attr.end() && kd->second.b;
    const int rank = static_cast<int>(in[0]->shape.size());
    std::vector<bool> red(static_cast<size_t>(rank), false);
    for (int64_t a : in[1]->i) red[static_cast<size_t>(a < 0 ? a + rank : a)] = true;
    std::vector<int64_t> shape;
    for (int d = 0; d < rank; ++d) {
      if (!red[static_cast<size_t>(d)])
        shape.push_back(in[0]->shape[static_cast<size_t>(d)]);
      else if (o.keep_dims)
        shape.push_back(1);
    }
    const int32_t axis = Materialize(in[1], n.name + "/axis");
    Emit(n, BuiltinOp::kMean, {in[0]->tensor, axis}, shape, o);
    return Status::OK();
  }
  return errors::Unimplemented(Where(n) + "op '" + op + "' is not supported by ember-convert");
}

}  // namespace

StatusOr<std::unique_ptr<LiteGraph>> ConvertFloat(const GraphDef& graph,
                                                  const std::vector<std::string>& inputs,
                                                  const std::vector<std::string>& outputs) {
  if (inputs.empty() || outputs.empty()) {
    return errors::InvalidArgument("ember-convert needs at least one --input and one --output");
  }
  FloatConverter c(graph, inputs, outputs);
  return c.Run();
}

}  // namespace convert
}  // namespace ember
