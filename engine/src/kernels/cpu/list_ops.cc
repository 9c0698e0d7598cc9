// TensorList ops (TensorFlow's list_ops): the TensorArrays of tf.while_loop and of Keras RNN
// layers, as a frozen TF2 graph has them. A list travels as a scalar DT_VARIANT tensor whose
// buffer is an immutable TensorList; SetItem makes a new list that shares the other items'
// buffers, so a loop iteration never changes a list another node still reads.
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/op_kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/op_util.h"

namespace ember {
namespace kernels {
namespace {

using oputil::FixedArg;
using oputil::TypedArg;

struct TensorList {
  DataType element_dtype = DataType::kInvalid;
  PartialShape element_shape;  // unknown_rank when nothing is known
  std::vector<Tensor> items;   // an uninitialized Tensor: not set yet
};

// Every live list, so that a variant tensor that is not one (a fed DT_VARIANT) is refused
// instead of being read as one.
class LiveLists {
 public:
  static LiveLists& Get() {
    static LiveLists* lists = new LiveLists();
    return *lists;
  }
  void Add(const TensorList* l) {
    std::lock_guard<std::mutex> lock(mu_);
    live_.insert(l);
  }
  void Remove(const TensorList* l) {
    std::lock_guard<std::mutex> lock(mu_);
    live_.erase(l);
  }
  bool Contains(const void* p) const {
    std::lock_guard<std::mutex> lock(mu_);
    return live_.count(static_cast<const TensorList*>(p)) != 0;
  }

 private:
  mutable std::mutex mu_;
  std::unordered_set<const TensorList*> live_;
};

void ReleaseList(void* data, void*) {
  auto* l = static_cast<TensorList*>(data);
  LiveLists::Get().Remove(l);
  delete l;
}

Tensor ListTensor(std::unique_ptr<TensorList> list) {
  TensorList* l = list.release();
  LiveLists::Get().Add(l);
  return Tensor::FromExternal(DataType::kVariant, TensorShape(), l, ReleaseList, nullptr);
}

Status ReadList(const NodeDef& node, const Tensor& t, DataType element_dtype,
                const TensorList** out) {
  if (t.dtype() != DataType::kVariant || t.NumElements() != 1 ||
      !LiveLists::Get().Contains(t.raw_data())) {
    return InvalidArg(node, "Input handle is not a list. Saw: '" + t.DebugString() + "'");
  }
  *out = static_cast<const TensorList*>(t.raw_data());
  if ((*out)->element_dtype != element_dtype) {
    return InvalidArg(node, "Invalid data types; op elements " + DataTypeString(element_dtype) +
                                " but list elements " + DataTypeString((*out)->element_dtype));
  }
  return Status::OK();
}

std::string ShapeString(const PartialShape& s) {
  if (s.unknown_rank) return "<unknown>";
  std::string out = "[";
  for (size_t i = 0; i < s.dims.size(); ++i) {
    out += (i ? "," : "") + (s.dims[i] < 0 ? std::string("?") : std::to_string(s.dims[i]));
  }
  return out + "]";
}

bool FullyDefined(const PartialShape& s) {
  if (s.unknown_rank) return false;
  for (int64_t d : s.dims) {
    if (d < 0) return false;
  }
  return true;
}

// TensorFlow's TensorShapeFromTensor: -1 (a scalar) is an unknown rank, -1 in a vector an
// unknown dimension.
Status ElementShape(const NodeDef& node, const Tensor& t, PartialShape* out) {
  std::vector<int64_t> v;
  EMBER_RETURN_IF_ERROR(ReadIndexVector(node, t, "element_shape", &v));
  *out = PartialShape();
  if (t.dims() == 0) {
    if (v.size() != 1 || v[0] != -1) {
      return InvalidArg(node, "The only valid scalar element_shape is -1 (an unknown shape)");
    }
    out->unknown_rank = true;
    return Status::OK();
  }
  for (int64_t d : v) {
    if (d < -1) return InvalidArg(node, "element_shape has a dimension " + std::to_string(d));
  }
  out->dims = std::move(v);
  return Status::OK();
}

// The most specific shape compatible with both; false when they disagree.
bool MergeShapes(const PartialShape& a, const PartialShape& b, PartialShape* out) {
  if (a.unknown_rank) {
    *out = b;
    return true;
  }
  if (b.unknown_rank) {
    *out = a;
    return true;
  }
  if (a.dims.size() != b.dims.size()) return false;
  PartialShape m;
  for (size_t i = 0; i < a.dims.size(); ++i) {
    if (a.dims[i] >= 0 && b.dims[i] >= 0 && a.dims[i] != b.dims[i]) return false;
    m.dims.push_back(a.dims[i] >= 0 ? a.dims[i] : b.dims[i]);
  }
  *out = m;
  return true;
}

PartialShape Known(const TensorShape& s) { return KnownShape(s.dim_sizes()); }

bool PodType(DataType t) { return DataTypeSize(t) > 0; }

class ListOpBase : public OpKernel {
 public:
  explicit ListOpBase(OpKernelConstruction* c) : OpKernel(c) {
    Status s = c->GetAttr("element_dtype", &element_dtype_);
    if (s.ok() && !PodType(element_dtype_)) {
      s = InvalidArg(c->node(), "TensorList element_dtype " + DataTypeString(element_dtype_) +
                                    " is not supported by ember; use a numeric type or bool");
    }
    if (!s.ok()) c->SetStatus(s);
  }

 protected:
  DataType element_dtype_ = DataType::kInvalid;
};

class ReserveOp : public ListOpBase {
 public:
  using ListOpBase::ListOpBase;
  void Compute(OpKernelContext* ctx) override {
    auto list = std::make_unique<TensorList>();
    list->element_dtype = element_dtype_;
    EMBER_OP_REQUIRES_OK(ctx, ElementShape(ctx->node(), ctx->input(0), &list->element_shape));
    int64_t n = 0;
    EMBER_OP_REQUIRES_OK(ctx,
                         oputil::ReadScalarIndex(ctx->node(), ctx->input(1), "num_elements", &n));
    if (n < 0 || n > (int64_t{1} << 28)) {
      ctx->SetStatus(InvalidArg(ctx->node(),
                                "The num_elements to reserve must be a non negative "
                                "number (at most 2^28), but got " +
                                    std::to_string(n)));
      return;
    }
    list->items.resize(static_cast<size_t>(n));
    ctx->set_output(0, ListTensor(std::move(list)));
  }
};

class FromTensorOp : public ListOpBase {
 public:
  using ListOpBase::ListOpBase;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& t = ctx->input(0);
    if (t.dims() < 1) {
      ctx->SetStatus(InvalidArg(ctx->node(), "Tensor must be at least a vector, but saw shape: " +
                                                 t.shape().DebugString()));
      return;
    }
    PartialShape declared;
    EMBER_OP_REQUIRES_OK(ctx, ElementShape(ctx->node(), ctx->input(1), &declared));
    std::vector<int64_t> row_dims(t.shape().dim_sizes().begin() + 1, t.shape().dim_sizes().end());
    TensorShape row(row_dims);
    auto list = std::make_unique<TensorList>();
    list->element_dtype = element_dtype_;
    if (!MergeShapes(declared, KnownShape(row_dims), &list->element_shape)) {
      ctx->SetStatus(
          InvalidArg(ctx->node(), "Specified a list with shape " + ShapeString(declared) +
                                      " from a tensor with shape " + t.shape().DebugString()));
      return;
    }
    const size_t bytes = row.num_elements() * DataTypeSize(element_dtype_);
    const auto* src = static_cast<const unsigned char*>(t.raw_data());
    for (int64_t i = 0; i < t.dim_size(0); ++i) {
      Tensor item = Tensor::Uninitialized(element_dtype_, row);
      if (bytes > 0) std::memcpy(item.raw_data(), src + static_cast<size_t>(i) * bytes, bytes);
      list->items.push_back(std::move(item));
    }
    ctx->set_output(0, ListTensor(std::move(list)));
  }
};

Status CheckIndex(const NodeDef& node, const Tensor& t, const TensorList& l, const char* verb,
                  size_t* out) {
  int64_t index = 0;
  EMBER_RETURN_IF_ERROR(oputil::ReadScalarIndex(node, t, "index", &index));
  if (index < 0 || index >= static_cast<int64_t>(l.items.size())) {
    return InvalidArg(node, std::string("Trying to ") + verb + " element " + std::to_string(index) +
                                " in a list with " + std::to_string(l.items.size()) + " elements.");
  }
  *out = static_cast<size_t>(index);
  return Status::OK();
}

class GetItemOp : public ListOpBase {
 public:
  using ListOpBase::ListOpBase;
  void Compute(OpKernelContext* ctx) override {
    const TensorList* l = nullptr;
    EMBER_OP_REQUIRES_OK(ctx, ReadList(ctx->node(), ctx->input(0), element_dtype_, &l));
    size_t i = 0;
    EMBER_OP_REQUIRES_OK(ctx, CheckIndex(ctx->node(), ctx->input(1), *l, "access", &i));
    if (l->items[i].IsInitialized()) {
      ctx->set_output(0, l->items[i]);
      return;
    }
    PartialShape asked, shape;
    EMBER_OP_REQUIRES_OK(ctx, ElementShape(ctx->node(), ctx->input(2), &asked));
    if (!MergeShapes(l->element_shape, asked, &shape)) {
      ctx->SetStatus(InvalidArg(ctx->node(), "Incompatible element shapes: the list's " +
                                                 ShapeString(l->element_shape) + ", the op's " +
                                                 ShapeString(asked)));
      return;
    }
    // As TensorFlow does, an unknown shape is taken from the elements that are set.
    for (size_t k = 0; k < l->items.size() && !FullyDefined(shape); ++k) {
      if (l->items[k].IsInitialized() && !MergeShapes(shape, Known(l->items[k].shape()), &shape)) {
        ctx->SetStatus(InvalidArg(
            ctx->node(), "Incompatible shapes in the list: " + l->items[k].shape().DebugString() +
                             " and " + ShapeString(shape)));
        return;
      }
    }
    if (!FullyDefined(shape)) {
      ctx->SetStatus(InvalidArg(ctx->node(),
                                "Trying to read an uninitialized tensor but element_shape is not "
                                "fully defined: " +
                                    ShapeString(shape) + " and no list element is set."));
      return;
    }
    Tensor* out = nullptr;
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(shape.dims), &out));
  }
};

class SetItemOp : public ListOpBase {
 public:
  explicit SetItemOp(OpKernelConstruction* c) : ListOpBase(c) {
    Status s = c->attrs().GetOr("resize_if_index_out_of_bounds", &resize_, false);
    if (!s.ok()) c->SetStatus(s);
  }
  void Compute(OpKernelContext* ctx) override {
    const TensorList* l = nullptr;
    EMBER_OP_REQUIRES_OK(ctx, ReadList(ctx->node(), ctx->input(0), element_dtype_, &l));
    const Tensor& item = ctx->input(2);
    PartialShape merged;
    if (!MergeShapes(l->element_shape, Known(item.shape()), &merged)) {
      ctx->SetStatus(InvalidArg(ctx->node(),
                                "Tried to set a tensor with incompatible shape at a "
                                "list index. Item element shape: " +
                                    item.shape().DebugString() +
                                    " list shape: " + ShapeString(l->element_shape)));
      return;
    }
    auto next = std::make_unique<TensorList>(*l);
    int64_t index = 0;
    EMBER_OP_REQUIRES_OK(ctx, oputil::ReadScalarIndex(ctx->node(), ctx->input(1), "index", &index));
    if (resize_ && index >= static_cast<int64_t>(next->items.size()) && index < (1 << 28)) {
      next->items.resize(static_cast<size_t>(index) + 1);
    }
    size_t i = 0;
    EMBER_OP_REQUIRES_OK(ctx, CheckIndex(ctx->node(), ctx->input(1), *next, "modify", &i));
    next->items[i] = item;
    ctx->set_output(0, ListTensor(std::move(next)));
  }

 private:
  bool resize_ = false;
};

class StackOp : public ListOpBase {
 public:
  explicit StackOp(OpKernelConstruction* c) : ListOpBase(c) {
    Status s = c->attrs().GetOr("num_elements", &num_elements_, int64_t{-1});
    if (!s.ok()) c->SetStatus(s);
  }
  void Compute(OpKernelContext* ctx) override {
    const TensorList* l = nullptr;
    EMBER_OP_REQUIRES_OK(ctx, ReadList(ctx->node(), ctx->input(0), element_dtype_, &l));
    PartialShape asked, shape;
    EMBER_OP_REQUIRES_OK(ctx, ElementShape(ctx->node(), ctx->input(1), &asked));
    if (!MergeShapes(l->element_shape, asked, &shape)) {
      ctx->SetStatus(InvalidArg(ctx->node(), "Incompatible element shapes: the list's " +
                                                 ShapeString(l->element_shape) + ", the op's " +
                                                 ShapeString(asked)));
      return;
    }
    if (num_elements_ != -1 && num_elements_ != static_cast<int64_t>(l->items.size())) {
      ctx->SetStatus(InvalidArg(ctx->node(), "Operation expected a list with " +
                                                 std::to_string(num_elements_) +
                                                 " elements but got a list with " +
                                                 std::to_string(l->items.size()) + " elements."));
      return;
    }
    for (const Tensor& item : l->items) {
      if (!item.IsInitialized()) continue;
      if (!MergeShapes(shape, Known(item.shape()), &shape)) {
        ctx->SetStatus(InvalidArg(ctx->node(),
                                  "Incompatible shapes in the list: " + item.shape().DebugString() +
                                      " and " + ShapeString(shape)));
        return;
      }
    }
    if (!FullyDefined(shape)) {
      ctx->SetStatus(InvalidArg(
          ctx->node(), "Tried to stack elements of a list with non-fully-defined element_shape " +
                           ShapeString(shape) + " and no element set to infer it from"));
      return;
    }
    std::vector<int64_t> dims = {static_cast<int64_t>(l->items.size())};
    dims.insert(dims.end(), shape.dims.begin(), shape.dims.end());
    Tensor* out = nullptr;
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(dims), &out));
    const size_t bytes =
        static_cast<size_t>(TensorShape(shape.dims).num_elements()) * DataTypeSize(element_dtype_);
    auto* dst = static_cast<unsigned char*>(out->raw_data());
    for (size_t i = 0; i < l->items.size(); ++i) {
      // Unset items stay zero, as TensorFlow stacks them.
      if (l->items[i].IsInitialized() && bytes > 0) {
        std::memcpy(dst + i * bytes, l->items[i].raw_data(), bytes);
      }
    }
  }

 private:
  int64_t num_elements_ = -1;
};

class LengthOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& t = ctx->input(0);
    if (t.dtype() != DataType::kVariant || !LiveLists::Get().Contains(t.raw_data())) {
      ctx->SetStatus(InvalidArg(ctx->node(), "Input handle is not a list"));
      return;
    }
    const auto* l = static_cast<const TensorList*>(t.raw_data());
    Tensor* out = nullptr;
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(), &out));
    out->data<int32_t>()[0] = static_cast<int32_t>(l->items.size());
  }
};

ShapeFn HandleShape() {
  return [](ShapeContext* c) {
    c->output_shapes.assign(1, KnownShape({}));
    return Status::OK();
  };
}

[[maybe_unused]] const bool kRegistered = [] {
  const ArgDef handle = FixedArg("handle", DataType::kVariant);
  const ArgDef input_handle = FixedArg("input_handle", DataType::kVariant);
  const ArgDef output_handle = FixedArg("output_handle", DataType::kVariant);
  const ArgDef index = FixedArg("index", DataType::kInt32);
  oputil::RegisterOp(
      "TensorListReserve",
      {TypedArg("element_shape", "shape_type"), FixedArg("num_elements", DataType::kInt32)},
      {handle}, HandleShape());
  oputil::RegisterCpu<ReserveOp>("TensorListReserve");
  oputil::RegisterOp("TensorListFromTensor",
                     {TypedArg("tensor", "element_dtype"), TypedArg("element_shape", "shape_type")},
                     {output_handle}, HandleShape());
  oputil::RegisterCpu<FromTensorOp>("TensorListFromTensor");
  oputil::RegisterOp("TensorListGetItem",
                     {input_handle, index, FixedArg("element_shape", DataType::kInt32)},
                     {TypedArg("item", "element_dtype")}, oputil::UnknownOutputs(1));
  oputil::RegisterCpu<GetItemOp>("TensorListGetItem");
  oputil::RegisterOp("TensorListSetItem", {input_handle, index, TypedArg("item", "element_dtype")},
                     {output_handle}, HandleShape());
  oputil::RegisterCpu<SetItemOp>("TensorListSetItem");
  oputil::RegisterOp("TensorListStack", {input_handle, FixedArg("element_shape", DataType::kInt32)},
                     {TypedArg("tensor", "element_dtype")}, oputil::UnknownOutputs(1));
  oputil::RegisterCpu<StackOp>("TensorListStack");
  oputil::RegisterOp("TensorListLength", {input_handle}, {FixedArg("length", DataType::kInt32)},
                     [](ShapeContext* c) {
                       c->output_shapes.assign(1, KnownShape({}));
                       return Status::OK();
                     });
  oputil::RegisterCpu<LengthOp>("TensorListLength");
  return true;
}();

}  // namespace
}  // namespace kernels
}  // namespace ember
