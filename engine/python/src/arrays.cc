#define EMBER_PY_DEFINE_ARRAY_API
#include "arrays.h"

#include <cstring>
#include <mutex>
#include <new>
#include <vector>

namespace ember {
namespace python {

namespace {

// References whose release came on a thread without the GIL (an executor worker dropping the
// last tensor of a step): kept here and dropped by the next DrainPendingReleases. Waiting for
// the GIL on a worker instead could deadlock (a thread holding the GIL joining that worker)
// and would stall the pool while Python runs.
std::mutex pending_mu;
std::vector<PyObject*>* pending = new std::vector<PyObject*>();  // never freed: used at exit

// Release callback of a tensor that wraps an ndarray: drops the reference the tensor held.
void ReleaseArray(void* /*data*/, void* arg) {
  PyObject* obj = static_cast<PyObject*>(arg);
  if (Py_IsInitialized() && PyGILState_Check()) {
    Py_DECREF(obj);
    return;
  }
  std::lock_guard<std::mutex> lock(pending_mu);
  pending->push_back(obj);
}

void DeleteTensorCapsule(PyObject* capsule) {
  delete static_cast<Tensor*>(PyCapsule_GetPointer(capsule, "ember.Tensor"));
}

bool Aligned(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % Tensor::kExternalAlignment == 0;
}

std::vector<npy_intp> Dims(const TensorShape& shape) {
  std::vector<npy_intp> dims(static_cast<size_t>(shape.dims()));
  for (int i = 0; i < shape.dims(); ++i) dims[static_cast<size_t>(i)] = shape.dim_size(i);
  return dims;
}

}  // namespace

bool InitNumpy() { return _import_array() >= 0; }

void DrainPendingReleases() {
  std::vector<PyObject*> drop;
  {
    std::lock_guard<std::mutex> lock(pending_mu);
    if (pending->empty()) return;
    drop.swap(*pending);
  }
  for (PyObject* obj : drop) Py_DECREF(obj);
}

int NpyTypeOf(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat:
      return NPY_FLOAT32;
    case DataType::kDouble:
      return NPY_FLOAT64;
    case DataType::kInt32:
      return NPY_INT32;
    case DataType::kUInt8:
      return NPY_UINT8;
    case DataType::kInt16:
      return NPY_INT16;
    case DataType::kInt8:
      return NPY_INT8;
    case DataType::kInt64:
      return NPY_INT64;
    case DataType::kBool:
      return NPY_BOOL;
    default:
      return -1;
  }
}

DataType DataTypeOfDescr(PyArray_Descr* descr) {
  if (descr == nullptr || !PyArray_ISNBO(descr->byteorder)) return DataType::kInvalid;
  const int size = static_cast<int>(PyDataType_ELSIZE(descr));
  switch (descr->kind) {
    case 'b':
      return size == 1 ? DataType::kBool : DataType::kInvalid;
    case 'f':
      return size == 4 ? DataType::kFloat : size == 8 ? DataType::kDouble : DataType::kInvalid;
    case 'u':
      return size == 1 ? DataType::kUInt8 : DataType::kInvalid;
    case 'i':
      switch (size) {
        case 1:
          return DataType::kInt8;
        case 2:
          return DataType::kInt16;
        case 4:
          return DataType::kInt32;
        case 8:
          return DataType::kInt64;
        default:
          return DataType::kInvalid;
      }
    default:
      return DataType::kInvalid;
  }
}

std::string NumpyName(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat:
      return "float32";
    case DataType::kDouble:
      return "float64";
    case DataType::kBool:
      return "bool";
    default:
      return DataTypeString(dtype);
  }
}

bool ArrayToTensor(PyObject* value, DataType dtype, Tensor* out, PyObject** array_out) {
  if (value == Py_None) {
    PyErr_SetString(PyExc_TypeError, "None cannot be fed: a value of a numeric type is expected");
    return false;
  }
  PyArrayObject* arr = nullptr;  // owned
  if (PyArray_Check(value)) {
    arr = reinterpret_cast<PyArrayObject*>(value);
    Py_INCREF(arr);
    const DataType have = DataTypeOfDescr(PyArray_DESCR(arr));
    const bool layout_ok = PyArray_IS_C_CONTIGUOUS(arr) && Aligned(PyArray_DATA(arr));
    if (!(have != DataType::kInvalid && (dtype == DataType::kInvalid || have == dtype) &&
          layout_ok)) {
      Py_DECREF(arr);
      arr = nullptr;
    }
  }
  if (arr == nullptr) {
    PyArray_Descr* descr = nullptr;
    if (dtype != DataType::kInvalid) descr = PyArray_DescrFromType(NpyTypeOf(dtype));
    // np.asarray(value, dtype): casts (unsafely, as NumPy's astype) and makes it C-contiguous.
    PyObject* converted =
        PyArray_FromAny(value, descr, 0, 0,
                        NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED | NPY_ARRAY_FORCECAST, nullptr);
    if (converted == nullptr) return false;
    arr = reinterpret_cast<PyArrayObject*>(converted);
  }
  const DataType have = DataTypeOfDescr(PyArray_DESCR(arr));
  if (have == DataType::kInvalid) {
    PyObject* name = PyObject_Str(reinterpret_cast<PyObject*>(PyArray_DESCR(arr)));
    PyErr_Format(PyExc_TypeError,
                 "ember cannot hold NumPy dtype %S: float32, float64, int8, int16, int32, int64, "
                 "uint8 and bool are supported",
                 name != nullptr ? name : Py_None);
    Py_XDECREF(name);
    Py_DECREF(arr);
    return false;
  }
  std::vector<int64_t> dims(PyArray_SHAPE(arr), PyArray_SHAPE(arr) + PyArray_NDIM(arr));
  TensorShape shape(std::move(dims));
  const size_t bytes = static_cast<size_t>(PyArray_NBYTES(arr));
  if (bytes == 0 || !Aligned(PyArray_DATA(arr))) {
    // Nothing worth wrapping (or an odd allocator): a plain copy.
    *out = Tensor(have, shape);
    if (bytes > 0) std::memcpy(out->raw_data(), PyArray_DATA(arr), bytes);
  } else {
    Py_INCREF(arr);  // the tensor's reference, dropped by ReleaseArray
    *out = Tensor::FromExternal(have, shape, PyArray_DATA(arr), ReleaseArray, arr);
  }
  if (array_out != nullptr) {
    *array_out = reinterpret_cast<PyObject*>(arr);
  } else {
    Py_DECREF(arr);
  }
  return true;
}

PyObject* TensorToArray(Tensor&& tensor, bool scalar_as_numpy_scalar) {
  const int type = NpyTypeOf(tensor.dtype());
  if (type < 0) {
    PyErr_Format(PyExc_TypeError, "ember cannot return a tensor of type %s to NumPy",
                 DataTypeString(tensor.dtype()).c_str());
    return nullptr;
  }
  std::vector<npy_intp> dims = Dims(tensor.shape());
  PyObject* result = nullptr;
  if (tensor.RefCountIsOne() && !tensor.HasExternalBuffer() && tensor.raw_data() != nullptr &&
      !(scalar_as_numpy_scalar && dims.empty())) {
    // Hand ember's buffer to NumPy: the capsule owns the (last) tensor referencing it.
    Tensor* owner = new (std::nothrow) Tensor(std::move(tensor));
    if (owner == nullptr) return PyErr_NoMemory();
    PyObject* capsule = PyCapsule_New(owner, "ember.Tensor", DeleteTensorCapsule);
    if (capsule == nullptr) {
      delete owner;
      return nullptr;
    }
    result = PyArray_SimpleNewFromData(static_cast<int>(dims.size()), dims.data(), type,
                                       owner->raw_data());
    if (result == nullptr) {
      Py_DECREF(capsule);
      return nullptr;
    }
    if (PyArray_SetBaseObject(reinterpret_cast<PyArrayObject*>(result), capsule) < 0) {
      Py_DECREF(result);
      return nullptr;
    }
    return result;
  }
  result = PyArray_SimpleNew(static_cast<int>(dims.size()), dims.data(), type);
  if (result == nullptr) return nullptr;
  const size_t bytes = tensor.TotalBytes();
  if (bytes > 0 && tensor.raw_data() != nullptr) {
    std::memcpy(PyArray_DATA(reinterpret_cast<PyArrayObject*>(result)), tensor.raw_data(), bytes);
  }
  if (scalar_as_numpy_scalar && dims.empty()) {
    return PyArray_Return(reinterpret_cast<PyArrayObject*>(result));
  }
  return result;
}

}  // namespace python
}  // namespace ember
