// Checks of the WHILE and IF operators of a parsed model, for Model::Parse.
#ifndef EMBER_SRC_LITE_MODEL_CONTROL_FLOW_H_
#define EMBER_SRC_LITE_MODEL_CONTROL_FLOW_H_

#include <vector>

#include "ember/lite/schema.h"
#include "ember/status.h"

namespace ember {
namespace lite {

// WHILE/IF: subgraph indices in range (and not the main subgraph), input/output counts and types
// that agree with the subgraphs they run, WHILE's cond and body distinct, cond's one BOOL output,
// IF's BOOL condition; and no subgraph that runs itself, directly or through others. Errors are
// INVALID_ARGUMENT naming the subgraph, the operator and the field. Shapes are checked by
// Interpreter::AllocateTensors (kernels_control_flow.cc).
Status CheckControlFlow(const std::vector<SubGraphDef>& graphs);

}  // namespace lite
}  // namespace ember

#endif  // EMBER_SRC_LITE_MODEL_CONTROL_FLOW_H_
