// Flattens a GraphDef's function calls: every StatefulPartitionedCall / PartitionedCall (or a
// node whose op names a library function) reached from the requested roots is replaced by a copy
// of the function body, instantiated with the call's attrs, its nodes renamed "<call>/<node>",
// its input args bound to the call's inputs, and the call's outputs bound to the body's `ret`
// tensors. A NoOp named like the call stands for it as a control dependency: it waits for the
// ret tensors and the `control_ret` nodes. Calls nest; a call's control inputs reach every node
// of its body. Resource handles pass straight through (function args and resource Identity
// nodes are bound to the outer VarHandleOp), which is how variable kernels find their variable.
#ifndef EMBER_SAVEDMODEL_FUNCTION_INLINE_H_
#define EMBER_SAVEDMODEL_FUNCTION_INLINE_H_

#include <string>
#include <vector>

#include "ember/graph_def.h"
#include "ember/status.h"

namespace ember {

struct InlineOptions {
  // Fail when a kept node's op is not registered, naming the function and node that use it.
  bool check_ops = true;
  // Restore the default attrs SavedModels strip (op_defaults.h).
  bool add_default_attrs = true;
  // A call in the top-level graph stays a node of its own name: an IdentityN of its rets (and
  // control rets) that its consumers read, so that a Session can feed and fetch "call:i" as
  // TensorFlow's does. Off (the SavedModel loader), the call's consumers read the rets directly
  // and a NoOp of its name stands for it as a control dependency.
  bool keep_top_level_calls = false;
};

// Attr values of the nodes the functional While and If lowerings write.
inline AttrValue TypeValue(DataType t) {
  AttrValue v;
  v.kind = AttrValue::Kind::kType;
  v.type = t;
  return v;
}

inline AttrValue TypeList(const std::vector<DataType>& types) {
  AttrValue v;
  v.kind = AttrValue::Kind::kList;
  v.list.type = types;
  return v;
}

// `roots` are tensor names ("n", "n:1") or control targets ("^n") of `graph`'s top level;
// `flat_roots` receives their names in `out`, which holds only what the roots need.
Status InlineFunctionCalls(const GraphDef& graph, const std::vector<std::string>& roots,
                           const InlineOptions& options, GraphDef* out,
                           std::vector<std::string>* flat_roots);

}  // namespace ember

#endif  // EMBER_SAVEDMODEL_FUNCTION_INLINE_H_
