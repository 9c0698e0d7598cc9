// The `ember._ember` extension module: GraphDef and the error bridge here; Session, lite and
// convert in their own files.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <string>
#include <vector>

#include "arrays.h"
#include "common.h"

namespace ember {
namespace python {

namespace {
// ember.errors._from_status(code, message, flavor) -> exception instance; set on import.
nb::object* error_factory = nullptr;

StatusOr<PyGraphDef> GraphFromBytes(const char* data, size_t size) {
  PyGraphDef g;
  size_t i = 0;
  while (i < size && (data[i] == ' ' || data[i] == '\n' || data[i] == '\t' || data[i] == '\r')) ++i;
  Status s;
  {
    nb::gil_scoped_release release;
    s = (i < size && data[i] == '{') ? ParseGraphDefJson(std::string(data, size), g.graph.get())
                                     : ParseGraphDefBinary(data, size, g.graph.get());
  }
  if (!s.ok()) return s;
  return g;
}
}  // namespace

void ThrowStatus(const Status& status, ErrorFlavor flavor) {
  if (error_factory == nullptr || !error_factory->is_valid()) {
    PyErr_SetString(PyExc_RuntimeError, status.ToString().c_str());
    throw nb::python_error();
  }
  nb::object exc =
      (*error_factory)(static_cast<int>(status.code()), status.message(), static_cast<int>(flavor));
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
  throw nb::python_error();
}

}  // namespace python
}  // namespace ember

using ember::python::PyGraphDef;
namespace nb = nanobind;

NB_MODULE(_ember, m) {
  if (!ember::python::InitNumpy()) throw nb::python_error();
  m.attr("__version__") = "0.1.0";

  m.def(
      "_set_error_factory",
      [](nb::object factory) {
        if (ember::python::error_factory == nullptr) {
          ember::python::error_factory = new nb::object();  // lives as long as the process
        }
        *ember::python::error_factory = std::move(factory);
      },
      nb::arg("factory"));

  nb::class_<PyGraphDef>(m, "GraphDef",
                         "A TensorFlow GraphDef (binary .pb or protobuf JSON), as ember reads it.")
      .def(nb::init<>())
      .def_static(
          "from_file",
          [](const std::string& path) {
            PyGraphDef g;
            ember::Status s;
            {
              nb::gil_scoped_release release;
              s = ember::ReadGraphDefFile(path, g.graph.get());
            }
            if (!s.ok()) ember::python::ThrowStatus(s);
            return g;
          },
          nb::arg("path"), "Reads a .pb (binary) or .json GraphDef file.")
      .def_static(
          "from_bytes",
          [](nb::bytes data) {
            auto g = ember::python::GraphFromBytes(data.c_str(), data.size());
            if (!g.ok()) ember::python::ThrowStatus(g.status());
            return *g;
          },
          nb::arg("data"), "Parses binary GraphDef bytes, or protobuf JSON text.")
      .def(
          "ParseFromString",
          [](PyGraphDef& self, nb::bytes data) {
            auto g = ember::python::GraphFromBytes(data.c_str(), data.size());
            if (!g.ok()) ember::python::ThrowStatus(g.status());
            self.graph = g->graph;
            return data.size();
          },
          nb::arg("data"), "Replaces this graph by parsed bytes (as protobuf's ParseFromString).")
      .def("SerializeToString",
           [](const PyGraphDef& self) {
             std::string s = ember::SerializeGraphDefBinary(*self.graph);
             return nb::bytes(s.data(), s.size());
           })
      .def(
          "_prefixed",
          [](const PyGraphDef& self, const std::string& prefix) {
            // import_graph_def(name=prefix): every node and input named "prefix/...".
            PyGraphDef g;
            *g.graph = *self.graph;
            for (ember::NodeDef& n : g.graph->node) {
              n.name = prefix + "/" + n.name;
              for (std::string& in : n.input) {
                in = in.rfind('^', 0) == 0 ? "^" + prefix + "/" + in.substr(1) : prefix + "/" + in;
              }
            }
            return g;
          },
          nb::arg("prefix"))
      .def(
          "_merged",
          [](const PyGraphDef& self, const PyGraphDef& other) {
            PyGraphDef g;
            *g.graph = *self.graph;
            g.graph->node.insert(g.graph->node.end(), other.graph->node.begin(),
                                 other.graph->node.end());
            if (g.graph->producer == 0) g.graph->producer = other.graph->producer;
            return g;
          },
          nb::arg("other"))
      .def_prop_ro("num_nodes", [](const PyGraphDef& self) { return self.graph->node.size(); })
      .def("node_names", [](const PyGraphDef& self) {
        std::vector<std::string> names;
        names.reserve(self.graph->node.size());
        for (const ember::NodeDef& n : self.graph->node) names.push_back(n.name);
        return names;
      });

  ember::python::RegisterSession(m);
  ember::python::RegisterLite(m);
#ifdef EMBER_PY_HAS_CONVERT
  ember::python::RegisterConvert(m);
#endif
}
