// TopKV2 with TensorFlow's semantics and validation messages (core/kernels/topk_op.cc): the k
// largest entries of each innermost row, ties going to the lower index. tf.math.top_k,
// tf.sort and tf.argsort all become TopKV2 in a GraphDef. With sorted=false TensorFlow returns
// the same k entries in the order its bounded heap leaves them, which the op does not specify
// (and which depends on the C++ library's heap algorithm); ember returns them sorted.
#include <algorithm>
#include <cstdint>
#include <numeric>
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

// Reads the scalar k (int16, int32 or int64: the op's Tk).
Status ReadK(const NodeDef& node, const Tensor& t, int64_t* k) {
  if (t.dims() != 0) {
    return InvalidArg(node, "k must be scalar, got shape " + t.shape().DebugString());
  }
  switch (t.dtype()) {
    case DataType::kInt16:
      *k = t.data<int16_t>()[0];
      return Status::OK();
    case DataType::kInt32:
      *k = t.data<int32_t>()[0];
      return Status::OK();
    case DataType::kInt64:
      *k = t.data<int64_t>()[0];
      return Status::OK();
    default:
      return InvalidArg(node, "k must be int16, int32 or int64, got " + DataTypeString(t.dtype()));
  }
}

// The positions (into `row`, of length n) of the k largest entries, in TensorFlow's order.
template <typename T>
void TopKRow(const T* row, int64_t n, int64_t k, std::vector<int64_t>* order) {
  order->clear();
  if (k == 1) {
    // TensorFlow takes the row's maximum, then the first position holding it (position 0 when
    // none does, i.e. the maximum is NaN).
    bool any = false;
    T best{};
    for (int64_t c = 0; c < n; ++c) {
      if (!any || best < row[c]) best = row[c], any = true;
    }
    int64_t at = 0;
    for (int64_t c = 0; c < n; ++c) {
      if (row[c] == best) {
        at = c;
        break;
      }
    }
    order->push_back(at);
    return;
  }
  // "a ranks before b": larger value, then lower index.
  const auto before = [row](int64_t a, int64_t b) {
    if (row[b] < row[a]) return true;
    if (row[b] > row[a]) return false;
    return a < b;
  };
  if (k == n) {
    order->resize(static_cast<size_t>(n));
    std::iota(order->begin(), order->end(), 0);
    std::sort(order->begin(), order->end(),
              [row](int64_t a, int64_t b) { return row[b] < row[a]; });
    // Equal runs back into index order (std::sort is not stable).
    for (auto run = order->begin(); run != order->end();) {
      auto end = run + 1;
      if (end == order->end()) break;
      if (row[*run] == row[*end]) {
        while (++end != order->end() && row[*run] == row[*end]) {
        }
        std::sort(run, end);
      }
      run = end;
    }
    return;
  }
  order->resize(static_cast<size_t>(n));
  std::iota(order->begin(), order->end(), 0);
  std::partial_sort(order->begin(), order->begin() + k, order->end(), before);
  order->resize(static_cast<size_t>(k));
}

template <typename T, typename I>
void TopKRows(const Tensor& in, int64_t k, Tensor* values, Tensor* indices) {
  const int64_t n = in.dim_size(in.dims() - 1);
  const int64_t rows = n == 0 ? 0 : in.NumElements() / n;
  const T* src = in.data<T>();
  T* v = values->data<T>();
  I* idx = indices->data<I>();
  std::vector<int64_t> order;
  for (int64_t r = 0; r < rows; ++r) {
    const T* row = src + r * n;
    TopKRow(row, n, k, &order);
    for (int64_t i = 0; i < k; ++i) {
      const int64_t at = order[static_cast<size_t>(i)];
      v[r * k + i] = row[at];
      idx[r * k + i] = static_cast<I>(at);
    }
  }
}

class TopKOp : public OpKernel {
 public:
  explicit TopKOp(OpKernelConstruction* c) : OpKernel(c) {
    bool sorted = true;  // read only to refuse a malformed attr; see the file comment
    Status s = c->attrs().GetOr("sorted", &sorted, true);
    if (!s.ok()) {
      c->SetStatus(s);
      return;
    }
    const DataType dt = c->input_types().empty() ? DataType::kInvalid : c->input_types()[0];
    if (!CheckTypeAllowed(c, "T", dt, DispatchNumeric(dt, [](auto) {}),
                          "float, double, int32, int64, int8, uint8, int16")) {
      return;
    }
    const DataType it = c->output_types().size() < 2 ? DataType::kInvalid : c->output_types()[1];
    CheckTypeAllowed(c, "index_type", it,
                     it == DataType::kInt16 || it == DataType::kInt32 || it == DataType::kInt64,
                     "int16, int32, int64");
  }

  void Compute(OpKernelContext* ctx) override {
    const NodeDef& node = ctx->node();
    const Tensor& in = ctx->input(0);
    int64_t k = 0;
    EMBER_OP_REQUIRES_OK(ctx, ReadK(node, ctx->input(1), &k));
    if (k < 0) {
      ctx->SetStatus(InvalidArg(node, "Need k >= 0, got " + std::to_string(k)));
      return;
    }
    if (in.dims() < 1) {
      ctx->SetStatus(
          InvalidArg(node, "input must be >= 1-D, got shape " + in.shape().DebugString()));
      return;
    }
    const int64_t n = in.dim_size(in.dims() - 1);
    if (n < k) {
      ctx->SetStatus(InvalidArg(node, "input must have at least k columns. Had " +
                                          std::to_string(n) + ", needed " + std::to_string(k)));
      return;
    }
    TensorShape shape = in.shape();
    shape.set_dim(in.dims() - 1, k);
    Tensor* values = nullptr;
    Tensor* indices = nullptr;
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &values));
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output(1, shape, &indices));
    if (k == 0 || values->NumElements() == 0) return;
    DispatchNumeric(in.dtype(), [&](auto tag) {
      using T = decltype(tag);
      switch (indices->dtype()) {
        case DataType::kInt16:
          TopKRows<T, int16_t>(in, k, values, indices);
          break;
        case DataType::kInt64:
          TopKRows<T, int64_t>(in, k, values, indices);
          break;
        default:
          TopKRows<T, int32_t>(in, k, values, indices);
          break;
      }
    });
  }
};

// The input's shape with the last dim replaced by k (when k is a known constant).
Status TopKShape(ShapeContext* c) {
  c->output_shapes.assign(2, UnknownShape());
  if (!oputil::KnownRank(c, 0)) return Status::OK();
  std::vector<int64_t> d = c->input_shapes[0].dims;
  if (d.empty()) return Status::OK();  // the kernel reports the rank
  d.back() = -1;
  std::vector<int64_t> k;
  if (oputil::ConstVector(c, 1, &k) && k.size() == 1 && k[0] >= 0) d.back() = k[0];
  c->output_shapes.assign(2, KnownShape(d));
  return Status::OK();
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterOp("TopKV2", {TypedArg("input", "T"), TypedArg("k", "Tk")},
             {TypedArg("values", "T"), TypedArg("indices", "index_type")}, TopKShape);
  RegisterCpu<TopKOp>("TopKV2");
  return true;
}();

}  // namespace
}  // namespace kernels
}  // namespace ember
