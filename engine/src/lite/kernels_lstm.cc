// UNIDIRECTIONAL_SEQUENCE_LSTM, float32: what TensorFlow's converter makes of a Keras 2 LSTM
// layer (and of each direction of a Bidirectional one), as LiteRT's kernel computes it
// (lite/kernels/unidirectional_sequence_lstm.cc, lstm_eval.cc: EvalFloat and LstmStepFloat with
// the portable tensor utils). For each batch row and time step, each gate is
//   bias + W_x x_t + W_h h + (peephole) w_c .* c, or with layer normalization
//   coeff .* normalize(W_x x_t + W_h h + w_c .* c) + bias,
// then sigmoid (input, forget, output gates) or the op's activation (the cell gate); then
//   c = f .* c + i .* g (i = 1 - f without an input gate, CIFG), clipped to cell_clip,
//   h = o .* act(c), projected (and clipped to proj_clip) when there are projection weights.
// The output gate's peephole reads the updated cell. Each product W v is summed in column order
// and then added to the gate, as the portable MatrixBatchVectorMultiplyAccumulate does.
//
// The state inputs (18: output state, 19: cell state) are variable tensors: zero at
// AllocateTensors and carried from one Invoke to the next, as in LiteRT (a model made from a
// stateless Keras layer starts each sequence from zero only on a fresh interpreter, there too).
// Hybrid (int8 weights, float activations) and integer LSTMs are refused.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "lite/kernels.h"

namespace ember {
namespace lite {
namespace {

// Input indices (TFLite's order).
enum : int {
  kInput = 0,
  kInputToInput = 1,  // optional (CIFG when absent)
  kInputToForget = 2,
  kInputToCell = 3,
  kInputToOutput = 4,
  kRecurrentToInput = 5,  // optional with kInputToInput
  kRecurrentToForget = 6,
  kRecurrentToCell = 7,
  kRecurrentToOutput = 8,
  kCellToInput = 9,  // peepholes, optional
  kCellToForget = 10,
  kCellToOutput = 11,
  kInputGateBias = 12,  // optional with kInputToInput
  kForgetGateBias = 13,
  kCellGateBias = 14,
  kOutputGateBias = 15,
  kProjectionWeights = 16,  // optional
  kProjectionBias = 17,     // optional
  kOutputState = 18,        // variable
  kCellState = 19,          // variable
  kInputLayerNorm = 20,     // optional (layer-norm LSTM)
  kForgetLayerNorm = 21,
  kCellLayerNorm = 22,
  kOutputLayerNorm = 23,
};

enum Gate { kI = 0, kF = 1, kG = 2, kO = 3 };

// ApplyActivationToVector's float activations.
float Activate(int act, float v) {
  switch (act) {
    case 1:
      return std::max(0.0f, v);
    case 2:
      return std::max(-1.0f, std::min(1.0f, v));
    case 3:
      return std::max(0.0f, std::min(6.0f, v));
    case 4:
      return std::tanh(v);
    case 6:
      return 1.0f / (1.0f + std::exp(-v));
    default:
      return v;
  }
}

struct LstmShape {  // trivial: kept in NodeState::scratch8 between Prepare and Eval
  int batch, time, n_input, n_cell, n_output;
};

const float* F(const NodeState& node, int i) {
  return static_cast<size_t>(i) < node.t.in.size() && node.t.in[static_cast<size_t>(i)] != nullptr
             ? node.t.In<float>(static_cast<size_t>(i))
             : nullptr;
}

// gate[r] += sum_c w[r * cols + c] * v[c], the sum taken first (portable order).
void MatVecAccumulate(const float* w, int rows, int cols, const float* v, float* gate) {
  for (int r = 0; r < rows; ++r) {
    const float* row = w + static_cast<size_t>(r) * static_cast<size_t>(cols);
    float dot = 0.0f;
    for (int c = 0; c < cols; ++c) dot += row[c] * v[c];
    gate[r] += dot;
  }
}

Status EvalLstm(NodeState* node) {
  LstmShape s{};
  std::memcpy(&s, node->scratch8.data(), sizeof(LstmShape));
  const OpOptions& o = node->op->options;
  const float* x = node->t.In<float>(kInput);
  float* y = node->t.Out<float>(0);
  float* h_all = reinterpret_cast<float*>(node->t.in_data[kOutputState]);
  float* c_all = reinterpret_cast<float*>(node->t.in_data[kCellState]);
  const bool cifg = F(*node, kInputToInput) == nullptr;
  const bool layer_norm = F(*node, kForgetLayerNorm) != nullptr;
  const int n_cell = s.n_cell, n_out = s.n_output, n_in = s.n_input;
  float* gates = node->scratchf.data();  // 4 x n_cell
  float* scratch = gates + 4 * n_cell;   // n_cell
  const int in_w[4] = {kInputToInput, kInputToForget, kInputToCell, kInputToOutput};
  const int rec_w[4] = {kRecurrentToInput, kRecurrentToForget, kRecurrentToCell,
                        kRecurrentToOutput};
  const int peep[4] = {kCellToInput, kCellToForget, -1, kCellToOutput};
  const int bias[4] = {kInputGateBias, kForgetGateBias, kCellGateBias, kOutputGateBias};
  const int norm[4] = {kInputLayerNorm, kForgetLayerNorm, kCellLayerNorm, kOutputLayerNorm};
  for (int b = 0; b < s.batch; ++b) {
    float* h = h_all + static_cast<size_t>(b) * static_cast<size_t>(n_out);
    float* c = c_all + static_cast<size_t>(b) * static_cast<size_t>(n_cell);
    for (int t = 0; t < s.time; ++t) {
      // Batch-major [batch, time, n] or time-major [time, batch, n].
      const size_t row = o.time_major ? static_cast<size_t>(t) * static_cast<size_t>(s.batch) + b
                                      : static_cast<size_t>(b) * static_cast<size_t>(s.time) + t;
      const float* xt = x + row * static_cast<size_t>(n_in);
      auto gate = [&](int k) {
        float* g = gates + k * n_cell;
        const float* bk = F(*node, bias[k]);
        for (int i = 0; i < n_cell; ++i) g[i] = layer_norm ? 0.0f : bk[i];
        MatVecAccumulate(F(*node, in_w[k]), n_cell, n_in, xt, g);
        MatVecAccumulate(F(*node, rec_w[k]), n_cell, n_out, h, g);
        const float* pk = peep[k] >= 0 ? F(*node, peep[k]) : nullptr;
        if (pk != nullptr) {
          for (int i = 0; i < n_cell; ++i) g[i] += pk[i] * c[i];
        }
        if (layer_norm) {  // portable MeanStddevNormalization, then coefficients and bias
          float sum = 0.0f, sum_sq = 0.0f;
          for (int i = 0; i < n_cell; ++i) {
            sum += g[i];
            sum_sq += g[i] * g[i];
          }
          const float mean = sum / static_cast<float>(n_cell);
          const float variance = sum_sq / static_cast<float>(n_cell) - mean * mean;
          const float inv = 1.0f / std::sqrt(variance + 1e-8f);
          const float* ck = F(*node, norm[k]);
          for (int i = 0; i < n_cell; ++i) g[i] = (g[i] - mean) * inv * ck[i] + bk[i];
        }
        const int act = k == kG ? o.lstm_activation : 6;
        for (int i = 0; i < n_cell; ++i) g[i] = Activate(act, g[i]);
      };
      if (!cifg) gate(kI);
      gate(kF);
      gate(kG);
      const float* gi = gates + kI * n_cell;
      const float* gf = gates + kF * n_cell;
      const float* gg = gates + kG * n_cell;
      for (int i = 0; i < n_cell; ++i) {
        float ci = c[i] * gf[i];
        ci += gg[i] * (cifg ? 1.0f - gf[i] : gi[i]);
        if (o.cell_clip > 0.0f) ci = std::max(-o.cell_clip, std::min(o.cell_clip, ci));
        c[i] = ci;
      }
      gate(kO);
      const float* go = gates + kO * n_cell;
      for (int i = 0; i < n_cell; ++i) scratch[i] = go[i] * Activate(o.lstm_activation, c[i]);
      const float* proj = F(*node, kProjectionWeights);
      if (proj != nullptr) {
        const float* pb = F(*node, kProjectionBias);
        for (int i = 0; i < n_out; ++i) h[i] = pb != nullptr ? pb[i] : 0.0f;
        MatVecAccumulate(proj, n_out, n_cell, scratch, h);
        if (o.proj_clip > 0.0f) {
          for (int i = 0; i < n_out; ++i)
            h[i] = std::max(-o.proj_clip, std::min(o.proj_clip, h[i]));
        }
      } else {
        std::memcpy(h, scratch, static_cast<size_t>(n_out) * sizeof(float));
      }
      std::memcpy(y + row * static_cast<size_t>(n_out), h,
                  static_cast<size_t>(n_out) * sizeof(float));
    }
  }
  return Status::OK();
}

Status Need(const NodeState& node, int i, const std::vector<int32_t>& shape, const char* role) {
  const TensorDef* t = node.t.in[static_cast<size_t>(i)];
  if (t == nullptr) {
    return errors::InvalidArgument(node.what + ": input " + std::to_string(i) + " (" + role +
                                   ") is missing");
  }
  if (t->type != TensorType::kFloat32) {
    return errors::Unimplemented(node.what + ": input " + std::to_string(i) + " ('" + t->name +
                                 "', " + role + ") is " + TensorTypeName(t->type) +
                                 "; only the float32 LSTM is supported (hybrid and integer "
                                 "LSTMs are not)");
  }
  if (t->shape != shape) {
    return errors::InvalidArgument(node.what + ": input " + std::to_string(i) + " ('" + t->name +
                                   "', " + role + ") has shape " + ShapeString(t->shape) +
                                   ", expected " + ShapeString(shape));
  }
  return Status::OK();
}

}  // namespace

Status PrepareUnidirectionalSequenceLstm(NodeState* node) {
  const size_t n_in = node->t.in.size();
  if ((n_in != 20 && n_in != 24) || node->t.out.size() != 1) {
    return errors::InvalidArgument(node->what + ": expects 20 or 24 inputs and 1 output, has " +
                                   std::to_string(n_in) + " and " +
                                   std::to_string(node->t.out.size()));
  }
  const TensorDef* x = node->t.in[kInput];
  if (x == nullptr || x->shape.size() != 3) {
    return errors::InvalidArgument(node->what +
                                   ": input 0 must be rank 3 ([batch, time, input] "
                                   "or time-major)");
  }
  if (x->type != TensorType::kFloat32) {
    return errors::Unimplemented(node->what + ": input '" + x->name + "' is " +
                                 TensorTypeName(x->type) +
                                 "; only the float32 LSTM is supported (integer LSTMs are not)");
  }
  const OpOptions& o = node->op->options;
  const int act = o.lstm_activation;
  if (act != 0 && act != 1 && act != 2 && act != 3 && act != 4 && act != 6) {
    return errors::Unimplemented(node->what + ": activation " + std::to_string(act) +
                                 " is not supported (NONE, RELU, RELU_N1_TO_1, RELU6, TANH, "
                                 "SIGMOID are)");
  }
  if (o.cell_clip < 0.0f || o.proj_clip < 0.0f || !std::isfinite(o.cell_clip) ||
      !std::isfinite(o.proj_clip)) {
    return errors::InvalidArgument(node->what + ": cell_clip and proj_clip must be >= 0");
  }
  LstmShape s{};
  s.time = o.time_major ? x->shape[0] : x->shape[1];
  s.batch = o.time_major ? x->shape[1] : x->shape[0];
  s.n_input = x->shape[2];
  const TensorDef* forget = node->t.in[kInputToForget];
  const TensorDef* rec = node->t.in[kRecurrentToForget];
  if (forget == nullptr || forget->shape.size() != 2 || rec == nullptr || rec->shape.size() != 2) {
    return errors::InvalidArgument(node->what + ": the forget gate's weights must be 2-D matrices");
  }
  s.n_cell = forget->shape[0];
  s.n_output = rec->shape[1];
  const std::vector<int32_t> wx = {s.n_cell, s.n_input}, wh = {s.n_cell, s.n_output};
  const std::vector<int32_t> vec = {s.n_cell};
  const bool cifg = node->t.in[kInputToInput] == nullptr;
  for (int g : {kInputToForget, kInputToCell, kInputToOutput}) {
    EMBER_RETURN_IF_ERROR(Need(*node, g, wx, "input weights"));
  }
  for (int g : {kRecurrentToForget, kRecurrentToCell, kRecurrentToOutput}) {
    EMBER_RETURN_IF_ERROR(Need(*node, g, wh, "recurrent weights"));
  }
  for (int g : {kForgetGateBias, kCellGateBias, kOutputGateBias}) {
    EMBER_RETURN_IF_ERROR(Need(*node, g, vec, "gate bias"));
  }
  if (!cifg) {
    EMBER_RETURN_IF_ERROR(Need(*node, kInputToInput, wx, "input weights"));
    EMBER_RETURN_IF_ERROR(Need(*node, kRecurrentToInput, wh, "recurrent weights"));
    EMBER_RETURN_IF_ERROR(Need(*node, kInputGateBias, vec, "gate bias"));
  } else if (node->t.in[kRecurrentToInput] != nullptr) {
    return errors::InvalidArgument(node->what +
                                   ": recurrent-to-input weights without input-to-input weights");
  }
  const bool peephole = node->t.in[kCellToForget] != nullptr;
  for (int g : {kCellToInput, kCellToForget, kCellToOutput}) {
    if (g == kCellToInput && cifg) continue;
    if ((node->t.in[static_cast<size_t>(g)] != nullptr) != peephole) {
      return errors::InvalidArgument(node->what +
                                     ": peephole weights must be all present or all "
                                     "absent");
    }
    if (peephole) EMBER_RETURN_IF_ERROR(Need(*node, g, vec, "peephole weights"));
  }
  if (node->t.in[kProjectionWeights] != nullptr) {
    EMBER_RETURN_IF_ERROR(
        Need(*node, kProjectionWeights, {s.n_output, s.n_cell}, "projection weights"));
    if (node->t.in[kProjectionBias] != nullptr) {
      EMBER_RETURN_IF_ERROR(Need(*node, kProjectionBias, {s.n_output}, "projection bias"));
    }
  } else if (s.n_output != s.n_cell) {
    return errors::InvalidArgument(node->what + ": without projection weights the output size (" +
                                   std::to_string(s.n_output) + ") must equal the cell size (" +
                                   std::to_string(s.n_cell) + ")");
  }
  if (n_in == 24 && node->t.in[kForgetLayerNorm] != nullptr) {
    for (int g : {kInputLayerNorm, kForgetLayerNorm, kCellLayerNorm, kOutputLayerNorm}) {
      if (g == kInputLayerNorm && cifg) continue;
      EMBER_RETURN_IF_ERROR(Need(*node, g, vec, "layer-norm coefficients"));
    }
  }
  for (int st : {kOutputState, kCellState}) {
    const TensorDef* t = node->t.in[static_cast<size_t>(st)];
    const int n = st == kOutputState ? s.n_output : s.n_cell;
    if (t == nullptr || !t->is_variable) {
      return errors::InvalidArgument(node->what + ": input " + std::to_string(st) +
                                     " (the state) must be a variable tensor");
    }
    if (t->num_elements != static_cast<size_t>(s.batch) * static_cast<size_t>(n) ||
        t->type != TensorType::kFloat32) {
      return errors::InvalidArgument(node->what + ": state '" + t->name + "' has shape " +
                                     ShapeString(t->shape) + " " + TensorTypeName(t->type) +
                                     ", expected FLOAT32 [" + std::to_string(s.batch) + "," +
                                     std::to_string(n) + "]");
    }
  }
  const std::vector<int32_t> out_shape = o.time_major
                                             ? std::vector<int32_t>{s.time, s.batch, s.n_output}
                                             : std::vector<int32_t>{s.batch, s.time, s.n_output};
  EMBER_RETURN_IF_ERROR(CheckType(*node, *node->t.out[0], TensorType::kFloat32, "output"));
  EMBER_RETURN_IF_ERROR(CheckShape(*node, *node->t.out[0], out_shape, "output"));
  node->scratch8.assign(sizeof(LstmShape), 0);
  std::memcpy(node->scratch8.data(), &s, sizeof(LstmShape));
  node->scratchf.assign(5 * static_cast<size_t>(s.n_cell), 0.0f);
  node->eval = EvalLstm;
  return Status::OK();
}

}  // namespace lite
}  // namespace ember
