// Full-integer post-training quantization of a float lite graph.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include "ember/lite/interpreter.h"
#include "ember/lite/model.h"
#include "ember/lite/quant.h"
#include "ember/lite/writer.h"
#include "tools/ember_convert/converter.h"

namespace ember {
namespace convert {

using lite::BuiltinOp;
using lite::OperatorDef;
using lite::TensorDef;
using lite::TensorType;

namespace {

struct Range {
  float lo = std::numeric_limits<float>::max();
  float hi = std::numeric_limits<float>::lowest();
};

struct Params {
  float scale = 1.0f;
  int32_t zp = 0;
};

Params FromRange(const Range& r) {
  double lo = std::min<double>(r.lo, 0.0), hi = std::max<double>(r.hi, 0.0);
  if (!(r.lo <= r.hi)) lo = hi = 0.0;  // never seen: treat as [0, 0]
  if (hi - lo < 1e-6) hi = lo + 1e-6;  // as the MLIR quantizer widens tiny ranges
  const lite::QuantParams q = lite::ChooseQuantizationParams(lo, hi, -128, 127);
  return {static_cast<float>(q.scale), q.zero_point};
}

int OpVersionInt8(BuiltinOp op) {
  switch (op) {
    case BuiltinOp::kConv2D:
    case BuiltinOp::kDepthwiseConv2D:
      return 3;
    case BuiltinOp::kFullyConnected:
      return 4;
    case BuiltinOp::kReshape:
      return 1;
    default:
      return 2;
  }
}

class Quantizer {
 public:
  Quantizer(const LiteGraph& f, const std::vector<Range>& ranges)
      : f_(f.graph), ranges_(ranges), q_(new LiteGraph()) {}

  StatusOr<std::unique_ptr<LiteGraph>> Run() {
    for (int32_t i : f_.inputs) q_->graph.inputs.push_back(Activation(i));
    for (const OperatorDef& op : f_.operators) EMBER_RETURN_IF_ERROR(ConvertOp(op));
    for (int32_t o : f_.outputs) q_->graph.outputs.push_back(Activation(o));
    return std::move(q_);
  }

 private:
  // The int8 tensor standing for float activation tensor `i`.
  int32_t Activation(int32_t i) {
    auto it = map_.find(i);
    if (it != map_.end()) return it->second;
    const TensorDef& t = f_.tensors[static_cast<size_t>(i)];
    const Params p = forced_.count(i) ? forced_[i] : FromRange(ranges_[static_cast<size_t>(i)]);
    const int32_t idx = q_->AddTensor(t.name, TensorType::kInt8, t.shape);
    SetQuant(idx, {p.scale}, {p.zp}, 0);
    map_[i] = idx;
    return idx;
  }

  void SetQuant(int32_t idx, std::vector<float> scale, std::vector<int64_t> zp, int dim) {
    TensorDef& t = q_->graph.tensors[static_cast<size_t>(idx)];
    t.quant.scale = std::move(scale);
    t.quant.zero_point = std::move(zp);
    t.quant.quantized_dimension = dim;
  }

  Params Of(int32_t q_index) const {
    const TensorDef& t = q_->graph.tensors[static_cast<size_t>(q_index)];
    return {t.quant.scale[0], static_cast<int32_t>(t.quant.zero_point[0])};
  }

  // A constant operand (asymmetric, its own range).
  int32_t ConstActivation(int32_t i) {
    const TensorDef& t = f_.tensors[static_cast<size_t>(i)];
    const float* v = reinterpret_cast<const float*>(t.data);
    Range r;
    for (size_t k = 0; k < t.num_elements; ++k) {
      r.lo = std::min(r.lo, v[k]);
      r.hi = std::max(r.hi, v[k]);
    }
    const Params p = FromRange(r);
    std::vector<int8_t> data(t.num_elements);
    for (size_t k = 0; k < t.num_elements; ++k)
      data[k] = lite::QuantizeValueInt8(v[k], p.scale, p.zp);
    const int32_t idx = q_->AddTensor(t.name, TensorType::kInt8, t.shape, data.data(), data.size());
    SetQuant(idx, {p.scale}, {p.zp}, 0);
    return idx;
  }

  int32_t Operand(int32_t i) {
    const TensorDef& t = f_.tensors[static_cast<size_t>(i)];
    if (t.data == nullptr) return Activation(i);
    if (t.type == TensorType::kInt32) {
      return q_->AddTensor(t.name, TensorType::kInt32, t.shape, t.data, t.data_size);
    }
    return ConstActivation(i);
  }

  // Re-expresses int8 tensor `q` with params `p` through a QUANTIZE (requantize) op.
  int32_t Requantize(int32_t q, const Params& p) {
    const Params have = Of(q);
    if (have.scale == p.scale && have.zp == p.zp) return q;
    const TensorDef& t = q_->graph.tensors[static_cast<size_t>(q)];
    const int32_t out = q_->AddTensor(t.name + "/requantized", TensorType::kInt8, t.shape);
    SetQuant(out, {p.scale}, {p.zp}, 0);
    OperatorDef op;
    op.op = BuiltinOp::kQuantize;
    op.version = 2;
    op.inputs = {q};
    op.outputs = {out};
    q_->graph.operators.push_back(op);
    return out;
  }

  Status Weighted(const OperatorDef& op, OperatorDef* qop) {
    const int32_t x = Activation(op.inputs[0]);
    const float s_in = Of(x).scale;
    const TensorDef& w = f_.tensors[static_cast<size_t>(op.inputs[1])];
    const TensorDef& b = f_.tensors[static_cast<size_t>(op.inputs[2])];
    const float* wf = reinterpret_cast<const float*>(w.data);
    lite::PerChannelWeights pw;
    int dim = 0;
    if (op.op == BuiltinOp::kFullyConnected) {  // per-tensor, as the spec says
      pw = lite::QuantizeWeightsPerChannel(wf, {1, static_cast<int32_t>(w.num_elements)}, 0);
    } else {
      dim = op.op == BuiltinOp::kConv2D ? 0 : 3;
      pw = lite::QuantizeWeightsPerChannel(wf, w.shape, dim);
    }
    for (float& s : pw.scales) {
      if (s == 0.0f) s = 1e-9f;  // all-zero channel: any positive scale represents it
    }
    const int32_t wi =
        q_->AddTensor(w.name, TensorType::kInt8, w.shape, pw.values.data(), pw.values.size());
    SetQuant(wi, pw.scales, std::vector<int64_t>(pw.scales.size(), 0), dim);
    const int n = static_cast<int>(b.num_elements);
    const std::vector<int32_t> qb =
        lite::QuantizeBias(reinterpret_cast<const float*>(b.data), n, s_in, pw.scales);
    const int32_t bi = q_->AddTensor(b.name, TensorType::kInt32, b.shape, qb.data(), qb.size() * 4);
    std::vector<float> bscale;
    for (size_t c = 0; c < pw.scales.size(); ++c) bscale.push_back(s_in * pw.scales[c]);
    SetQuant(bi, bscale, std::vector<int64_t>(bscale.size(), 0), dim == 3 ? 0 : dim);
    qop->inputs = {x, wi, bi};
    qop->outputs = {Activation(op.outputs[0])};
    return Status::OK();
  }

  Status ConvertOp(const OperatorDef& op) {
    OperatorDef q = op;
    q.version = OpVersionInt8(op.op);
    switch (op.op) {
      case BuiltinOp::kFullyConnected:
      case BuiltinOp::kConv2D:
      case BuiltinOp::kDepthwiseConv2D:
        EMBER_RETURN_IF_ERROR(Weighted(op, &q));
        break;
      case BuiltinOp::kSoftmax:
        forced_[op.outputs[0]] = {1.0f / 256, -128};
        q.inputs = {Activation(op.inputs[0])};
        q.outputs = {Activation(op.outputs[0])};
        break;
      case BuiltinOp::kAveragePool2D:
      case BuiltinOp::kMaxPool2D:
      case BuiltinOp::kReshape: {
        const int32_t x = Activation(op.inputs[0]);
        forced_[op.outputs[0]] = Of(x);
        q.inputs = {x};
        q.outputs = {Activation(op.outputs[0])};
        break;
      }
      case BuiltinOp::kConcatenation: {
        const int32_t out = Activation(op.outputs[0]);
        q.inputs.clear();
        for (int32_t i : op.inputs) q.inputs.push_back(Requantize(Operand(i), Of(out)));
        q.outputs = {out};
        break;
      }
      case BuiltinOp::kAdd:
      case BuiltinOp::kMul:
      case BuiltinOp::kMean:
      case BuiltinOp::kRelu:
      case BuiltinOp::kRelu6:
        q.inputs.clear();
        for (int32_t i : op.inputs) q.inputs.push_back(Operand(i));
        q.outputs = {Activation(op.outputs[0])};
        break;
      default:
        return errors::Unimplemented("cannot quantize " +
                                     lite::BuiltinOpName(static_cast<int32_t>(op.op)));
    }
    q_->graph.operators.push_back(q);
    return Status::OK();
  }

  const lite::SubGraphDef& f_;
  const std::vector<Range>& ranges_;
  std::unique_ptr<LiteGraph> q_;
  std::map<int32_t, int32_t> map_;
  std::map<int32_t, Params> forced_;
};

}  // namespace

StatusOr<std::unique_ptr<LiteGraph>> QuantizeInt8(const LiteGraph& float_graph,
                                                  const std::vector<Sample>& samples) {
  if (samples.empty()) return errors::InvalidArgument("--quantize int8 needs calibration samples");
  auto bytes = lite::WriteModel(float_graph.graph);
  if (!bytes.ok()) return bytes.status();
  auto model = lite::Model::FromBytes(std::move(*bytes));
  if (!model.ok()) return model.status();
  lite::InterpreterOptions options;
  options.preserve_all_tensors = true;  // every intermediate's range is read after Invoke
  auto interp = lite::Interpreter::Create(*model, options);
  if (!interp.ok()) return interp.status();
  lite::Interpreter& in = **interp;
  EMBER_RETURN_IF_ERROR(in.AllocateTensors());
  const size_t nt = float_graph.graph.tensors.size();
  std::vector<Range> ranges(nt);
  for (size_t s = 0; s < samples.size(); ++s) {
    if (samples[s].size() != in.inputs_size()) {
      return errors::InvalidArgument("calibration sample " + std::to_string(s) + " has " +
                                     std::to_string(samples[s].size()) + " inputs, the graph " +
                                     std::to_string(in.inputs_size()));
    }
    for (size_t i = 0; i < in.inputs_size(); ++i) {
      lite::TensorView t = in.input(i);
      if (samples[s][i].size() * 4 != t.bytes) {
        return errors::InvalidArgument("calibration sample " + std::to_string(s) + " for input '" +
                                       t.name() + "' has " + std::to_string(samples[s][i].size()) +
                                       " values, expected " + std::to_string(t.bytes / 4));
      }
      std::memcpy(t.data, samples[s][i].data(), t.bytes);
    }
    EMBER_RETURN_IF_ERROR(in.Invoke());
    for (size_t k = 0; k < nt; ++k) {
      lite::TensorView t = in.tensor(static_cast<int32_t>(k));
      if (t.def->data != nullptr || t.type() != TensorType::kFloat32 || t.data == nullptr) continue;
      const float* v = t.as<float>();
      for (size_t e = 0; e < t.bytes / 4; ++e) {
        ranges[k].lo = std::min(ranges[k].lo, v[e]);
        ranges[k].hi = std::max(ranges[k].hi, v[e]);
      }
    }
  }
  Quantizer q(float_graph, ranges);
  return q.Run();
}

}  // namespace convert
}  // namespace ember
