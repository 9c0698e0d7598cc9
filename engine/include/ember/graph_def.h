// In-memory GraphDef: the subset of tensorflow.GraphDef that ember reads and writes.
#ifndef EMBER_GRAPH_DEF_H_
#define EMBER_GRAPH_DEF_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ember/status.h"
#include "ember/tensor.h"
#include "ember/types.h"

namespace ember {

// TensorShapeProto; a dim of -1 is unknown, unknown_rank means nothing is known.
struct PartialShape {
  std::vector<int64_t> dims;
  bool unknown_rank = false;
};

// AttrValue: exactly one of the members is meaningful, chosen by `kind`.
struct AttrValue {
  enum class Kind { kNone, kS, kI, kF, kB, kType, kShape, kTensor, kList, kPlaceholder, kFunc };
  Kind kind = Kind::kNone;
  std::string s;  // bytes for kS, the name for kPlaceholder / kFunc
  int64_t i = 0;
  float f = 0;
  bool b = false;
  DataType type = DataType::kInvalid;
  PartialShape shape;
  Tensor tensor;
  struct List {
    std::vector<std::string> s;
    std::vector<int64_t> i;
    std::vector<float> f;
    std::vector<bool> b;
    std::vector<DataType> type;
    std::vector<PartialShape> shape;
    std::vector<Tensor> tensor;
    std::vector<std::string> func;  // function names
  } list;
  // kTensor of DT_STRING: the string_val entries (Tensor holds no string storage).
  std::vector<std::string> string_val;
  // kFunc: the NameAttrList's own attrs (instantiation attrs of the called function).
  std::shared_ptr<const std::map<std::string, AttrValue>> func_attr;
};

struct NodeDef {
  std::string name;
  std::string op;
  std::vector<std::string> input;  // "x", "x:1" or "^ctrl"
  std::string device;
  std::map<std::string, AttrValue> attr;
};

// OpDef.ArgDef as used in a FunctionDef signature.
struct FunctionArg {
  std::string name;
  DataType type = DataType::kInvalid;
  std::string type_attr;
  std::string number_attr;
  std::string type_list_attr;
};

// FunctionDef: a signature (OpDef), a body of NodeDefs whose inputs name function arguments
// ("x") or node outputs by output-arg name ("MatMul:product:0"), and `ret` mapping each output
// arg to such a tensor.
struct FunctionDef {
  std::string name;  // signature.name
  std::vector<FunctionArg> input_arg;
  std::vector<FunctionArg> output_arg;
  std::vector<std::string> control_output;
  std::map<std::string, AttrValue> attr;
  std::vector<NodeDef> node_def;
  std::map<std::string, std::string> ret;
  std::map<std::string, std::string> control_ret;
};

struct FunctionDefLibrary {
  std::vector<FunctionDef> function;
  // nullptr when absent.
  const FunctionDef* Find(const std::string& name) const {
    for (const FunctionDef& f : function) {
      if (f.name == name) return &f;
    }
    return nullptr;
  }
};

struct GraphDef {
  std::vector<NodeDef> node;
  FunctionDefLibrary library;
  int32_t producer = 0;
  int32_t min_consumer = 0;
};

// Parses a binary tensorflow.GraphDef (.pb). Never crashes on malformed input.
Status ParseGraphDefBinary(const void* data, size_t size, GraphDef* out);
// Parses the protobuf JSON mapping of a GraphDef.
Status ParseGraphDefJson(const std::string& text, GraphDef* out);
// Reads a .pb or .json file, choosing the parser by content.
Status ReadGraphDefFile(const std::string& path, GraphDef* out);
// Writes a binary GraphDef (used by tests and the cc API).
std::string SerializeGraphDefBinary(const GraphDef& graph);

}  // namespace ember

#endif  // EMBER_GRAPH_DEF_H_
