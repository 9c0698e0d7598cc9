// DEQUANTIZE of a constant, computed once at AllocateTensors. TFLiteConverter stores float16
// models' weights as FLOAT16 constants (Optimize.DEFAULT with supported_types float16), and
// dynamic-range models the weights of ops without a hybrid kernel as int8 constants, each
// followed by a DEQUANTIZE to float32. LiteRT computes such an output once, as a persistent
// tensor; so does ember: the output becomes a float32 constant held by the subgraph, the
// operator is not run, and the kernels that read it see constant weights (CONV_2D and
// FULLY_CONNECTED pack them at Prepare as for a float model).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "lite/kernels.h"

namespace ember {
namespace lite {

float HalfToFloat(uint16_t h) {
  const bool negative = (h & 0x8000u) != 0;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0) {
    // Zero or subnormal: mantissa x 2^-24, exact in float.
    const float v = std::ldexp(static_cast<float>(mantissa), -24);
    return negative ? -v : v;
  }
  if (exponent == 31) {
    bits = 0x7f800000u | (mantissa << 13);  // infinity or NaN (payload kept)
  } else {
    bits = ((exponent + 112u) << 23) | (mantissa << 13);  // rebias 15 -> 127
  }
  if (negative) bits |= 0x80000000u;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

namespace {

// One constant input's float32 values, as LiteRT's Dequantize computes them.
Status Dequantize(const std::string& what, const TensorDef& in, float* out) {
  const size_t n = in.num_elements;
  if (in.type == TensorType::kFloat16) {
    for (size_t i = 0; i < n; ++i) {
      uint16_t h;
      std::memcpy(&h, in.data + 2 * i, 2);
      out[i] = HalfToFloat(h);
    }
    return Status::OK();
  }
  const QuantizationDef& q = in.quant;
  if (q.scale.empty() || q.zero_point.size() != q.scale.size()) {
    return errors::InvalidArgument(what + ": input '" + in.name +
                                   "' is quantized but has no (or mismatched) scale/zero_point");
  }
  // Per-tensor, or per channel along quantized_dimension (int8 weights of hybrid models).
  size_t channels = 1, inner = 1;
  if (q.scale.size() > 1) {
    const size_t dim = static_cast<size_t>(q.quantized_dimension);
    if (q.quantized_dimension < 0 || dim >= in.shape.size() ||
        static_cast<size_t>(in.shape[dim]) != q.scale.size()) {
      return errors::InvalidArgument(
          what + ": input '" + in.name + "' has " + std::to_string(q.scale.size()) +
          " scales that do not match quantized_dimension " + std::to_string(q.quantized_dimension));
    }
    channels = q.scale.size();
    for (size_t d = dim + 1; d < in.shape.size(); ++d) inner *= static_cast<size_t>(in.shape[d]);
  }
  for (size_t i = 0; i < n; ++i) {
    const size_t c = (i / inner) % channels;
    int32_t v;
    switch (in.type) {
      case TensorType::kInt8:
        v = reinterpret_cast<const int8_t*>(in.data)[i];
        break;
      case TensorType::kUInt8:
        v = in.data[i];
        break;
      default: {  // kInt16
        int16_t s;
        std::memcpy(&s, in.data + 2 * i, 2);
        v = s;
      }
    }
    const double scale = q.scale[c];
    out[i] = static_cast<float>(scale * (v - q.zero_point[c]));
  }
  return Status::OK();
}

}  // namespace

Status FoldConstantDequantize(const SubGraphDef& g, SubgraphState* state) {
  const size_t nt = g.tensors.size();
  state->defs.assign(nt, nullptr);
  for (size_t i = 0; i < nt; ++i) state->defs[i] = &g.tensors[i];
  state->folded_op.assign(g.operators.size(), 0);
  state->folded_defs.clear();
  state->folded_data.clear();
  state->folded_ints.clear();
  for (size_t oi = 0; oi < g.operators.size(); ++oi) {
    const OperatorDef& op = g.operators[oi];
    if (op.op != BuiltinOp::kDequantize || op.inputs.size() != 1 || op.outputs.size() != 1 ||
        op.inputs[0] < 0) {
      continue;
    }
    const TensorDef& in = *state->defs[static_cast<size_t>(op.inputs[0])];
    const size_t o = static_cast<size_t>(op.outputs[0]);
    const TensorDef& out = g.tensors[o];
    const bool foldable_type = in.type == TensorType::kFloat16 || in.type == TensorType::kInt8 ||
                               in.type == TensorType::kUInt8 || in.type == TensorType::kInt16;
    if (in.data == nullptr || !foldable_type || out.data != nullptr) continue;
    const std::string what = state->where + "operator " + std::to_string(oi) + " (DEQUANTIZE)";
    if (out.type != TensorType::kFloat32 || out.shape != in.shape ||
        out.num_elements != in.num_elements) {
      return errors::InvalidArgument(what + ": output '" + out.name + "' must be FLOAT32 of " +
                                     "input '" + in.name + "''s shape " + ShapeString(in.shape));
    }
    auto values = std::make_unique<AlignedVector<float>>(in.num_elements);
    EMBER_RETURN_IF_ERROR(Dequantize(what, in, values->data()));
    auto def = std::make_unique<TensorDef>(out);
    def->data = reinterpret_cast<const uint8_t*>(values->data());
    def->data_size = in.num_elements * sizeof(float);
    state->defs[o] = def.get();
    state->folded_defs.push_back(std::move(def));
    state->folded_data.push_back(std::move(values));
    state->folded_op[oi] = 1;
  }
  return Status::OK();
}

}  // namespace lite
}  // namespace ember
