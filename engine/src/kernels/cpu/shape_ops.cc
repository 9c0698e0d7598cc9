// Ops that only change a tensor's shape (the buffer is shared): Reshape, ExpandDims, Squeeze;
// and Shape, which reports it.
#include <memory>
#include <string>
#include <vector>

#include "core/op_kernel.h"
#include "kernels/cpu/kernel_util.h"

namespace ember {
namespace kernels {
namespace {

ArgDef Arg(const char* name, const char* type_attr) {
  ArgDef a;
  a.name = name;
  a.type_attr = type_attr;
  return a;
}

template <typename K>
void RegisterKernel(const char* op) {
  KernelRegistry::Global()->Register(
      op, "CPU", [](OpKernelConstruction* c) { return std::unique_ptr<OpKernel>(new K(c)); });
}

// Outputs `in` viewed with `dims` (same element count, checked by the caller).
void SetReshaped(OpKernelContext* ctx, const Tensor& in, std::vector<int64_t> dims) {
  Tensor out;
  if (!out.CopyFrom(in, TensorShape(std::move(dims)))) {
    ctx->SetStatus(NodeError(ctx->node(), Code::kInternal,
                             "reshape of " + in.shape().DebugString() + " failed"));
    return;
  }
  ctx->set_output(0, out);
}

// Resolves a Reshape target (at most one -1) against `n` elements, as TensorFlow does.
Status ResolveReshape(const NodeDef& node, int64_t n, std::vector<int64_t>* dims) {
  int unknown = -1;
  int64_t product = 1;
  for (size_t i = 0; i < dims->size(); ++i) {
    int64_t d = (*dims)[i];
    if (d == -1) {
      if (unknown >= 0) {
        return InvalidArg(node, "Only one input size may be -1, not both " +
                                    std::to_string(unknown) + " and " + std::to_string(i));
      }
      unknown = static_cast<int>(i);
    } else if (d < 0) {
      return InvalidArg(
          node, "Size " + std::to_string(i) + " must be non-negative, not " + std::to_string(d));
    } else {
      product *= d;
    }
  }
  if (unknown >= 0) {
    if (product == 0 || n % product != 0) {
      return InvalidArg(node, "Input to reshape is a tensor with " + std::to_string(n) +
                                  " values, but the requested shape requires a multiple of " +
                                  std::to_string(product));
    }
    (*dims)[static_cast<size_t>(unknown)] = n / product;
  } else if (product != n) {
    return InvalidArg(node, "Input to reshape is a tensor with " + std::to_string(n) +
                                " values, but the requested shape has " + std::to_string(product));
  }
  return Status::OK();
}

class ReshapeOp : public OpKernel {
 public:
  explicit ReshapeOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    std::vector<int64_t> dims;
    Status s = ReadIndexVector(ctx->node(), ctx->input(1), "shape", &dims);
    if (s.ok() && ctx->input(1).dims() != 1) {
      s = InvalidArg(ctx->node(), "shape must be a vector of {int32,int64}, got shape " +
                                      ctx->input(1).shape().DebugString());
    }
    if (s.ok()) s = ResolveReshape(ctx->node(), in.NumElements(), &dims);
    if (!s.ok()) {
      ctx->SetStatus(s);
      return;
    }
    SetReshaped(ctx, in, std::move(dims));
  }
};

class ExpandDimsOp : public OpKernel {
 public:
  explicit ExpandDimsOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    std::vector<int64_t> axis;
    Status s = ReadIndexVector(ctx->node(), ctx->input(1), "dim", &axis);
    if (s.ok() && axis.size() != 1) {
      s = InvalidArg(ctx->node(), "'dim' must be a tensor with a single value");
    }
    if (!s.ok()) {
      ctx->SetStatus(s);
      return;
    }
    const int64_t rank = in.dims();
    int64_t d = axis[0];
    if (d < -1 - rank || d > rank) {
      ctx->SetStatus(InvalidArg(ctx->node(), "Tried to expand dim index " + std::to_string(d) +
                                                 " for tensor with " + std::to_string(rank) +
                                                 " dimensions."));
      return;
    }
    if (d < 0) d += rank + 1;
    std::vector<int64_t> dims = in.shape().dim_sizes();
    dims.insert(dims.begin() + d, 1);
    SetReshaped(ctx, in, std::move(dims));
  }
};

class SqueezeOp : public OpKernel {
 public:
  explicit SqueezeOp(OpKernelConstruction* c) : OpKernel(c) {
    Status s = c->attrs().GetOr("squeeze_dims", &axes_, std::vector<int64_t>{});
    if (!s.ok()) c->SetStatus(s);
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const int64_t rank = in.dims();
    std::vector<bool> drop(static_cast<size_t>(rank), false);
    for (int64_t a : axes_) {
      if (a < -rank || a >= rank) {
        ctx->SetStatus(InvalidArg(ctx->node(), "Tried to squeeze dim index " + std::to_string(a) +
                                                   " for tensor with " + std::to_string(rank) +
                                                   " dimensions."));
        return;
      }
      int64_t d = a < 0 ? a + rank : a;
      if (in.dim_size(static_cast<int>(d)) != 1) {
        ctx->SetStatus(
            InvalidArg(ctx->node(), "Can not squeeze dim[" + std::to_string(d) +
                                        "], expected a dimension of 1, got " +
                                        std::to_string(in.dim_size(static_cast<int>(d)))));
        return;
      }
      drop[static_cast<size_t>(d)] = true;
    }
    std::vector<int64_t> dims;
    for (int64_t i = 0; i < rank; ++i) {
      int64_t size = in.dim_size(static_cast<int>(i));
      bool squeeze = axes_.empty() ? size == 1 : drop[static_cast<size_t>(i)];
      if (!squeeze) dims.push_back(size);
    }
    SetReshaped(ctx, in, std::move(dims));
  }

 private:
  std::vector<int64_t> axes_;
};

class ShapeOp : public OpKernel {
 public:
  explicit ShapeOp(OpKernelConstruction* c) : OpKernel(c) {
    out_type_ = c->output_types().empty() ? DataType::kInvalid : c->output_types()[0];
    CheckTypeAllowed(c, "out_type", out_type_,
                     out_type_ == DataType::kInt32 || out_type_ == DataType::kInt64,
                     "int32, int64");
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    Tensor* out = nullptr;
    Status s = ctx->allocate_output(0, TensorShape({in.dims()}), &out);
    if (!s.ok()) {
      ctx->SetStatus(s);
      return;
    }
    for (int i = 0; i < in.dims(); ++i) {
      if (out_type_ == DataType::kInt32) {
        out->data<int32_t>()[i] = static_cast<int32_t>(in.dim_size(i));
      } else {
        out->data<int64_t>()[i] = in.dim_size(i);
      }
    }
  }

 private:
  DataType out_type_;
};

// Reshape's output shape when the shape input is a known constant.
Status ReshapeShape(ShapeContext* c) {
  c->output_shapes.assign(1, UnknownShape());
  if (c->input_values.size() < 2 || c->input_values[1] == nullptr) return Status::OK();
  std::vector<int64_t> dims;
  EMBER_RETURN_IF_ERROR(ReadIndexVector(*c->node, *c->input_values[1], "shape", &dims));
  const PartialShape& in = c->input_shapes[0];
  bool known = !in.unknown_rank;
  int64_t n = 1;
  for (int64_t d : in.dims) {
    known = known && d >= 0;
    n *= d < 0 ? 1 : d;
  }
  if (known) EMBER_RETURN_IF_ERROR(ResolveReshape(*c->node, n, &dims));
  c->output_shapes[0] = KnownShape(dims);
  return Status::OK();
}

// Known when the input rank and the `dim` value are.
Status ExpandDimsShape(ShapeContext* c) {
  c->output_shapes.assign(1, UnknownShape());
  if (c->input_shapes.size() < 2 || c->input_shapes[0].unknown_rank || c->input_values.size() < 2 ||
      c->input_values[1] == nullptr) {
    return Status::OK();
  }
  std::vector<int64_t> axis;
  EMBER_RETURN_IF_ERROR(ReadIndexVector(*c->node, *c->input_values[1], "dim", &axis));
  std::vector<int64_t> dims = c->input_shapes[0].dims;
  const int64_t rank = static_cast<int64_t>(dims.size());
  if (axis.size() != 1 || axis[0] < -1 - rank || axis[0] > rank) {
    return InvalidArg(*c->node, "Tried to expand dim index " + DimsString(axis) +
                                    " for tensor with " + std::to_string(rank) + " dimensions.");
  }
  const int64_t d = axis[0] < 0 ? axis[0] + rank + 1 : axis[0];
  dims.insert(dims.begin() + d, 1);
  c->output_shapes[0] = KnownShape(dims);
  return Status::OK();
}

// Known when the input rank is, and (without squeeze_dims) every dim is known.
Status SqueezeShape(ShapeContext* c) {
  c->output_shapes.assign(1, UnknownShape());
  if (c->input_shapes.empty() || c->input_shapes[0].unknown_rank) return Status::OK();
  std::vector<int64_t> axes;
  EMBER_RETURN_IF_ERROR(AttrReader(*c->node).GetOr("squeeze_dims", &axes, std::vector<int64_t>{}));
  const std::vector<int64_t>& in = c->input_shapes[0].dims;
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<bool> drop(in.size(), false);
  for (int64_t a : axes) {
    if (a < -rank || a >= rank) {
      return InvalidArg(*c->node, "Tried to squeeze dim index " + std::to_string(a) +
                                      " for tensor with " + std::to_string(rank) + " dimensions.");
    }
    const size_t d = static_cast<size_t>(a < 0 ? a + rank : a);
    if (in[d] != 1 && in[d] != -1) {
      return InvalidArg(*c->node, "Can not squeeze dim[" + std::to_string(d) +
                                      "], expected a dimension of 1, got " + std::to_string(in[d]));
    }
    drop[d] = true;
  }
  std::vector<int64_t> out;
  for (size_t d = 0; d < in.size(); ++d) {
    if (axes.empty() && in[d] == -1) return Status::OK();  // might or might not be squeezed
    if (axes.empty() ? in[d] != 1 : !drop[d]) out.push_back(in[d]);
  }
  c->output_shapes[0] = KnownShape(out);
  return Status::OK();
}

[[maybe_unused]] const bool kRegistered = [] {
  OpDef reshape;
  reshape.name = "Reshape";
  reshape.inputs = {Arg("tensor", "T"), Arg("shape", "Tshape")};
  reshape.outputs = {Arg("output", "T")};
  reshape.shape_fn = ReshapeShape;
  OpRegistry::Global()->Register(std::move(reshape));
  RegisterKernel<ReshapeOp>("Reshape");

  OpDef expand;
  expand.name = "ExpandDims";
  expand.inputs = {Arg("input", "T"), Arg("dim", "Tdim")};
  expand.outputs = {Arg("output", "T")};
  expand.shape_fn = ExpandDimsShape;
  OpRegistry::Global()->Register(std::move(expand));
  RegisterKernel<ExpandDimsOp>("ExpandDims");

  OpDef squeeze;
  squeeze.name = "Squeeze";
  squeeze.inputs = {Arg("input", "T")};
  squeeze.outputs = {Arg("output", "T")};
  squeeze.shape_fn = SqueezeShape;
  OpRegistry::Global()->Register(std::move(squeeze));
  RegisterKernel<SqueezeOp>("Squeeze");

  OpDef shape;
  shape.name = "Shape";
  shape.inputs = {Arg("input", "T")};
  shape.outputs = {Arg("output", "out_type")};
  shape.shape_fn = [](ShapeContext* c) {
    c->output_shapes.assign(1, UnknownShape());
    if (!c->input_shapes.empty() && !c->input_shapes[0].unknown_rank) {
      c->output_shapes[0] = KnownShape({static_cast<int64_t>(c->input_shapes[0].dims.size())});
    }
    return Status::OK();
  };
  OpRegistry::Global()->Register(std::move(shape));
  RegisterKernel<ShapeOp>("Shape");
  return true;
}();

}  // namespace
}  // namespace kernels
}  // namespace ember
