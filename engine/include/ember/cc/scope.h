// Graph construction in the style of TensorFlow's C++ API (tensorflow/cc/framework):
// a Scope accumulates NodeDefs; ops return Outputs that feed other ops.
#ifndef EMBER_CC_SCOPE_H_
#define EMBER_CC_SCOPE_H_

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "ember/graph_def.h"
#include "ember/status.h"
#include "ember/tensor.h"

namespace ember {

// A node in the scope's graph.
class Operation {
 public:
  Operation() = default;
  explicit Operation(std::string name, int num_outputs = 0)
      : name_(std::move(name)), num_outputs_(num_outputs) {}
  const std::string& name() const { return name_; }
  int num_outputs() const { return num_outputs_; }

 private:
  std::string name_;
  int num_outputs_ = 0;
};

// One output tensor of an Operation, "node:index".
class Output {
 public:
  Output() = default;
  Output(const Operation& op, int index, DataType type) : op_(op), index_(index), type_(type) {}
  const Operation& op() const { return op_; }
  const std::string& node_name() const { return op_.name(); }
  int index() const { return index_; }
  DataType type() const { return type_; }
  std::string name() const { return op_.name() + ":" + std::to_string(index_); }
  bool operator==(const Output& o) const {
    return op_.name() == o.op_.name() && index_ == o.index_;
  }

 private:
  Operation op_;
  int index_ = 0;
  DataType type_ = DataType::kInvalid;
};

struct OutputHash {
  size_t operator()(const Output& o) const { return std::hash<std::string>()(o.name()); }
};

// An op argument: an existing Output, or a constant (Tensor or C++ literals) that the op
// wrapper turns into a Const node, as TensorFlow's Input / Input::Initializer do.
class Input {
 public:
  struct Initializer {
    Initializer() = default;
    template <typename T, typename = typename std::enable_if<std::is_arithmetic<T>::value>::type>
    Initializer(const T& v)
        : tensor(
              Tensor::Scalar<typename Mapped<T>::type>(static_cast<typename Mapped<T>::type>(v))) {
    }  // NOLINT
    template <typename T, typename = typename std::enable_if<std::is_arithmetic<T>::value>::type>
    Initializer(const std::initializer_list<T>& v) {  // NOLINT
      using M = typename Mapped<T>::type;
      std::vector<M> vals;
      for (const T& x : v) vals.push_back(static_cast<M>(x));
      tensor = Tensor::From<M>(TensorShape({static_cast<int64_t>(vals.size())}), vals);
    }
    Initializer(const Tensor& t) : tensor(t) {}  // NOLINT
    // Nested lists stack equally shaped rows: {{1, 2}, {3, 4}} is a 2x2 tensor.
    Initializer(const std::initializer_list<Initializer>& rows);  // NOLINT

    // int -> int32, long/long long -> int64, float -> float, double -> double, bool -> bool.
    template <typename T>
    struct Mapped {
      using type = typename std::conditional<
          std::is_same<T, bool>::value, bool,
          typename std::conditional<
              std::is_floating_point<T>::value, T,
              typename std::conditional<
                  (sizeof(T) > 4), int64_t,
                  typename std::conditional<(sizeof(T) == 1 && std::is_unsigned<T>::value), uint8_t,
                                            int32_t>::type>::type>::type>::type;
    };

    Tensor tensor;
    Status status;
  };

  Input(const Output& o) : output_(o), is_output_(true) {}  // NOLINT
  Input(const Initializer& init) : init_(init) {}           // NOLINT
  Input(const Tensor& t) : init_(t) {}                      // NOLINT
  template <typename T, typename = typename std::enable_if<std::is_arithmetic<T>::value>::type>
  Input(const T& v) : init_(v) {}  // NOLINT
  template <typename T, typename = typename std::enable_if<std::is_arithmetic<T>::value>::type>
  Input(const std::initializer_list<T>& v) : init_(v) {}                  // NOLINT
  Input(const std::initializer_list<Initializer>& rows) : init_(rows) {}  // NOLINT

  bool is_output() const { return is_output_; }
  const Output& output() const { return output_; }
  const Initializer& initializer() const { return init_; }

 private:
  Output output_;
  Initializer init_;
  bool is_output_ = false;
};

class Scope {
 public:
  static Scope NewRootScope();

  // Copies share the same graph; these return a copy with one property changed.
  Scope WithOpName(const std::string& name) const;
  Scope NewSubScope(const std::string& name) const;
  Scope WithDevice(const std::string& device) const;
  Scope WithControlDependencies(const std::vector<Operation>& deps) const;

  bool ok() const;
  Status status() const;
  // The graph built so far.
  Status ToGraphDef(GraphDef* out) const;

  // ---- for op wrappers ----
  // Adds a node named after WithOpName or a unique variant of `default_name`, resolving its
  // output dtypes through the op registry. Records errors in the scope's status.
  Operation AddNode(NodeDef node, const std::string& default_name) const;
  // The output dtypes of `op_name` (empty when unknown).
  std::vector<DataType> OutputTypes(const std::string& op_name) const;
  // Turns an Input into an Output, adding a Const node for literals.
  Output AsOutput(const Input& in) const;
  void UpdateStatus(const Status& s) const;
  // Number of nodes ever added (ClientSession extends its session with the new ones).
  size_t num_nodes() const;
  std::vector<NodeDef> NodesFrom(size_t first) const;

 private:
  struct Graph;
  explicit Scope(std::shared_ptr<Graph> g) : graph_(std::move(g)) {}
  std::shared_ptr<Graph> graph_;
  std::string name_;    // from WithOpName
  std::string prefix_;  // "outer/inner/"
  std::string device_;
  std::vector<std::string> control_deps_;
};

}  // namespace ember

#endif  // EMBER_CC_SCOPE_H_
