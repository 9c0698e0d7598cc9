// Data-moving and matrix builtins of transformer models, as TFLite's reference kernels:
// GATHER (axis, batch_dims), TRANSPOSE, STRIDED_SLICE (all masks, offset) and float and int8
// BATCH_MATMUL (adj_x, adj_y, broadcast batch dims). Index inputs may be int32 or int64.
#include <algorithm>
#include <cstring>

#include "ember/lite/quant.h"
#include "lite/kernels.h"
#include "lite/kernels_misc.h"

namespace ember {
namespace lite {
namespace {

// Reads an int32/int64 index tensor; false when its data is not available or of another type.
bool ReadInts(const NodeState& node, size_t i, std::vector<int64_t>* out) {
  const TensorDef* t = node.t.in[i];
  const uint8_t* p = node.t.in_data[i];
  if (t == nullptr || p == nullptr) return false;
  out->clear();
  for (size_t k = 0; k < t->num_elements; ++k) {
    if (t->type == TensorType::kInt32) {
      out->push_back(reinterpret_cast<const int32_t*>(p)[k]);
    } else if (t->type == TensorType::kInt64) {
      out->push_back(reinterpret_cast<const int64_t*>(p)[k]);
    } else {
      return false;
    }
  }
  return true;
}

std::vector<int64_t> Strides(const std::vector<int64_t>& d) {
  std::vector<int64_t> s(d.size(), 1);
  for (size_t i = d.size(); i-- > 1;) s[i - 1] = s[i] * d[i];
  return s;
}

// out[i...] = in[begin + i * step] (element offsets), `elem` bytes each.
void StridedCopy(const uint8_t* in, int64_t base, const std::vector<int64_t>& step,
                 const std::vector<int64_t>& dims, size_t elem, uint8_t* out) {
  int64_t total = 1;
  for (int64_t d : dims) total *= d;
  const size_t r = dims.size();
  std::vector<int64_t> idx(r, 0);
  int64_t s = base;
  for (int64_t i = 0; i < total; ++i) {
    std::memcpy(out + static_cast<size_t>(i) * elem, in + static_cast<size_t>(s) * elem, elem);
    for (size_t d = r; d-- > 0;) {
      s += step[d];
      if (++idx[d] < dims[d]) break;
      s -= step[d] * dims[d];
      idx[d] = 0;
    }
  }
}

std::vector<int64_t> Dims(const TensorDef& t) { return {t.shape.begin(), t.shape.end()}; }

Status OutputHas(const NodeState& node, const std::vector<int64_t>& dims) {
  return CheckShape(node, *node.t.out[0], std::vector<int32_t>(dims.begin(), dims.end()), "output");
}

// ---- GATHER ----
Status GatherGeometry(const NodeState& node, int64_t* axis, int64_t* bd,
                      std::vector<int64_t>* out) {
  const TensorDef& p = *node.t.in[0];
  const TensorDef& ix = *node.t.in[1];
  const int64_t pr = static_cast<int64_t>(p.shape.size()),
                ir = static_cast<int64_t>(ix.shape.size());
  *axis = node.op->options.axis < 0 ? node.op->options.axis + pr : node.op->options.axis;
  *bd = node.op->options.batch_dims < 0 ? node.op->options.batch_dims + ir
                                        : node.op->options.batch_dims;
  if (*axis < 0 || *axis >= pr || *bd < 0 || *bd > ir || *bd > *axis) {
    return errors::InvalidArgument(node.what + ": axis " + std::to_string(node.op->options.axis) +
                                   " or batch_dims " + std::to_string(node.op->options.batch_dims) +
                                   " out of range");
  }
  out->assign(p.shape.begin(), p.shape.begin() + *axis);
  out->insert(out->end(), ix.shape.begin() + *bd, ix.shape.end());
  out->insert(out->end(), p.shape.begin() + *axis + 1, p.shape.end());
  return Status::OK();
}

Status EvalGather(NodeState* node) {
  int64_t axis = 0, bd = 0;
  std::vector<int64_t> out_dims, idx;
  EMBER_RETURN_IF_ERROR(GatherGeometry(*node, &axis, &bd, &out_dims));
  if (!ReadInts(*node, 1, &idx)) return errors::InvalidArgument(node->what + ": bad indices");
  const TensorDef& p = *node->t.in[0];
  int64_t batch = 1, outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) (d < bd ? batch : outer) *= p.shape[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(axis) + 1; d < p.shape.size(); ++d) inner *= p.shape[d];
  const int64_t limit = p.shape[static_cast<size_t>(axis)];
  const int64_t per_batch = batch == 0 ? 0 : static_cast<int64_t>(idx.size()) / batch;
  const size_t row = static_cast<size_t>(inner) * TensorTypeSize(p.type);
  const uint8_t* src = node->t.in_data[0];
  uint8_t* dst = node->t.out_data[0];
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t o = 0; o < outer; ++o) {
      const uint8_t* base = src + static_cast<size_t>((b * outer + o) * limit) * row;
      for (int64_t i = 0; i < per_batch; ++i) {
        const int64_t k = idx[static_cast<size_t>(b * per_batch + i)];
        if (k < 0 || k >= limit) {
          return errors::InvalidArgument(node->what + ": index " + std::to_string(k) +
                                         " out of bounds [0, " + std::to_string(limit) + ")");
        }
        std::memcpy(dst, base + static_cast<size_t>(k) * row, row);
        dst += row;
      }
    }
  }
  return Status::OK();
}

// ---- TRANSPOSE ----
Status TransposeGeometry(const NodeState& node, const std::vector<int64_t>& perm,
                         std::vector<int64_t>* out, std::vector<int64_t>* step) {
  const std::vector<int64_t> in = Dims(*node.t.in[0]);
  if (perm.size() != in.size()) {
    return errors::InvalidArgument(node.what + ": perm has " + std::to_string(perm.size()) +
                                   " entries for a rank-" + std::to_string(in.size()) + " input");
  }
  const std::vector<int64_t> st = Strides(in);
  out->clear();
  step->clear();
  std::vector<bool> seen(in.size(), false);
  for (int64_t p : perm) {
    if (p < 0) p += static_cast<int64_t>(in.size());
    if (p < 0 || p >= static_cast<int64_t>(in.size()) || seen[static_cast<size_t>(p)]) {
      return errors::InvalidArgument(node.what + ": perm is not a permutation");
    }
    seen[static_cast<size_t>(p)] = true;
    out->push_back(in[static_cast<size_t>(p)]);
    step->push_back(st[static_cast<size_t>(p)]);
  }
  return Status::OK();
}

Status EvalTranspose(NodeState* node) {
  std::vector<int64_t> perm, out, step;
  if (!ReadInts(*node, 1, &perm)) return errors::InvalidArgument(node->what + ": bad perm");
  EMBER_RETURN_IF_ERROR(TransposeGeometry(*node, perm, &out, &step));
  StridedCopy(node->t.in_data[0], 0, step, out, TensorTypeSize(node->t.in[0]->type),
              node->t.out_data[0]);
  return Status::OK();
}

// ---- STRIDED_SLICE (TensorFlow's ValidateStridedSliceOp) ----
Status SliceGeometry(const NodeState& node, int64_t* base, std::vector<int64_t>* step,
                     std::vector<int64_t>* dense_dims, std::vector<int64_t>* final_dims) {
  std::vector<int64_t> begin, end, stride;
  if (!ReadInts(node, 1, &begin) || !ReadInts(node, 2, &end) || !ReadInts(node, 3, &stride) ||
      begin.size() != end.size() || begin.size() != stride.size() || begin.size() > 30) {
    return errors::InvalidArgument(node.what +
                                   ": begin, end and strides must be int vectors of "
                                   "one length");
  }
  const OpOptions& o = node.op->options;
  if (o.offset) {
    for (size_t i = 0; i < begin.size(); ++i) end[i] += begin[i];
  }
  const std::vector<int64_t> in = Dims(*node.t.in[0]);
  const int64_t rank = static_cast<int64_t>(in.size());
  int64_t ellipsis = o.ellipsis_mask;
  size_t sparse = begin.size();
  if (ellipsis == 0) {
    ellipsis = int64_t{1} << sparse;
    ++sparse;
    begin.push_back(0);
    end.push_back(0);
    stride.push_back(1);
  }
  int add_after = 0;
  bool seen = false;
  for (size_t i = 0; i < sparse; ++i) {
    if (seen && ((o.new_axis_mask >> i) & 1)) ++add_after;
    if ((ellipsis >> i) & 1) seen = true;
  }
  std::vector<int64_t> db(in.size(), 0), de(in.size(), 0), ds(in.size(), 1);
  std::vector<bool> bm(in.size(), false), em(in.size(), false), sm(in.size(), false);
  std::vector<int64_t> gather;  // dense dim, -1 new axis, -2 shrunk
  int64_t full = 0;
  for (size_t i = 0; i < sparse; ++i) {
    if ((ellipsis >> i) & 1) {
      const int64_t next =
          std::min<int64_t>(rank - static_cast<int64_t>(sparse - i) + 1 + add_after, rank);
      for (; full < next; ++full) {
        bm[static_cast<size_t>(full)] = em[static_cast<size_t>(full)] = true;
        gather.push_back(full);
      }
    } else if ((o.new_axis_mask >> i) & 1) {
      gather.push_back(-1);
    } else {
      if (full == rank) return errors::InvalidArgument(node.what + ": index out of range");
      const size_t f = static_cast<size_t>(full);
      db[f] = begin[i];
      de[f] = end[i];
      ds[f] = stride[i];
      bm[f] = (o.begin_mask >> i) & 1;
      em[f] = (o.end_mask >> i) & 1;
      sm[f] = (o.shrink_axis_mask >> i) & 1;
      gather.push_back(sm[f] ? -2 : full);
      ++full;
    }
  }
  const std::vector<int64_t> st = Strides(in);
  *base = 0;
  step->assign(in.size(), 0);
  dense_dims->assign(in.size(), 0);
  for (size_t d = 0; d < in.size(); ++d) {
    const int64_t n = in[d], s = ds[d];
    if (s == 0) return errors::InvalidArgument(node.what + ": stride must be non-zero");
    int64_t b, size;
    if (sm[d]) {
      b = db[d] < 0 ? n + db[d] : db[d];
      if (b < 0 || b >= n)
        return errors::InvalidArgument(node.what + ": slice index out of bounds");
      size = 1;
    } else {
      const int64_t lo = s > 0 ? 0 : -1, hi = s > 0 ? n : n - 1;
      auto canon = [&](int64_t x, bool masked, bool is_end) {
        if (masked) return (s > 0) != is_end ? lo : hi;
        const int64_t f = x < 0 ? n + x : x;
        return f < lo ? lo : (f > hi ? hi : f);
      };
      b = canon(db[d], bm[d], false);
      const int64_t len = canon(de[d], em[d], true) - b;
      size = (len == 0 || ((len < 0) != (s < 0))) ? 0 : len / s + (len % s != 0 ? 1 : 0);
    }
    *base += b * st[d];
    (*step)[d] = s * st[d];
    (*dense_dims)[d] = size;
  }
  final_dims->clear();
  for (int64_t g : gather) {
    if (g == -1) final_dims->push_back(1);
    if (g >= 0) final_dims->push_back((*dense_dims)[static_cast<size_t>(g)]);
  }
  return Status::OK();
}

Status EvalStridedSlice(NodeState* node) {
  int64_t base = 0;
  std::vector<int64_t> step, dense, final_dims;
  EMBER_RETURN_IF_ERROR(SliceGeometry(*node, &base, &step, &dense, &final_dims));
  StridedCopy(node->t.in_data[0], base, step, dense, TensorTypeSize(node->t.in[0]->type),
              node->t.out_data[0]);
  return Status::OK();
}

// ---- BATCH_MATMUL ----
Status MatMulGeometry(const NodeState& node, std::vector<int64_t>* out, int64_t* m, int64_t* k,
                      int64_t* n) {
  const std::vector<int32_t>& a = node.t.in[0]->shape;
  const std::vector<int32_t>& b = node.t.in[1]->shape;
  if (a.size() < 2 || b.size() < 2) {
    return errors::InvalidArgument(node.what + ": inputs must have rank >= 2");
  }
  const bool ax = node.op->options.adj_x, ay = node.op->options.adj_y;
  *m = a[a.size() - (ax ? 1 : 2)];
  *k = a[a.size() - (ax ? 2 : 1)];
  const int64_t kb = b[b.size() - (ay ? 1 : 2)];
  *n = b[b.size() - (ay ? 2 : 1)];
  std::vector<int32_t> batch;
  if (*k != kb || !misc::BroadcastShape(std::vector<int32_t>(a.begin(), a.end() - 2),
                                        std::vector<int32_t>(b.begin(), b.end() - 2), &batch)) {
    return errors::InvalidArgument(node.what + ": shapes " + ShapeString(a) + " and " +
                                   ShapeString(b) + " are not compatible");
  }
  out->assign(batch.begin(), batch.end());
  out->push_back(*m);
  out->push_back(*n);
  return Status::OK();
}

// Calls mm(a, b, c, m, k, n) for each output matrix c with its input matrices, whose batch
// dims broadcast.
template <typename In, typename Out, typename Fn>
Status ForEachMatrix(NodeState* node, Fn mm) {
  std::vector<int64_t> out;
  int64_t m = 0, k = 0, n = 0;
  EMBER_RETURN_IF_ERROR(MatMulGeometry(*node, &out, &m, &k, &n));
  const std::vector<int32_t> batch(out.begin(), out.end() - 2);
  const std::vector<int32_t>& as = node->t.in[0]->shape;
  const std::vector<int32_t>& bs = node->t.in[1]->shape;
  const std::vector<std::vector<int64_t>> st = {
      misc::BroadcastStrides(std::vector<int32_t>(as.begin(), as.end() - 2), batch),
      misc::BroadcastStrides(std::vector<int32_t>(bs.begin(), bs.end() - 2), batch)};
  const In* A = node->t.In<In>(0);
  const In* B = node->t.In<In>(1);
  Out* C = node->t.Out<Out>(0);
  int64_t nb = 1;
  for (int32_t d : batch) nb *= d;
  std::vector<int64_t> idx(batch.size(), 0);
  int64_t oa = 0, ob = 0;
  for (int64_t bi = 0; bi < nb; ++bi) {
    mm(A + oa * m * k, B + ob * k * n, C + bi * m * n, m, k, n);
    for (size_t d = batch.size(); d-- > 0;) {
      oa += st[0][d];
      ob += st[1][d];
      if (++idx[d] < batch[d]) break;
      oa -= st[0][d] * batch[d];
      ob -= st[1][d] * batch[d];
      idx[d] = 0;
    }
  }
  return Status::OK();
}

Status EvalBatchMatMul(NodeState* node) {
  const bool ax = node->op->options.adj_x, ay = node->op->options.adj_y;
  return ForEachMatrix<float, float>(
      node, [&](const float* a, const float* b, float* c, int64_t m, int64_t k, int64_t n) {
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            float acc = 0.0f;
            for (int64_t q = 0; q < k; ++q) {
              acc += (ax ? a[q * m + i] : a[i * k + q]) * (ay ? b[j * k + q] : b[q * n + j]);
            }
            c[i * n + j] = acc;
          }
        }
      });
}

// reference_ops::BatchMatMul<int8_t, int32_t> as batch_matmul.cc's EvalInt8Int8 calls it: exact
// int32 sums of (a - zp_a) * (b - zp_b), then one requantization to the output.
Status EvalBatchMatMulInt8(NodeState* node) {
  const bool ax = node->op->options.adj_x, ay = node->op->options.adj_y;
  const NodeState& nd = *node;
  return ForEachMatrix<int8_t, int8_t>(node, [&](const int8_t* a, const int8_t* b, int8_t* c,
                                                 int64_t m, int64_t k, int64_t n) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        int32_t acc = 0;
        for (int64_t q = 0; q < k; ++q) {
          const int32_t av = ax ? a[q * m + i] : a[i * k + q];
          const int32_t bv = ay ? b[j * k + q] : b[q * n + j];
          acc += (av - nd.in_zp) * (bv - nd.in2_zp);
        }
        const int32_t v = MultiplyByQuantizedMultiplier(acc, nd.multiplier, nd.shift) + nd.out_zp;
        c[i * n + j] = static_cast<int8_t>(std::min(127, std::max(-128, v)));
      }
    }
  });
}

// int8 BATCH_MATMUL reads one scale and zero point per tensor (params.scale/zero_point).
Status PrepareBatchMatMulInt8(NodeState* node) {
  const TensorDef& a = *node->t.in[0];
  const TensorDef& b = *node->t.in[1];
  const TensorDef& y = *node->t.out[0];
  EMBER_RETURN_IF_ERROR(CheckType(*node, b, TensorType::kInt8, "input 1"));
  if (y.type != TensorType::kInt8) return misc::Unsupported(*node, y.type);
  EMBER_RETURN_IF_ERROR(NeedPerTensorQuant(*node, a, "input 0"));
  EMBER_RETURN_IF_ERROR(NeedPerTensorQuant(*node, b, "input 1"));
  EMBER_RETURN_IF_ERROR(NeedPerTensorQuant(*node, y, "output"));
  node->in_zp = static_cast<int32_t>(a.quant.zero_point[0]);
  node->in2_zp = static_cast<int32_t>(b.quant.zero_point[0]);
  node->out_zp = static_cast<int32_t>(y.quant.zero_point[0]);
  // GetQuantizedConvolutionMultipler: the scales' product in float, then divided in double.
  const double product = static_cast<double>(a.quant.scale[0] * b.quant.scale[0]);
  QuantizeMultiplier(product / static_cast<double>(y.quant.scale[0]), &node->multiplier,
                     &node->shift);
  node->eval = EvalBatchMatMulInt8;
  return Status::OK();
}

bool ConstInputs(const NodeState& node, size_t from) {
  for (size_t i = from; i < node.t.in.size(); ++i) {
    if (node.t.in[i] == nullptr || node.t.in[i]->data == nullptr) return false;
  }
  return true;
}

Status NeedPlainData(const NodeState& node) {
  const TensorType t = node.t.in[0]->type;
  if (!node.t.in[0]->quant.empty() && (t == TensorType::kInt8 || t == TensorType::kUInt8)) {
    // Copies keep scale and zero point, which must then match the output's.
    const QuantizationDef& a = node.t.in[0]->quant;
    const QuantizationDef& b = node.t.out[0]->quant;
    if (a.scale != b.scale || a.zero_point != b.zero_point) {
      return errors::Unimplemented(node.what + ": requantizing copies are not supported");
    }
  }
  if (TensorTypeSize(t) == 0) return misc::Unsupported(node, t);
  return CheckType(node, *node.t.out[0], t, "output");
}

}  // namespace

Status PrepareGather(NodeState* node) {
  EMBER_RETURN_IF_ERROR(misc::CheckIo(*node, 2, 2));
  EMBER_RETURN_IF_ERROR(NeedPlainData(*node));
  int64_t axis = 0, bd = 0;
  std::vector<int64_t> out;
  EMBER_RETURN_IF_ERROR(GatherGeometry(*node, &axis, &bd, &out));
  EMBER_RETURN_IF_ERROR(OutputHas(*node, out));
  node->eval = EvalGather;
  return Status::OK();
}

Status PrepareTranspose(NodeState* node) {
  EMBER_RETURN_IF_ERROR(misc::CheckIo(*node, 2, 2));
  EMBER_RETURN_IF_ERROR(NeedPlainData(*node));
  if (ConstInputs(*node, 1)) {
    std::vector<int64_t> perm, out, step;
    if (!ReadInts(*node, 1, &perm)) return errors::InvalidArgument(node->what + ": bad perm");
    EMBER_RETURN_IF_ERROR(TransposeGeometry(*node, perm, &out, &step));
    EMBER_RETURN_IF_ERROR(OutputHas(*node, out));
  }
  node->eval = EvalTranspose;
  return Status::OK();
}

Status PrepareStridedSlice(NodeState* node) {
  EMBER_RETURN_IF_ERROR(misc::CheckIo(*node, 4, 4));
  EMBER_RETURN_IF_ERROR(NeedPlainData(*node));
  if (ConstInputs(*node, 1)) {
    int64_t base = 0;
    std::vector<int64_t> step, dense, out;
    EMBER_RETURN_IF_ERROR(SliceGeometry(*node, &base, &step, &dense, &out));
    EMBER_RETURN_IF_ERROR(OutputHas(*node, out));
  }
  node->eval = EvalStridedSlice;
  return Status::OK();
}

Status PrepareBatchMatMul(NodeState* node) {
  EMBER_RETURN_IF_ERROR(misc::CheckIo(*node, 2, 2));
  std::vector<int64_t> out;
  int64_t m = 0, k = 0, n = 0;
  EMBER_RETURN_IF_ERROR(MatMulGeometry(*node, &out, &m, &k, &n));
  EMBER_RETURN_IF_ERROR(OutputHas(*node, out));
  if (node->t.in[0]->type == TensorType::kInt8) return PrepareBatchMatMulInt8(node);
  for (size_t i = 0; i < 2; ++i) {
    if (node->t.in[i]->type != TensorType::kFloat32) {
      return misc::Unsupported(*node, node->t.in[i]->type);
    }
  }
  EMBER_RETURN_IF_ERROR(CheckType(*node, *node->t.out[0], TensorType::kFloat32, "output"));
  node->eval = EvalBatchMatMul;
  return Status::OK();
}

}  // namespace lite
}  // namespace ember
