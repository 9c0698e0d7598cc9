// Serialises a model description into a .tflite (TFL3) FlatBuffer that LiteRT loads.
// Used by ember-convert and by tests that build models by hand.
#ifndef EMBER_LITE_WRITER_H_
#define EMBER_LITE_WRITER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "ember/lite/schema.h"
#include "ember/status.h"

namespace ember {
namespace lite {

// Writes `graph` as the only subgraph. Each tensor whose `data` is set gets its own buffer
// (16-byte aligned); operator codes are deduplicated by (op, version). A WHILE or IF operator
// (which runs other subgraphs) is an INVALID_ARGUMENT: write those with the overload below.
StatusOr<std::vector<uint8_t>> WriteModel(const SubGraphDef& graph,
                                          const std::string& description = "ember");
// Writes every subgraph, graphs[0] the main one (Model::subgraphs() round-trips). Subgraph
// indices in WHILE/IF options are written as given: Model::FromBuffer checks them.
StatusOr<std::vector<uint8_t>> WriteModel(const std::vector<SubGraphDef>& graphs,
                                          const std::string& description = "ember");

}  // namespace lite
}  // namespace ember

#endif  // EMBER_LITE_WRITER_H_
