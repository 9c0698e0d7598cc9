/* ember C API: a stable C ABI over GraphDef loading, sessions and tensors (for FFI such as
 * Python ctypes). Opaque handles; every fallible call takes an EMBER_Status*, and no C++
 * exception ever crosses this boundary. Codes are TensorFlow's (EMBER_OK = 0, ...). */
#ifndef EMBER_C_API_H_
#define EMBER_C_API_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define EMBER_CAPI_EXPORT __declspec(dllexport)
#else
#define EMBER_CAPI_EXPORT __attribute__((visibility("default")))
#endif

typedef enum EMBER_Code {
  EMBER_OK = 0,
  EMBER_CANCELLED = 1,
  EMBER_UNKNOWN = 2,
  EMBER_INVALID_ARGUMENT = 3,
  EMBER_DEADLINE_EXCEEDED = 4,
  EMBER_NOT_FOUND = 5,
  EMBER_ALREADY_EXISTS = 6,
  EMBER_PERMISSION_DENIED = 7,
  EMBER_RESOURCE_EXHAUSTED = 8,
  EMBER_FAILED_PRECONDITION = 9,
  EMBER_ABORTED = 10,
  EMBER_OUT_OF_RANGE = 11,
  EMBER_UNIMPLEMENTED = 12,
  EMBER_INTERNAL = 13,
  EMBER_UNAVAILABLE = 14,
  EMBER_DATA_LOSS = 15,
  EMBER_UNAUTHENTICATED = 16
} EMBER_Code;

/* Numbered as TensorFlow's DataType. */
typedef enum EMBER_DataType {
  EMBER_FLOAT = 1,
  EMBER_DOUBLE = 2,
  EMBER_INT32 = 3,
  EMBER_UINT8 = 4,
  EMBER_INT16 = 5,
  EMBER_INT8 = 6,
  EMBER_INT64 = 9,
  EMBER_BOOL = 10
} EMBER_DataType;

typedef struct EMBER_Status EMBER_Status;
typedef struct EMBER_Graph EMBER_Graph;
typedef struct EMBER_SessionOptions EMBER_SessionOptions;
typedef struct EMBER_Session EMBER_Session;
typedef struct EMBER_Tensor EMBER_Tensor;

EMBER_CAPI_EXPORT const char* EMBER_Version(void);

/* ---- status ---- */
EMBER_CAPI_EXPORT EMBER_Status* EMBER_NewStatus(void);
EMBER_CAPI_EXPORT void EMBER_DeleteStatus(EMBER_Status* s);
EMBER_CAPI_EXPORT EMBER_Code EMBER_GetCode(const EMBER_Status* s);
/* Valid until the status is changed or deleted. "" when OK. */
EMBER_CAPI_EXPORT const char* EMBER_Message(const EMBER_Status* s);
/* "INVALID_ARGUMENT", ... */
EMBER_CAPI_EXPORT const char* EMBER_CodeName(EMBER_Code code);

/* ---- graphs (a .pb or .json GraphDef) ---- */
EMBER_CAPI_EXPORT EMBER_Graph* EMBER_LoadGraphFromFile(const char* path, EMBER_Status* status);
/* Binary GraphDef bytes, or JSON text when the buffer starts with '{'. */
EMBER_CAPI_EXPORT EMBER_Graph* EMBER_LoadGraphFromBuffer(const void* data, size_t length,
                                                         EMBER_Status* status);
EMBER_CAPI_EXPORT int EMBER_GraphNumNodes(const EMBER_Graph* graph);
EMBER_CAPI_EXPORT void EMBER_DeleteGraph(EMBER_Graph* graph);

/* ---- tensors ---- */
/* Zero-filled tensor. */
EMBER_CAPI_EXPORT EMBER_Tensor* EMBER_NewTensor(EMBER_DataType dtype, const int64_t* dims,
                                                int num_dims, EMBER_Status* status);
/* Copies `length` bytes, which must equal the element count times the element size. */
EMBER_CAPI_EXPORT EMBER_Tensor* EMBER_NewTensorFromData(EMBER_DataType dtype, const int64_t* dims,
                                                        int num_dims, const void* data,
                                                        size_t length, EMBER_Status* status);
/* Wraps `data` without copying (as TF_NewTensor): ember reads and writes it in place and calls
 * `deallocator(data, length, arg)` exactly once, from any thread, when the last tensor using it
 * is gone (`deallocator` may be NULL). `length` must equal the element count times the element
 * size and `data` be aligned to 16 bytes. On failure NULL is returned, the deallocator is not
 * called and the caller keeps `data`. */
EMBER_CAPI_EXPORT EMBER_Tensor* EMBER_NewTensorFromBuffer(
    EMBER_DataType dtype, const int64_t* dims, int num_dims, void* data, size_t length,
    void (*deallocator)(void* data, size_t length, void* arg), void* arg, EMBER_Status* status);
EMBER_CAPI_EXPORT void EMBER_DeleteTensor(EMBER_Tensor* t);
EMBER_CAPI_EXPORT EMBER_DataType EMBER_TensorType(const EMBER_Tensor* t);
EMBER_CAPI_EXPORT int EMBER_NumDims(const EMBER_Tensor* t);
EMBER_CAPI_EXPORT int64_t EMBER_Dim(const EMBER_Tensor* t, int index);
EMBER_CAPI_EXPORT int64_t EMBER_TensorElementCount(const EMBER_Tensor* t);
EMBER_CAPI_EXPORT size_t EMBER_TensorByteSize(const EMBER_Tensor* t);
/* Row-major element storage, 64-byte aligned; writable. */
EMBER_CAPI_EXPORT void* EMBER_TensorData(EMBER_Tensor* t);

/* ---- sessions ---- */
EMBER_CAPI_EXPORT EMBER_SessionOptions* EMBER_NewSessionOptions(void);
EMBER_CAPI_EXPORT void EMBER_DeleteSessionOptions(EMBER_SessionOptions* o);
/* -1: run inline on the calling thread; 0: hardware threads. */
EMBER_CAPI_EXPORT void EMBER_SetInterOpThreads(EMBER_SessionOptions* o, int n);
EMBER_CAPI_EXPORT void EMBER_SetIntraOpThreads(EMBER_SessionOptions* o, int n);
EMBER_CAPI_EXPORT void EMBER_SetTimeoutMs(EMBER_SessionOptions* o, int64_t ms);

/* A session holding `graph` (copied; the graph may be deleted afterwards). `options` may be
 * NULL. */
EMBER_CAPI_EXPORT EMBER_Session* EMBER_NewSession(const EMBER_Graph* graph,
                                                  const EMBER_SessionOptions* options,
                                                  EMBER_Status* status);
/* Feeds and fetches are tensor names ("node:0" or "node"); targets are node names.
 * On success outputs[i] holds a new tensor per fetch, owned by the caller
 * (EMBER_DeleteTensor); on failure every outputs[i] is NULL. */
EMBER_CAPI_EXPORT void EMBER_SessionRun(EMBER_Session* session, const char* const* feed_names,
                                        EMBER_Tensor* const* feed_values, int num_feeds,
                                        const char* const* fetch_names, EMBER_Tensor** outputs,
                                        int num_fetches, const char* const* target_names,
                                        int num_targets, EMBER_Status* status);
EMBER_CAPI_EXPORT void EMBER_CloseSession(EMBER_Session* session, EMBER_Status* status);
EMBER_CAPI_EXPORT void EMBER_DeleteSession(EMBER_Session* session);

/* ---- SavedModel directories (tf.saved_model.save) ---- */
typedef struct EMBER_SavedModel EMBER_SavedModel;
/* Loads the MetaGraph of `export_dir` tagged with every one of `tags` (NULL or 0 tags: "serve"),
 * inlines its signature functions and restores its variables. `options` may be NULL. */
EMBER_CAPI_EXPORT EMBER_SavedModel* EMBER_LoadSavedModel(const char* export_dir,
                                                         const char* const* tags, int num_tags,
                                                         const EMBER_SessionOptions* options,
                                                         EMBER_Status* status);
EMBER_CAPI_EXPORT void EMBER_DeleteSavedModel(EMBER_SavedModel* model);
/* Signatures that can run, in key order; keys are valid while the model lives. */
EMBER_CAPI_EXPORT int EMBER_SavedModelNumSignatures(const EMBER_SavedModel* model);
EMBER_CAPI_EXPORT const char* EMBER_SavedModelSignatureKey(const EMBER_SavedModel* model,
                                                           int index);
/* Input (is_output 0) or output (1) keys of a signature, in key order; NULL when out of range. */
EMBER_CAPI_EXPORT int EMBER_SavedModelNumKeys(const EMBER_SavedModel* model, const char* signature,
                                              int is_output);
EMBER_CAPI_EXPORT const char* EMBER_SavedModelKey(const EMBER_SavedModel* model,
                                                  const char* signature, int is_output, int index);
/* Runs `signature` with inputs and outputs named by key. On success outputs[i] holds a new
 * tensor per output key, owned by the caller; on failure every outputs[i] is NULL. */
EMBER_CAPI_EXPORT void EMBER_SavedModelRun(EMBER_SavedModel* model, const char* signature,
                                           const char* const* input_keys,
                                           EMBER_Tensor* const* inputs, int num_inputs,
                                           const char* const* output_keys, EMBER_Tensor** outputs,
                                           int num_outputs, EMBER_Status* status);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* EMBER_C_API_H_ */
