// MatMul (transpose_a/b) and BatchMatMul / BatchMatMulV2 (adj_x/adj_y, V2 broadcasts batch dims).
// float goes through the packed GEMM; other types use a plain loop.
#include <algorithm>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "core/op_kernel.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/kernel_util.h"

namespace ember {
namespace kernels {
namespace {

bool MatMulType(DataType dt) {
  return dt == DataType::kFloat || dt == DataType::kDouble || dt == DataType::kInt32 ||
         dt == DataType::kInt64;
}

// C[m,n] = op(A) op(B) for one matrix pair.
template <typename T>
void GemmAny(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, const T* b, T* c,
             ThreadPool* pool) {
  const int64_t lda = ta ? m : k;
  const int64_t ldb = tb ? k : n;
  if constexpr (std::is_same<T, float>::value) {
    Sgemm(ta, tb, m, n, k, a, lda, b, ldb, c, n, pool);
  } else {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        T sum = T(0);
        for (int64_t p = 0; p < k; ++p) {
          T av = ta ? a[p * lda + i] : a[i * lda + p];
          T bv = tb ? b[j * ldb + p] : b[p * ldb + j];
          sum = static_cast<T>(sum + av * bv);
        }
        c[i * n + j] = sum;
      }
    }
  }
}

class MatMulOp : public OpKernel {
 public:
  explicit MatMulOp(OpKernelConstruction* c) : OpKernel(c) {
    dtype_ = c->input_types().empty() ? DataType::kInvalid : c->input_types()[0];
    CheckTypeAllowed(c, "T", dtype_, MatMulType(dtype_), "float, double, int32, int64");
    Status s = c->attrs().GetOr("transpose_a", &ta_, false);
    if (s.ok()) s = c->attrs().GetOr("transpose_b", &tb_, false);
    if (!s.ok()) c->SetStatus(s);
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    for (int i = 0; i < 2; ++i) {
      const Tensor& t = ctx->input(i);
      if (t.dims() != 2) {
        ctx->SetStatus(InvalidArg(ctx->node(), "In[" + std::to_string(i) +
                                                   "] is not a matrix. Instead it has shape " +
                                                   t.shape().DebugString()));
        return;
      }
      if (t.dtype() != dtype_) {
        ctx->SetStatus(InvalidArg(ctx->node(), "In[" + std::to_string(i) + "] has type " +
                                                   DataTypeString(t.dtype()) + ", expected " +
                                                   DataTypeString(dtype_)));
        return;
      }
    }
    const int64_t m = a.dim_size(ta_ ? 1 : 0), k = a.dim_size(ta_ ? 0 : 1);
    const int64_t k2 = b.dim_size(tb_ ? 1 : 0), n = b.dim_size(tb_ ? 0 : 1);
    if (k != k2) {
      ctx->SetStatus(
          InvalidArg(ctx->node(), "Matrix size-incompatible: In[0]: " + a.shape().DebugString() +
                                      ", In[1]: " + b.shape().DebugString()));
      return;
    }
    Tensor* out = nullptr;
    Status s = ctx->allocate_output_uninitialized(0, TensorShape({m, n}), &out);
    if (!s.ok()) {
      ctx->SetStatus(s);
      return;
    }
    DispatchNumeric(dtype_, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same<T, float>::value || std::is_same<T, double>::value ||
                    std::is_same<T, int32_t>::value || std::is_same<T, int64_t>::value) {
        GemmAny<T>(ta_, tb_, m, n, k, a.data<T>(), b.data<T>(), out->data<T>(),
                   ctx->intra_op_pool());
      }
    });
  }

 private:
  DataType dtype_;
  bool ta_ = false, tb_ = false;
};

class BatchMatMulOp : public OpKernel {
 public:
  BatchMatMulOp(OpKernelConstruction* c, bool broadcast) : OpKernel(c), broadcast_(broadcast) {
    dtype_ = c->input_types().empty() ? DataType::kInvalid : c->input_types()[0];
    CheckTypeAllowed(c, "T", dtype_, MatMulType(dtype_), "float, double, int32, int64");
    Status s = c->attrs().GetOr("adj_x", &ax_, false);
    if (s.ok()) s = c->attrs().GetOr("adj_y", &ay_, false);
    if (!s.ok()) c->SetStatus(s);
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    for (int i = 0; i < 2; ++i) {
      const Tensor& t = ctx->input(i);
      if (t.dims() < 2) {
        ctx->SetStatus(InvalidArg(
            ctx->node(),
            "In[" + std::to_string(i) + "] ndims must be >= 2: " + std::to_string(t.dims())));
        return;
      }
      if (t.dtype() != dtype_) {
        ctx->SetStatus(InvalidArg(
            ctx->node(), "In[" + std::to_string(i) + "] has type " + DataTypeString(t.dtype())));
        return;
      }
    }
    const std::vector<int64_t>& xd = x.shape().dim_sizes();
    const std::vector<int64_t>& yd = y.shape().dim_sizes();
    std::vector<int64_t> xb(xd.begin(), xd.end() - 2), yb(yd.begin(), yd.end() - 2), ob;
    bool compatible = broadcast_ ? BroadcastShapes(xb, yb, &ob) : xb == yb;
    if (!broadcast_) ob = xb;
    if (!compatible) {
      ctx->SetStatus(
          InvalidArg(ctx->node(), "In[0] and In[1] must have compatible batch dimensions: " +
                                      x.shape().DebugString() + " vs. " + y.shape().DebugString()));
      return;
    }
    const int64_t xr = xd[xd.size() - 2], xc = xd[xd.size() - 1];
    const int64_t yr = yd[yd.size() - 2], yc = yd[yd.size() - 1];
    const int64_t m = ax_ ? xc : xr, k = ax_ ? xr : xc;
    const int64_t k2 = ay_ ? yc : yr, n = ay_ ? yr : yc;
    if (k != k2) {
      ctx->SetStatus(
          InvalidArg(ctx->node(), "Matrix size-incompatible: In[0]: " + x.shape().DebugString() +
                                      ", In[1]: " + y.shape().DebugString()));
      return;
    }
    std::vector<int64_t> od = ob;
    od.push_back(m);
    od.push_back(n);
    Tensor* out = nullptr;
    Status s = ctx->allocate_output_uninitialized(0, TensorShape(od), &out);
    if (!s.ok()) {
      ctx->SetStatus(s);
      return;
    }
    int64_t batches = 1;
    for (int64_t d : ob) batches *= d;
    const std::vector<int64_t> sx = BroadcastStrides(xb, ob), sy = BroadcastStrides(yb, ob);
    DispatchNumeric(dtype_, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same<T, float>::value || std::is_same<T, double>::value ||
                    std::is_same<T, int32_t>::value || std::is_same<T, int64_t>::value) {
        for (int64_t bi = 0; bi < batches; ++bi) {
          int64_t ix = 0, iy = 0, rem = bi;
          for (size_t d = ob.size(); d-- > 0;) {
            int64_t idx = rem % ob[d];
            rem /= ob[d];
            ix += idx * sx[d];
            iy += idx * sy[d];
          }
          GemmAny<T>(ax_, ay_, m, n, k, x.data<T>() + ix * xr * xc, y.data<T>() + iy * yr * yc,
                     out->data<T>() + bi * m * n, ctx->intra_op_pool());
        }
      }
    });
  }

 private:
  bool broadcast_;
  DataType dtype_;
  bool ax_ = false, ay_ = false;
};

ArgDef TArg(const char* name) {
  ArgDef a;
  a.name = name;
  a.type_attr = "T";
  return a;
}

Status MatMulShape(ShapeContext* c) {
  c->output_shapes.assign(1, UnknownShape());
  if (c->input_shapes.size() < 2) return Status::OK();
  const PartialShape& a = c->input_shapes[0];
  const PartialShape& b = c->input_shapes[1];
  if (a.unknown_rank || b.unknown_rank) return Status::OK();
  if (a.dims.size() != 2 || b.dims.size() != 2) {
    return InvalidArg(*c->node,
                      "Shape must be rank 2 but is rank " +
                          std::to_string(a.dims.size() != 2 ? a.dims.size() : b.dims.size()));
  }
  AttrReader r(*c->node);
  bool ta = false, tb = false;
  EMBER_RETURN_IF_ERROR(r.GetOr("transpose_a", &ta, false));
  EMBER_RETURN_IF_ERROR(r.GetOr("transpose_b", &tb, false));
  int64_t k1 = a.dims[ta ? 0 : 1], k2 = b.dims[tb ? 1 : 0];
  if (k1 >= 0 && k2 >= 0 && k1 != k2) {
    return InvalidArg(*c->node, "Matrix size-incompatible: In[0]: " + DimsString(a.dims) +
                                    ", In[1]: " + DimsString(b.dims));
  }
  c->output_shapes[0] = KnownShape({a.dims[ta ? 1 : 0], b.dims[tb ? 0 : 1]});
  return Status::OK();
}

// Batch dims (broadcast for V2) followed by [m, n], where the ranks are known.
Status BatchMatMulShape(ShapeContext* c, bool broadcast) {
  c->output_shapes.assign(1, UnknownShape());
  if (c->input_shapes.size() < 2) return Status::OK();
  const PartialShape& x = c->input_shapes[0];
  const PartialShape& y = c->input_shapes[1];
  if (x.unknown_rank || y.unknown_rank) return Status::OK();
  if (x.dims.size() < 2 || y.dims.size() < 2) {
    return InvalidArg(*c->node,
                      "In[" + std::string(x.dims.size() < 2 ? "0" : "1") + "] ndims must be >= 2");
  }
  AttrReader r(*c->node);
  bool ax = false, ay = false;
  EMBER_RETURN_IF_ERROR(r.GetOr("adj_x", &ax, false));
  EMBER_RETURN_IF_ERROR(r.GetOr("adj_y", &ay, false));
  const size_t xr = x.dims.size(), yr = y.dims.size();
  std::vector<int64_t> xb(x.dims.begin(), x.dims.end() - 2), yb(y.dims.begin(), y.dims.end() - 2);
  std::vector<int64_t> out;
  if (!broadcast) {
    if (xb.size() != yb.size()) {
      return InvalidArg(*c->node, "In[0] and In[1] must have compatible batch dimensions: " +
                                      DimsString(x.dims) + " vs. " + DimsString(y.dims));
    }
    for (size_t i = 0; i < xb.size(); ++i) out.push_back(xb[i] >= 0 ? xb[i] : yb[i]);
  } else {
    const size_t rank = std::max(xb.size(), yb.size());
    for (size_t i = 0; i < rank; ++i) {
      int64_t a = i < rank - xb.size() ? 1 : xb[i - (rank - xb.size())];
      int64_t b = i < rank - yb.size() ? 1 : yb[i - (rank - yb.size())];
      if (a == 1 || a == b) {
        out.push_back(b);
      } else if (b == 1) {
        out.push_back(a);
      } else if (a < 0 || b < 0) {
        out.push_back(-1);
      } else {
        return InvalidArg(*c->node, "In[0] and In[1] must have compatible batch dimensions: " +
                                        DimsString(x.dims) + " vs. " + DimsString(y.dims));
      }
    }
  }
  out.push_back(x.dims[ax ? xr - 1 : xr - 2]);
  out.push_back(y.dims[ay ? yr - 2 : yr - 1]);
  c->output_shapes[0] = KnownShape(out);
  return Status::OK();
}

[[maybe_unused]] const bool kRegistered = [] {
  OpDef mm;
  mm.name = "MatMul";
  mm.inputs = {TArg("a"), TArg("b")};
  mm.outputs = {TArg("product")};
  mm.shape_fn = MatMulShape;
  OpRegistry::Global()->Register(std::move(mm));
  KernelRegistry::Global()->Register("MatMul", "CPU", [](OpKernelConstruction* c) {
    return std::unique_ptr<OpKernel>(new MatMulOp(c));
  });
  for (const char* op : {"BatchMatMul", "BatchMatMulV2"}) {
    const bool broadcast = std::string(op) == "BatchMatMulV2";
    OpDef def;
    def.name = op;
    def.inputs = {TArg("x"), TArg("y")};
    def.outputs = {TArg("output")};
    def.shape_fn = [broadcast](ShapeContext* c) { return BatchMatMulShape(c, broadcast); };
    OpRegistry::Global()->Register(std::move(def));
    KernelRegistry::Global()->Register(op, "CPU", [broadcast](OpKernelConstruction* c) {
      return std::unique_ptr<OpKernel>(new BatchMatMulOp(c, broadcast));
    });
  }
  return true;
}();

}  // namespace
}  // namespace kernels
}  // namespace ember
