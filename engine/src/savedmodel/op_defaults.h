// Default attr values that tf.saved_model.save strips from NodeDefs (MetaInfoDef
// stripped_default_attrs), restored before the graph is built. ember's OpDefs do not carry attr
// defaults yet (DESIGN.md, move 2: they belong in src/ops/), so this is TensorFlow's op
// registry's defaults for the ops a SavedModel commonly holds.
#ifndef EMBER_SAVEDMODEL_OP_DEFAULTS_H_
#define EMBER_SAVEDMODEL_OP_DEFAULTS_H_

#include "ember/graph_def.h"

namespace ember {

// Adds each default attr of `node`'s op that the node lacks.
void AddDefaultAttrs(NodeDef* node);

}  // namespace ember

#endif  // EMBER_SAVEDMODEL_OP_DEFAULTS_H_
