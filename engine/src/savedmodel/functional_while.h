// TF2's functional While / StatelessWhile (cond and body are FunctionDefs of the graph's library,
// as a Keras model.export() or tf.saved_model.save SavedModel has them) as ember's `_EmberWhile`
// node (src/core/control_flow.h): the same loop kernel that runs frozen graphs' v1 loops.
#ifndef EMBER_SAVEDMODEL_FUNCTIONAL_WHILE_H_
#define EMBER_SAVEDMODEL_FUNCTIONAL_WHILE_H_

#include <functional>
#include <string>

#include "ember/graph_def.h"
#include "ember/status.h"
#include "savedmodel/function_inline.h"

namespace ember {

inline bool IsFunctionalWhile(const std::string& op) {
  return op == "While" || op == "StatelessWhile";
}

// The flat node that produces tensor `input` of the flat graph, or null.
using ProducerLookup = std::function<const NodeDef*(const std::string& input)>;

// Rewrites `node`, a flat While whose inputs are already resolved, into an `_EmberWhile` of the
// same name, inputs and outputs: its body graph is cond and body inlined from `library`. A
// resource input (a variable) must come from a VarHandleOp, which the body graph copies so that
// its variable reads find the session's variable by name.
Status LowerFunctionalWhile(const FunctionDefLibrary& library, const InlineOptions& options,
                            const ProducerLookup& producer, NodeDef* node);

}  // namespace ember

#endif  // EMBER_SAVEDMODEL_FUNCTIONAL_WHILE_H_
