// libFuzzer target for the SavedModel loaders: saved_model.pb (SavedModel -> MetaGraphDef ->
// GraphDef with its function library, signatures, object graph) followed by function inlining
// of every signature, and the TensorBundle index (LevelDB table + BundleEntryProto).
// The first byte picks the loader: 'I' = variables.index, anything else = saved_model.pb.
// Build and run: engine/fuzz/savedmodel_fuzz.sh [SECONDS] (clang, ASan + UBSan).
// Properties beyond "no crash": every error has a message; every parsed index entry re-parses.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "savedmodel/function_inline.h"
#include "savedmodel/saved_model_proto.h"
#include "savedmodel/tensor_bundle.h"

namespace ember {
// The fuzzer links no kernels: every op is unknown to the registry, which the inliner tolerates
// (check_ops off) so that inlining itself is exercised.
int KernelAnchorSum() { return 0; }
}  // namespace ember

namespace {
void Check(bool ok, const char* what) {
  if (!ok) {
    __builtin_printf("savedmodel_fuzz: property violated: %s\n", what);
    std::abort();
  }
}

void FuzzSavedModel(const std::string& bytes) {
  std::vector<ember::MetaGraphInfo> metas;
  ember::Status s = ember::ParseSavedModel("saved_model.pb", bytes, &metas);
  if (!s.ok()) {
    Check(!s.message().empty(), "an error has a message");
    return;
  }
  for (const ember::MetaGraphInfo& mg : metas) {
    std::vector<std::string> roots;
    for (const auto& sig : mg.signatures) {
      for (const auto& in : sig.second.inputs) roots.push_back(in.second.name);
      for (const auto& out : sig.second.outputs) roots.push_back(out.second.name);
    }
    if (mg.has_saver && !mg.saver.restore_op_name.empty()) {
      roots.push_back("^" + mg.saver.restore_op_name);
    }
    ember::InlineOptions options;
    options.check_ops = false;
    ember::GraphDef flat;
    std::vector<std::string> flat_roots;
    ember::Status is = ember::InlineFunctionCalls(mg.graph, roots, options, &flat, &flat_roots);
    if (!is.ok()) {
      Check(!is.message().empty(), "an inlining error has a message");
    } else {
      Check(flat_roots.size() == roots.size(), "one flat root per root");
    }
  }
}

void FuzzIndex(const std::string& bytes) {
  ember::TensorBundleReader reader;
  ember::Status s = reader.ParseIndex("/nonexistent/variables.index", bytes);
  if (!s.ok()) {
    Check(!s.message().empty(), "an error has a message");
    return;
  }
  for (const std::string& key : reader.Keys()) {
    ember::BundleEntry e;
    ember::Status es = reader.LookupEntry(key, &e);
    Check(es.ok() || !es.message().empty(), "an entry error has a message");
    ember::Tensor t;
    ember::Status ls = reader.Lookup(key, &t);  // the shard does not exist: a clean error
    Check(!ls.ok(), "a lookup without a data shard fails");
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] == 'I') {
    FuzzIndex(bytes);
  } else {
    FuzzSavedModel(bytes);
  }
  return 0;
}
