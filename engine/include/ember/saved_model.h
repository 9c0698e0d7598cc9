// Loading a TensorFlow 2 SavedModel directory (tf.saved_model.save):
//   DIR/saved_model.pb                     SavedModel -> MetaGraphDef (graph, library, signatures)
//   DIR/variables/variables.index + .data-* the TensorBundle checkpoint of the variables
// The signature functions (StatefulPartitionedCall / PartitionedCall) are inlined into one flat
// graph; each variable a signature reads is restored from the checkpoint under the key that the
// object graph gives its captured handle (TF2), or that the saver's restore function assigns it
// (TF1 and the rest); the result runs in an ordinary Session. TF1-style SavedModels (reference
// variables, no functions) load too.
#ifndef EMBER_SAVED_MODEL_H_
#define EMBER_SAVED_MODEL_H_

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ember/graph_def.h"
#include "ember/session.h"
#include "ember/status.h"
#include "ember/tensor.h"

namespace ember {

// The tag of the serving MetaGraph.
constexpr const char kSavedModelTagServe[] = "serve";

// A signature input or output: `name` is the tensor in the bundle's session ("node:index").
struct TensorInfo {
  std::string name;
  DataType dtype = DataType::kInvalid;
  PartialShape shape;
};

struct SignatureDef {
  std::string method_name;
  std::map<std::string, TensorInfo> inputs;   // input key -> tensor
  std::map<std::string, TensorInfo> outputs;  // output key -> tensor
};

struct SavedModelBundle {
  std::unique_ptr<Session> session;
  // Every signature of the MetaGraph except TensorFlow's internal ones
  // (`__saved_model_init_op`), with tensor names valid in `session`.
  std::map<std::string, SignatureDef> signatures;
  // Signatures that cannot run (an op ember lacks inside their functions), with the error that
  // names the function and node; Run on them returns it.
  std::map<std::string, Status> signature_errors;
  // The flat graph `session` runs (functions inlined, variables' restore nodes added).
  GraphDef graph;

  // Runs signature `signature_key` with inputs by key; `output_keys` empty fetches all outputs
  // (in key order, written back to *output_keys).
  Status Run(const std::string& signature_key,
             const std::vector<std::pair<std::string, Tensor>>& inputs,
             std::vector<std::string>* output_keys, std::vector<Tensor>* outputs) const;
};

// Loads the MetaGraph of `export_dir` whose tags include all of `tags` (usually {"serve"}).
// Errors name the file (saved_model.pb, variables.index, a data shard) or, for an op ember does
// not implement, the function and node that use it.
Status LoadSavedModel(const SessionOptions& options, const std::string& export_dir,
                      const std::vector<std::string>& tags, SavedModelBundle* bundle);

// True when `path` is a directory holding saved_model.pb.
bool IsSavedModelDirectory(const std::string& path);

}  // namespace ember

#endif  // EMBER_SAVED_MODEL_H_
