// Shared pieces of the extension: raising ember Status values as ember.errors exceptions.
#ifndef EMBER_PYTHON_COMMON_H_
#define EMBER_PYTHON_COMMON_H_

#include <nanobind/nanobind.h>

#include <memory>

#include "ember/graph_def.h"
#include "ember/status.h"

namespace ember {
namespace python {

namespace nb = nanobind;

// How a failed Status is raised: the OpError subclass for its code, or for NOT_FOUND of a
// name given to Session.run, one that is also a ValueError (as tf.compat.v1.Session raises for
// unknown names), or for a closed session one that is also a RuntimeError.
enum class ErrorFlavor { kPlain = 0, kLookup = 1, kClosed = 2 };

// Sets the Python error for `status` and throws nb::python_error.
[[noreturn]] void ThrowStatus(const Status& status, ErrorFlavor flavor = ErrorFlavor::kPlain);

// A GraphDef held by Python (ember.GraphDef); sessions copy what they need.
struct PyGraphDef {
  std::shared_ptr<GraphDef> graph = std::make_shared<GraphDef>();
};

void RegisterSession(nb::module_& m);
void RegisterLite(nb::module_& m);
void RegisterConvert(nb::module_& m);

}  // namespace python
}  // namespace ember

#endif  // EMBER_PYTHON_COMMON_H_
