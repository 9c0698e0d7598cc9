// Variables whose values live in the session's ResourceMgr, keyed by the variable node's name,
// so they survive across Run calls: VariableV2 + Assign (reference form) and VarHandleOp +
// AssignVariableOp + ReadVariableOp (resource form).
//
// Writers replace the stored Tensor with a fresh copy instead of writing into it, so a value
// handed out by an earlier read is never changed under a concurrent Run.
#include <memory>
#include <mutex>
#include <string>

#include "core/op_kernel.h"
#include "core/resource_mgr.h"
#include "kernels/cpu/kernel_util.h"

namespace ember {
namespace kernels {
namespace {

// The node that produces input `i` ("v:0" -> "v").
std::string ProducerName(const NodeDef& node, size_t i) {
  if (i >= node.input.size()) return "";
  std::string s = node.input[i];
  if (!s.empty() && s[0] == '^') s = s.substr(1);
  size_t colon = s.rfind(':');
  return colon == std::string::npos ? s : s.substr(0, colon);
}

Status LookupVar(OpKernelContext* ctx, const std::string& name, Var** var) {
  if (ctx->resources() == nullptr) {
    return NodeError(ctx->node(), Code::kInternal, "no ResourceMgr in this step");
  }
  return ctx->resources()->LookupOrCreate<Var>(name, var, [] { return std::make_unique<Var>(); });
}

class VariableOp : public OpKernel {
 public:
  explicit VariableOp(OpKernelConstruction* c) : OpKernel(c) {}
  // Outputs the current value, or the uninitialized marker before the first Assign
  // (readers then fail with "Attempting to use uninitialized value").
  void Compute(OpKernelContext* ctx) override {
    Var* var = nullptr;
    Status s = LookupVar(ctx, name(), &var);
    if (!s.ok()) {
      ctx->SetStatus(s);
      return;
    }
    std::lock_guard<std::mutex> lock(var->mu);
    if (var->initialized) {
      ctx->set_output(0, var->value);
    } else {
      ctx->set_output(0, UninitializedMarker(ctx->expected_output_dtype(0)));
    }
  }
};

class AssignOp : public OpKernel {
 public:
  explicit AssignOp(OpKernelConstruction* c) : OpKernel(c) {
    Status s = c->attrs().GetOr("validate_shape", &validate_shape_, true);
    if (!s.ok()) c->SetStatus(s);
    target_ = ProducerName(c->node(), 0);
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& value = ctx->input(1);
    if (FailIfUninitialized(ctx, 1)) return;
    Var* var = nullptr;
    Status s = LookupVar(ctx, target_, &var);
    if (!s.ok()) {
      ctx->SetStatus(s);
      return;
    }
    std::lock_guard<std::mutex> lock(var->mu);
    if (validate_shape_ && var->initialized && var->value.shape() != value.shape()) {
      ctx->SetStatus(
          InvalidArg(ctx->node(), "Assign requires shapes of both tensors to match. lhs shape= " +
                                      var->value.shape().DebugString() +
                                      " rhs shape= " + value.shape().DebugString()));
      return;
    }
    var->value = value.Clone();
    var->initialized = true;
    ctx->set_output(0, var->value);
  }

 private:
  bool validate_shape_ = true;
  std::string target_;
};

class VarHandleOp : public OpKernel {
 public:
  explicit VarHandleOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    Var* var = nullptr;
    Status s = LookupVar(ctx, name(), &var);
    Tensor* out = nullptr;
    if (s.ok()) s = ctx->allocate_output(0, TensorShape(), &out);
    if (!s.ok()) ctx->SetStatus(s);
  }
};

class AssignVariableOp : public OpKernel {
 public:
  explicit AssignVariableOp(OpKernelConstruction* c) : OpKernel(c) {
    Status s = c->GetAttr("dtype", &dtype_);
    if (!s.ok()) c->SetStatus(s);
    target_ = ProducerName(c->node(), 0);
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& value = ctx->input(1);
    if (value.dtype() != dtype_) {
      ctx->SetStatus(InvalidArg(
          ctx->node(), "Trying to assign variable with wrong dtype. Expected " +
                           DataTypeString(dtype_) + " got " + DataTypeString(value.dtype())));
      return;
    }
    Var* var = nullptr;
    Status s = LookupVar(ctx, target_, &var);
    if (!s.ok()) {
      ctx->SetStatus(s);
      return;
    }
    std::lock_guard<std::mutex> lock(var->mu);
    var->value = value.Clone();
    var->initialized = true;
  }

 private:
  DataType dtype_ = DataType::kInvalid;
  std::string target_;
};

class ReadVariableOp : public OpKernel {
 public:
  explicit ReadVariableOp(OpKernelConstruction* c) : OpKernel(c) {
    Status s = c->GetAttr("dtype", &dtype_);
    if (!s.ok()) c->SetStatus(s);
    target_ = ProducerName(c->node(), 0);
  }
  void Compute(OpKernelContext* ctx) override {
    Var* var = nullptr;
    Status s = LookupVar(ctx, target_, &var);
    if (!s.ok()) {
      ctx->SetStatus(s);
      return;
    }
    std::lock_guard<std::mutex> lock(var->mu);
    if (!var->initialized) {
      ctx->SetStatus(NodeError(ctx->node(), Code::kFailedPrecondition,
                               "Error while reading resource variable " + target_ +
                                   ": it is uninitialized; run its initializer (AssignVariableOp) "
                                   "first"));
      return;
    }
    if (var->value.dtype() != dtype_) {
      ctx->SetStatus(InvalidArg(
          ctx->node(), "Trying to read variable " + target_ + " with wrong dtype. Expected " +
                           DataTypeString(dtype_) + " got " + DataTypeString(var->value.dtype())));
      return;
    }
    ctx->set_output(0, var->value);
  }

 private:
  DataType dtype_ = DataType::kInvalid;
  std::string target_;
};

ArgDef Arg(const char* name, const char* type_attr, bool is_ref = false) {
  ArgDef a;
  a.name = name;
  a.type_attr = type_attr;
  a.is_ref = is_ref;
  return a;
}
ArgDef ResourceArg(const char* name) {
  ArgDef a;
  a.name = name;
  a.type = DataType::kResource;
  return a;
}

template <typename K>
void Register(OpDef def) {
  const std::string op = def.name;
  OpRegistry::Global()->Register(std::move(def));
  KernelRegistry::Global()->Register(
      op, "CPU", [](OpKernelConstruction* c) { return std::unique_ptr<OpKernel>(new K(c)); });
}

ShapeFn ShapeAttr() {
  return [](ShapeContext* c) {
    c->output_shapes.assign(1, UnknownShape());
    AttrReader r(*c->node);
    if (r.Has("shape")) EMBER_RETURN_IF_ERROR(r.Get("shape", &c->output_shapes[0]));
    return Status::OK();
  };
}

[[maybe_unused]] const bool kRegistered = [] {
  OpDef var;
  var.name = "VariableV2";
  var.outputs = {Arg("ref", "dtype", true)};
  var.is_stateful = true;
  var.shape_fn = ShapeAttr();
  Register<VariableOp>(std::move(var));

  OpDef assign;
  assign.name = "Assign";
  assign.inputs = {Arg("ref", "T", true), Arg("value", "T")};
  assign.outputs = {Arg("output_ref", "T", true)};
  assign.is_stateful = true;
  assign.shape_fn = [](ShapeContext* c) {
    c->output_shapes.assign(1, c->input_shapes.size() > 1 ? c->input_shapes[1] : UnknownShape());
    return Status::OK();
  };
  Register<AssignOp>(std::move(assign));

  OpDef handle;
  handle.name = "VarHandleOp";
  handle.outputs = {ResourceArg("resource")};
  handle.is_stateful = true;
  handle.shape_fn = [](ShapeContext* c) {
    c->output_shapes.assign(1, KnownShape({}));
    return Status::OK();
  };
  Register<VarHandleOp>(std::move(handle));

  OpDef av;
  av.name = "AssignVariableOp";
  av.inputs = {ResourceArg("resource"), Arg("value", "dtype")};
  av.is_stateful = true;
  av.shape_fn = [](ShapeContext* c) {
    c->output_shapes.clear();
    return Status::OK();
  };
  Register<AssignVariableOp>(std::move(av));

  OpDef rv;
  rv.name = "ReadVariableOp";
  rv.inputs = {ResourceArg("resource")};
  rv.outputs = {Arg("value", "dtype")};
  rv.is_stateful = true;
  rv.shape_fn = [](ShapeContext* c) {
    c->output_shapes.assign(1, UnknownShape());
    return Status::OK();
  };
  Register<ReadVariableOp>(std::move(rv));
  return true;
}();

}  // namespace
}  // namespace kernels
}  // namespace ember
