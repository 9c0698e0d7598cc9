// TensorFlow v1 while loops (the lowered form a frozen TF2 graph has: Enter, Merge, Switch,
// LoopCond, NextIteration, Exit in a frame) rewritten into one `_EmberWhile` node per loop.
//
// ember's executor runs a graph once, node by node, with no frames. Rather than giving it
// TensorFlow's frame machinery, each loop is cut out of the graph at load time:
//
//   Enter(x_i) -> Merge_i <- NextIteration_i(next_i)      loop variable i
//   Merge_i -> Switch_i(., LoopCond(pred)) -> :0 Exit_i | :1 body
//   Enter(is_constant=true)(c_j)                           loop invariant j
//
// becomes `_EmberWhile(x_0..x_n-1, c_0.., t_0..)` whose attr `body` holds a GraphDef (binary)
// with Placeholders `_ember_arg_k`, the condition `_ember_cond` and the next values
// `_ember_next_i`; each Exit_i becomes an Identity of output i under the Exit's name, so
// consumers and fetches are unchanged. Tensors of enclosing frames that the body reads
// directly (t_k) become extra invariant inputs. Nested loops are rewritten innermost first,
// so an inner loop is one node of its outer loop's body. The `_EmberWhile` kernel
// (kernels/cpu/while_op.cc) runs the condition and the body with ember's executor.
#ifndef EMBER_CORE_CONTROL_FLOW_H_
#define EMBER_CORE_CONTROL_FLOW_H_

#include <vector>

#include "ember/graph_def.h"
#include "ember/status.h"

namespace ember {

// Node names inside a `_EmberWhile` body graph.
inline constexpr const char* kWhileArgPrefix = "_ember_arg_";    // + k: input k
inline constexpr const char* kWhileCondName = "_ember_cond";     // the bool predicate
inline constexpr const char* kWhileNextPrefix = "_ember_next_";  // + i: loop var i's next value

// Rewrites every while loop of `nodes` in place. A graph without loop ops is left untouched.
// A loop whose structure is not the one above fails with INVALID_ARGUMENT naming the node.
Status LowerWhileLoops(std::vector<NodeDef>* nodes);

}  // namespace ember

#endif  // EMBER_CORE_CONTROL_FLOW_H_
