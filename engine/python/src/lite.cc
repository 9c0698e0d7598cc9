// ember._ember._Interpreter: tf.lite.Interpreter's calls over ember::lite::Interpreter.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "arrays.h"
#include "common.h"
#include "ember/lite/interpreter.h"
#include "ember/lite/model.h"

namespace ember {
namespace python {

namespace {

int NpyTypeOfLite(lite::TensorType t) {
  switch (t) {
    case lite::TensorType::kFloat32:
      return NPY_FLOAT32;
    case lite::TensorType::kFloat16:
      return NPY_FLOAT16;
    case lite::TensorType::kInt32:
      return NPY_INT32;
    case lite::TensorType::kUInt8:
      return NPY_UINT8;
    case lite::TensorType::kInt64:
      return NPY_INT64;
    case lite::TensorType::kBool:
      return NPY_BOOL;
    case lite::TensorType::kInt16:
      return NPY_INT16;
    case lite::TensorType::kInt8:
      return NPY_INT8;
    default:
      return -1;
  }
}

// TFLite's name for a NumPy dtype ("FLOAT64", ...), for set_tensor's messages.
std::string LiteNameOfDescr(PyArray_Descr* d) {
  const int size = static_cast<int>(PyDataType_ELSIZE(d));
  switch (d->kind) {
    case 'f':
      return "FLOAT" + std::to_string(size * 8);
    case 'i':
      return "INT" + std::to_string(size * 8);
    case 'u':
      return "UINT" + std::to_string(size * 8);
    case 'b':
      return "BOOL";
    case 'c':
      return "COMPLEX" + std::to_string(size * 8);
    case 'S':
    case 'U':
    case 'O':
      return "STRING";
    default:
      return std::string("dtype kind '") + d->kind + "'";
  }
}

[[noreturn]] void Raise(PyObject* type, const std::string& message) {
  PyErr_SetString(type, message.c_str());
  throw nb::python_error();
}

}  // namespace

class PyInterpreter {
 public:
  PyInterpreter(std::optional<std::string> model_path, std::optional<nb::bytes> model_content,
                int num_threads, bool preserve_all_tensors) {
    if (model_path.has_value() == model_content.has_value()) {
      Raise(PyExc_ValueError, "Exactly one of model_path and model_content must be given");
    }
    StatusOr<std::shared_ptr<const lite::Model>> model = errors::Internal("unset");
    if (model_path) {
      nb::gil_scoped_release release;
      model = lite::Model::FromFile(*model_path);
    } else {
      std::vector<uint8_t> bytes(model_content->size());
      if (!bytes.empty()) std::memcpy(bytes.data(), model_content->c_str(), bytes.size());
      nb::gil_scoped_release release;
      model = lite::Model::FromBytes(std::move(bytes));
    }
    // tf.lite.Interpreter raises ValueError for a model it cannot read.
    if (!model.ok()) {
      Raise(PyExc_ValueError, (model_path ? "Could not open '" + *model_path + "': "
                                          : std::string("Could not read the model: ")) +
                                  model.status().ToString());
    }
    model_ = *model;
    lite::InterpreterOptions options;
    options.num_threads = num_threads;
    options.preserve_all_tensors = preserve_all_tensors;
    auto interp = lite::Interpreter::Create(model_, options);
    if (!interp.ok()) Raise(PyExc_ValueError, interp.status().ToString());
    interp_ = std::move(*interp);
  }

  void AllocateTensors() {
    Status s;
    {
      nb::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mu_);
      s = interp_->AllocateTensors();
      allocated_ = s.ok();
    }
    if (!s.ok()) Raise(PyExc_RuntimeError, s.ToString());
  }

  void Invoke() {
    Status s;
    {
      nb::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mu_);
      s = allocated_
              ? interp_->Invoke()
              : errors::FailedPrecondition(
                    "Invoke called on model that is not ready: call allocate_tensors() first");
    }
    if (!s.ok()) Raise(PyExc_RuntimeError, s.ToString());
  }

  const lite::TensorDef& Def(int index) const {
    const auto& tensors = model_->graph().tensors;
    if (index < 0 || static_cast<size_t>(index) >= tensors.size()) {
      Raise(PyExc_ValueError, "Invalid tensor index " + std::to_string(index) + " (the model has " +
                                  std::to_string(tensors.size()) + " tensors)");
    }
    return tensors[static_cast<size_t>(index)];
  }

  std::vector<int> Inputs() const {
    return {model_->graph().inputs.begin(), model_->graph().inputs.end()};
  }
  std::vector<int> Outputs() const {
    return {model_->graph().outputs.begin(), model_->graph().outputs.end()};
  }
  size_t NumTensors() const { return model_->graph().tensors.size(); }
  int NumThreads() const { return interp_->num_threads(); }

  // (name, numpy type number or -1, TFLite type name, shape, scales, zero points, quantized dim)
  std::tuple<std::string, int, std::string, std::vector<int>, std::vector<float>,
             std::vector<int64_t>, int>
  TensorInfo(int index) const {
    const lite::TensorDef& t = Def(index);
    return {t.name,
            NpyTypeOfLite(t.type),
            lite::TensorTypeName(t.type),
            std::vector<int>(t.shape.begin(), t.shape.end()),
            t.quant.scale,
            t.quant.zero_point,
            t.quant.quantized_dimension};
  }

  void SetTensor(int index, nb::handle value) {
    const lite::TensorDef& t = Def(index);
    const std::string what = "input " + std::to_string(index) + ", name: " + t.name + " ";
    nb::object arr_obj =
        nb::steal(PyArray_FromAny(value.ptr(), nullptr, 0, 0, NPY_ARRAY_CARRAY, nullptr));
    if (!arr_obj.is_valid()) throw nb::python_error();
    auto* arr = reinterpret_cast<PyArrayObject*>(arr_obj.ptr());
    const int want = NpyTypeOfLite(t.type);
    if (want < 0 || PyArray_TYPE(arr) != want) {
      // Compare by kind and size (int64 is NPY_LONG or NPY_LONGLONG depending on the platform).
      PyArray_Descr* d = PyArray_DESCR(arr);
      const bool same = want >= 0 && PyArray_EquivTypenums(PyArray_TYPE(arr), want);
      if (!same) {
        Raise(PyExc_ValueError, "Cannot set tensor: Got value of type " + LiteNameOfDescr(d) +
                                    " but expected type " + lite::TensorTypeName(t.type) + " for " +
                                    what);
      }
    }
    const int nd = PyArray_NDIM(arr);
    if (static_cast<size_t>(nd) != t.shape.size()) {
      Raise(PyExc_ValueError, "Cannot set tensor: Dimension mismatch. Got " + std::to_string(nd) +
                                  " but expected " + std::to_string(t.shape.size()) + " for " +
                                  what);
    }
    for (int i = 0; i < nd; ++i) {
      if (PyArray_DIM(arr, i) != t.shape[static_cast<size_t>(i)]) {
        Raise(PyExc_ValueError, "Cannot set tensor: Dimension mismatch. Got " +
                                    std::to_string(PyArray_DIM(arr, i)) + " but expected " +
                                    std::to_string(t.shape[static_cast<size_t>(i)]) +
                                    " for dimension " + std::to_string(i) + " of " + what);
      }
    }
    std::lock_guard<std::mutex> lock(mu_);
    lite::TensorView v = interp_->tensor(index);
    if (!allocated_ || v.data == nullptr) {
      Raise(PyExc_ValueError,
            "Cannot set tensor: Tensor is unallocated. Try calling "
            "allocate_tensors() first");
    }
    if (v.data == t.data) Raise(PyExc_ValueError, "Cannot set tensor: " + what + "is a constant");
    const size_t bytes = static_cast<size_t>(PyArray_NBYTES(arr));
    if (bytes != v.bytes) Raise(PyExc_ValueError, "Cannot set tensor: size mismatch for " + what);
    std::memcpy(v.data, PyArray_DATA(arr), bytes);
  }

  nb::object GetTensor(int index, nb::handle owner, bool copy) {
    const lite::TensorDef& t = Def(index);
    const int type = NpyTypeOfLite(t.type);
    if (type < 0) {
      Raise(PyExc_ValueError, "Tensor " + std::to_string(index) + " has type " +
                                  lite::TensorTypeName(t.type) + ", which NumPy cannot hold here");
    }
    std::lock_guard<std::mutex> lock(mu_);
    lite::TensorView v = interp_->tensor(index);
    if (v.data == nullptr)
      Raise(PyExc_ValueError, "Tensor data is null. Run allocate_tensors() first");
    std::vector<npy_intp> dims(t.shape.begin(), t.shape.end());
    PyObject* result = nullptr;
    if (copy) {
      result = PyArray_SimpleNew(static_cast<int>(dims.size()), dims.data(), type);
      if (result == nullptr) throw nb::python_error();
      std::memcpy(PyArray_DATA(reinterpret_cast<PyArrayObject*>(result)), v.data,
                  static_cast<size_t>(PyArray_NBYTES(reinterpret_cast<PyArrayObject*>(result))));
    } else {
      // A view into the interpreter's memory, alive as long as the interpreter object (its base).
      const bool constant = v.data == t.data;
      result = PyArray_New(&PyArray_Type, static_cast<int>(dims.size()), dims.data(), type, nullptr,
                           v.data, 0, constant ? NPY_ARRAY_CARRAY_RO : NPY_ARRAY_CARRAY, nullptr);
      if (result == nullptr) throw nb::python_error();
      Py_INCREF(owner.ptr());
      if (PyArray_SetBaseObject(reinterpret_cast<PyArrayObject*>(result), owner.ptr()) < 0) {
        Py_DECREF(result);
        throw nb::python_error();
      }
    }
    return nb::steal(result);
  }

 private:
  std::shared_ptr<const lite::Model> model_;
  std::unique_ptr<lite::Interpreter> interp_;
  std::mutex mu_;  // one Invoke / set / get at a time (TFLite's interpreter is not thread-safe)
  bool allocated_ = false;
};

void RegisterLite(nb::module_& m) {
  using namespace nb::literals;
  nb::class_<PyInterpreter>(m, "_Interpreter")
      .def(nb::init<std::optional<std::string>, std::optional<nb::bytes>, int, bool>(),
           "model_path"_a = nb::none(), "model_content"_a = nb::none(), "num_threads"_a = -1,
           "preserve_all_tensors"_a = false)
      .def("allocate_tensors", &PyInterpreter::AllocateTensors)
      .def("invoke", &PyInterpreter::Invoke)
      .def("_inputs", &PyInterpreter::Inputs)
      .def("_outputs", &PyInterpreter::Outputs)
      .def("_num_tensors", &PyInterpreter::NumTensors)
      .def("_num_threads", &PyInterpreter::NumThreads)
      .def("_tensor_info", &PyInterpreter::TensorInfo, "tensor_index"_a)
      .def("set_tensor", &PyInterpreter::SetTensor, "tensor_index"_a, "value"_a)
      .def(
          "get_tensor",
          [](nb::handle self, int index) {
            return nb::cast<PyInterpreter&>(self).GetTensor(index, self, true);
          },
          "tensor_index"_a)
      .def(
          "_view",
          [](nb::handle self, int index) {
            return nb::cast<PyInterpreter&>(self).GetTensor(index, self, false);
          },
          "tensor_index"_a);
}

}  // namespace python
}  // namespace ember
