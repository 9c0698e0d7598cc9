// ember._ember._Session: tf.compat.v1.Session.run semantics over ember::Session.
//
// Everything on the path of one run (flattening the fetch structure, converting feeds, the
// Run itself with the GIL released, wrapping outputs, rebuilding the structure) is here in
// C++ so that Session.run adds little to Session::Run.
#include "ember/session.h"

#include <nanobind/stl/string.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "arrays.h"
#include "common.h"

namespace ember {
namespace python {

namespace {

// What a feed of node:0 must look like, from the GraphDef (Placeholders fully, other nodes
// by their dtype attribute), so feeds are cast as tf.compat.v1.Session casts them.
struct FeedInfo {
  DataType dtype = DataType::kInvalid;
  bool known_rank = false;
  std::vector<int64_t> dims;  // -1: unknown
};

bool IsTensorName(const char* s, Py_ssize_t n) {
  Py_ssize_t colon = n - 1;
  while (colon >= 0 && s[colon] >= '0' && s[colon] <= '9') --colon;
  return colon >= 1 && colon < n - 1 && s[colon] == ':';
}

std::string ShapeRepr(const std::vector<int64_t>& dims, bool known_rank) {
  if (!known_rank) return "<unknown>";
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) s += ", ";
    s += dims[i] < 0 ? "None" : std::to_string(dims[i]);
  }
  return s + (dims.size() == 1 ? ",)" : ")");
}

[[noreturn]] void ThrowType(const std::string& message) {
  PyErr_SetString(PyExc_TypeError, message.c_str());
  throw nb::python_error();
}

std::string Repr(nb::handle h) {
  PyObject* r = PyObject_Repr(h.ptr());
  if (r == nullptr) {
    PyErr_Clear();
    return "<object>";
  }
  const char* s = PyUnicode_AsUTF8(r);
  std::string out = s != nullptr ? s : "<object>";
  Py_DECREF(r);
  return out;
}

// The name a fetch or feed key stands for: a str, or an object with a str `.name` (a tensor or
// operation of ember.Graph, as TF's). False when `o` is neither.
bool NameOf(PyObject* o, const char** s, Py_ssize_t* n, nb::object* keep) {
  if (!PyUnicode_Check(o)) {
    if (PyList_Check(o) || PyTuple_Check(o) || PyDict_Check(o)) return false;
    PyObject* name = PyObject_GetAttrString(o, "name");
    if (name == nullptr) {
      PyErr_Clear();
      return false;
    }
    *keep = nb::steal(name);
    if (!PyUnicode_Check(name)) return false;
    o = name;
  }
  *s = PyUnicode_AsUTF8AndSize(o, n);
  if (*s == nullptr) throw nb::python_error();
  return true;
}

// Fetches flattened in order: tensor names (with ':') and target op names.
struct FetchList {
  std::vector<std::string> tensors;
  std::vector<std::string> targets;
};

void CollectFetches(nb::handle f, FetchList* out, int depth) {
  PyObject* o = f.ptr();
  const char* s = nullptr;
  Py_ssize_t n = 0;
  nb::object keep;
  if (NameOf(o, &s, &n, &keep)) {
    if (IsTensorName(s, n)) {
      out->tensors.emplace_back(s, static_cast<size_t>(n));
    } else {
      out->targets.emplace_back(s, static_cast<size_t>(n));
    }
    return;
  }
  if (depth > 100) ThrowType("Fetch structure is nested too deeply");
  if (PyList_Check(o) || PyTuple_Check(o)) {
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
    PyObject** items = PySequence_Fast_ITEMS(o);
    for (Py_ssize_t i = 0; i < n; ++i) CollectFetches(items[i], out, depth + 1);
    return;
  }
  if (PyDict_Check(o)) {
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(o, &pos, &key, &value)) CollectFetches(value, out, depth + 1);
    return;
  }
  ThrowType("Fetch argument " + Repr(f) + " has invalid type " + Repr(nb::handle(Py_TYPE(o))) +
            ", must be a string naming a tensor ('node:0') or an operation ('node'), or a "
            "list, tuple or dict of them");
}

// Rebuilds the fetch structure with the results (`tensors` in order; targets become None).
nb::object BuildResult(nb::handle f, std::vector<nb::object>& tensors, size_t* next) {
  PyObject* o = f.ptr();
  const char* s = nullptr;
  Py_ssize_t n = 0;
  nb::object keep;
  if (NameOf(o, &s, &n, &keep)) {
    if (IsTensorName(s, n)) return tensors[(*next)++];
    return nb::none();
  }
  if (PyList_Check(o)) {
    const Py_ssize_t n = PyList_GET_SIZE(o);
    nb::list result;
    for (Py_ssize_t i = 0; i < n; ++i)
      result.append(BuildResult(PyList_GET_ITEM(o, i), tensors, next));
    return std::move(result);
  }
  if (PyTuple_Check(o)) {
    const Py_ssize_t n = PyTuple_GET_SIZE(o);
    nb::object result = nb::steal(PyTuple_New(n));
    if (!result.is_valid()) throw nb::python_error();
    for (Py_ssize_t i = 0; i < n; ++i) {
      nb::object item = BuildResult(PyTuple_GET_ITEM(o, i), tensors, next);
      PyTuple_SET_ITEM(result.ptr(), i, item.release().ptr());
    }
    if (!PyTuple_CheckExact(o)) {  // a namedtuple: the same type, built from the items
      return nb::handle(reinterpret_cast<PyObject*>(Py_TYPE(o)))(*result);
    }
    return result;
  }
  // A dict (Collect accepted nothing else): same keys, same type.
  nb::dict values;
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (PyDict_Next(o, &pos, &key, &value)) {
    values[nb::handle(key)] = BuildResult(value, tensors, next);
  }
  if (PyDict_CheckExact(o)) return std::move(values);
  return nb::handle(reinterpret_cast<PyObject*>(Py_TYPE(o)))(values);
}

}  // namespace

class PySession {
 public:
  PySession(const PyGraphDef& graph, int inter_op_threads, int intra_op_threads,
            int64_t timeout_ms) {
    SessionOptions options;
    options.inter_op_parallelism_threads = inter_op_threads;
    options.intra_op_parallelism_threads = intra_op_threads;
    options.operation_timeout_in_ms = timeout_ms;
    Status s;
    {
      nb::gil_scoped_release release;
      Session* raw = nullptr;
      s = NewSession(options, &raw);
      session_.reset(raw);
      if (s.ok()) s = session_->Create(*graph.graph);
    }
    if (!s.ok()) ThrowStatus(s);
    for (const NodeDef& node : graph.graph->node) {
      FeedInfo info;
      auto attr = [&](const char* name) -> const AttrValue* {
        auto it = node.attr.find(name);
        return it == node.attr.end() ? nullptr : &it->second;
      };
      const AttrValue* dtype = attr(node.op == "Cast" ? "DstT" : "dtype");
      if (dtype == nullptr) dtype = attr("T");
      if (dtype != nullptr && dtype->kind == AttrValue::Kind::kType) info.dtype = dtype->type;
      if (node.op == "Placeholder" || node.op == "PlaceholderWithDefault") {
        const AttrValue* shape = attr("shape");
        if (shape != nullptr && shape->kind == AttrValue::Kind::kShape &&
            !shape->shape.unknown_rank) {
          info.known_rank = true;
          info.dims = shape->shape.dims;
        }
      }
      feed_info_[node.name] = std::move(info);
    }
  }

  ~PySession() {
    {
      // Without the GIL: closing joins pool threads, which may be releasing fed arrays.
      nb::gil_scoped_release release;
      if (session_ != nullptr && !closed_.exchange(true)) session_->Close();
      session_.reset();
    }
    DrainPendingReleases();
  }

  void Close() {
    if (closed_.exchange(true)) return;
    std::shared_ptr<Session> session = session_;
    Status s;
    {
      nb::gil_scoped_release release;
      s = session->Close();
    }
    DrainPendingReleases();
    if (!s.ok()) ThrowStatus(s);
  }

  bool closed() const { return closed_.load(); }

  // Converts feed_dict into (name, tensor) pairs with the dtypes the graph expects.
  void ConvertFeeds(nb::handle feed_dict, std::vector<std::pair<std::string, Tensor>>* feeds) {
    if (feed_dict.is_none()) return;
    nb::object items;
    PyObject* dict = feed_dict.ptr();
    if (!PyDict_Check(dict)) {
      items = nb::steal(PyDict_New());
      if (PyDict_Merge(items.ptr(), dict, 1) < 0) {
        PyErr_Clear();
        ThrowType("feed_dict must be a dict (tensor name -> value), not " +
                  Repr(nb::handle(Py_TYPE(dict))));
      }
      dict = items.ptr();
    }
    feeds->reserve(static_cast<size_t>(PyDict_Size(dict)));
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(dict, &pos, &key, &value)) {
      Py_ssize_t n = 0;
      const char* s = nullptr;
      nb::object keep;
      if (!NameOf(key, &s, &n, &keep)) {
        ThrowType("Cannot interpret feed_dict key " + Repr(key) +
                  " as a tensor: feed_dict keys are tensor names such as 'x:0'");
      }
      std::string name(s, static_cast<size_t>(n));
      const FeedInfo* info = nullptr;
      std::string node = name;
      bool output0 = true;
      if (IsTensorName(s, n)) {
        const size_t colon = name.rfind(':');
        node = name.substr(0, colon);
        output0 = name.compare(colon + 1, std::string::npos, "0") == 0;
      }
      if (output0) {
        auto it = feed_info_.find(node);
        if (it != feed_info_.end()) info = &it->second;
      }
      Tensor t;
      PyObject* arr = nullptr;
      if (!ArrayToTensor(value, info != nullptr ? info->dtype : DataType::kInvalid, &t, &arr)) {
        throw nb::python_error();
      }
      nb::object arr_ref = nb::steal(arr);
      if (info != nullptr && info->known_rank) {
        const std::vector<int64_t>& have = t.shape().dim_sizes();
        bool ok = have.size() == info->dims.size();
        for (size_t i = 0; ok && i < have.size(); ++i) {
          ok = info->dims[i] < 0 || info->dims[i] == have[i];
        }
        if (!ok) {
          const std::string tensor_name = output0 && !IsTensorName(s, n) ? name + ":0" : name;
          PyErr_SetString(PyExc_ValueError, ("Cannot feed value of shape " + ShapeRepr(have, true) +
                                             " for Tensor " + tensor_name + ", which has shape " +
                                             ShapeRepr(info->dims, info->known_rank))
                                                .c_str());
          throw nb::python_error();
        }
      }
      feeds->emplace_back(std::move(name), std::move(t));
    }
  }

  std::shared_ptr<Session> CheckOpen() {
    if (closed_.load()) {
      ThrowStatus(errors::Cancelled("Attempted to use a closed Session."), ErrorFlavor::kClosed);
    }
    return session_;
  }

  nb::object Run(nb::handle fetches, nb::handle feed_dict, nb::handle /*options*/,
                 nb::handle /*run_metadata*/) {
    std::shared_ptr<Session> session = CheckOpen();
    FetchList fetch;
    CollectFetches(fetches, &fetch, 0);
    std::vector<Tensor> outputs;
    if (fetch.tensors.empty() && fetch.targets.empty()) {
      // Nothing to run: tf.compat.v1 returns the (empty) structure without running.
      std::vector<nb::object> none;
      size_t next = 0;
      return BuildResult(fetches, none, &next);
    }
    Status s;
    {
      std::vector<std::pair<std::string, Tensor>> feeds;
      ConvertFeeds(feed_dict, &feeds);
      {
        nb::gil_scoped_release release;
        s = session->Run(feeds, fetch.tensors, fetch.targets, &outputs);
      }
      // Feeds go first (dropping the fed arrays' references with the GIL held), so an output
      // that is the last holder of its buffer can be handed to NumPy without a copy.
    }
    DrainPendingReleases();
    if (!s.ok()) {
      ErrorFlavor flavor = ErrorFlavor::kPlain;
      if (s.code() == Code::kNotFound) flavor = ErrorFlavor::kLookup;
      if (s.code() == Code::kCancelled && closed_.load()) flavor = ErrorFlavor::kClosed;
      ThrowStatus(s, flavor);
    }
    std::vector<nb::object> arrays;
    arrays.reserve(outputs.size());
    for (Tensor& t : outputs) {
      PyObject* a = TensorToArray(std::move(t), /*scalar_as_numpy_scalar=*/true);
      if (a == nullptr) throw nb::python_error();
      arrays.push_back(nb::steal(a));
    }
    size_t next = 0;
    return BuildResult(fetches, arrays, &next);
  }

  // Benchmark support: `steps` Session::Run calls from C++ on already converted feeds (the
  // figure Session.run's overhead is measured against). Returns seconds per step.
  double TimeCppRun(nb::handle fetches, nb::handle feed_dict, int steps) {
    std::shared_ptr<Session> session = CheckOpen();
    FetchList fetch;
    CollectFetches(fetches, &fetch, 0);
    std::vector<std::pair<std::string, Tensor>> feeds;
    ConvertFeeds(feed_dict, &feeds);
    for (auto& f : feeds) f.second = f.second.Clone();  // ember-owned, as a C++ caller's
    Status s;
    double seconds = 0;
    {
      nb::gil_scoped_release release;
      std::vector<Tensor> outputs;
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < steps && s.ok(); ++i) {
        s = session->Run(feeds, fetch.tensors, fetch.targets, &outputs);
      }
      seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    if (!s.ok()) ThrowStatus(s);
    return seconds / (steps > 0 ? steps : 1);
  }

 private:
  std::shared_ptr<Session> session_;
  std::unordered_map<std::string, FeedInfo> feed_info_;
  std::atomic<bool> closed_{false};
};

void RegisterSession(nb::module_& m) {
  using namespace nb::literals;
  nb::class_<PySession>(m, "_Session")
      .def(nb::init<const PyGraphDef&, int, int, int64_t>(), "graph"_a, "inter_op_threads"_a = 0,
           "intra_op_threads"_a = 0, "operation_timeout_in_ms"_a = 0)
      .def("run", &PySession::Run, "fetches"_a, "feed_dict"_a = nb::none(),
           "options"_a = nb::none(), "run_metadata"_a = nb::none())
      .def("close", &PySession::Close)
      .def_prop_ro("_closed", &PySession::closed)
      .def("_time_cpp_run", &PySession::TimeCppRun, "fetches"_a, "feed_dict"_a, "steps"_a);
}

}  // namespace python
}  // namespace ember
