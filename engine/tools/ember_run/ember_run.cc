// ember-run MODEL [--feed NAME=FILE.npy]... [--fetch NAME]... [--target NAME]... [--out DIR]
//           [--signature KEY] [--tag TAG]...
//
// Runs a GraphDef (.pb or .json), a .tflite model or a SavedModel directory on .npy inputs. For
// a SavedModel, NAMEs are the signature's input and output keys (default signature
// serving_default, tag serve; no --fetch fetches every output, in key order). Each fetch, in order,
// goes to DIR/<i>.npy (printed without --out). On failure: a non-zero exit and one stderr line
// "error: <CODE>: <message>" with TensorFlow's code name.
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "ember/graph_def.h"
#include "ember/saved_model.h"
#include "ember/session.h"
#include "npy.h"
#include "savedmodel/function_inline.h"
#ifdef EMBER_RUN_HAS_LITE
#include "lite/tools/run_tflite.h"
#endif

namespace ember {
namespace {

constexpr const char* kUsage =
    "usage: ember-run MODEL [--feed NAME=FILE.npy]... [--fetch NAME]... [--target NAME]... "
    "[--out DIR] [--signature KEY] [--tag TAG]...";

struct Args {
  std::string model;
  std::vector<std::pair<std::string, std::string>> feeds;  // name, .npy path
  std::vector<std::string> fetches;
  std::vector<std::string> targets;
  std::string out_dir;
  std::string signature;
  std::vector<std::string> tags;
};

Status ParseArgs(int argc, char** argv, Args* args) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    std::string value;
    bool has_inline = false;
    size_t eq = a.find('=');
    std::string flag = a;
    if (a.rfind("--", 0) == 0 && eq != std::string::npos) {
      flag = a.substr(0, eq);
      value = a.substr(eq + 1);
      has_inline = true;
    }
    bool known = flag == "--feed" || flag == "--fetch" || flag == "--target" || flag == "--out" ||
                 flag == "--signature" || flag == "--tag";
    if (a == "-h" || a == "--help") return errors::InvalidArgument(kUsage);
    if (!known && a.rfind("-", 0) == 0 && a.size() > 1) {
      return errors::InvalidArgument("unknown option '" + a + "'; " + kUsage);
    }
    if (!known) {
      if (!args->model.empty()) {
        return errors::InvalidArgument("unexpected argument '" + a + "' (MODEL is already '" +
                                       args->model + "'); " + kUsage);
      }
      args->model = a;
      continue;
    }
    if (!has_inline) {
      if (i + 1 >= argc) return errors::InvalidArgument(flag + " needs a value; " + kUsage);
      value = argv[++i];
    }
    if (flag == "--feed") {
      size_t e = value.find('=');
      if (e == std::string::npos || e == 0 || e + 1 == value.size()) {
        return errors::InvalidArgument("--feed expects NAME=FILE.npy, got '" + value + "'");
      }
      args->feeds.emplace_back(value.substr(0, e), value.substr(e + 1));
    } else if (flag == "--fetch") {
      args->fetches.push_back(value);
    } else if (flag == "--target") {
      args->targets.push_back(value);
    } else if (flag == "--signature") {
      args->signature = value;
    } else if (flag == "--tag") {
      args->tags.push_back(value);
    } else {
      args->out_dir = value;
    }
  }
  if (args->model.empty()) return errors::InvalidArgument("missing MODEL; " + std::string(kUsage));
  return Status::OK();
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Status RunGraphDef(const Args& args, const std::vector<std::pair<std::string, Tensor>>& feeds,
                   std::vector<Tensor>* outputs) {
  GraphDef graph;
  EMBER_RETURN_IF_ERROR(ReadGraphDefFile(args.model, &graph));
  if (graph.node.empty()) {
    return errors::InvalidArgument(args.model + ": the graph is empty (no nodes); nothing to run");
  }
  std::vector<std::string> fetches = args.fetches;
  std::vector<std::string> targets = args.targets;
  if (!graph.library.function.empty()) {
    // Calls into the function library (PartitionedCall, ...) are inlined first.
    std::vector<std::string> roots = fetches, flat;
    for (const auto& f : feeds) roots.push_back(f.first);
    for (const std::string& t : targets) roots.push_back("^" + t);
    GraphDef inlined;
    Status s = InlineFunctionCalls(graph, roots, InlineOptions(), &inlined, &flat);
    if (!s.ok()) return Status(s.code(), args.model + ": " + s.message());
    for (size_t i = 0; i < fetches.size(); ++i) fetches[i] = flat[i];
    for (size_t i = 0; i < targets.size(); ++i) {
      targets[i] = flat[fetches.size() + feeds.size() + i].substr(1);
    }
    graph = std::move(inlined);
  }
  std::unique_ptr<Session> session = NewSession(SessionOptions());
  EMBER_RETURN_IF_ERROR(session->Create(graph));
  return session->Run(feeds, fetches, targets, outputs);
}

Status RunSavedModel(const Args& args, const std::vector<std::pair<std::string, Tensor>>& feeds,
                     std::vector<std::string>* names, std::vector<Tensor>* outputs) {
  if (!args.targets.empty()) {
    return errors::InvalidArgument("--target is not used with a SavedModel (run a signature)");
  }
  SavedModelBundle bundle;
  std::vector<std::string> tags = args.tags;
  if (tags.empty()) tags.push_back(kSavedModelTagServe);
  EMBER_RETURN_IF_ERROR(LoadSavedModel(SessionOptions(), args.model, tags, &bundle));
  *names = args.fetches;
  return bundle.Run(args.signature.empty() ? "serving_default" : args.signature, feeds, names,
                    outputs);
}

// The one place that picks a runner by model type (a .tflite runner plugs in here).
Status RunModel(const Args& args, const std::vector<std::pair<std::string, Tensor>>& feeds,
                std::vector<std::string>* names, std::vector<Tensor>* outputs) {
  *names = args.fetches;
  if (IsSavedModelDirectory(args.model)) return RunSavedModel(args, feeds, names, outputs);
  struct stat st;
  if (::stat(args.model.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return errors::NotFound(args.model +
                            " is a directory without saved_model.pb, so not a SavedModel");
  }
  if (!args.signature.empty() || !args.tags.empty()) {
    return errors::InvalidArgument(args.model +
                                   " is not a SavedModel directory (no saved_model.pb), so "
                                   "--signature and --tag do not apply");
  }
  if (EndsWith(args.model, ".tflite")) {
#ifdef EMBER_RUN_HAS_LITE
    return lite::RunTflite(args.model, feeds, args.fetches, outputs);
#else
    return errors::Unimplemented(args.model +
                                 ": .tflite models are not supported by this ember-run build");
#endif
  }
  return RunGraphDef(args, feeds, outputs);
}

Status MakeDirs(const std::string& dir) {
  std::string path;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = dir.find('/', pos + 1);
    path = dir.substr(0, pos);
    if (path.empty()) continue;
    if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
      return errors::NotFound("cannot create directory " + path + ": " + std::strerror(errno));
    }
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return errors::FailedPrecondition(dir + " is not a directory");
  }
  return Status::OK();
}

template <typename T>
void PrintValues(const Tensor& t) {
  const T* v = t.data<T>();
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    if (i > 0) std::fputc(' ', stdout);
    if constexpr (std::is_floating_point<T>::value) {
      std::printf("%.9g", static_cast<double>(v[i]));
    } else {
      std::printf("%lld", static_cast<long long>(v[i]));
    }
  }
  std::fputc('\n', stdout);
}

void PrintTensor(size_t index, const std::string& name, const Tensor& t) {
  std::printf("%zu %s %s %s\n", index, name.c_str(), DataTypeString(t.dtype()).c_str(),
              t.shape().DebugString().c_str());
  switch (t.dtype()) {
    case DataType::kFloat:
      PrintValues<float>(t);
      break;
    case DataType::kDouble:
      PrintValues<double>(t);
      break;
    case DataType::kInt32:
      PrintValues<int32_t>(t);
      break;
    case DataType::kInt64:
      PrintValues<int64_t>(t);
      break;
    case DataType::kInt16:
      PrintValues<int16_t>(t);
      break;
    case DataType::kInt8:
      PrintValues<int8_t>(t);
      break;
    case DataType::kUInt8:
      PrintValues<uint8_t>(t);
      break;
    case DataType::kBool:
      PrintValues<bool>(t);
      break;
    default:
      std::printf("<%s values not printable>\n", DataTypeString(t.dtype()).c_str());
      break;
  }
}

Status Main(int argc, char** argv) {
  Args args;
  EMBER_RETURN_IF_ERROR(ParseArgs(argc, argv, &args));
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const auto& f : args.feeds) {
    Tensor t;
    EMBER_RETURN_IF_ERROR(npy::Read(f.second, &t));
    feeds.emplace_back(f.first, t);
  }
  std::vector<Tensor> outputs;
  std::vector<std::string> names;
  EMBER_RETURN_IF_ERROR(RunModel(args, feeds, &names, &outputs));
  if (!args.out_dir.empty()) {
    EMBER_RETURN_IF_ERROR(MakeDirs(args.out_dir));
    for (size_t i = 0; i < outputs.size(); ++i) {
      EMBER_RETURN_IF_ERROR(
          npy::Write(args.out_dir + "/" + std::to_string(i) + ".npy", outputs[i]));
    }
  } else {
    for (size_t i = 0; i < outputs.size(); ++i) {
      PrintTensor(i, i < names.size() ? names[i] : std::to_string(i), outputs[i]);
    }
  }
  return Status::OK();
}

}  // namespace
}  // namespace ember

int main(int argc, char** argv) {
  ember::Status s;
  try {
    s = ember::Main(argc, argv);
  } catch (const std::exception& e) {
    s = ember::errors::Internal(std::string("unexpected exception: ") + e.what());
  }
  if (s.ok()) return 0;
  std::string msg = s.message();
  for (char& c : msg) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';  // exactly one stderr line
  }
  std::fprintf(stderr, "error: %s: %s\n", ember::CodeName(s.code()), msg.c_str());
  return s.code() == ember::Code::kInvalidArgument && msg.find("usage:") != std::string::npos ? 2
                                                                                              : 1;
}
