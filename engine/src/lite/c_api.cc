// The lite C API (ember/lite/c_api.h): thin wrappers over lite::Model and lite::Interpreter
// that turn Status into EMBER_Code plus a thread-local message, and never let an exception
// escape.
#include "ember/lite/c_api.h"

#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "ember/lite/interpreter.h"
#include "ember/lite/model.h"

struct EMBER_LiteModel {
  std::shared_ptr<const ember::lite::Model> model;
};
struct EMBER_LiteInterpreter {
  std::unique_ptr<ember::lite::Interpreter> interp;
};
struct EMBER_LiteInterpreterOptions {
  ember::lite::InterpreterOptions options;
};

namespace {

thread_local std::string last_error;

EMBER_Code Record(const ember::Status& s) {
  last_error = s.ok() ? std::string() : s.message();
  return static_cast<EMBER_Code>(s.code());
}

template <typename Fn>
EMBER_Code Guard(Fn fn) {
  try {
    return Record(fn());
  } catch (const std::bad_alloc&) {
    return Record(ember::errors::ResourceExhausted("out of memory"));
  } catch (const std::exception& e) {
    return Record(ember::errors::Internal(std::string("unexpected exception: ") + e.what()));
  } catch (...) {
    return Record(ember::errors::Internal("unexpected exception"));
  }
}

ember::lite::TensorView View(const EMBER_LiteInterpreter* interp, int tensor) {
  if (interp == nullptr || interp->interp == nullptr) return {};
  return interp->interp->tensor(tensor);
}

EMBER_LiteModel* WrapModel(ember::StatusOr<std::shared_ptr<const ember::lite::Model>> m) {
  if (!m.ok()) {
    Record(m.status());
    return nullptr;
  }
  auto* out = new EMBER_LiteModel{*m};
  Record(ember::Status::OK());
  return out;
}

}  // namespace

extern "C" {

const char* EMBER_LiteLastError(void) { return last_error.c_str(); }

EMBER_LiteModel* EMBER_LiteModelCreateFromFile(const char* path) {
  EMBER_LiteModel* result = nullptr;
  Guard([&] {
    if (path == nullptr) return ember::errors::InvalidArgument("path is NULL");
    result = WrapModel(ember::lite::Model::FromFile(path));
    return result != nullptr ? ember::Status::OK()
                             : ember::Status(ember::Code::kUnknown, last_error);
  });
  return result;
}

EMBER_LiteModel* EMBER_LiteModelCreate(const void* data, size_t size) {
  EMBER_LiteModel* result = nullptr;
  Guard([&] {
    if (data == nullptr && size > 0) return ember::errors::InvalidArgument("data is NULL");
    const auto* p = static_cast<const uint8_t*>(data);
    result = WrapModel(ember::lite::Model::FromBytes(std::vector<uint8_t>(p, p + size)));
    return result != nullptr ? ember::Status::OK()
                             : ember::Status(ember::Code::kUnknown, last_error);
  });
  return result;
}

void EMBER_LiteModelDelete(EMBER_LiteModel* model) { delete model; }

EMBER_LiteInterpreterOptions* EMBER_LiteInterpreterOptionsCreate(void) {
  EMBER_LiteInterpreterOptions* result = nullptr;
  Guard([&] {
    result = new EMBER_LiteInterpreterOptions();
    return ember::Status::OK();
  });
  return result;
}

void EMBER_LiteInterpreterOptionsDelete(EMBER_LiteInterpreterOptions* options) { delete options; }

EMBER_Code EMBER_LiteInterpreterOptionsSetNumThreads(EMBER_LiteInterpreterOptions* options,
                                                     int num_threads) {
  return Guard([&] {
    if (options == nullptr) return ember::errors::InvalidArgument("options is NULL");
    if (num_threads < -1 || num_threads > ember::lite::InterpreterOptions::kMaxThreads) {
      return ember::errors::InvalidArgument(
          "num_threads is " + std::to_string(num_threads) +
          ": it must be -1 (the default), 0 or 1 (the calling thread only), or at most " +
          std::to_string(ember::lite::InterpreterOptions::kMaxThreads));
    }
    options->options.num_threads = num_threads;
    return ember::Status::OK();
  });
}

EMBER_LiteInterpreter* EMBER_LiteInterpreterCreate(const EMBER_LiteModel* model) {
  return EMBER_LiteInterpreterCreateWithOptions(model, nullptr);
}

int EMBER_LiteInterpreterNumThreads(const EMBER_LiteInterpreter* interp) {
  return interp == nullptr ? 0 : interp->interp->num_threads();
}

EMBER_LiteInterpreter* EMBER_LiteInterpreterCreateWithOptions(
    const EMBER_LiteModel* model, const EMBER_LiteInterpreterOptions* options) {
  EMBER_LiteInterpreter* result = nullptr;
  Guard([&] {
    if (model == nullptr) return ember::errors::InvalidArgument("model is NULL");
    auto interp = ember::lite::Interpreter::Create(
        model->model, options != nullptr ? options->options : ember::lite::InterpreterOptions());
    if (!interp.ok()) return interp.status();
    result = new EMBER_LiteInterpreter{std::move(*interp)};
    return ember::Status::OK();
  });
  return result;
}

void EMBER_LiteInterpreterDelete(EMBER_LiteInterpreter* interp) { delete interp; }

EMBER_Code EMBER_LiteInterpreterAllocateTensors(EMBER_LiteInterpreter* interp) {
  return Guard([&] {
    if (interp == nullptr) return ember::errors::InvalidArgument("interpreter is NULL");
    return interp->interp->AllocateTensors();
  });
}

EMBER_Code EMBER_LiteInterpreterInvoke(EMBER_LiteInterpreter* interp) {
  return Guard([&] {
    if (interp == nullptr) return ember::errors::InvalidArgument("interpreter is NULL");
    return interp->interp->Invoke();
  });
}

int EMBER_LiteInterpreterGetInputTensorCount(const EMBER_LiteInterpreter* interp) {
  return interp == nullptr ? 0 : static_cast<int>(interp->interp->inputs_size());
}
int EMBER_LiteInterpreterGetOutputTensorCount(const EMBER_LiteInterpreter* interp) {
  return interp == nullptr ? 0 : static_cast<int>(interp->interp->outputs_size());
}
int EMBER_LiteInterpreterGetTensorCount(const EMBER_LiteInterpreter* interp) {
  return interp == nullptr ? 0 : static_cast<int>(interp->interp->model().graph().tensors.size());
}
int EMBER_LiteInterpreterInputTensorIndex(const EMBER_LiteInterpreter* interp, int i) {
  if (interp == nullptr) return -1;
  const auto& v = interp->interp->model().graph().inputs;
  return i < 0 || static_cast<size_t>(i) >= v.size() ? -1 : v[static_cast<size_t>(i)];
}
int EMBER_LiteInterpreterOutputTensorIndex(const EMBER_LiteInterpreter* interp, int i) {
  if (interp == nullptr) return -1;
  const auto& v = interp->interp->model().graph().outputs;
  return i < 0 || static_cast<size_t>(i) >= v.size() ? -1 : v[static_cast<size_t>(i)];
}

EMBER_LiteType EMBER_LiteTensorType(const EMBER_LiteInterpreter* interp, int tensor) {
  ember::lite::TensorView v = View(interp, tensor);
  return v.def == nullptr ? -1 : static_cast<int>(v.type());
}
const char* EMBER_LiteTensorName(const EMBER_LiteInterpreter* interp, int tensor) {
  ember::lite::TensorView v = View(interp, tensor);
  return v.def == nullptr ? nullptr : v.def->name.c_str();
}
int EMBER_LiteTensorNumDims(const EMBER_LiteInterpreter* interp, int tensor) {
  ember::lite::TensorView v = View(interp, tensor);
  return v.def == nullptr ? -1 : static_cast<int>(v.shape().size());
}
int32_t EMBER_LiteTensorDim(const EMBER_LiteInterpreter* interp, int tensor, int dim) {
  ember::lite::TensorView v = View(interp, tensor);
  if (v.def == nullptr || dim < 0 || static_cast<size_t>(dim) >= v.shape().size()) return -1;
  return v.shape()[static_cast<size_t>(dim)];
}
size_t EMBER_LiteTensorByteSize(const EMBER_LiteInterpreter* interp, int tensor) {
  ember::lite::TensorView v = View(interp, tensor);
  if (v.def == nullptr) return 0;
  return v.def->num_elements * ember::lite::TensorTypeSize(v.type());
}
float EMBER_LiteTensorScale(const EMBER_LiteInterpreter* interp, int tensor) {
  ember::lite::TensorView v = View(interp, tensor);
  return v.def == nullptr ? 0.0f : v.scale();
}
int32_t EMBER_LiteTensorZeroPoint(const EMBER_LiteInterpreter* interp, int tensor) {
  ember::lite::TensorView v = View(interp, tensor);
  return v.def == nullptr ? 0 : v.zero_point();
}
void* EMBER_LiteTensorData(EMBER_LiteInterpreter* interp, int tensor) {
  return View(interp, tensor).data;
}

EMBER_Code EMBER_LiteTensorCopyFromBuffer(EMBER_LiteInterpreter* interp, int tensor,
                                          const void* data, size_t size) {
  return Guard([&] {
    ember::lite::TensorView v = View(interp, tensor);
    if (v.def == nullptr)
      return ember::errors::InvalidArgument("no tensor " + std::to_string(tensor));
    if (v.data == nullptr) {
      return ember::errors::FailedPrecondition("tensor " + std::to_string(tensor) +
                                               " is unallocated: call AllocateTensors first");
    }
    if (v.data == v.def->data) {
      return ember::errors::InvalidArgument("tensor " + std::to_string(tensor) + " is a constant");
    }
    if (size != v.bytes || (size > 0 && data == nullptr)) {
      return ember::errors::InvalidArgument("tensor " + std::to_string(tensor) + " has " +
                                            std::to_string(v.bytes) + " bytes, not " +
                                            std::to_string(size));
    }
    if (size > 0) std::memcpy(v.data, data, size);
    return ember::Status::OK();
  });
}

EMBER_Code EMBER_LiteTensorCopyToBuffer(const EMBER_LiteInterpreter* interp, int tensor, void* data,
                                        size_t size) {
  return Guard([&] {
    ember::lite::TensorView v = View(interp, tensor);
    if (v.def == nullptr)
      return ember::errors::InvalidArgument("no tensor " + std::to_string(tensor));
    if (v.data == nullptr) {
      return ember::errors::FailedPrecondition("tensor " + std::to_string(tensor) +
                                               " is unallocated: call AllocateTensors first");
    }
    if (size != v.bytes || (size > 0 && data == nullptr)) {
      return ember::errors::InvalidArgument("tensor " + std::to_string(tensor) + " has " +
                                            std::to_string(v.bytes) + " bytes, not " +
                                            std::to_string(size));
    }
    if (size > 0) std::memcpy(data, v.data, size);
    return ember::Status::OK();
  });
}

}  // extern "C"
