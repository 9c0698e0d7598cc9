/* ember lite C API: .tflite models and interpreters through a stable C ABI (for FFI), shaped
 * like TensorFlow Lite's C API (TfLiteModel / TfLiteInterpreter). It lives in libember_lite
 * and needs nothing of libember_framework. Fallible calls return an EMBER_Code (EMBER_OK = 0);
 * the message of the last failure on the calling thread is EMBER_LiteLastError(). No C++
 * exception crosses this boundary. */
#ifndef EMBER_LITE_C_API_H_
#define EMBER_LITE_C_API_H_

#include <stddef.h>
#include <stdint.h>

#include "ember/c_api.h" /* EMBER_Code and EMBER_CAPI_EXPORT only: no framework symbol is used */

#ifdef __cplusplus
extern "C" {
#endif

/* Numbered as TFLite's TensorType (FLOAT32 0, INT32 2, UINT8 3, INT64 4, BOOL 6, INT16 7,
 * INT8 9, ...). */
typedef int EMBER_LiteType;

typedef struct EMBER_LiteModel EMBER_LiteModel;
typedef struct EMBER_LiteInterpreter EMBER_LiteInterpreter;

/* "" when the calling thread's last ember lite call succeeded. */
EMBER_CAPI_EXPORT const char* EMBER_LiteLastError(void);

/* Memory-maps and validates `path`; NULL on failure. */
EMBER_CAPI_EXPORT EMBER_LiteModel* EMBER_LiteModelCreateFromFile(const char* path);
/* Copies `size` bytes of a .tflite FlatBuffer; NULL on failure. */
EMBER_CAPI_EXPORT EMBER_LiteModel* EMBER_LiteModelCreate(const void* data, size_t size);
EMBER_CAPI_EXPORT void EMBER_LiteModelDelete(EMBER_LiteModel* model);

/* Interpreter options, as TfLiteInterpreterOptions. */
typedef struct EMBER_LiteInterpreterOptions EMBER_LiteInterpreterOptions;
EMBER_CAPI_EXPORT EMBER_LiteInterpreterOptions* EMBER_LiteInterpreterOptionsCreate(void);
EMBER_CAPI_EXPORT void EMBER_LiteInterpreterOptionsDelete(EMBER_LiteInterpreterOptions* options);
/* Threads for the heavy kernels, the calling thread included
 * (TfLiteInterpreterOptionsSetNumThreads): -1 (the default) lets ember choose (one thread, as
 * LiteRT's kernels), 0 and 1 mean the calling thread only. EMBER_INVALID_ARGUMENT (options
 * unchanged) below -1 or above 256. */
EMBER_CAPI_EXPORT EMBER_Code
EMBER_LiteInterpreterOptionsSetNumThreads(EMBER_LiteInterpreterOptions* options, int num_threads);

/* An interpreter of `model` (which may be deleted afterwards); NULL on failure. */
EMBER_CAPI_EXPORT EMBER_LiteInterpreter* EMBER_LiteInterpreterCreate(const EMBER_LiteModel* model);
/* The same with `options` (NULL: the defaults; they may be deleted afterwards). */
EMBER_CAPI_EXPORT EMBER_LiteInterpreter* EMBER_LiteInterpreterCreateWithOptions(
    const EMBER_LiteModel* model, const EMBER_LiteInterpreterOptions* options);
/* The threads Invoke uses (num_threads resolved); 0 for NULL. */
EMBER_CAPI_EXPORT int EMBER_LiteInterpreterNumThreads(const EMBER_LiteInterpreter* interp);
EMBER_CAPI_EXPORT void EMBER_LiteInterpreterDelete(EMBER_LiteInterpreter* interp);
EMBER_CAPI_EXPORT EMBER_Code EMBER_LiteInterpreterAllocateTensors(EMBER_LiteInterpreter* interp);
EMBER_CAPI_EXPORT EMBER_Code EMBER_LiteInterpreterInvoke(EMBER_LiteInterpreter* interp);

EMBER_CAPI_EXPORT int EMBER_LiteInterpreterGetInputTensorCount(const EMBER_LiteInterpreter* interp);
EMBER_CAPI_EXPORT int EMBER_LiteInterpreterGetOutputTensorCount(
    const EMBER_LiteInterpreter* interp);
EMBER_CAPI_EXPORT int EMBER_LiteInterpreterGetTensorCount(const EMBER_LiteInterpreter* interp);
/* The tensor index of input / output i (what the tensor calls below take); -1 if out of range. */
EMBER_CAPI_EXPORT int EMBER_LiteInterpreterInputTensorIndex(const EMBER_LiteInterpreter* interp,
                                                            int i);
EMBER_CAPI_EXPORT int EMBER_LiteInterpreterOutputTensorIndex(const EMBER_LiteInterpreter* interp,
                                                             int i);

/* Tensor properties by tensor index; -1 / NULL / 0 for an index out of range. */
EMBER_CAPI_EXPORT EMBER_LiteType EMBER_LiteTensorType(const EMBER_LiteInterpreter* interp,
                                                      int tensor);
EMBER_CAPI_EXPORT const char* EMBER_LiteTensorName(const EMBER_LiteInterpreter* interp, int tensor);
EMBER_CAPI_EXPORT int EMBER_LiteTensorNumDims(const EMBER_LiteInterpreter* interp, int tensor);
EMBER_CAPI_EXPORT int32_t EMBER_LiteTensorDim(const EMBER_LiteInterpreter* interp, int tensor,
                                              int dim);
EMBER_CAPI_EXPORT size_t EMBER_LiteTensorByteSize(const EMBER_LiteInterpreter* interp, int tensor);
/* Per-tensor quantization (the first channel's for per-channel tensors); 0 when none. */
EMBER_CAPI_EXPORT float EMBER_LiteTensorScale(const EMBER_LiteInterpreter* interp, int tensor);
EMBER_CAPI_EXPORT int32_t EMBER_LiteTensorZeroPoint(const EMBER_LiteInterpreter* interp,
                                                    int tensor);
/* The tensor's memory after AllocateTensors (NULL before). Constants are read-only. */
EMBER_CAPI_EXPORT void* EMBER_LiteTensorData(EMBER_LiteInterpreter* interp, int tensor);

/* Copy `size` bytes (exactly the tensor's byte size) into / out of a run-time tensor. */
EMBER_CAPI_EXPORT EMBER_Code EMBER_LiteTensorCopyFromBuffer(EMBER_LiteInterpreter* interp,
                                                            int tensor, const void* data,
                                                            size_t size);
EMBER_CAPI_EXPORT EMBER_Code EMBER_LiteTensorCopyToBuffer(const EMBER_LiteInterpreter* interp,
                                                          int tensor, void* data, size_t size);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* EMBER_LITE_C_API_H_ */
