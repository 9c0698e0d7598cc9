// NumPy <-> ember::Tensor conversions through NumPy's C API, zero-copy where dtype, layout
// and ownership allow. Include this (not numpy/arrayobject.h) in every extension source.
#ifndef EMBER_PYTHON_ARRAYS_H_
#define EMBER_PYTHON_ARRAYS_H_

#include <nanobind/nanobind.h>

#define PY_ARRAY_UNIQUE_SYMBOL ember_ARRAY_API
#ifndef EMBER_PY_DEFINE_ARRAY_API
#define NO_IMPORT_ARRAY
#endif
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
// Runs with NumPy 1.22+ even when built against NumPy 2 headers.
#define NPY_TARGET_VERSION NPY_1_22_API_VERSION
#include <numpy/arrayobject.h>

// NumPy 1.x headers (a cell pinned to NumPy 1.x) lack NumPy 2's descriptor accessors; there the
// field is public. forge's NumPy 1.26 wheel cell found it: the extension did not compile.
#if NPY_ABI_VERSION < 0x02000000 && !defined(PyDataType_ELSIZE)
#define PyDataType_ELSIZE(descr) ((descr)->elsize)
#endif

#include <string>

#include "ember/status.h"
#include "ember/tensor.h"

namespace ember {
namespace python {

// Imports NumPy's C API table; false with a Python error set on failure.
bool InitNumpy();

// Drops the array references that ember released on threads without the GIL (GIL held).
void DrainPendingReleases();

// NPY_FLOAT, ... for an ember dtype; -1 for types NumPy cannot hold for ember.
int NpyTypeOf(DataType dtype);
// The ember dtype of a NumPy dtype (native byte order only); kInvalid when unsupported.
DataType DataTypeOfDescr(PyArray_Descr* descr);
// "float32", ... (NumPy's names) for messages.
std::string NumpyName(DataType dtype);

// Converts `value` (an ndarray, NumPy scalar, Python scalar or nested list) to a tensor of
// `dtype` (kInvalid: the value's own dtype), casting as np.asarray(value, dtype) does. A
// C-contiguous array that already has that dtype and is aligned to kExternalAlignment is
// wrapped, not copied: the tensor holds a reference to it until ember releases the buffer.
// On failure sets a Python error (TypeError, ValueError) and returns false.
bool ArrayToTensor(PyObject* value, DataType dtype, Tensor* out, PyObject** array_out = nullptr);

// A new ndarray holding `tensor`. When the tensor is the only owner of an ember-allocated
// buffer the array wraps that buffer (a capsule keeps it alive); otherwise (shared with a
// constant or the caller's own feed) the data is copied. Scalars become NumPy scalars when
// `scalar_as_numpy_scalar`, as tf.compat.v1.Session.run returns them. New reference or null.
PyObject* TensorToArray(Tensor&& tensor, bool scalar_as_numpy_scalar);

}  // namespace python
}  // namespace ember

#endif  // EMBER_PYTHON_ARRAYS_H_
