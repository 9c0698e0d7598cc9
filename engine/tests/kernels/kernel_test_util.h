// Runs one registered CPU kernel on given inputs, without a Session: builds the NodeDef,
// creates the kernel through the registry (so OpDefs and type resolution are exercised too)
// and returns the outputs or the status.
#ifndef EMBER_TESTS_KERNELS_KERNEL_TEST_UTIL_H_
#define EMBER_TESTS_KERNELS_KERNEL_TEST_UTIL_H_

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/op_kernel.h"
#include "core/resource_mgr.h"
#include "core/thread_pool.h"
#include "ember/graph_def.h"
#include "ember/status.h"
#include "ember/tensor.h"

namespace ember_kernel_test {

using ember::AttrValue;
using ember::DataType;
using ember::NodeDef;
using ember::Status;
using ember::Tensor;
using ember::TensorShape;

class Node {
 public:
  Node(const std::string& op, const std::string& name = "node") {
    def_.op = op;
    def_.name = name;
  }
  Node& Input(const std::string& in) {
    def_.input.push_back(in);
    return *this;
  }
  Node& Type(const std::string& attr, DataType dt) {
    AttrValue v;
    v.kind = AttrValue::Kind::kType;
    v.type = dt;
    def_.attr[attr] = v;
    return *this;
  }
  Node& Bool(const std::string& attr, bool b) {
    AttrValue v;
    v.kind = AttrValue::Kind::kB;
    v.b = b;
    def_.attr[attr] = v;
    return *this;
  }
  Node& Str(const std::string& attr, const std::string& s) {
    AttrValue v;
    v.kind = AttrValue::Kind::kS;
    v.s = s;
    def_.attr[attr] = v;
    return *this;
  }
  Node& Int(const std::string& attr, int64_t i) {
    AttrValue v;
    v.kind = AttrValue::Kind::kI;
    v.i = i;
    def_.attr[attr] = v;
    return *this;
  }
  Node& Ints(const std::string& attr, std::vector<int64_t> list) {
    AttrValue v;
    v.kind = AttrValue::Kind::kList;
    v.list.i = std::move(list);
    def_.attr[attr] = v;
    return *this;
  }
  Node& Floats(const std::string& attr, std::vector<float> list) {
    AttrValue v;
    v.kind = AttrValue::Kind::kList;
    v.list.f = std::move(list);
    def_.attr[attr] = v;
    return *this;
  }
  Node& Value(const std::string& attr, const Tensor& t) {
    AttrValue v;
    v.kind = AttrValue::Kind::kTensor;
    v.tensor = t;
    def_.attr[attr] = v;
    return *this;
  }
  Node& Shape(const std::string& attr, std::vector<int64_t> dims, bool unknown_rank = false) {
    AttrValue v;
    v.kind = AttrValue::Kind::kShape;
    v.shape.dims = std::move(dims);
    v.shape.unknown_rank = unknown_rank;
    def_.attr[attr] = v;
    return *this;
  }
  const NodeDef& def() const { return def_; }

 private:
  NodeDef def_;
};

struct Result {
  Status status;
  std::vector<Tensor> outputs;
};

// Creates the kernel for `node` and runs it once on `inputs`.
inline Result Run(const Node& node, const std::vector<Tensor>& inputs,
                  ember::ResourceMgr* resources = nullptr, ember::ThreadPool* pool = nullptr) {
  Result r;
  std::unique_ptr<ember::OpKernel> kernel;
  r.status = ember::KernelRegistry::Global()->CreateKernel(node.def(), "CPU", &kernel);
  if (!r.status.ok()) return r;
  const ember::OpDef* op = ember::OpRegistry::Global()->Lookup(node.def().op);
  std::vector<DataType> in_types, out_types;
  r.status = ember::InOutTypesForNode(node.def(), *op, &in_types, &out_types);
  if (!r.status.ok()) return r;
  ember::ResourceMgr local;
  ember::OpKernelContext::Params p;
  p.node = &node.def();
  for (const Tensor& t : inputs) p.inputs.push_back(&t);
  p.output_types = out_types;
  p.resources = resources != nullptr ? resources : &local;
  p.intra_op_pool = pool;
  ember::OpKernelContext ctx(std::move(p));
  kernel->Compute(&ctx);
  r.status = ctx.status();
  r.outputs = ctx.outputs();
  return r;
}

inline Tensor Floats(const TensorShape& shape, std::vector<float> v) {
  return Tensor::From<float>(shape, v);
}
inline Tensor Ints32(const TensorShape& shape, std::vector<int32_t> v) {
  return Tensor::From<int32_t>(shape, v);
}
inline Tensor Ints64(const TensorShape& shape, std::vector<int64_t> v) {
  return Tensor::From<int64_t>(shape, v);
}

inline Tensor RandomFloats(const TensorShape& shape, unsigned seed) {
  Tensor t(DataType::kFloat, shape);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (int64_t i = 0; i < t.NumElements(); ++i) t.data<float>()[i] = dist(gen);
  return t;
}

template <typename T>
std::vector<T> Values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.NumElements());
}

// Largest |a-b| / max(1, |b|) over two float tensors of the same size; NaN when any element is
// NaN (a `worst < err` update would skip it, and a NaN output would pass every `< tol` check).
inline double MaxRelError(const Tensor& a, const std::vector<double>& b) {
  double worst = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    double d = std::fabs(static_cast<double>(a.data<float>()[i]) - b[i]);
    double scale = std::fabs(b[i]) > 1 ? std::fabs(b[i]) : 1.0;
    if (!(d / scale <= worst)) worst = d / scale;
    if (std::isnan(worst)) break;
  }
  return worst;
}

inline bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace ember_kernel_test

#endif  // EMBER_TESTS_KERNELS_KERNEL_TEST_UTIL_H_
