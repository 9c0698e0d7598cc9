// GatherNd, ScatterNd, TensorScatterUpdate and TensorScatterAdd with TensorFlow's semantics and
// validation messages (core/kernels/gather_nd_op.cc, scatter_nd_op.cc). Each row of `indices`
// (its last dim, of length ix) picks one slice of a tensor: the slice of its first ix dims. Out
// of range rows are errors, as on TensorFlow's CPU, unless bad_indices_policy is "IGNORE" (then
// they gather zeros and scatter nothing). ScatterNd and TensorScatterAdd add the updates of
// repeated rows; TensorScatterUpdate keeps the last one.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/op_kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/op_util.h"

namespace ember {
namespace kernels {
namespace {

using oputil::RegisterCpu;
using oputil::RegisterOp;
using oputil::TypedArg;
using Bytes = unsigned char;

// "[1,0]": the position of flat row `flat` in the outer dims of indices (TF's SliceDebugString).
std::string RowString(const std::vector<int64_t>& outer, int64_t flat) {
  if (outer.empty()) return "";
  const std::vector<int64_t> strides = oputil::Strides(outer);
  std::string s;
  for (size_t i = 0; i < outer.size(); ++i) {
    s += (i ? "," : "[") + std::to_string(strides[i] == 0 ? 0 : flat / strides[i]);
    if (strides[i] != 0) flat %= strides[i];
  }
  return s + "]";
}

// indices as rows of ix entries, with the flat slice offset of each row in `dims` (-1 when the
// row does not index into them).
struct IndexRows {
  std::vector<int64_t> outer;  // indices' shape without its last dim
  int64_t ix = 0;              // entries per row
  std::vector<int64_t> values;
  std::vector<int64_t> offsets;  // in slices
  int64_t first_bad = -1;
};

Status ReadIndexRows(const NodeDef& node, const Tensor& indices, const std::vector<int64_t>& dims,
                     IndexRows* r) {
  r->outer = indices.shape().dim_sizes();
  r->ix = r->outer.back();
  r->outer.pop_back();
  Tensor flat;
  flat.CopyFrom(indices, TensorShape({indices.NumElements()}));
  EMBER_RETURN_IF_ERROR(ReadIndexVector(node, flat, "indices", &r->values));
  const int64_t rows = oputil::Product(r->outer);
  r->offsets.assign(static_cast<size_t>(rows), 0);
  for (int64_t i = 0; i < rows; ++i) {
    int64_t off = 0;
    for (int64_t j = 0; j < r->ix; ++j) {
      const int64_t v = r->values[static_cast<size_t>(i * r->ix + j)];
      const int64_t d = dims[static_cast<size_t>(j)];
      if (v < 0 || v >= d) {
        off = -1;
        break;
      }
      off = off * d + v;
    }
    r->offsets[static_cast<size_t>(i)] = off;
    if (off < 0 && r->first_bad < 0) r->first_bad = i;
  }
  return Status::OK();
}

// "indices[1,0] = [0, 9]", the start of TensorFlow's out-of-range message.
std::string BadRow(const IndexRows& r) {
  std::string s = "indices" + RowString(r.outer, r.first_bad) + " = [";
  for (int64_t j = 0; j < r.ix; ++j) {
    if (j) s += ", ";
    s += std::to_string(r.values[static_cast<size_t>(r.first_bad * r.ix + j)]);
  }
  return s + "]";
}

Status ReadPolicy(OpKernelConstruction* c, bool* ignore) {
  std::string policy;
  EMBER_RETURN_IF_ERROR(c->attrs().GetOr("bad_indices_policy", &policy, std::string()));
  *ignore = policy == "IGNORE";
  if (policy.empty() || policy == "DEFAULT" || policy == "ERROR" || *ignore) return Status::OK();
  return InvalidArg(c->node(), "Invalid bad indices policy: " + policy);
}

class GatherNdOp : public OpKernel {
 public:
  explicit GatherNdOp(OpKernelConstruction* c) : OpKernel(c) {
    Status s = ReadPolicy(c, &ignore_);
    if (!s.ok()) c->SetStatus(s);
  }

  void Compute(OpKernelContext* ctx) override {
    const NodeDef& node = ctx->node();
    const Tensor& params = ctx->input(0);
    const Tensor& indices = ctx->input(1);
    if (params.dims() < 1) {
      ctx->SetStatus(InvalidArg(node, "params must be at least a vector"));
      return;
    }
    if (indices.dims() < 1) {
      ctx->SetStatus(InvalidArg(node, "indices must be at least a vector"));
      return;
    }
    const std::vector<int64_t>& pd = params.shape().dim_sizes();
    const int64_t ix = indices.dim_size(indices.dims() - 1);
    if (ix > params.dims()) {
      ctx->SetStatus(
          InvalidArg(node, "index innermost dimension length must be <= params rank; saw: " +
                               std::to_string(ix) + " vs. " + std::to_string(params.dims())));
      return;
    }
    std::vector<int64_t> od(indices.shape().dim_sizes());
    od.pop_back();
    const int64_t rows = oputil::Product(od);
    int64_t slice = 1;
    for (size_t d = static_cast<size_t>(ix); d < pd.size(); ++d) {
      od.push_back(pd[d]);
      slice *= pd[d];
    }
    if (rows > 0 && params.NumElements() == 0) {
      ctx->SetStatus(
          InvalidArg(node, "Requested more than 0 entries, but params is empty.  Params shape: " +
                               params.shape().DebugString()));
      return;
    }
    IndexRows r;
    EMBER_OP_REQUIRES_OK(ctx, ReadIndexRows(node, indices, pd, &r));
    if (r.first_bad >= 0 && !ignore_) {
      ctx->SetStatus(InvalidArg(node, BadRow(r) + " does not index into param shape " +
                                          params.shape().DebugString() +
                                          ", node name: " + node.name));
      return;
    }
    Tensor* out = nullptr;
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(od), &out));
    if (out->NumElements() == 0) return;
    const size_t bytes = static_cast<size_t>(slice) * DataTypeSize(params.dtype());
    const Bytes* src = static_cast<const Bytes*>(params.raw_data());
    Bytes* dst = static_cast<Bytes*>(out->raw_data());
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t off = r.offsets[static_cast<size_t>(i)];
      if (off >= 0) {
        std::memcpy(dst + static_cast<size_t>(i) * bytes, src + static_cast<size_t>(off) * bytes,
                    bytes);
      }
    }
  }

 private:
  bool ignore_ = false;
};

// Adds (or, for TensorScatterUpdate, assigns) each row's update slice into out.
void Scatter(const IndexRows& r, const Tensor& updates, bool add, int64_t slice, Tensor* out) {
  const size_t elem = DataTypeSize(updates.dtype());
  const size_t bytes = static_cast<size_t>(slice) * elem;
  const Bytes* src = static_cast<const Bytes*>(updates.raw_data());
  Bytes* dst = static_cast<Bytes*>(out->raw_data());
  for (size_t i = 0; i < r.offsets.size(); ++i) {
    const int64_t off = r.offsets[i];
    if (off < 0) continue;
    Bytes* d = dst + static_cast<size_t>(off) * bytes;
    const Bytes* s = src + i * bytes;
    if (!add) {
      std::memcpy(d, s, bytes);
      continue;
    }
    if (updates.dtype() == DataType::kBool) {
      for (size_t j = 0; j < bytes; ++j) d[j] = static_cast<Bytes>(d[j] | s[j]);
      continue;
    }
    DispatchNumeric(updates.dtype(), [&](auto tag) {
      using T = decltype(tag);
      T* dt = reinterpret_cast<T*>(d);
      const T* st = reinterpret_cast<const T*>(s);
      for (int64_t j = 0; j < slice; ++j) dt[j] = static_cast<T>(dt[j] + st[j]);
    });
  }
}

// TensorFlow's ValidEmptyOutputShape: indices and updates are both empty, or neither is and the
// output (for ScatterNd, its shape vector) is not.
bool ValidEmpty(int64_t inputs, int64_t indices, int64_t updates) {
  if (indices == 0 && updates == 0) return true;
  return inputs != 0 && indices != 0 && updates != 0;
}

// TensorFlow's first check in ScatterNd and TensorScatterUpdate/Add: indices and updates have
// rank one or more.
Status CheckScatterRanks(const NodeDef& node, const Tensor& indices, const Tensor& updates) {
  if (indices.dims() < 1) {
    return InvalidArg(
        node, "Indices shape must have rank at least one. Found:" + indices.shape().DebugString());
  }
  if (updates.dims() < 1) {
    return InvalidArg(
        node, "Updates shape must have rank at least one. Found:" + updates.shape().DebugString());
  }
  return Status::OK();
}

class ScatterNdOp : public OpKernel {
 public:
  explicit ScatterNdOp(OpKernelConstruction* c) : OpKernel(c) {
    Status s = ReadPolicy(c, &ignore_);
    if (!s.ok()) c->SetStatus(s);
    const DataType dt = c->input_types().size() < 2 ? DataType::kInvalid : c->input_types()[1];
    CheckTypeAllowed(c, "T", dt, DispatchPod(dt, [](auto) {}),
                     "float, double, int32, int64, int8, uint8, int16, bool");
  }

  void Compute(OpKernelContext* ctx) override {
    const NodeDef& node = ctx->node();
    const Tensor& indices = ctx->input(0);
    const Tensor& updates = ctx->input(1);
    const Tensor& shape_in = ctx->input(2);
    EMBER_OP_REQUIRES_OK(ctx, CheckScatterRanks(node, indices, updates));
    Tensor flat;
    flat.CopyFrom(shape_in, TensorShape({shape_in.NumElements()}));
    std::vector<int64_t> dims;
    EMBER_OP_REQUIRES_OK(ctx, ReadIndexVector(node, flat, "shape", &dims));
    for (int64_t d : dims) {
      if (d < 0) {
        ctx->SetStatus(InvalidArg(node, "Dimension " + std::to_string(d) + " must be >= 0"));
        return;
      }
    }
    const TensorShape shape(dims);
    if (!ValidEmpty(shape_in.NumElements(), indices.NumElements(), updates.NumElements())) {
      ctx->SetStatus(InvalidArg(node, "Indices and updates specified for empty output shape"));
      return;
    }
    const int64_t outer = indices.dims() - 1;
    for (int64_t i = 0; i < outer; ++i) {
      if (i >= updates.dims() ||
          indices.dim_size(static_cast<int>(i)) != updates.dim_size(static_cast<int>(i))) {
        ctx->SetStatus(InvalidArg(node, "Dimensions [0," + std::to_string(outer) +
                                            ") of indices[shape=" + indices.shape().DebugString() +
                                            "] must match dimensions [0," + std::to_string(outer) +
                                            ") of updates[shape=" + updates.shape().DebugString() +
                                            "]"));
        return;
      }
    }
    const int64_t ix = indices.dim_size(static_cast<int>(outer));
    const int64_t rank = static_cast<int64_t>(dims.size());
    bool inner_ok = updates.dims() - outer == rank - ix;
    for (int64_t i = 0; inner_ok && i + outer < updates.dims(); ++i) {
      inner_ok = updates.dim_size(static_cast<int>(i + outer)) == dims[static_cast<size_t>(ix + i)];
    }
    if (!inner_ok) {
      ctx->SetStatus(InvalidArg(
          node, "Dimensions [" + std::to_string(ix) + "," + std::to_string(rank) +
                    ") of input[shape=" + shape.DebugString() + "] must match dimensions [" +
                    std::to_string(outer) + "," + std::to_string(updates.dims()) +
                    ") of updates[shape=" + updates.shape().DebugString() + "]"));
      return;
    }
    if (shape_in.dims() != 1) {
      ctx->SetStatus(InvalidArg(node, "Shape must be a vector"));
      return;
    }
    Tensor* out = nullptr;
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    if (indices.NumElements() == 0 && updates.NumElements() == 0) return;
    if (shape.num_elements() == 0) {
      ctx->SetStatus(InvalidArg(node,
                                "Indices and updates specified for empty output.  indices "
                                "shape: " +
                                    indices.shape().DebugString()));
      return;
    }
    IndexRows r;
    EMBER_OP_REQUIRES_OK(ctx, ReadIndexRows(node, indices, dims, &r));
    if (r.first_bad >= 0 && !ignore_) {
      ctx->SetStatus(
          InvalidArg(node, BadRow(r) + " does not index into shape " + shape.DebugString()));
      return;
    }
    int64_t slice = 1;
    for (size_t d = static_cast<size_t>(ix); d < dims.size(); ++d) slice *= dims[d];
    Scatter(r, updates, /*add=*/true, slice, out);
  }

 private:
  bool ignore_ = false;
};

class TensorScatterOp : public OpKernel {
 public:
  explicit TensorScatterOp(OpKernelConstruction* c)
      : OpKernel(c), add_(c->node().op == "TensorScatterAdd") {
    Status s = ReadPolicy(c, &ignore_);
    if (!s.ok()) c->SetStatus(s);
    const DataType dt = c->input_types().empty() ? DataType::kInvalid : c->input_types()[0];
    if (add_) {
      CheckTypeAllowed(c, "T", dt, DispatchNumeric(dt, [](auto) {}),
                       "float, double, int32, int64, int8, uint8, int16");
    } else {
      CheckTypeAllowed(c, "T", dt, DispatchPod(dt, [](auto) {}),
                       "float, double, int32, int64, int8, uint8, int16, bool");
    }
  }

  void Compute(OpKernelContext* ctx) override {
    const NodeDef& node = ctx->node();
    const Tensor& in = ctx->input(0);
    const Tensor& indices = ctx->input(1);
    const Tensor& updates = ctx->input(2);
    EMBER_OP_REQUIRES_OK(ctx, CheckScatterRanks(node, indices, updates));
    if (updates.dtype() != in.dtype()) {
      ctx->SetStatus(InvalidArg(node, "updates is " + DataTypeString(updates.dtype()) +
                                          " but tensor is " + DataTypeString(in.dtype())));
      return;
    }
    if (!ValidEmpty(in.NumElements(), indices.NumElements(), updates.NumElements())) {
      ctx->SetStatus(InvalidArg(node, "Indices and updates specified for empty output shape"));
      return;
    }
    EMBER_OP_REQUIRES_OK(ctx, CheckShapes(node, in.shape(), indices.shape(), updates.shape()));
    Tensor* out = nullptr;
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output_uninitialized(0, in.shape(), &out));
    if (in.NumElements() == 0) return;
    std::memcpy(out->raw_data(), in.raw_data(), in.TotalBytes());
    if (indices.NumElements() == 0) return;
    const std::vector<int64_t>& dims = in.shape().dim_sizes();
    IndexRows r;
    EMBER_OP_REQUIRES_OK(ctx, ReadIndexRows(node, indices, dims, &r));
    if (r.first_bad >= 0 && !ignore_) {
      ctx->SetStatus(
          InvalidArg(node, BadRow(r) + " does not index into shape " + in.shape().DebugString()));
      return;
    }
    int64_t slice = 1;
    for (size_t d = static_cast<size_t>(r.ix); d < dims.size(); ++d) slice *= dims[d];
    Scatter(r, updates, add_, slice, out);
  }

 private:
  // TensorFlow's ScatterNdShapeHelper checks, with its messages.
  static Status CheckShapes(const NodeDef& node, const TensorShape& in, const TensorShape& indices,
                            const TensorShape& updates) {
    const int outer = indices.dims() - 1;
    const int64_t ix = indices.dim_size(outer);
    bool outer_ok = updates.dims() >= outer;
    for (int i = 0; outer_ok && i < outer; ++i) {
      outer_ok = indices.dim_size(i) == updates.dim_size(i);
    }
    if (!outer_ok) {
      return InvalidArg(node, "Outer dimensions of indices and update must match. Indices shape: " +
                                  indices.DebugString() +
                                  ", updates shape:" + updates.DebugString());
    }
    const int64_t inner = updates.dims() - outer;
    if (inner != in.dims() - ix) {
      return InvalidArg(node,
                        "Inner dimensions of output shape must match inner dimensions of updates "
                        "shape. Output: " +
                            in.DebugString() + " updates: " + updates.DebugString());
    }
    for (int64_t i = 0; i < inner; ++i) {
      if (updates.dim_size(static_cast<int>(outer + i)) != in.dim_size(static_cast<int>(ix + i))) {
        return InvalidArg(node, "The inner " + std::to_string(inner) +
                                    " dimensions of output.shape=" + in.DebugString() +
                                    " must match the inner " + std::to_string(inner) +
                                    " dimensions of updates.shape=" + updates.DebugString());
      }
    }
    return Status::OK();
  }

  bool add_;
  bool ignore_ = false;
};

// indices.shape[:-1] + params.shape[indices.shape[-1]:] when both are known.
Status GatherNdShape(ShapeContext* c) {
  c->output_shapes.assign(1, UnknownShape());
  if (!oputil::KnownRank(c, 0) || !oputil::KnownRank(c, 1)) return Status::OK();
  const std::vector<int64_t>& p = c->input_shapes[0].dims;
  std::vector<int64_t> d = c->input_shapes[1].dims;
  if (d.empty() || d.back() < 0 || d.back() > static_cast<int64_t>(p.size())) {
    return Status::OK();
  }
  const size_t ix = static_cast<size_t>(d.back());
  d.pop_back();
  d.insert(d.end(), p.begin() + static_cast<std::ptrdiff_t>(ix), p.end());
  c->output_shapes[0] = KnownShape(d);
  return Status::OK();
}

// The shape input's value when it is a known constant.
Status ScatterNdShape(ShapeContext* c) {
  c->output_shapes.assign(1, UnknownShape());
  std::vector<int64_t> dims;
  if (oputil::ConstVector(c, 2, &dims)) c->output_shapes[0] = KnownShape(dims);
  return Status::OK();
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterOp("GatherNd", {TypedArg("params", "Tparams"), TypedArg("indices", "Tindices")},
             {TypedArg("output", "Tparams")}, GatherNdShape);
  RegisterCpu<GatherNdOp>("GatherNd");
  RegisterOp(
      "ScatterNd",
      {TypedArg("indices", "Tindices"), TypedArg("updates", "T"), TypedArg("shape", "Tindices")},
      {TypedArg("output", "T")}, ScatterNdShape);
  RegisterCpu<ScatterNdOp>("ScatterNd");
  for (const char* op : {"TensorScatterUpdate", "TensorScatterAdd"}) {
    RegisterOp(op,
               {TypedArg("tensor", "T"), TypedArg("indices", "Tindices"), TypedArg("updates", "T")},
               {TypedArg("output", "T")}, UnchangedShape());
  }
  RegisterCpu<TensorScatterOp>("TensorScatterUpdate");
  RegisterCpu<TensorScatterOp>("TensorScatterAdd");
  return true;
}();

}  // namespace
}  // namespace kernels
}  // namespace ember
