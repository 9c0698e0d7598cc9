// saved_model.pb on the wire: SavedModel -> MetaGraphDef -> GraphDef (with its library),
// SaverDef and SignatureDefs. The object graph is not needed: variables are restored through
// the SaverDef's restore function.
#ifndef EMBER_SAVEDMODEL_SAVED_MODEL_PROTO_H_
#define EMBER_SAVEDMODEL_SAVED_MODEL_PROTO_H_

#include <map>
#include <string>
#include <vector>

#include "ember/graph_def.h"
#include "ember/saved_model.h"
#include "ember/status.h"

namespace ember {

struct SaverDefInfo {
  std::string filename_tensor_name;  // "saver_filename:0"
  std::string save_tensor_name;
  std::string restore_op_name;  // a node of the graph (a call of the restore function)
};

struct MetaGraphInfo {
  std::vector<std::string> tags;
  GraphDef graph;
  bool has_saver = false;
  SaverDefInfo saver;
  std::map<std::string, SignatureDef> signatures;  // tensor names as in `graph`
  // SavedObjectGraph.concrete_functions[f].bound_inputs: the object-graph node ids of the
  // variables a function captures (its last inputs). Ids match the checkpoint's object graph.
  std::map<std::string, std::vector<int>> bound_inputs;
};

// TrackableObjectGraph (the checkpoint's _CHECKPOINTABLE_OBJECT_GRAPH): per node, the checkpoint
// key of its VARIABLE_VALUE attribute ("" when it has none).
Status ParseTrackableObjectGraph(const std::string& where, const std::string& bytes,
                                 std::vector<std::string>* variable_keys);

// Parses a SavedModel message. Errors start with `name` (the file).
Status ParseSavedModel(const std::string& name, const std::string& bytes,
                       std::vector<MetaGraphInfo>* out);

}  // namespace ember

#endif  // EMBER_SAVEDMODEL_SAVED_MODEL_PROTO_H_
