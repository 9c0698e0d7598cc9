// Small helpers shared by the model-coverage kernel files (cwise_extra_ops.cc, slice_ops.cc,
// array_extra_ops.cc, nn_extra_ops.cc, reduction_extra_ops.cc, einsum_op.cc): OpDef building,
// registration, error propagation and index arithmetic for broadcasting.
#ifndef EMBER_KERNELS_CPU_OP_UTIL_H_
#define EMBER_KERNELS_CPU_OP_UTIL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/op_kernel.h"
#include "kernels/cpu/kernel_util.h"

// Records `expr`'s error on ctx and returns from Compute when it fails.
#define EMBER_OP_REQUIRES_OK(ctx, expr) \
  do {                                  \
    ::ember::Status _s = (expr);        \
    if (!_s.ok()) {                     \
      (ctx)->SetStatus(_s);             \
      return;                           \
    }                                   \
  } while (0)

namespace ember {
namespace kernels {
namespace oputil {

inline ArgDef TypedArg(const char* name, const char* type_attr, const char* number_attr = "") {
  ArgDef a;
  a.name = name;
  a.type_attr = type_attr;
  a.number_attr = number_attr;
  return a;
}
inline ArgDef FixedArg(const char* name, DataType dt, const char* number_attr = "") {
  ArgDef a;
  a.name = name;
  a.type = dt;
  a.number_attr = number_attr;
  return a;
}
inline ArgDef ListArg(const char* name, const char* type_list_attr) {
  ArgDef a;
  a.name = name;
  a.type_list_attr = type_list_attr;
  return a;
}

inline void RegisterOp(const char* name, std::vector<ArgDef> in, std::vector<ArgDef> out,
                       ShapeFn fn) {
  OpDef def;
  def.name = name;
  def.inputs = std::move(in);
  def.outputs = std::move(out);
  def.shape_fn = std::move(fn);
  OpRegistry::Global()->Register(std::move(def));
}

template <typename K>
void RegisterCpu(const char* op) {
  KernelRegistry::Global()->Register(
      op, "CPU", [](OpKernelConstruction* c) { return std::unique_ptr<OpKernel>(new K(c)); });
}

// Row-major strides of `dims`.
inline std::vector<int64_t> Strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

inline int64_t Product(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// Normalises `axis` into [0, rank); false when out of range.
inline bool NormalizeAxis(int64_t* axis, int64_t rank) {
  if (*axis < -rank || *axis >= rank) return false;
  if (*axis < 0) *axis += rank;
  return true;
}

// Reads a scalar (or one-element) int32/int64 tensor.
inline Status ReadScalarIndex(const NodeDef& node, const Tensor& t, const char* what,
                              int64_t* out) {
  std::vector<int64_t> v;
  EMBER_RETURN_IF_ERROR(ReadIndexVector(node, t, what, &v));
  if (v.size() != 1) {
    return InvalidArg(
        node, std::string(what) + " must be a scalar, got shape " + t.shape().DebugString());
  }
  *out = v[0];
  return Status::OK();
}

// The shape of a known constant int vector input of a shape function, or false.
inline bool ConstVector(const ShapeContext* c, size_t i, std::vector<int64_t>* out) {
  if (c->input_values.size() <= i || c->input_values[i] == nullptr) return false;
  return ReadIndexVector(*c->node, *c->input_values[i], "input", out).ok();
}
inline bool KnownRank(const ShapeContext* c, size_t i) {
  return c->input_shapes.size() > i && !c->input_shapes[i].unknown_rank;
}
inline bool FullyKnown(const ShapeContext* c, size_t i) {
  if (!KnownRank(c, i)) return false;
  for (int64_t d : c->input_shapes[i].dims) {
    if (d < 0) return false;
  }
  return true;
}

// out = UnknownShape() for every output: for ops whose shapes depend on values.
inline ShapeFn UnknownOutputs(size_t n) {
  return [n](ShapeContext* c) {
    c->output_shapes.assign(n, UnknownShape());
    return Status::OK();
  };
}

}  // namespace oputil
}  // namespace kernels
}  // namespace ember

#endif  // EMBER_KERNELS_CPU_OP_UTIL_H_
