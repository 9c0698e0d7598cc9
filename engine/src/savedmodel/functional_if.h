// TF2's functional If / StatelessIf (then_branch and else_branch are FunctionDefs of the graph's
// library, as tf.cond in a tf.function or a Keras model has them) lowered to the Switch / Merge
// form of a TF1 tf.cond, which the executor runs with dead tensors (Executor::RunCondNode):
//
//   pivot = Switch(cond, cond); pivot_t = Identity(pivot:1); pivot_f = Identity(pivot:0)
//   arg_k = Switch(x_k, cond)                        (resource args pass straight through)
//   then = PartitionedCall(then_branch)(arg_k:1..., ^pivot_t)   both bodies inlined; a call's
//   else = PartitionedCall(else_branch)(arg_k:0..., ^pivot_f)   control input reaches every node
//   merge_j = Merge(else:j, then:j)
//   executed = Merge(pivot_f, pivot_t, ^then, ^else)   the taken branch has finished
//   N = IdentityN(merge_j..., ^executed)   (a NoOp when the If has no outputs)
//
// so that the untaken branch, constants included, is dead and never computed, and "N:j" and
// "^N" consumers read the cond's results as before.
#ifndef EMBER_SAVEDMODEL_FUNCTIONAL_IF_H_
#define EMBER_SAVEDMODEL_FUNCTIONAL_IF_H_

#include <string>
#include <vector>

#include "ember/graph_def.h"
#include "ember/status.h"
#include "savedmodel/function_inline.h"
#include "savedmodel/functional_while.h"

namespace ember {

inline bool IsFunctionalIf(const std::string& op) { return op == "If" || op == "StatelessIf"; }

// Rewrites `node`, a flat If whose inputs are already resolved, into the IdentityN (or NoOp) of
// the same name described above, and appends the nodes it reads (named "<node>/_ember_if_*",
// branch bodies "<node>/_ember_if_then/..." and ".../_ember_if_else/...") to `added`. A resource
// arg that comes from a VarHandleOp reaches the branches as that very node, so that variable
// kernels and loops inside a branch find the session's variable by name.
Status LowerFunctionalIf(const FunctionDefLibrary& library, const InlineOptions& options,
                         const ProducerLookup& producer, NodeDef* node,
                         std::vector<NodeDef>* added);

}  // namespace ember

#endif  // EMBER_SAVEDMODEL_FUNCTIONAL_IF_H_
