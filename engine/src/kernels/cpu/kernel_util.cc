#include "kernels/cpu/kernel_util.h"

#include <algorithm>
#include <utility>

namespace ember {
namespace kernels {

Status NodeError(const NodeDef& node, Code code, const std::string& message) {
  return Status(code, message + " [[{{node " + node.name + "}}]]");
}

std::string DimsString(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) s += ",";
    s += dims[i] < 0 ? std::string("?") : std::to_string(dims[i]);
  }
  return s + "]";
}

Status ReadIndexVector(const NodeDef& node, const Tensor& t, const char* what,
                       std::vector<int64_t>* out) {
  out->clear();
  if (t.dims() > 1) {
    return InvalidArg(node, std::string(what) + " must be a scalar or vector, got shape " +
                                t.shape().DebugString());
  }
  bool ok = DispatchIndex(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* p = t.data<T>();
    for (int64_t i = 0; i < t.NumElements(); ++i) out->push_back(static_cast<int64_t>(p[i]));
  });
  if (!ok) {
    return InvalidArg(
        node, std::string(what) + " must be int32 or int64, got " + DataTypeString(t.dtype()));
  }
  return Status::OK();
}

bool CheckTypeAllowed(OpKernelConstruction* ctx, const char* attr, DataType dt, bool ok,
                      const char* allowed) {
  if (ok) return true;
  ctx->SetStatus(InvalidArg(ctx->node(), std::string("Value for attr '") + attr + "' of " +
                                             DataTypeString(dt) +
                                             " is not in the list of allowed values: " + allowed));
  return false;
}

namespace {
constexpr DataType kMarkerTypes[] = {DataType::kFloat, DataType::kDouble, DataType::kInt32,
                                     DataType::kUInt8, DataType::kInt16,  DataType::kInt8,
                                     DataType::kInt64, DataType::kBool};
// One empty tensor per dtype, created once and never freed (kernels may outlive main()).
const std::vector<Tensor>& Markers() {
  static const std::vector<Tensor>* markers = [] {
    auto* v = new std::vector<Tensor>();
    for (DataType dt : kMarkerTypes) v->emplace_back(dt, TensorShape({0}));
    return v;
  }();
  return *markers;
}
}  // namespace

const Tensor& UninitializedMarker(DataType dtype) {
  for (const Tensor& t : Markers()) {
    if (t.dtype() == dtype) return t;
  }
  return Markers()[0];
}

bool IsUninitializedMarker(const Tensor& t) {
  if (!t.IsInitialized()) return true;
  if (t.NumElements() != 0) return false;
  for (const Tensor& m : Markers()) {
    if (t.SharesBufferWith(m)) return true;
  }
  return false;
}

bool FailIfUninitialized(OpKernelContext* ctx, int i) {
  if (!IsUninitializedMarker(ctx->input(i))) return false;
  const std::vector<std::string>& in = ctx->node().input;
  std::string src =
      static_cast<size_t>(i) < in.size() ? in[static_cast<size_t>(i)] : std::to_string(i);
  ctx->SetStatus(NodeError(ctx->node(), Code::kFailedPrecondition,
                           "Attempting to use uninitialized value " + src));
  return true;
}

bool BroadcastShapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                     std::vector<int64_t>* out) {
  size_t rank = std::max(a.size(), b.size());
  out->assign(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da == db || db == 1) {
      (*out)[i] = da;
    } else if (da == 1) {
      (*out)[i] = db;
    } else {
      return false;
    }
  }
  return true;
}

std::vector<int64_t> BroadcastStrides(const std::vector<int64_t>& in,
                                      const std::vector<int64_t>& out) {
  std::vector<int64_t> strides(out.size(), 0);
  int64_t stride = 1;
  size_t offset = out.size() - in.size();
  for (size_t i = in.size(); i-- > 0;) {
    strides[i + offset] = in[i] == 1 ? 0 : stride;
    stride *= in[i];
  }
  return strides;
}

Status ParsePadding(const OpKernelConstruction* ctx, Padding* out) {
  std::string padding;
  EMBER_RETURN_IF_ERROR(ctx->GetAttr("padding", &padding));
  if (padding == "SAME") {
    *out = Padding::kSame;
  } else if (padding == "VALID") {
    *out = Padding::kValid;
  } else {
    return NodeError(ctx->node(), Code::kUnimplemented,
                     "padding '" + padding + "' is not supported; use SAME or VALID");
  }
  return Status::OK();
}

Status ParseConvPadding(const NodeDef& node, ConvPadding* out) {
  AttrReader r(node);
  std::string padding;
  std::vector<int64_t> amounts;
  EMBER_RETURN_IF_ERROR(r.Get("padding", &padding));
  EMBER_RETURN_IF_ERROR(r.GetOr("explicit_paddings", &amounts, std::vector<int64_t>{}));
  *out = ConvPadding{};
  if (padding == "SAME" || padding == "VALID") {
    if (!amounts.empty()) {
      return InvalidArg(node,
                        "explicit_paddings attribute must be empty if the padding attribute is "
                        "not EXPLICIT");
    }
    out->kind = padding == "SAME" ? Padding::kSame : Padding::kValid;
    return Status::OK();
  }
  if (padding != "EXPLICIT") {
    return InvalidArg(node, "padding '" + padding + "' is not one of SAME, VALID or EXPLICIT");
  }
  if (amounts.size() != 8) {
    return InvalidArg(node, "explicit_paddings attribute must contain 8 values, but got: " +
                                std::to_string(amounts.size()));
  }
  for (int64_t v : amounts) {
    if (v < 0) {
      return InvalidArg(node, "All elements of explicit_paddings must be nonnegative");
    }
  }
  if (amounts[0] != 0 || amounts[1] != 0 || amounts[6] != 0 || amounts[7] != 0) {
    return NodeError(node, Code::kUnimplemented,
                     "Nonzero explicit padding in the batch or depth dimensions is not "
                     "supported");
  }
  *out = ConvPadding{Padding::kExplicit, amounts[2], amounts[3], amounts[4], amounts[5]};
  return Status::OK();
}

Status WindowedOutputSize(const NodeDef& node, int64_t in, int64_t k, int64_t dilation,
                          int64_t stride, Padding padding, int64_t* out, int64_t* pad_before,
                          int64_t before, int64_t after) {
  if (stride <= 0) return InvalidArg(node, "Stride must be > 0, but got " + std::to_string(stride));
  if (dilation <= 0) {
    return InvalidArg(node, "Dilation rate must be >= 1, but got " + std::to_string(dilation));
  }
  int64_t eff = (k - 1) * dilation + 1;
  if (padding == Padding::kValid) {
    *out = (in - eff + stride) / stride;
    *pad_before = 0;
  } else if (padding == Padding::kExplicit) {
    *out = (in + before + after - eff + stride) / stride;
    *pad_before = before;
  } else {
    *out = (in + stride - 1) / stride;
    int64_t total = std::max<int64_t>((*out - 1) * stride + eff - in, 0);
    *pad_before = total / 2;
  }
  if (*out < 0) {
    return InvalidArg(node, "Computed output size would be negative: " + std::to_string(*out) +
                                " [input_size: " + std::to_string(in) +
                                ", effective_filter_size: " + std::to_string(eff) +
                                ", stride: " + std::to_string(stride) + "]");
  }
  return Status::OK();
}

Status ReadSpatialAttr(OpKernelConstruction* ctx, const char* attr, int64_t fallback, int64_t* h,
                       int64_t* w) {
  std::vector<int64_t> v;
  if (!ctx->attrs().Has(attr)) {
    *h = *w = fallback;
    return Status::OK();
  }
  EMBER_RETURN_IF_ERROR(ctx->GetAttr(attr, &v));
  if (v.size() != 4) {
    return InvalidArg(ctx->node(), std::string("Sliding window ") + attr +
                                       " field must specify 4 dimensions, got " +
                                       std::to_string(v.size()));
  }
  if (v[0] != 1 || v[3] != 1) {
    return InvalidArg(ctx->node(), std::string("Current implementation does not yet support ") +
                                       attr + " in the batch and depth dimensions.");
  }
  *h = v[1];
  *w = v[2];
  if (*h <= 0 || *w <= 0) {
    return InvalidArg(ctx->node(), std::string(attr) + " must be positive, got " + DimsString(v));
  }
  return Status::OK();
}

Status RequireNHWC(OpKernelConstruction* ctx) {
  std::string fmt;
  EMBER_RETURN_IF_ERROR(ctx->attrs().GetOr<std::string>("data_format", &fmt, "NHWC"));
  if (fmt != "NHWC") {
    return NodeError(ctx->node(), Code::kUnimplemented,
                     "data_format " + fmt + " is not supported on CPU; use NHWC");
  }
  return Status::OK();
}

PartialShape UnknownShape() {
  PartialShape s;
  s.unknown_rank = true;
  return s;
}

PartialShape KnownShape(std::vector<int64_t> dims) {
  PartialShape s;
  s.dims = std::move(dims);
  return s;
}

ShapeFn UnchangedShape() {
  return [](ShapeContext* c) {
    c->output_shapes.assign(1, c->input_shapes.empty() ? UnknownShape() : c->input_shapes[0]);
    return Status::OK();
  };
}

ShapeFn BroadcastBinaryShape() {
  return [](ShapeContext* c) {
    c->output_shapes.assign(1, UnknownShape());
    if (c->input_shapes.size() < 2) return Status::OK();
    const PartialShape& a = c->input_shapes[0];
    const PartialShape& b = c->input_shapes[1];
    if (a.unknown_rank || b.unknown_rank) return Status::OK();
    size_t rank = std::max(a.dims.size(), b.dims.size());
    std::vector<int64_t> out(rank, -1);
    for (size_t i = 0; i < rank; ++i) {
      int64_t da = i < rank - a.dims.size() ? 1 : a.dims[i - (rank - a.dims.size())];
      int64_t db = i < rank - b.dims.size() ? 1 : b.dims[i - (rank - b.dims.size())];
      if (da == 1) {
        out[i] = db;
      } else if (db == 1) {
        out[i] = da;
      } else if (da < 0 || db < 0) {
        out[i] = da < 0 ? db : da;  // the known one, or unknown when both are
      } else if (da == db) {
        out[i] = da;
      } else {
        return InvalidArg(
            *c->node, "Incompatible shapes: " + DimsString(a.dims) + " vs. " + DimsString(b.dims));
      }
    }
    c->output_shapes[0] = KnownShape(out);
    return Status::OK();
  };
}

}  // namespace kernels
}  // namespace ember
