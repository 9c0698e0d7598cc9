// Sources and pass-throughs: Const, Placeholder, PlaceholderWithDefault, Identity (and
// StopGradient, Snapshot), NoOp.
#include <memory>
#include <string>

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

class ConstOp : public OpKernel {
 public:
  explicit ConstOp(OpKernelConstruction* c) : OpKernel(c) {
    Status s = c->GetAttr("value", &value_);
    if (!s.ok()) {
      c->SetStatus(s);
      return;
    }
    DataType dtype = DataType::kInvalid;
    s = c->GetAttr("dtype", &dtype);
    if (!s.ok()) {
      c->SetStatus(s);
      return;
    }
    if (dtype != value_.dtype()) {
      c->SetStatus(InvalidArg(c->node(), "Type mismatch between value (" +
                                             DataTypeString(value_.dtype()) + ") and dtype (" +
                                             DataTypeString(dtype) + ")"));
    }
  }
  // The output shares the constant's buffer; kernels never write into their inputs.
  void Compute(OpKernelContext* ctx) override { ctx->set_output(0, value_); }

 private:
  Tensor value_;
};

// "[2,?]"; empty when the rank is 0 or unknown (TensorFlow leaves the shape part out then).
std::string PartialShapeString(const PartialShape& s) {
  if (s.unknown_rank || s.dims.empty()) return "";
  return DimsString(s.dims);
}

class PlaceholderOp : public OpKernel {
 public:
  explicit PlaceholderOp(OpKernelConstruction* c) : OpKernel(c) {
    DataType dtype = DataType::kInvalid;
    Status s = c->GetAttr("dtype", &dtype);
    if (!s.ok()) {
      c->SetStatus(s);
      return;
    }
    PartialShape shape;
    shape.unknown_rank = true;
    if (c->attrs().Has("shape")) {
      s = c->GetAttr("shape", &shape);
      if (!s.ok()) {
        c->SetStatus(s);
        return;
      }
    }
    message_ = "You must feed a value for placeholder tensor '" + c->node().name + "' with dtype " +
               DataTypeString(dtype);
    std::string dims = PartialShapeString(shape);
    if (!dims.empty()) message_ += " and shape " + dims;
  }
  // Reached only when the session did not replace the placeholder with a feed.
  void Compute(OpKernelContext* ctx) override { ctx->SetStatus(errors::InvalidArgument(message_)); }

 private:
  std::string message_;
};

class IdentityOp : public OpKernel {
 public:
  explicit IdentityOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    if (FailIfUninitialized(ctx, 0)) return;
    ctx->set_output(0, ctx->input(0));
  }
};

class NoOp : public OpKernel {
 public:
  explicit NoOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext*) override {}
};

Status ShapeFromAttr(ShapeContext* c, const char* attr) {
  c->output_shapes.assign(1, UnknownShape());
  AttrReader r(*c->node);
  if (!r.Has(attr)) return Status::OK();
  if (std::string(attr) == "value") {
    Tensor t;
    EMBER_RETURN_IF_ERROR(r.Get(attr, &t));
    c->output_shapes[0] = KnownShape(t.shape().dim_sizes());
    return Status::OK();
  }
  PartialShape s;
  EMBER_RETURN_IF_ERROR(r.Get(attr, &s));
  c->output_shapes[0] = s;
  return Status::OK();
}

template <typename K>
void RegisterKernel(const char* op) {
  KernelRegistry::Global()->Register(
      op, "CPU", [](OpKernelConstruction* c) { return std::unique_ptr<OpKernel>(new K(c)); });
}

[[maybe_unused]] const bool kRegistered = [] {
  OpDef c;
  c.name = "Const";
  c.outputs = {Arg("output", "dtype")};
  c.shape_fn = [](ShapeContext* ctx) { return ShapeFromAttr(ctx, "value"); };
  OpRegistry::Global()->Register(std::move(c));
  RegisterKernel<ConstOp>("Const");

  OpDef p;
  p.name = "Placeholder";
  p.outputs = {Arg("output", "dtype")};
  p.shape_fn = [](ShapeContext* ctx) { return ShapeFromAttr(ctx, "shape"); };
  OpRegistry::Global()->Register(std::move(p));
  RegisterKernel<PlaceholderOp>("Placeholder");

  OpDef pd;
  pd.name = "PlaceholderWithDefault";
  pd.inputs = {Arg("input", "dtype")};
  pd.outputs = {Arg("output", "dtype")};
  pd.shape_fn = [](ShapeContext* ctx) {
    EMBER_RETURN_IF_ERROR(ShapeFromAttr(ctx, "shape"));
    if (ctx->output_shapes[0].unknown_rank && !ctx->input_shapes.empty()) {
      ctx->output_shapes[0] = ctx->input_shapes[0];
    }
    return Status::OK();
  };
  OpRegistry::Global()->Register(std::move(pd));
  RegisterKernel<IdentityOp>("PlaceholderWithDefault");

  // StopGradient and Snapshot appear in exported inference graphs; both pass values through.
  for (const char* op : {"Identity", "StopGradient", "Snapshot"}) {
    OpDef id;
    id.name = op;
    id.inputs = {Arg("input", "T")};
    id.outputs = {Arg("output", "T")};
    id.shape_fn = UnchangedShape();
    OpRegistry::Global()->Register(std::move(id));
    RegisterKernel<IdentityOp>(op);
  }

  OpDef n;
  n.name = "NoOp";
  n.shape_fn = [](ShapeContext* ctx) {
    ctx->output_shapes.clear();
    return Status::OK();
  };
  OpRegistry::Global()->Register(std::move(n));
  RegisterKernel<NoOp>("NoOp");
  return true;
}();

}  // namespace
}  // namespace kernels
}  // namespace ember
