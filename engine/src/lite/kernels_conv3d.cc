// CONV_3D and CONV_3D_TRANSPOSE, float32, as LiteRT's reference kernels (reference_ops::Conv3D,
// reference_ops::Conv3DTranspose).
//
// CONV_3D: input [N, D, H, W, IC], filter [KD, KH, KW, IC, OC], optional bias [OC], output
// [N, OD, OH, OW, OC]; strides and dilations per spatial dimension, SAME or VALID.
// CONV_3D_TRANSPOSE: output_shape (constant int32 [5]), filter [KD, KH, KW, OC, IC], input
// [N, D, H, W, IC], optional bias [OC]. Both clamp to the fused activation.
//
// Both gather: each output voxel sums the filter taps that reach it, with the weights laid out
// [KD, KH, KW, IC, OC] so that the innermost loop runs along contiguous output channels, and
// output rows (one (batch, z, y) line each) split over threads. The reference's sums run in
// another order, so results differ from it only in float rounding.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "lite/kernels.h"

namespace ember {
namespace lite {
namespace {

// The geometry of one 3-D convolution, in the forward convolution's terms: `vol` is the
// convolution's input and `out` its output (for the transpose, vol is this op's output).
// A trivial type (value-initialise it: Geometry3D g{}), so it can be stored as bytes.
struct Geometry3D {
  int n, ic, oc;
  int vol[3], out[3], k[3];
  int stride[3], dil[3], pad[3];
};

// The per-node geometry: NodeState has 2-D fields only, so it lives in scratch32 (ints).
constexpr size_t kGeomInts = sizeof(Geometry3D) / sizeof(int32_t);
static_assert(sizeof(Geometry3D) % sizeof(int32_t) == 0, "Geometry3D holds ints only");

void StoreGeometry(const Geometry3D& g, NodeState* node) {
  node->scratch32.assign(kGeomInts, 0);
  std::memcpy(node->scratch32.data(), &g, sizeof(g));
}
Geometry3D LoadGeometry(const NodeState& node) {
  Geometry3D g{};
  std::memcpy(&g, node.scratch32.data(), sizeof(g));
  return g;
}

struct Rows {
  int64_t begin, end;
};
Rows TaskRows(int64_t rows, int tasks, int task) {
  return Rows{rows * task / tasks, rows * (task + 1) / tasks};
}

// Forward taps along one dimension: input index i = o * stride - pad + t * dil, inside [0, in).
template <typename Fn>
void ForwardTaps(int o, const Geometry3D& g, int d, Fn fn) {
  const int origin = o * g.stride[d] - g.pad[d];
  for (int t = 0; t < g.k[d]; ++t) {
    const int i = origin + t * g.dil[d];
    if (i >= 0 && i < g.vol[d]) fn(t, i);
  }
}

// Transposed taps: the input voxels i of this op (the forward conv's outputs) whose window puts
// tap t on volume index v: v = i * stride - pad + t * dil, 0 <= i < out.
template <typename Fn>
void TransposeTaps(int v, const Geometry3D& g, int d, Fn fn) {
  for (int t = 0; t < g.k[d]; ++t) {
    const int num = v + g.pad[d] - t * g.dil[d];
    if (num < 0 || num % g.stride[d] != 0) continue;
    const int i = num / g.stride[d];
    if (i < g.out[d]) fn(t, i);
  }
}

// acc[OC] += x[ic] * w[tap][ic][oc] over IC, for one tap.
inline void AccumulateTap(const float* x, const float* w, int ic, int oc, float* acc) {
  for (int c = 0; c < ic; ++c) {
    const float v = x[c];
    const float* __restrict wrow = w + static_cast<int64_t>(c) * oc;
    float* __restrict a = acc;
    for (int j = 0; j < oc; ++j) a[j] += v * wrow[j];
  }
}

// Bias, then the activation clamp (the reference clamps always: NONE is +-FLT_MAX).
void Finish(const NodeState& node, const float* bias, int oc, float* acc) {
  if (bias != nullptr) {
    for (int j = 0; j < oc; ++j) acc[j] += bias[j];
  }
  for (int j = 0; j < oc; ++j) acc[j] = std::min(std::max(acc[j], node.f_min), node.f_max);
}

const float* Bias(const NodeState& node, size_t wsize) {
  return node.scratchf.size() > wsize ? node.scratchf.data() + wsize : nullptr;
}

Status EvalConv3D(NodeState* node) {
  const Geometry3D g = LoadGeometry(*node);
  const float* x = node->t.In<float>(0);
  float* y = node->t.Out<float>(0);
  const float* w = node->scratchf.data();
  const size_t wsize = static_cast<size_t>(g.k[0]) * g.k[1] * g.k[2] * g.ic * g.oc;
  const float* bias = Bias(*node, wsize);
  const int64_t rows = static_cast<int64_t>(g.n) * g.out[0] * g.out[1];
  const int tasks =
      TaskCount(*node, rows, static_cast<int64_t>(g.out[2]) * static_cast<int64_t>(wsize));
  RunTasks(*node, tasks, [&](int task, int) {
    const Rows r = TaskRows(rows, tasks, task);
    for (int64_t row = r.begin; row < r.end; ++row) {
      const int oy = static_cast<int>(row % g.out[1]);
      const int oz = static_cast<int>((row / g.out[1]) % g.out[0]);
      const int64_t b = row / (static_cast<int64_t>(g.out[1]) * g.out[0]);
      for (int ox = 0; ox < g.out[2]; ++ox) {
        float* acc = y + (row * g.out[2] + ox) * g.oc;
        std::fill(acc, acc + g.oc, 0.0f);
        ForwardTaps(oz, g, 0, [&](int kz, int iz) {
          ForwardTaps(oy, g, 1, [&](int ky, int iy) {
            ForwardTaps(ox, g, 2, [&](int kx, int ix) {
              const float* px = x + (((b * g.vol[0] + iz) * g.vol[1] + iy) * g.vol[2] + ix) * g.ic;
              const float* pw =
                  w + ((static_cast<int64_t>(kz) * g.k[1] + ky) * g.k[2] + kx) * g.ic * g.oc;
              AccumulateTap(px, pw, g.ic, g.oc, acc);
            });
          });
        });
        Finish(*node, bias, g.oc, acc);
      }
    }
  });
  return Status::OK();
}

Status EvalConv3DTranspose(NodeState* node) {
  const Geometry3D g = LoadGeometry(*node);
  const float* x = node->t.In<float>(2);
  float* y = node->t.Out<float>(0);
  const float* w = node->scratchf.data();
  const size_t wsize = static_cast<size_t>(g.k[0]) * g.k[1] * g.k[2] * g.ic * g.oc;
  const float* bias = Bias(*node, wsize);
  const int64_t rows = static_cast<int64_t>(g.n) * g.vol[0] * g.vol[1];
  const int64_t stride_vol = static_cast<int64_t>(g.stride[0]) * g.stride[1] * g.stride[2];
  const int tasks = TaskCount(
      *node, rows, static_cast<int64_t>(g.vol[2]) * static_cast<int64_t>(wsize) / stride_vol);
  RunTasks(*node, tasks, [&](int task, int) {
    const Rows r = TaskRows(rows, tasks, task);
    for (int64_t row = r.begin; row < r.end; ++row) {
      const int vy = static_cast<int>(row % g.vol[1]);
      const int vz = static_cast<int>((row / g.vol[1]) % g.vol[0]);
      const int64_t b = row / (static_cast<int64_t>(g.vol[1]) * g.vol[0]);
      for (int vx = 0; vx < g.vol[2]; ++vx) {
        float* acc = y + (row * g.vol[2] + vx) * g.oc;
        std::fill(acc, acc + g.oc, 0.0f);
        TransposeTaps(vz, g, 0, [&](int kz, int iz) {
          TransposeTaps(vy, g, 1, [&](int ky, int iy) {
            TransposeTaps(vx, g, 2, [&](int kx, int ix) {
              const float* px = x + (((b * g.out[0] + iz) * g.out[1] + iy) * g.out[2] + ix) * g.ic;
              const float* pw =
                  w + ((static_cast<int64_t>(kz) * g.k[1] + ky) * g.k[2] + kx) * g.ic * g.oc;
              AccumulateTap(px, pw, g.ic, g.oc, acc);
            });
          });
        });
        Finish(*node, bias, g.oc, acc);
      }
    }
  });
  return Status::OK();
}

Status Refuse(const NodeState& node, const std::string& message) {
  return errors::InvalidArgument(node.what + ": " + message);
}

Status RequireConstant(const NodeState& node, const TensorDef& t, const char* role) {
  if (t.data == nullptr) {
    return errors::Unimplemented(node.what + ": " + role + " '" + t.name +
                                 "' must be a constant tensor");
  }
  return Status::OK();
}

// The checks both ops share: float32 tensors, a rank-5 input and filter, a constant filter and
// bias of OC floats, strides and dilations >= 1. Fills n, ic, k, stride, dil (and oc from the
// filter dimension `oc_dim`).
Status PrepareCommon(NodeState* node, const TensorDef& in, const TensorDef& w, const TensorDef* b,
                     int oc_dim, int ic_dim, Geometry3D* g) {
  const TensorDef& out = *node->t.out[0];
  if (in.type != TensorType::kFloat32) {
    return errors::Unimplemented(node->what + ": input '" + in.name + "' has type " +
                                 TensorTypeName(in.type) + "; only FLOAT32 is supported");
  }
  EMBER_RETURN_IF_ERROR(CheckType(*node, w, TensorType::kFloat32, "filter"));
  EMBER_RETURN_IF_ERROR(CheckType(*node, out, TensorType::kFloat32, "output"));
  EMBER_RETURN_IF_ERROR(RequireConstant(*node, w, "filter"));
  if (in.shape.size() != 5) {
    return Refuse(*node,
                  "input '" + in.name + "' must have rank 5 (NDHWC), got " + ShapeString(in.shape));
  }
  if (w.shape.size() != 5) {
    return Refuse(*node, "filter '" + w.name + "' must have rank 5, got " + ShapeString(w.shape));
  }
  if (w.shape[ic_dim] != in.shape[4]) {
    return Refuse(*node, "filter '" + w.name + "' " + ShapeString(w.shape) + " has " +
                             std::to_string(w.shape[ic_dim]) + " input channels but input '" +
                             in.name + "' has " + std::to_string(in.shape[4]));
  }
  const OpOptions& o = node->op->options;
  const int strides[3] = {o.stride_d, o.stride_h, o.stride_w};
  const int dils[3] = {o.dilation_d, o.dilation_h, o.dilation_w};
  for (int d = 0; d < 3; ++d) {
    if (strides[d] < 1 || strides[d] > 4096 || dils[d] < 1 || dils[d] > 4096) {
      return Refuse(*node, "strides and dilation factors must be in [1, 4096], got strides (" +
                               std::to_string(o.stride_d) + ", " + std::to_string(o.stride_h) +
                               ", " + std::to_string(o.stride_w) + ") and dilations (" +
                               std::to_string(o.dilation_d) + ", " + std::to_string(o.dilation_h) +
                               ", " + std::to_string(o.dilation_w) + ")");
    }
    if (w.shape[d] < 1) {
      return Refuse(*node, "filter '" + w.name + "' has an empty window " + ShapeString(w.shape));
    }
    g->k[d] = w.shape[d];
    g->stride[d] = strides[d];
    g->dil[d] = dils[d];
  }
  g->n = in.shape[0];
  g->ic = in.shape[4];
  g->oc = w.shape[oc_dim];
  if (b != nullptr) {
    EMBER_RETURN_IF_ERROR(RequireConstant(*node, *b, "bias"));
    EMBER_RETURN_IF_ERROR(CheckType(*node, *b, TensorType::kFloat32, "bias"));
    if (b->num_elements != static_cast<size_t>(g->oc)) {
      return Refuse(*node, "bias '" + b->name + "' has " + std::to_string(b->num_elements) +
                               " elements, expected " + std::to_string(g->oc));
    }
  }
  FloatActivationRange(o.activation, &node->f_min, &node->f_max);
  return Status::OK();
}

// scratchf = the weights as [KD, KH, KW, IC, OC], then the bias (if any).
void StoreWeights(NodeState* node, const Geometry3D& g, const TensorDef& w, const TensorDef* b,
                  bool transpose_last) {
  const size_t taps = static_cast<size_t>(g.k[0]) * g.k[1] * g.k[2];
  const size_t wsize = taps * g.ic * g.oc;
  node->scratchf.assign(wsize + (b != nullptr ? b->num_elements : 0), 0.0f);
  const float* src = reinterpret_cast<const float*>(w.data);
  if (!transpose_last) {
    std::memcpy(node->scratchf.data(), src, wsize * sizeof(float));
  } else {  // [taps, OC, IC] -> [taps, IC, OC]
    for (size_t t = 0; t < taps; ++t) {
      for (int o = 0; o < g.oc; ++o) {
        for (int c = 0; c < g.ic; ++c) {
          node->scratchf[(t * g.ic + c) * g.oc + o] = src[(t * g.oc + o) * g.ic + c];
        }
      }
    }
  }
  if (b != nullptr) {
    std::memcpy(node->scratchf.data() + wsize, b->data, b->num_elements * sizeof(float));
  }
}

bool CheckArity(const NodeState& node, size_t min_in, size_t max_in) {
  const OpTensors& t = node.t;
  if (node.op->inputs.size() < min_in || node.op->inputs.size() > max_in ||
      node.op->outputs.size() != 1 || t.out[0] == nullptr) {
    return false;
  }
  for (size_t i = 0; i < min_in; ++i) {
    if (t.in[i] == nullptr) return false;
  }
  return true;
}

}  // namespace

Status PrepareConv3D(NodeState* node) {
  if (!CheckArity(*node, 2, 3)) {
    return Refuse(*node, "expects inputs (input, filter[, bias]) and one output");
  }
  const OpTensors& t = node->t;
  const TensorDef& in = *t.in[0];
  const TensorDef& w = *t.in[1];
  const TensorDef* b = t.in.size() > 2 ? t.in[2] : nullptr;
  Geometry3D g{};
  EMBER_RETURN_IF_ERROR(PrepareCommon(node, in, w, b, 4, 3, &g));
  const Padding padding = node->op->options.padding;
  std::vector<int32_t> out_shape = {g.n, 0, 0, 0, g.oc};
  for (int d = 0; d < 3; ++d) {
    g.vol[d] = in.shape[1 + d];
    g.out[d] = ComputeOutSize(padding, g.vol[d], g.k[d], g.stride[d], g.dil[d]);
    if (g.out[d] < 0) g.out[d] = 0;
    g.pad[d] = ComputePadding(g.stride[d], g.dil[d], g.vol[d], g.k[d], g.out[d]);
    out_shape[1 + d] = g.out[d];
  }
  EMBER_RETURN_IF_ERROR(CheckShape(*node, *t.out[0], out_shape, "output"));
  StoreWeights(node, g, w, b, false);
  StoreGeometry(g, node);
  node->eval = EvalConv3D;
  return Status::OK();
}

Status PrepareConv3DTranspose(NodeState* node) {
  if (!CheckArity(*node, 3, 4)) {
    return Refuse(*node, "expects inputs (output_shape, filter, input[, bias]) and one output");
  }
  const OpTensors& t = node->t;
  const TensorDef& shape = *t.in[0];
  const TensorDef& w = *t.in[1];
  const TensorDef& in = *t.in[2];
  const TensorDef* b = t.in.size() > 3 ? t.in[3] : nullptr;
  EMBER_RETURN_IF_ERROR(CheckType(*node, shape, TensorType::kInt32, "output_shape"));
  EMBER_RETURN_IF_ERROR(RequireConstant(*node, shape, "output_shape"));
  if (shape.shape.size() != 1 || shape.num_elements != 5) {
    return Refuse(*node, "output_shape '" + shape.name + "' must hold 5 values, got shape " +
                             ShapeString(shape.shape));
  }
  Geometry3D g{};
  EMBER_RETURN_IF_ERROR(PrepareCommon(node, in, w, b, 3, 4, &g));
  const int32_t* dims = reinterpret_cast<const int32_t*>(shape.data);
  const std::vector<int32_t> out_shape(dims, dims + 5);
  if (out_shape[0] != g.n || out_shape[4] != g.oc || out_shape[1] < 0 || out_shape[2] < 0 ||
      out_shape[3] < 0) {
    return Refuse(*node, "output_shape " + ShapeString(out_shape) + " does not match input '" +
                             in.name + "' " + ShapeString(in.shape) + " and filter '" + w.name +
                             "' " + ShapeString(w.shape));
  }
  EMBER_RETURN_IF_ERROR(CheckShape(*node, *t.out[0], out_shape, "output"));
  const Padding padding = node->op->options.padding;
  for (int d = 0; d < 3; ++d) {
    g.vol[d] = out_shape[1 + d];
    g.out[d] = in.shape[1 + d];
    // LiteRT pads as for the forward convolution from the output to the input, computing that
    // convolution's size from the output size (the input's own size is not checked against it).
    const int fwd = ComputeOutSize(padding, g.vol[d], g.k[d], g.stride[d], g.dil[d]);
    g.pad[d] = ComputePadding(g.stride[d], g.dil[d], g.vol[d], g.k[d], fwd);
  }
  StoreWeights(node, g, w, b, true);
  StoreGeometry(g, node);
  node->eval = EvalConv3DTranspose;
  return Status::OK();
}

}  // namespace lite
}  // namespace ember
