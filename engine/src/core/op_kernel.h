// The op and kernel registration interface that CPU (and later CUDA) kernels implement.
//
// An op is registered once with its type signature and shape function; a kernel is
// registered per (op, device). Kernel files live in src/kernels/<device>/ and register
// themselves with the macros at the bottom; the library is linked as a whole archive /
// object library so that static registration runs.
#ifndef EMBER_CORE_OP_KERNEL_H_
#define EMBER_CORE_OP_KERNEL_H_

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ember/graph_def.h"
#include "ember/status.h"
#include "ember/tensor.h"

namespace ember {

class ThreadPool;  // defined in src/core/thread_pool.h
class Device;      // defined in src/core/device.h

// ---- attribute access shared by shape functions and kernel construction ----
class AttrReader {
 public:
  explicit AttrReader(const NodeDef& node) : node_(node) {}
  const NodeDef& node() const { return node_; }
  bool Has(const std::string& name) const { return node_.attr.count(name) != 0; }
  // Each getter fails with INVALID_ARGUMENT naming the node and attr when missing or of another
  // kind.
  Status Get(const std::string& name, DataType* out) const;
  Status Get(const std::string& name, int64_t* out) const;
  Status Get(const std::string& name, float* out) const;
  Status Get(const std::string& name, bool* out) const;
  Status Get(const std::string& name, std::string* out) const;
  Status Get(const std::string& name, Tensor* out) const;
  Status Get(const std::string& name, PartialShape* out) const;
  Status Get(const std::string& name, std::vector<int64_t>* out) const;
  Status Get(const std::string& name, std::vector<DataType>* out) const;
  // Same, but `fallback` when the attr is absent.
  template <typename T>
  Status GetOr(const std::string& name, T* out, const T& fallback) const {
    if (!Has(name)) {
      *out = fallback;
      return Status::OK();
    }
    return Get(name, out);
  }

 private:
  const NodeDef& node_;
};

// ---- op definitions ----
// One input or output argument, as in TensorFlow's OpDef.ArgDef:
// a fixed `type`, or a `type_attr` naming a type attr ("T"), optionally repeated
// `number_attr` times ("N") or typed by a list attr `type_list_attr`.
struct ArgDef {
  std::string name;
  DataType type = DataType::kInvalid;
  std::string type_attr;
  std::string number_attr;
  std::string type_list_attr;
  bool is_ref = false;
};

// Infers output shapes from input shapes (and constant inputs when known).
// Unknown dims are -1; an unknown rank is PartialShape::unknown_rank.
struct ShapeContext {
  const NodeDef* node;
  std::vector<PartialShape> input_shapes;
  std::vector<const Tensor*> input_values;  // nullptr where the value is not a known constant
  std::vector<PartialShape> output_shapes;  // filled by the shape function
};
using ShapeFn = std::function<Status(ShapeContext*)>;

struct OpDef {
  std::string name;
  std::vector<ArgDef> inputs;
  std::vector<ArgDef> outputs;
  bool is_stateful = false;  // kernels cached per session (variables, queues)
  ShapeFn shape_fn;          // may be empty: outputs unknown
};

class OpRegistry {
 public:
  static OpRegistry* Global();
  void Register(OpDef def);
  const OpDef* Lookup(const std::string& op) const;  // nullptr if unknown
  std::vector<std::string> ListOps() const;

 private:
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<OpDef>> ops_;
};

// Resolves the input and output dtypes of `node` from its op's ArgDefs and attrs.
Status InOutTypesForNode(const NodeDef& node, const OpDef& op, std::vector<DataType>* inputs,
                         std::vector<DataType>* outputs);

// ---- kernels ----
// Per-session state that outlives one Run: variables and other resources, keyed by node name.
class ResourceMgr;

class OpKernelConstruction {
 public:
  OpKernelConstruction(const NodeDef& node, std::vector<DataType> input_types,
                       std::vector<DataType> output_types)
      : attrs_(node),
        input_types_(std::move(input_types)),
        output_types_(std::move(output_types)) {}
  const NodeDef& node() const { return attrs_.node(); }
  const AttrReader& attrs() const { return attrs_; }
  template <typename T>
  Status GetAttr(const std::string& name, T* out) const {
    return attrs_.Get(name, out);
  }
  const std::vector<DataType>& input_types() const { return input_types_; }
  const std::vector<DataType>& output_types() const { return output_types_; }
  // A kernel that cannot be built (bad attrs) records why; the session reports it.
  void SetStatus(const Status& s) {
    if (status_.ok()) status_ = s;
  }
  const Status& status() const { return status_; }

 private:
  AttrReader attrs_;
  std::vector<DataType> input_types_;
  std::vector<DataType> output_types_;
  Status status_;
};

class OpKernelContext {
 public:
  struct Params {
    const NodeDef* node = nullptr;
    std::vector<const Tensor*> inputs;
    std::vector<DataType> output_types;
    ResourceMgr* resources = nullptr;     // session-owned; never null during Run
    ThreadPool* intra_op_pool = nullptr;  // may be null: run single-threaded
    std::function<bool()> is_cancelled;   // may be empty
    Device* device = nullptr;             // where the kernel runs; null: the host
    bool allow_tf32 = false;              // SessionOptions::allow_tf32
  };
  explicit OpKernelContext(Params params)
      : params_(std::move(params)), outputs_(params_.output_types.size()) {}

  // The vectors a context holds. A caller that runs many kernels (the executor) passes the
  // last context's, emptied by Release, to the next one: they keep their capacity, and a node
  // then costs no heap allocation for them.
  struct Storage {
    std::vector<const Tensor*> inputs;
    std::vector<DataType> output_types;
    std::vector<Tensor> outputs;
  };
  // `params.inputs` and `params.output_types` may come from a Storage; `outputs` is one's.
  OpKernelContext(Params params, std::vector<Tensor> outputs)
      : params_(std::move(params)), outputs_(std::move(outputs)) {
    outputs_.clear();
    outputs_.resize(params_.output_types.size());
  }
  // Hands this context's vectors, emptied, to `s` (the context is not used after).
  void Release(Storage* s) {
    params_.inputs.clear();
    params_.output_types.clear();
    outputs_.clear();
    s->inputs = std::move(params_.inputs);
    s->output_types = std::move(params_.output_types);
    s->outputs = std::move(outputs_);
  }

  const NodeDef& node() const { return *params_.node; }
  int num_inputs() const { return static_cast<int>(params_.inputs.size()); }
  const Tensor& input(int i) const { return *params_.inputs[static_cast<size_t>(i)]; }
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  DataType expected_output_dtype(int i) const {
    return params_.output_types[static_cast<size_t>(i)];
  }

  // Allocates output i with the op's output dtype, in the memory of the kernel's device (host
  // memory on the CPU); returns a pointer valid until the kernel returns.
  // The host buffer is zero-filled.
  Status allocate_output(int i, const TensorShape& shape, Tensor** out) {
    return AllocateOutput(i, shape, /*zero=*/true, out);
  }
  // Same, but a host buffer's contents are left unspecified (Tensor::Uninitialized): only for a
  // kernel that writes every element of the output on every path that returns OK.
  Status allocate_output_uninitialized(int i, const TensorShape& shape, Tensor** out) {
    return AllocateOutput(i, shape, /*zero=*/false, out);
  }
  // Sets output i to an existing tensor (sharing its buffer, e.g. Identity / Reshape).
  void set_output(int i, const Tensor& t);
  Tensor* mutable_output(int i) { return &outputs_[static_cast<size_t>(i)]; }
  std::vector<Tensor>& outputs() { return outputs_; }

  ResourceMgr* resources() const { return params_.resources; }
  ThreadPool* intra_op_pool() const { return params_.intra_op_pool; }
  Device* device() const { return params_.device; }
  bool allow_tf32() const { return params_.allow_tf32; }
  bool is_cancelled() const { return params_.is_cancelled && params_.is_cancelled(); }

  // The first error wins; the executor stops the step and reports it.
  void SetStatus(const Status& s) {
    if (status_.ok()) status_ = s;
  }
  const Status& status() const { return status_; }

 private:
  Status AllocateOutput(int i, const TensorShape& shape, bool zero, Tensor** out);

  Params params_;
  std::vector<Tensor> outputs_;
  Status status_;
};

class OpKernel {
 public:
  explicit OpKernel(OpKernelConstruction* ctx)
      : node_name_(ctx->node().name), op_(ctx->node().op) {}
  virtual ~OpKernel() = default;
  // Must be safe to call from several threads at once (concurrent Runs share kernels).
  virtual void Compute(OpKernelContext* ctx) = 0;
  const std::string& name() const { return node_name_; }
  const std::string& type_string() const { return op_; }

 private:
  std::string node_name_;
  std::string op_;
};

using KernelFactory = std::function<std::unique_ptr<OpKernel>(OpKernelConstruction*)>;

class KernelRegistry {
 public:
  static KernelRegistry* Global();
  // `type_constraint` ("T" -> float) may be empty; the first matching registration wins.
  // `host_memory_inputs`: inputs a kernel on a non-host device reads from host memory (a
  // shape, an axis); the executor copies them to the host for it.
  void Register(const std::string& op, const std::string& device, KernelFactory factory,
                std::vector<std::pair<std::string, DataType>> type_constraints = {},
                std::vector<int> host_memory_inputs = {});
  // Builds a kernel for `node` on `device` ("CPU", "GPU"); NOT_FOUND naming the node and op if
  // none. `host_memory_inputs`, when given, receives the registration's host-memory inputs.
  Status CreateKernel(const NodeDef& node, const std::string& device,
                      std::unique_ptr<OpKernel>* out,
                      std::vector<int>* host_memory_inputs = nullptr) const;

 private:
  struct Entry {
    std::string op, device;
    KernelFactory factory;
    std::vector<std::pair<std::string, DataType>> constraints;
    std::vector<int> host_memory_inputs;
  };
  mutable std::mutex mu_;
  std::vector<Entry> entries_;
};

// Helpers for static registration in kernel files:
//   EMBER_REGISTER_OP(OpDef{...});
//   EMBER_REGISTER_KERNEL("Add", "CPU", [](OpKernelConstruction* c) { ... });
struct OpRegistrar {
  explicit OpRegistrar(OpDef def) { OpRegistry::Global()->Register(std::move(def)); }
};
struct KernelRegistrar {
  KernelRegistrar(const std::string& op, const std::string& device, KernelFactory f,
                  std::vector<std::pair<std::string, DataType>> c = {},
                  std::vector<int> host_memory_inputs = {}) {
    KernelRegistry::Global()->Register(op, device, std::move(f), std::move(c),
                                       std::move(host_memory_inputs));
  }
};

}  // namespace ember

#define EMBER_CONCAT_INNER(a, b) a##b
#define EMBER_CONCAT(a, b) EMBER_CONCAT_INNER(a, b)
#define EMBER_REGISTER_OP(...) \
  static ::ember::OpRegistrar EMBER_CONCAT(ember_op_registrar_, __COUNTER__)(__VA_ARGS__)
#define EMBER_REGISTER_KERNEL(...) \
  static ::ember::KernelRegistrar EMBER_CONCAT(ember_kernel_registrar_, __COUNTER__)(__VA_ARGS__)

#endif  // EMBER_CORE_OP_KERNEL_H_
