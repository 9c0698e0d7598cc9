// Indexing and splitting ops (dtype-agnostic byte copies), with TensorFlow's semantics:
// Slice, StridedSlice (begin/end/ellipsis/new_axis/shrink_axis masks), GatherV2 (axis,
// batch_dims), Pack, Unpack, Split, SplitV, Tile, ReverseV2.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/op_kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/op_util.h"

namespace ember {
namespace kernels {
namespace {

using oputil::FixedArg;
using oputil::Product;
using oputil::RegisterCpu;
using oputil::RegisterOp;
using oputil::Strides;
using oputil::TypedArg;

using Bytes = unsigned char;

// out[i...] = in[begin + i * stride] over every dim (byte copies of `elem` bytes).
void StridedCopy(const Bytes* in, const std::vector<int64_t>& in_dims,
                 const std::vector<int64_t>& begin, const std::vector<int64_t>& stride,
                 const std::vector<int64_t>& out_dims, size_t elem, Bytes* out) {
  const int64_t total = Product(out_dims);
  if (total == 0) return;
  const size_t rank = out_dims.size();
  if (rank == 0) {
    std::memcpy(out, in, elem);
    return;
  }
  const std::vector<int64_t> in_strides = Strides(in_dims);
  int64_t base = 0;
  for (size_t d = 0; d < rank; ++d) base += begin[d] * in_strides[d];
  std::vector<int64_t> step(rank);
  for (size_t d = 0; d < rank; ++d) step[d] = stride[d] * in_strides[d];
  const int64_t inner = out_dims[rank - 1];
  const bool contiguous = stride[rank - 1] == 1;
  std::vector<int64_t> idx(rank, 0);
  int64_t src = base;
  for (int64_t row = 0; row < total / inner; ++row) {
    Bytes* o = out + static_cast<size_t>(row * inner) * elem;
    if (contiguous) {
      std::memcpy(o, in + static_cast<size_t>(src) * elem, static_cast<size_t>(inner) * elem);
    } else {
      for (int64_t j = 0; j < inner; ++j) {
        std::memcpy(o + static_cast<size_t>(j) * elem,
                    in + static_cast<size_t>(src + j * step[rank - 1]) * elem, elem);
      }
    }
    for (size_t d = rank - 1; d-- > 0;) {
      src += step[d];
      if (++idx[d] < out_dims[d]) break;
      src -= step[d] * out_dims[d];
      idx[d] = 0;
    }
  }
}

// ---- Slice ----
Status SliceGeometry(const NodeDef& node, const std::vector<int64_t>& in,
                     const std::vector<int64_t>& begin, std::vector<int64_t> size,
                     std::vector<int64_t>* out) {
  if (begin.size() != in.size() || size.size() != in.size()) {
    return InvalidArg(node, "Expected begin and size arguments to be 1-D tensors of size " +
                                std::to_string(in.size()) + ", but got shapes [" +
                                std::to_string(begin.size()) + "] and [" +
                                std::to_string(size.size()) + "] instead.");
  }
  for (size_t d = 0; d < in.size(); ++d) {
    if (size[d] == -1) size[d] = in[d] - begin[d];
    if (begin[d] < 0 || size[d] < 0 || begin[d] + size[d] > in[d]) {
      return InvalidArg(node, "Expected begin[" + std::to_string(d) + "] in [0, " +
                                  std::to_string(in[d]) + "], and size[" + std::to_string(d) +
                                  "] in [0, " + std::to_string(in[d] - begin[d]) + "], but got " +
                                  std::to_string(begin[d]) + " and " + std::to_string(size[d]));
    }
  }
  *out = size;
  return Status::OK();
}

class SliceOp : public OpKernel {
 public:
  explicit SliceOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    std::vector<int64_t> begin, size, out_dims;
    EMBER_OP_REQUIRES_OK(ctx, ReadIndexVector(ctx->node(), ctx->input(1), "begin", &begin));
    EMBER_OP_REQUIRES_OK(ctx, ReadIndexVector(ctx->node(), ctx->input(2), "size", &size));
    if (in.dims() == 0 && begin.empty() && size.empty()) {
      ctx->set_output(0, in);
      return;
    }
    EMBER_OP_REQUIRES_OK(
        ctx, SliceGeometry(ctx->node(), in.shape().dim_sizes(), begin, size, &out_dims));
    Tensor* out = nullptr;
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(out_dims), &out));
    StridedCopy(static_cast<const Bytes*>(in.raw_data()), in.shape().dim_sizes(), begin,
                std::vector<int64_t>(begin.size(), 1), out_dims, DataTypeSize(in.dtype()),
                static_cast<Bytes*>(out->raw_data()));
  }
};

// ---- StridedSlice ----
struct StridedSliceSpec {
  int64_t begin_mask = 0, end_mask = 0, ellipsis_mask = 0, new_axis_mask = 0, shrink_axis_mask = 0;
};

Status ReadSpec(const AttrReader& a, StridedSliceSpec* s) {
  EMBER_RETURN_IF_ERROR(a.GetOr<int64_t>("begin_mask", &s->begin_mask, 0));
  EMBER_RETURN_IF_ERROR(a.GetOr<int64_t>("end_mask", &s->end_mask, 0));
  EMBER_RETURN_IF_ERROR(a.GetOr<int64_t>("ellipsis_mask", &s->ellipsis_mask, 0));
  EMBER_RETURN_IF_ERROR(a.GetOr<int64_t>("new_axis_mask", &s->new_axis_mask, 0));
  EMBER_RETURN_IF_ERROR(a.GetOr<int64_t>("shrink_axis_mask", &s->shrink_axis_mask, 0));
  return Status::OK();
}

// TensorFlow's ValidateStridedSliceOp: the dense begin/stride/size over the input's dims and
// the final output shape.
Status StridedSliceGeometry(const NodeDef& node, const StridedSliceSpec& spec,
                            const std::vector<int64_t>& in, std::vector<int64_t> begin,
                            std::vector<int64_t> end, std::vector<int64_t> stride,
                            std::vector<int64_t>* dense_begin, std::vector<int64_t>* dense_stride,
                            std::vector<int64_t>* dense_size, std::vector<int64_t>* final_dims) {
  if (begin.size() != end.size() || begin.size() != stride.size()) {
    return InvalidArg(node,
                      "Expected begin, end, and strides to be 1D equal size tensors, but "
                      "got shapes [" +
                          std::to_string(begin.size()) + "], [" + std::to_string(end.size()) +
                          "], and [" + std::to_string(stride.size()) + "] instead.");
  }
  if (begin.size() > 32) return InvalidArg(node, "StridedSlice supports at most 32 dimensions");
  int64_t ellipsis = spec.ellipsis_mask;
  size_t sparse_dims = begin.size();
  if (ellipsis == 0) {  // an implicit ellipsis at the end
    ellipsis = int64_t{1} << sparse_dims;
    ++sparse_dims;
    begin.push_back(0);
    end.push_back(0);
    stride.push_back(1);
  }
  int num_add_axis_after_ellipsis = 0;
  bool seen = false;
  for (size_t i = 0; i < sparse_dims; ++i) {
    if (seen && ((spec.new_axis_mask >> i) & 1)) ++num_add_axis_after_ellipsis;
    if ((ellipsis >> i) & 1) {
      if (seen) return InvalidArg(node, "Multiple ellipses in slice spec not allowed");
      seen = true;
    }
  }
  const int64_t rank = static_cast<int64_t>(in.size());
  constexpr int64_t kNewAxis = -1, kShrink = -2;
  std::vector<int64_t> db(in.size(), 0), de(in.size(), 0), ds(in.size(), 1);
  std::vector<bool> bm(in.size(), false), em(in.size(), false), sm(in.size(), false);
  std::vector<int64_t> gather;
  int64_t full = 0;
  for (size_t i = 0; i < sparse_dims; ++i) {
    if ((ellipsis >> i) & 1) {
      const int64_t next = std::min<int64_t>(
          rank - static_cast<int64_t>(sparse_dims - i) + 1 + num_add_axis_after_ellipsis, rank);
      for (; full < next; ++full) {
        bm[static_cast<size_t>(full)] = em[static_cast<size_t>(full)] = true;
        gather.push_back(full);
      }
    } else if ((spec.new_axis_mask >> i) & 1) {
      gather.push_back(kNewAxis);
    } else {
      if (full == rank) {
        return InvalidArg(node, "Index out of range using input dim " + std::to_string(full) +
                                    "; input has only " + std::to_string(rank) + " dims");
      }
      const size_t f = static_cast<size_t>(full);
      db[f] = begin[i];
      de[f] = end[i];
      ds[f] = stride[i];
      bm[f] = (spec.begin_mask >> i) & 1;
      em[f] = (spec.end_mask >> i) & 1;
      sm[f] = (spec.shrink_axis_mask >> i) & 1;
      gather.push_back(sm[f] ? kShrink : full);
      ++full;
    }
  }
  std::vector<int64_t> proc(in.size());
  for (size_t d = 0; d < in.size(); ++d) {
    const int64_t n = in[d];
    int64_t s = ds[d];
    if (s == 0) {
      return InvalidArg(node, "strides[" + std::to_string(d) + "] must be non-zero");
    }
    if (sm[d]) {
      if (s <= 0) return InvalidArg(node, "only stride 1 allowed on non-range indexing.");
      const int64_t x = db[d] < 0 ? n + db[d] : db[d];
      if (x < 0 || x >= n) {
        return InvalidArg(node, "slice index " + std::to_string(db[d]) + " of dimension " +
                                    std::to_string(d) + " out of bounds.");
      }
      db[d] = x;
      ds[d] = 1;
      proc[d] = 1;
      continue;
    }
    const int64_t lo = s > 0 ? 0 : -1, hi = s > 0 ? n : n - 1;
    auto canonical = [&](int64_t x, bool masked, bool is_end) {
      if (masked) return (s > 0) != is_end ? lo : hi;
      const int64_t fwd = x < 0 ? n + x : x;
      return fwd < lo ? lo : (fwd > hi ? hi : fwd);
    };
    const int64_t b = canonical(db[d], bm[d], false);
    const int64_t e = canonical(de[d], em[d], true);
    db[d] = b;
    const int64_t len = e - b;
    if (len == 0 || ((len < 0) != (s < 0))) {
      proc[d] = 0;
    } else {
      proc[d] = len / s + (len % s != 0 ? 1 : 0);
    }
  }
  final_dims->clear();
  for (int64_t g : gather) {
    if (g == kNewAxis) {
      final_dims->push_back(1);
    } else if (g >= 0) {
      final_dims->push_back(proc[static_cast<size_t>(g)]);
    }
  }
  *dense_begin = db;
  *dense_stride = ds;
  *dense_size = proc;
  return Status::OK();
}

class StridedSliceOp : public OpKernel {
 public:
  explicit StridedSliceOp(OpKernelConstruction* c) : OpKernel(c) {
    Status s = ReadSpec(c->attrs(), &spec_);
    if (!s.ok()) c->SetStatus(s);
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    std::vector<int64_t> begin, end, stride, db, ds, dsize, final_dims;
    EMBER_OP_REQUIRES_OK(ctx, ReadIndexVector(ctx->node(), ctx->input(1), "begin", &begin));
    EMBER_OP_REQUIRES_OK(ctx, ReadIndexVector(ctx->node(), ctx->input(2), "end", &end));
    EMBER_OP_REQUIRES_OK(ctx, ReadIndexVector(ctx->node(), ctx->input(3), "strides", &stride));
    EMBER_OP_REQUIRES_OK(
        ctx, StridedSliceGeometry(ctx->node(), spec_, in.shape().dim_sizes(), begin, end, stride,
                                  &db, &ds, &dsize, &final_dims));
    Tensor* out = nullptr;
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(final_dims), &out));
    StridedCopy(static_cast<const Bytes*>(in.raw_data()), in.shape().dim_sizes(), db, ds, dsize,
                DataTypeSize(in.dtype()), static_cast<Bytes*>(out->raw_data()));
  }

 private:
  StridedSliceSpec spec_;
};

Status StridedSliceShape(ShapeContext* c) {
  c->output_shapes.assign(1, UnknownShape());
  std::vector<int64_t> b, e, s, db, ds, dsize, out;
  if (!oputil::FullyKnown(c, 0) || !oputil::ConstVector(c, 1, &b) ||
      !oputil::ConstVector(c, 2, &e) || !oputil::ConstVector(c, 3, &s)) {
    return Status::OK();
  }
  StridedSliceSpec spec;
  EMBER_RETURN_IF_ERROR(ReadSpec(AttrReader(*c->node), &spec));
  EMBER_RETURN_IF_ERROR(StridedSliceGeometry(*c->node, spec, c->input_shapes[0].dims, b, e, s, &db,
                                             &ds, &dsize, &out));
  c->output_shapes[0] = KnownShape(out);
  return Status::OK();
}

// ---- GatherV2 ----
class GatherOp : public OpKernel {
 public:
  GatherOp(OpKernelConstruction* c, bool v2) : OpKernel(c), v2_(v2) {
    Status s = c->attrs().GetOr<int64_t>("batch_dims", &batch_dims_, 0);
    if (!s.ok()) c->SetStatus(s);
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& params = ctx->input(0);
    const Tensor& indices = ctx->input(1);
    int64_t axis = 0;
    if (v2_)
      EMBER_OP_REQUIRES_OK(ctx, oputil::ReadScalarIndex(ctx->node(), ctx->input(2), "axis", &axis));
    const int64_t prank = params.dims(), irank = indices.dims();
    int64_t bd = batch_dims_;
    if (bd < 0) bd += irank;
    if (axis < 0) axis += prank;
    if (axis < 0 || axis >= prank || (prank == 0)) {
      ctx->SetStatus(InvalidArg(ctx->node(),
                                "Expected axis in the range [" + std::to_string(-prank) + ", " +
                                    std::to_string(prank) + "), but got " + std::to_string(axis)));
      return;
    }
    if (bd < 0 || bd > irank || bd > axis) {
      ctx->SetStatus(InvalidArg(ctx->node(), "batch_dims (" + std::to_string(batch_dims_) +
                                                 ") must be in [0, min(axis, rank(indices))]"));
      return;
    }
    for (int64_t d = 0; d < bd; ++d) {
      if (params.dim_size(static_cast<int>(d)) != indices.dim_size(static_cast<int>(d))) {
        ctx->SetStatus(InvalidArg(
            ctx->node(), "params.shape[" + std::to_string(d) +
                             "]: " + std::to_string(params.dim_size(static_cast<int>(d))) +
                             " should be equal to indices.shape[" + std::to_string(d) +
                             "]: " + std::to_string(indices.dim_size(static_cast<int>(d)))));
        return;
      }
    }
    std::vector<int64_t> out_dims;
    int64_t batch = 1, outer = 1, inner = 1, per_batch = 1;
    for (int64_t d = 0; d < axis; ++d) {
      const int64_t n = params.dim_size(static_cast<int>(d));
      out_dims.push_back(n);
      (d < bd ? batch : outer) *= n;
    }
    for (int64_t d = bd; d < irank; ++d) {
      out_dims.push_back(indices.dim_size(static_cast<int>(d)));
      per_batch *= indices.dim_size(static_cast<int>(d));
    }
    for (int64_t d = axis + 1; d < prank; ++d) {
      out_dims.push_back(params.dim_size(static_cast<int>(d)));
      inner *= params.dim_size(static_cast<int>(d));
    }
    const int64_t limit = params.dim_size(static_cast<int>(axis));
    std::vector<int64_t> idx;
    EMBER_OP_REQUIRES_OK(
        ctx, ReadIndexVector(ctx->node(),
                             indices.NumElements() == 0 || irank <= 1 ? indices : Flat(indices),
                             "indices", &idx));
    for (size_t i = 0; i < idx.size(); ++i) {
      if (idx[i] < 0 || idx[i] >= limit) {
        ctx->SetStatus(InvalidArg(ctx->node(),
                                  "indices[" + std::to_string(i) + "] = " + std::to_string(idx[i]) +
                                      " is not in [0, " + std::to_string(limit) + ")"));
        return;
      }
    }
    Tensor* out = nullptr;
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(out_dims), &out));
    const size_t row = static_cast<size_t>(inner) * DataTypeSize(params.dtype());
    const auto* src = static_cast<const Bytes*>(params.raw_data());
    auto* dst = static_cast<Bytes*>(out->raw_data());
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t o = 0; o < outer; ++o) {
        const Bytes* base = src + static_cast<size_t>((b * outer + o) * limit) * row;
        for (int64_t i = 0; i < per_batch; ++i) {
          std::memcpy(dst,
                      base + static_cast<size_t>(idx[static_cast<size_t>(b * per_batch + i)]) * row,
                      row);
          dst += row;
        }
      }
    }
  }

 private:
  static Tensor Flat(const Tensor& t) {
    Tensor f;
    f.CopyFrom(t, TensorShape({t.NumElements()}));
    return f;
  }
  bool v2_;
  int64_t batch_dims_ = 0;
};

Status GatherShape(ShapeContext* c) {
  c->output_shapes.assign(1, UnknownShape());
  std::vector<int64_t> axis_v;
  if (!oputil::KnownRank(c, 0) || !oputil::KnownRank(c, 1)) return Status::OK();
  int64_t axis = 0;
  if (c->input_shapes.size() > 2) {
    if (!oputil::ConstVector(c, 2, &axis_v) || axis_v.size() != 1) return Status::OK();
    axis = axis_v[0];
  }
  const auto& p = c->input_shapes[0].dims;
  const auto& ix = c->input_shapes[1].dims;
  int64_t bd = 0;
  EMBER_RETURN_IF_ERROR(AttrReader(*c->node).GetOr<int64_t>("batch_dims", &bd, 0));
  if (bd < 0) bd += static_cast<int64_t>(ix.size());
  if (!oputil::NormalizeAxis(&axis, static_cast<int64_t>(p.size()))) {
    return InvalidArg(*c->node, "Expected axis in the range [" +
                                    std::to_string(-static_cast<int64_t>(p.size())) + ", " +
                                    std::to_string(p.size()) + "), but got " +
                                    std::to_string(axis_v.empty() ? 0 : axis_v[0]));
  }
  std::vector<int64_t> out(p.begin(), p.begin() + axis);
  out.insert(out.end(), ix.begin() + std::min<int64_t>(bd, static_cast<int64_t>(ix.size())),
             ix.end());
  out.insert(out.end(), p.begin() + axis + 1, p.end());
  c->output_shapes[0] = KnownShape(out);
  return Status::OK();
}

// ---- Pack / Unpack ----
class PackOp : public OpKernel {
 public:
  explicit PackOp(OpKernelConstruction* c) : OpKernel(c) {
    Status s = c->attrs().GetOr<int64_t>("axis", &axis_, 0);
    if (!s.ok()) c->SetStatus(s);
  }
  void Compute(OpKernelContext* ctx) override {
    const int n = ctx->num_inputs();
    const Tensor& first = ctx->input(0);
    const int64_t rank = first.dims();
    int64_t axis = axis_ < 0 ? axis_ + rank + 1 : axis_;
    if (axis < 0 || axis > rank) {
      ctx->SetStatus(InvalidArg(ctx->node(), "axis = " + std::to_string(axis_) + " not in [" +
                                                 std::to_string(-rank - 1) + ", " +
                                                 std::to_string(rank + 1) + ")"));
      return;
    }
    for (int i = 1; i < n; ++i) {
      if (ctx->input(i).shape() != first.shape()) {
        ctx->SetStatus(InvalidArg(
            ctx->node(), "Shapes of all inputs must match: values[0].shape = " +
                             first.shape().DebugString() + " != values[" + std::to_string(i) +
                             "].shape = " + ctx->input(i).shape().DebugString()));
        return;
      }
    }
    std::vector<int64_t> dims = first.shape().dim_sizes();
    dims.insert(dims.begin() + axis, n);
    Tensor* out = nullptr;
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(dims), &out));
    int64_t outer = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= dims[static_cast<size_t>(d)];
    const size_t chunk =
        outer == 0 ? 0
                   : static_cast<size_t>(first.NumElements() / outer) * DataTypeSize(first.dtype());
    auto* dst = static_cast<Bytes*>(out->raw_data());
    for (int64_t o = 0; o < outer; ++o) {
      for (int i = 0; i < n; ++i) {
        std::memcpy(dst, static_cast<const Bytes*>(ctx->input(i).raw_data()) + o * chunk, chunk);
        dst += chunk;
      }
    }
  }

 private:
  int64_t axis_ = 0;
};

Status PackShape(ShapeContext* c) {
  c->output_shapes.assign(1, UnknownShape());
  if (!oputil::KnownRank(c, 0)) return Status::OK();
  int64_t axis = 0;
  EMBER_RETURN_IF_ERROR(AttrReader(*c->node).GetOr<int64_t>("axis", &axis, 0));
  std::vector<int64_t> dims = c->input_shapes[0].dims;
  const int64_t rank = static_cast<int64_t>(dims.size());
  if (axis < 0) axis += rank + 1;
  if (axis < 0 || axis > rank) return InvalidArg(*c->node, "Pack axis out of range");
  dims.insert(dims.begin() + axis, static_cast<int64_t>(c->input_shapes.size()));
  c->output_shapes[0] = KnownShape(dims);
  return Status::OK();
}

// Splits `in` along `axis` into pieces of `sizes`; outputs 0..n-1.
void SplitInto(OpKernelContext* ctx, const Tensor& in, int64_t axis,
               const std::vector<int64_t>& sizes) {
  const std::vector<int64_t>& dims = in.shape().dim_sizes();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= dims[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(axis) + 1; d < dims.size(); ++d) inner *= dims[d];
  const size_t elem = DataTypeSize(in.dtype());
  const int64_t axis_len = dims[static_cast<size_t>(axis)];
  int64_t offset = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::vector<int64_t> od = dims;
    od[static_cast<size_t>(axis)] = sizes[i];
    Tensor* out = nullptr;
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output(static_cast<int>(i), TensorShape(od), &out));
    const size_t chunk = static_cast<size_t>(sizes[i] * inner) * elem;
    for (int64_t o = 0; o < outer; ++o) {
      std::memcpy(static_cast<Bytes*>(out->raw_data()) + o * chunk,
                  static_cast<const Bytes*>(in.raw_data()) +
                      static_cast<size_t>((o * axis_len + offset) * inner) * elem,
                  chunk);
    }
    offset += sizes[i];
  }
}

class UnpackOp : public OpKernel {
 public:
  explicit UnpackOp(OpKernelConstruction* c) : OpKernel(c) {
    Status s = c->attrs().GetOr<int64_t>("axis", &axis_, 0);
    if (s.ok()) s = c->GetAttr("num", &num_);
    if (!s.ok()) c->SetStatus(s);
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    int64_t axis = axis_;
    if (!oputil::NormalizeAxis(&axis, in.dims())) {
      ctx->SetStatus(InvalidArg(ctx->node(), "axis = " + std::to_string(axis_) + " not in [" +
                                                 std::to_string(-in.dims()) + ", " +
                                                 std::to_string(in.dims()) + ")"));
      return;
    }
    if (in.dim_size(static_cast<int>(axis)) != num_) {
      ctx->SetStatus(InvalidArg(ctx->node(), "Input shape axis " + std::to_string(axis) +
                                                 " must equal " + std::to_string(num_) +
                                                 ", got shape " + in.shape().DebugString()));
      return;
    }
    std::vector<int64_t> dims = in.shape().dim_sizes();
    SplitInto(ctx, in, axis, std::vector<int64_t>(static_cast<size_t>(num_), 1));
    dims.erase(dims.begin() + axis);
    for (int i = 0; i < ctx->num_outputs() && ctx->status().ok(); ++i) {
      Tensor t;
      t.CopyFrom(*ctx->mutable_output(i), TensorShape(dims));
      ctx->set_output(i, t);
    }
  }

 private:
  int64_t axis_ = 0, num_ = 0;
};

class SplitOp : public OpKernel {
 public:
  SplitOp(OpKernelConstruction* c, bool v) : OpKernel(c), v_(v) {
    Status s = c->GetAttr("num_split", &num_);
    if (!s.ok()) c->SetStatus(s);
  }
  void Compute(OpKernelContext* ctx) override {
    // Split(split_dim, value); SplitV(value, size_splits, split_dim).
    const Tensor& in = ctx->input(v_ ? 0 : 1);
    int64_t axis = 0;
    EMBER_OP_REQUIRES_OK(
        ctx, oputil::ReadScalarIndex(ctx->node(), ctx->input(v_ ? 2 : 0), "split_dim", &axis));
    const int64_t given = axis;
    if (!oputil::NormalizeAxis(&axis, in.dims())) {
      ctx->SetStatus(InvalidArg(ctx->node(), "-input rank(-" + std::to_string(in.dims()) +
                                                 ") <= split_dim < input rank (" +
                                                 std::to_string(in.dims()) + "), but got " +
                                                 std::to_string(given)));
      return;
    }
    const int64_t len = in.dim_size(static_cast<int>(axis));
    std::vector<int64_t> sizes;
    if (!v_) {
      if (num_ <= 0 || len % num_ != 0) {
        ctx->SetStatus(InvalidArg(ctx->node(),
                                  "Number of ways to split should evenly divide the "
                                  "split dimension, but got split_dim " +
                                      std::to_string(given) + " (size = " + std::to_string(len) +
                                      ") and num_split " + std::to_string(num_)));
        return;
      }
      sizes.assign(static_cast<size_t>(num_), len / num_);
    } else {
      EMBER_OP_REQUIRES_OK(ctx, ReadIndexVector(ctx->node(), ctx->input(1), "size_splits", &sizes));
      int unknown = -1;
      int64_t sum = 0;
      for (size_t i = 0; i < sizes.size(); ++i) {
        if (sizes[i] == -1 && unknown < 0) {
          unknown = static_cast<int>(i);
        } else {
          sum += sizes[i];
        }
      }
      if (unknown >= 0) sizes[static_cast<size_t>(unknown)] = len - sum;
      int64_t total = 0;
      bool bad = static_cast<int64_t>(sizes.size()) != num_;
      for (int64_t s : sizes) {
        bad = bad || s < 0;
        total += s;
      }
      if (bad || total != len) {
        ctx->SetStatus(InvalidArg(ctx->node(),
                                  "Determined shape must either match input shape "
                                  "along split_dim exactly if fully specified, or "
                                  "be less than the size of the input along "
                                  "split_dim if not fully specified.  Got: " +
                                      std::to_string(total)));
        return;
      }
    }
    SplitInto(ctx, in, axis, sizes);
  }

 private:
  bool v_;
  int64_t num_ = 0;
};

// ---- Tile ----
class TileOp : public OpKernel {
 public:
  explicit TileOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    std::vector<int64_t> mult;
    EMBER_OP_REQUIRES_OK(ctx, ReadIndexVector(ctx->node(), ctx->input(1), "multiples", &mult));
    if (static_cast<int>(mult.size()) != in.dims()) {
      ctx->SetStatus(InvalidArg(ctx->node(),
                                "Expected multiples argument to be a vector of "
                                "length " +
                                    std::to_string(in.dims()) + " but got length " +
                                    std::to_string(mult.size())));
      return;
    }
    std::vector<int64_t> dims = in.shape().dim_sizes(), out_dims;
    for (size_t d = 0; d < dims.size(); ++d) {
      if (mult[d] < 0) {
        ctx->SetStatus(InvalidArg(ctx->node(), "Expected multiples[" + std::to_string(d) +
                                                   "] >= 0, but got " + std::to_string(mult[d])));
        return;
      }
      out_dims.push_back(dims[d] * mult[d]);
    }
    Tensor* out = nullptr;
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(out_dims), &out));
    const int64_t total = Product(out_dims);
    if (total == 0) return;
    if (dims.empty()) {
      std::memcpy(out->raw_data(), in.raw_data(), in.TotalBytes());
      return;
    }
    const size_t elem = DataTypeSize(in.dtype());
    const std::vector<int64_t> is = Strides(dims);
    const auto* src = static_cast<const Bytes*>(in.raw_data());
    auto* dst = static_cast<Bytes*>(out->raw_data());
    const size_t rank = dims.size();
    std::vector<int64_t> idx(rank, 0);
    for (int64_t i = 0; i < total; ++i) {
      int64_t s = 0;
      for (size_t d = 0; d < rank; ++d) s += (idx[d] % dims[d]) * is[d];
      std::memcpy(dst + static_cast<size_t>(i) * elem, src + static_cast<size_t>(s) * elem, elem);
      for (size_t d = rank; d-- > 0;) {
        if (++idx[d] < out_dims[d]) break;
        idx[d] = 0;
      }
    }
  }
};

// ---- ReverseV2 ----
class ReverseOp : public OpKernel {
 public:
  explicit ReverseOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    std::vector<int64_t> axes;
    EMBER_OP_REQUIRES_OK(ctx, ReadIndexVector(ctx->node(), ctx->input(1), "axis", &axes));
    std::vector<int64_t> dims = in.shape().dim_sizes(), begin(dims.size(), 0),
                         stride(dims.size(), 1);
    for (int64_t a : axes) {
      int64_t ax = a;
      if (!oputil::NormalizeAxis(&ax, in.dims())) {
        ctx->SetStatus(InvalidArg(ctx->node(), "'axis'[" + std::to_string(a) + "] = " +
                                                   std::to_string(a) + " is out of valid range"));
        return;
      }
      begin[static_cast<size_t>(ax)] = dims[static_cast<size_t>(ax)] - 1;
      stride[static_cast<size_t>(ax)] = -1;
    }
    Tensor* out = nullptr;
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, in.shape(), &out));
    StridedCopy(static_cast<const Bytes*>(in.raw_data()), dims, begin, stride, dims,
                DataTypeSize(in.dtype()), static_cast<Bytes*>(out->raw_data()));
  }
};

[[maybe_unused]] const bool kRegistered = [] {
  RegisterOp(
      "Slice", {TypedArg("input", "T"), TypedArg("begin", "Index"), TypedArg("size", "Index")},
      {TypedArg("output", "T")}, [](ShapeContext* c) {
        c->output_shapes.assign(1, UnknownShape());
        std::vector<int64_t> b, s, out;
        if (oputil::FullyKnown(c, 0) && oputil::ConstVector(c, 1, &b) &&
            oputil::ConstVector(c, 2, &s)) {
          EMBER_RETURN_IF_ERROR(SliceGeometry(*c->node, c->input_shapes[0].dims, b, s, &out));
          c->output_shapes[0] = KnownShape(out);
        }
        return Status::OK();
      });
  RegisterCpu<SliceOp>("Slice");
  RegisterOp("StridedSlice",
             {TypedArg("input", "T"), TypedArg("begin", "Index"), TypedArg("end", "Index"),
              TypedArg("strides", "Index")},
             {TypedArg("output", "T")}, StridedSliceShape);
  RegisterCpu<StridedSliceOp>("StridedSlice");
  RegisterOp(
      "GatherV2",
      {TypedArg("params", "Tparams"), TypedArg("indices", "Tindices"), TypedArg("axis", "Taxis")},
      {TypedArg("output", "Tparams")}, GatherShape);
  KernelRegistry::Global()->Register("GatherV2", "CPU", [](OpKernelConstruction* c) {
    return std::unique_ptr<OpKernel>(new GatherOp(c, true));
  });
  RegisterOp("Gather", {TypedArg("params", "Tparams"), TypedArg("indices", "Tindices")},
             {TypedArg("output", "Tparams")}, GatherShape);
  KernelRegistry::Global()->Register("Gather", "CPU", [](OpKernelConstruction* c) {
    return std::unique_ptr<OpKernel>(new GatherOp(c, false));
  });
  RegisterOp("Pack", {TypedArg("values", "T", "N")}, {TypedArg("output", "T")}, PackShape);
  RegisterCpu<PackOp>("Pack");
  RegisterOp("Unpack", {TypedArg("value", "T")}, {TypedArg("output", "T", "num")},
             [](ShapeContext* c) {
               int64_t num = 0, axis = 0;
               AttrReader a(*c->node);
               EMBER_RETURN_IF_ERROR(a.Get("num", &num));
               EMBER_RETURN_IF_ERROR(a.GetOr<int64_t>("axis", &axis, 0));
               PartialShape s = UnknownShape();
               if (oputil::KnownRank(c, 0)) {
                 std::vector<int64_t> d = c->input_shapes[0].dims;
                 if (!oputil::NormalizeAxis(&axis, static_cast<int64_t>(d.size()))) {
                   return InvalidArg(*c->node, "Unpack axis out of range");
                 }
                 d.erase(d.begin() + axis);
                 s = KnownShape(d);
               }
               c->output_shapes.assign(static_cast<size_t>(num), s);
               return Status::OK();
             });
  RegisterCpu<UnpackOp>("Unpack");
  auto split_shape = [](ShapeContext* c) {
    int64_t num = 0;
    EMBER_RETURN_IF_ERROR(AttrReader(*c->node).Get("num_split", &num));
    c->output_shapes.assign(static_cast<size_t>(std::max<int64_t>(num, 0)), UnknownShape());
    return Status::OK();
  };
  RegisterOp("Split", {FixedArg("split_dim", DataType::kInt32), TypedArg("value", "T")},
             {TypedArg("output", "T", "num_split")}, split_shape);
  KernelRegistry::Global()->Register("Split", "CPU", [](OpKernelConstruction* c) {
    return std::unique_ptr<OpKernel>(new SplitOp(c, false));
  });
  RegisterOp("SplitV",
             {TypedArg("value", "T"), TypedArg("size_splits", "Tlen"),
              FixedArg("split_dim", DataType::kInt32)},
             {TypedArg("output", "T", "num_split")}, split_shape);
  KernelRegistry::Global()->Register("SplitV", "CPU", [](OpKernelConstruction* c) {
    return std::unique_ptr<OpKernel>(new SplitOp(c, true));
  });
  RegisterOp("Tile", {TypedArg("input", "T"), TypedArg("multiples", "Tmultiples")},
             {TypedArg("output", "T")}, [](ShapeContext* c) {
               c->output_shapes.assign(1, UnknownShape());
               std::vector<int64_t> m;
               if (oputil::KnownRank(c, 0) && oputil::ConstVector(c, 1, &m) &&
                   m.size() == c->input_shapes[0].dims.size()) {
                 std::vector<int64_t> d = c->input_shapes[0].dims;
                 for (size_t i = 0; i < d.size(); ++i) d[i] = d[i] < 0 ? -1 : d[i] * m[i];
                 c->output_shapes[0] = KnownShape(d);
               }
               return Status::OK();
             });
  RegisterCpu<TileOp>("Tile");
  RegisterOp("ReverseV2", {TypedArg("tensor", "T"), TypedArg("axis", "Tidx")},
             {TypedArg("output", "T")}, UnchangedShape());
  RegisterCpu<ReverseOp>("ReverseV2");
  return true;
}();

}  // namespace
}  // namespace kernels
}  // namespace ember
