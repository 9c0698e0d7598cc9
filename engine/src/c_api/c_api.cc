// The C API: thin wrappers that translate Status to EMBER_Status and never let an exception
// escape (every entry point catches).
#include "ember/c_api.h"

#include <cstdint>
#include <cstring>
#include <exception>
#include <iterator>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "ember/graph_def.h"
#include "ember/saved_model.h"
#include "ember/session.h"

struct EMBER_Status {
  ember::Status status;
};
struct EMBER_Graph {
  ember::GraphDef graph;
};
struct EMBER_SessionOptions {
  ember::SessionOptions options;
};
struct EMBER_Session {
  std::unique_ptr<ember::Session> session;
};
struct EMBER_Tensor {
  ember::Tensor tensor;
};
struct EMBER_SavedModel {
  ember::SavedModelBundle bundle;
  std::vector<std::string> keys;  // runnable signature keys
};

namespace {

void Set(EMBER_Status* s, const ember::Status& value) {
  if (s != nullptr) s->status = value;
}

// Runs fn, turning exceptions into INTERNAL / RESOURCE_EXHAUSTED statuses.
template <typename Fn>
void Guard(EMBER_Status* status, Fn fn) {
  try {
    fn();
  } catch (const std::bad_alloc&) {
    Set(status, ember::errors::ResourceExhausted("out of memory"));
  } catch (const std::exception& e) {
    Set(status, ember::errors::Internal(std::string("unexpected exception: ") + e.what()));
  } catch (...) {
    Set(status, ember::errors::Internal("unexpected exception"));
  }
}

ember::Status CheckDType(EMBER_DataType dtype) {
  int v = static_cast<int>(dtype);
  if (!ember::DataTypeIsValid(v) || v == 7 || v == 20 || v == 21) {
    return ember::errors::InvalidArgument("Unsupported EMBER_DataType " + std::to_string(v) +
                                          "; use EMBER_FLOAT, EMBER_INT32, EMBER_INT64, ...");
  }
  return ember::Status::OK();
}

ember::Status MakeShape(const int64_t* dims, int num_dims, ember::TensorShape* out) {
  if (num_dims < 0 || (num_dims > 0 && dims == nullptr)) {
    return ember::errors::InvalidArgument("dims must point to num_dims (>= 0) sizes");
  }
  std::vector<int64_t> d(dims, dims + num_dims);
  ember::StatusOr<ember::TensorShape> shape = ember::TensorShape::FromDims(d);
  if (!shape.ok()) return shape.status();
  *out = *shape;
  return ember::Status::OK();
}

}  // namespace

extern "C" {

const char* EMBER_Version(void) { return "0.1.0"; }

EMBER_Status* EMBER_NewStatus(void) { return new (std::nothrow) EMBER_Status(); }
void EMBER_DeleteStatus(EMBER_Status* s) { delete s; }
EMBER_Code EMBER_GetCode(const EMBER_Status* s) {
  return s == nullptr ? EMBER_OK : static_cast<EMBER_Code>(s->status.code());
}
const char* EMBER_Message(const EMBER_Status* s) {
  return s == nullptr ? "" : s->status.message().c_str();
}
const char* EMBER_CodeName(EMBER_Code code) {
  return ember::CodeName(static_cast<ember::Code>(code));
}

EMBER_Graph* EMBER_LoadGraphFromFile(const char* path, EMBER_Status* status) {
  EMBER_Graph* result = nullptr;
  Set(status, ember::Status::OK());
  Guard(status, [&] {
    if (path == nullptr) {
      Set(status, ember::errors::InvalidArgument("path is NULL"));
      return;
    }
    auto g = std::make_unique<EMBER_Graph>();
    ember::Status s = ember::ReadGraphDefFile(path, &g->graph);
    Set(status, s);
    if (s.ok()) result = g.release();
  });
  return result;
}

EMBER_Graph* EMBER_LoadGraphFromBuffer(const void* data, size_t length, EMBER_Status* status) {
  EMBER_Graph* result = nullptr;
  Set(status, ember::Status::OK());
  Guard(status, [&] {
    if (data == nullptr && length > 0) {
      Set(status, ember::errors::InvalidArgument("data is NULL"));
      return;
    }
    auto g = std::make_unique<EMBER_Graph>();
    const char* bytes = static_cast<const char*>(data);
    size_t i = 0;
    while (i < length &&
           (bytes[i] == ' ' || bytes[i] == '\n' || bytes[i] == '\t' || bytes[i] == '\r'))
      ++i;
    ember::Status s = (i < length && bytes[i] == '{')
                          ? ember::ParseGraphDefJson(std::string(bytes, length), &g->graph)
                          : ember::ParseGraphDefBinary(data, length, &g->graph);
    Set(status, s);
    if (s.ok()) result = g.release();
  });
  return result;
}

int EMBER_GraphNumNodes(const EMBER_Graph* graph) {
  return graph == nullptr ? 0 : static_cast<int>(graph->graph.node.size());
}
void EMBER_DeleteGraph(EMBER_Graph* graph) { delete graph; }

EMBER_Tensor* EMBER_NewTensor(EMBER_DataType dtype, const int64_t* dims, int num_dims,
                              EMBER_Status* status) {
  EMBER_Tensor* result = nullptr;
  Set(status, ember::Status::OK());
  Guard(status, [&] {
    ember::Status s = CheckDType(dtype);
    ember::TensorShape shape;
    if (s.ok()) s = MakeShape(dims, num_dims, &shape);
    if (s.ok() &&
        static_cast<double>(shape.num_elements()) *
                static_cast<double>(ember::DataTypeSize(static_cast<ember::DataType>(dtype))) >
            static_cast<double>(int64_t{1} << 40)) {
      s = ember::errors::ResourceExhausted("tensor too large");
    }
    if (!s.ok()) {
      Set(status, s);
      return;
    }
    auto t = std::make_unique<EMBER_Tensor>();
    t->tensor = ember::Tensor(static_cast<ember::DataType>(dtype), shape);
    if (t->tensor.raw_data() == nullptr) {
      Set(status, ember::errors::ResourceExhausted("out of memory allocating a tensor"));
      return;
    }
    result = t.release();
  });
  return result;
}

EMBER_Tensor* EMBER_NewTensorFromData(EMBER_DataType dtype, const int64_t* dims, int num_dims,
                                      const void* data, size_t length, EMBER_Status* status) {
  EMBER_Tensor* t = EMBER_NewTensor(dtype, dims, num_dims, status);
  if (t == nullptr) return nullptr;
  if (length != t->tensor.TotalBytes() || (length > 0 && data == nullptr)) {
    Set(status,
        ember::errors::InvalidArgument("Data has " + std::to_string(length) + " bytes but a " +
                                       ember::DataTypeString(t->tensor.dtype()) +
                                       " tensor of shape " + t->tensor.shape().DebugString() +
                                       " needs " + std::to_string(t->tensor.TotalBytes())));
    delete t;
    return nullptr;
  }
  if (length > 0) std::memcpy(t->tensor.raw_data(), data, length);
  return t;
}

namespace {
struct BufferRelease {
  void (*fn)(void*, size_t, void*);
  size_t length;
  void* arg;
};
void CallBufferRelease(void* data, void* arg) {
  auto* r = static_cast<BufferRelease*>(arg);
  if (r->fn != nullptr) r->fn(data, r->length, r->arg);
  delete r;
}
}  // namespace

EMBER_Tensor* EMBER_NewTensorFromBuffer(EMBER_DataType dtype, const int64_t* dims, int num_dims,
                                        void* data, size_t length,
                                        void (*deallocator)(void* data, size_t length, void* arg),
                                        void* arg, EMBER_Status* status) {
  EMBER_Tensor* result = nullptr;
  Set(status, ember::Status::OK());
  Guard(status, [&] {
    ember::Status s = CheckDType(dtype);
    ember::TensorShape shape;
    if (s.ok()) s = MakeShape(dims, num_dims, &shape);
    const size_t need = s.ok() ? static_cast<size_t>(shape.num_elements()) *
                                     ember::DataTypeSize(static_cast<ember::DataType>(dtype))
                               : 0;
    if (s.ok() && (length != need || (need > 0 && data == nullptr))) {
      s = ember::errors::InvalidArgument("Buffer has " + std::to_string(length) +
                                         " bytes but the tensor needs " + std::to_string(need));
    }
    if (s.ok() && reinterpret_cast<uintptr_t>(data) % ember::Tensor::kExternalAlignment != 0) {
      s = ember::errors::InvalidArgument("Buffer is not aligned to " +
                                         std::to_string(ember::Tensor::kExternalAlignment) +
                                         " bytes");
    }
    if (!s.ok()) {
      Set(status, s);
      return;
    }
    auto t = std::make_unique<EMBER_Tensor>();
    auto release = std::make_unique<BufferRelease>(BufferRelease{deallocator, length, arg});
    t->tensor = ember::Tensor::FromExternal(static_cast<ember::DataType>(dtype), shape, data,
                                            CallBufferRelease, release.release());
    result = t.release();
  });
  return result;
}

void EMBER_DeleteTensor(EMBER_Tensor* t) { delete t; }
EMBER_DataType EMBER_TensorType(const EMBER_Tensor* t) {
  return static_cast<EMBER_DataType>(t == nullptr ? 0 : static_cast<int>(t->tensor.dtype()));
}
int EMBER_NumDims(const EMBER_Tensor* t) { return t == nullptr ? 0 : t->tensor.dims(); }
int64_t EMBER_Dim(const EMBER_Tensor* t, int index) {
  if (t == nullptr || index < 0 || index >= t->tensor.dims()) return -1;
  return t->tensor.dim_size(index);
}
int64_t EMBER_TensorElementCount(const EMBER_Tensor* t) {
  return t == nullptr ? 0 : t->tensor.NumElements();
}
size_t EMBER_TensorByteSize(const EMBER_Tensor* t) {
  return t == nullptr ? 0 : t->tensor.TotalBytes();
}
void* EMBER_TensorData(EMBER_Tensor* t) { return t == nullptr ? nullptr : t->tensor.raw_data(); }

EMBER_SessionOptions* EMBER_NewSessionOptions(void) {
  return new (std::nothrow) EMBER_SessionOptions();
}
void EMBER_DeleteSessionOptions(EMBER_SessionOptions* o) { delete o; }
void EMBER_SetInterOpThreads(EMBER_SessionOptions* o, int n) {
  if (o != nullptr) o->options.inter_op_parallelism_threads = n;
}
void EMBER_SetIntraOpThreads(EMBER_SessionOptions* o, int n) {
  if (o != nullptr) o->options.intra_op_parallelism_threads = n;
}
void EMBER_SetTimeoutMs(EMBER_SessionOptions* o, int64_t ms) {
  if (o != nullptr) o->options.operation_timeout_in_ms = ms;
}

EMBER_Session* EMBER_NewSession(const EMBER_Graph* graph, const EMBER_SessionOptions* options,
                                EMBER_Status* status) {
  EMBER_Session* result = nullptr;
  Set(status, ember::Status::OK());
  Guard(status, [&] {
    if (graph == nullptr) {
      Set(status, ember::errors::InvalidArgument("graph is NULL"));
      return;
    }
    auto s = std::make_unique<EMBER_Session>();
    s->session = ember::NewSession(options ? options->options : ember::SessionOptions());
    ember::Status st = s->session->Create(graph->graph);
    Set(status, st);
    if (st.ok()) result = s.release();
  });
  return result;
}

void EMBER_SessionRun(EMBER_Session* session, const char* const* feed_names,
                      EMBER_Tensor* const* feed_values, int num_feeds,
                      const char* const* fetch_names, EMBER_Tensor** outputs, int num_fetches,
                      const char* const* target_names, int num_targets, EMBER_Status* status) {
  Set(status, ember::Status::OK());
  for (int i = 0; outputs != nullptr && i < num_fetches; ++i) outputs[i] = nullptr;
  Guard(status, [&] {
    if (session == nullptr || num_feeds < 0 || num_fetches < 0 || num_targets < 0 ||
        (num_feeds > 0 && (feed_names == nullptr || feed_values == nullptr)) ||
        (num_fetches > 0 && (fetch_names == nullptr || outputs == nullptr)) ||
        (num_targets > 0 && target_names == nullptr)) {
      Set(status, ember::errors::InvalidArgument(
                      "EMBER_SessionRun: session, and the name/value arrays for every non-zero "
                      "count, must be non-NULL"));
      return;
    }
    std::vector<std::pair<std::string, ember::Tensor>> feeds;
    for (int i = 0; i < num_feeds; ++i) {
      if (feed_names[i] == nullptr || feed_values[i] == nullptr) {
        Set(status, ember::errors::InvalidArgument("feed " + std::to_string(i) + " is NULL"));
        return;
      }
      feeds.emplace_back(feed_names[i], feed_values[i]->tensor);
    }
    std::vector<std::string> fetches, targets;
    for (int i = 0; i < num_fetches; ++i) {
      if (fetch_names[i] == nullptr) {
        Set(status, ember::errors::InvalidArgument("fetch name " + std::to_string(i) + " is NULL"));
        return;
      }
      fetches.emplace_back(fetch_names[i]);
    }
    for (int i = 0; i < num_targets; ++i) {
      if (target_names[i] == nullptr) {
        Set(status,
            ember::errors::InvalidArgument("target name " + std::to_string(i) + " is NULL"));
        return;
      }
      targets.emplace_back(target_names[i]);
    }
    std::vector<ember::Tensor> results;
    ember::Status s = session->session->Run(feeds, fetches, targets, &results);
    Set(status, s);
    if (!s.ok()) return;
    for (int i = 0; i < num_fetches; ++i) {
      outputs[i] = new EMBER_Tensor{results[static_cast<size_t>(i)]};
    }
  });
}

void EMBER_CloseSession(EMBER_Session* session, EMBER_Status* status) {
  Set(status, ember::Status::OK());
  Guard(status, [&] {
    if (session != nullptr) Set(status, session->session->Close());
  });
}

void EMBER_DeleteSession(EMBER_Session* session) {
  try {
    delete session;
  } catch (...) {
  }
}

}  // extern "C"

EMBER_SavedModel* EMBER_LoadSavedModel(const char* export_dir, const char* const* tags,
                                       int num_tags, const EMBER_SessionOptions* options,
                                       EMBER_Status* status) {
  EMBER_SavedModel* result = nullptr;
  Set(status, ember::Status::OK());
  Guard(status, [&] {
    if (export_dir == nullptr || num_tags < 0 || (num_tags > 0 && tags == nullptr)) {
      Set(status, ember::errors::InvalidArgument("export_dir is NULL or tags are malformed"));
      return;
    }
    std::vector<std::string> t;
    for (int i = 0; i < num_tags; ++i) {
      if (tags[i] == nullptr) {
        Set(status, ember::errors::InvalidArgument("tag " + std::to_string(i) + " is NULL"));
        return;
      }
      t.emplace_back(tags[i]);
    }
    if (t.empty()) t.emplace_back(ember::kSavedModelTagServe);
    auto m = std::make_unique<EMBER_SavedModel>();
    ember::Status st = ember::LoadSavedModel(options ? options->options : ember::SessionOptions(),
                                             export_dir, t, &m->bundle);
    Set(status, st);
    if (!st.ok()) return;
    for (const auto& kv : m->bundle.signatures) m->keys.push_back(kv.first);
    result = m.release();
  });
  return result;
}

void EMBER_DeleteSavedModel(EMBER_SavedModel* model) { delete model; }

int EMBER_SavedModelNumSignatures(const EMBER_SavedModel* model) {
  return model == nullptr ? 0 : static_cast<int>(model->keys.size());
}

const char* EMBER_SavedModelSignatureKey(const EMBER_SavedModel* model, int index) {
  if (model == nullptr || index < 0 || index >= static_cast<int>(model->keys.size())) {
    return nullptr;
  }
  return model->keys[static_cast<size_t>(index)].c_str();
}

namespace {
const std::map<std::string, ember::TensorInfo>* SignatureKeys(const EMBER_SavedModel* model,
                                                              const char* signature,
                                                              int is_output) {
  if (model == nullptr || signature == nullptr) return nullptr;
  auto it = model->bundle.signatures.find(signature);
  if (it == model->bundle.signatures.end()) return nullptr;
  return is_output ? &it->second.outputs : &it->second.inputs;
}
}  // namespace

int EMBER_SavedModelNumKeys(const EMBER_SavedModel* model, const char* signature, int is_output) {
  const auto* keys = SignatureKeys(model, signature, is_output);
  return keys == nullptr ? 0 : static_cast<int>(keys->size());
}

const char* EMBER_SavedModelKey(const EMBER_SavedModel* model, const char* signature, int is_output,
                                int index) {
  const auto* keys = SignatureKeys(model, signature, is_output);
  if (keys == nullptr || index < 0 || index >= static_cast<int>(keys->size())) return nullptr;
  auto it = keys->begin();
  std::advance(it, index);
  return it->first.c_str();
}

void EMBER_SavedModelRun(EMBER_SavedModel* model, const char* signature,
                         const char* const* input_keys, EMBER_Tensor* const* inputs, int num_inputs,
                         const char* const* output_keys, EMBER_Tensor** outputs, int num_outputs,
                         EMBER_Status* status) {
  Set(status, ember::Status::OK());
  for (int i = 0; outputs != nullptr && i < num_outputs; ++i) outputs[i] = nullptr;
  Guard(status, [&] {
    if (model == nullptr || signature == nullptr || num_inputs < 0 || num_outputs < 0 ||
        (num_inputs > 0 && (input_keys == nullptr || inputs == nullptr)) ||
        (num_outputs > 0 && (output_keys == nullptr || outputs == nullptr))) {
      Set(status, ember::errors::InvalidArgument(
                      "EMBER_SavedModelRun: NULL model, signature or arrays, or negative counts"));
      return;
    }
    std::vector<std::pair<std::string, ember::Tensor>> feeds;
    for (int i = 0; i < num_inputs; ++i) {
      if (input_keys[i] == nullptr || inputs[i] == nullptr) {
        Set(status, ember::errors::InvalidArgument("input " + std::to_string(i) + " is NULL"));
        return;
      }
      feeds.emplace_back(input_keys[i], inputs[i]->tensor);
    }
    std::vector<std::string> keys;
    for (int i = 0; i < num_outputs; ++i) {
      if (output_keys[i] == nullptr) {
        Set(status, ember::errors::InvalidArgument("output key " + std::to_string(i) + " is NULL"));
        return;
      }
      keys.emplace_back(output_keys[i]);
    }
    if (keys.empty()) return;  // nothing asked: Run would fetch every output
    std::vector<ember::Tensor> results;
    ember::Status st = model->bundle.Run(signature, feeds, &keys, &results);
    Set(status, st);
    if (!st.ok()) return;
    std::vector<std::unique_ptr<EMBER_Tensor>> owned;
    for (ember::Tensor& t : results) {
      owned.push_back(std::make_unique<EMBER_Tensor>());
      owned.back()->tensor = std::move(t);
    }
    for (size_t i = 0; i < owned.size(); ++i) outputs[i] = owned[i].release();
  });
}
