// FunctionDefLibrary (GraphDef.library = 2) on the wire: FunctionDef signature (OpDef), body
// NodeDefs, ret / control_ret maps and attrs. Read for SavedModels, whose computation lives in
// functions; written back so a parsed graph round-trips.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/graph_def_wire.h"
#include "core/tensor_proto.h"

namespace ember {
namespace graph_wire {

using wire::Reader;
using wire::Writer;

namespace {

// A map<string, string> entry (FunctionDef.ret, control_ret).
Status ParseStringMapEntry(const uint8_t* data, size_t size, const std::string& where,
                           std::map<std::string, std::string>* out) {
  Reader r(data, size);
  std::string key, value;
  while (!r.done()) {
    uint32_t f;
    int wt;
    if (!r.ReadTag(&f, &wt)) return Corrupt(where, "bad tag in map entry");
    bool ok;
    if (f == 1 && wt == wire::kLengthDelimited) {
      ok = r.ReadString(&key);
    } else if (f == 2 && wt == wire::kLengthDelimited) {
      ok = r.ReadString(&value);
    } else {
      ok = r.Skip(wt);
    }
    if (!ok) return Corrupt(where, "truncated map entry");
  }
  (*out)[key] = value;
  return Status::OK();
}

Status ParseArgDef(const uint8_t* data, size_t size, const std::string& where, FunctionArg* out) {
  Reader r(data, size);
  while (!r.done()) {
    uint32_t f;
    int wt;
    if (!r.ReadTag(&f, &wt)) return Corrupt(where, "bad tag in ArgDef");
    bool ok = true;
    uint64_t v = 0;
    if (f == 1 && wt == wire::kLengthDelimited) {
      ok = r.ReadString(&out->name);
    } else if (f == 3 && wt == wire::kVarint) {
      ok = r.ReadVarint(&v);
      if (ok && v != 0) {
        EMBER_RETURN_IF_ERROR(
            DataTypeFromProto(static_cast<int64_t>(v > 1000 ? 1000 : v), where, &out->type));
      }
    } else if (f == 4 && wt == wire::kLengthDelimited) {
      ok = r.ReadString(&out->type_attr);
    } else if (f == 5 && wt == wire::kLengthDelimited) {
      ok = r.ReadString(&out->number_attr);
    } else if (f == 6 && wt == wire::kLengthDelimited) {
      ok = r.ReadString(&out->type_list_attr);
    } else {
      ok = r.Skip(wt);
    }
    if (!ok) return Corrupt(where, "truncated ArgDef field " + std::to_string(f));
  }
  return Status::OK();
}

// OpDef: the signature of a FunctionDef.
Status ParseSignature(const uint8_t* data, size_t size, const std::string& where,
                      FunctionDef* out) {
  Reader r(data, size);
  while (!r.done()) {
    uint32_t f;
    int wt;
    if (!r.ReadTag(&f, &wt)) return Corrupt(where, "bad tag in OpDef");
    bool ok = true;
    const uint8_t* d;
    size_t n;
    if (f == 1 && wt == wire::kLengthDelimited) {
      ok = r.ReadString(&out->name);
    } else if ((f == 2 || f == 3) && wt == wire::kLengthDelimited) {
      ok = r.ReadBytes(&d, &n);
      if (ok) {
        FunctionArg arg;
        EMBER_RETURN_IF_ERROR(ParseArgDef(d, n, where, &arg));
        (f == 2 ? out->input_arg : out->output_arg).push_back(std::move(arg));
      }
    } else if (f == 20 && wt == wire::kLengthDelimited) {
      std::string c;
      ok = r.ReadString(&c);
      out->control_output.push_back(std::move(c));
    } else {
      ok = r.Skip(wt);
    }
    if (!ok) return Corrupt(where, "truncated OpDef field " + std::to_string(f));
  }
  return Status::OK();
}

Status ParseFunctionDef(const uint8_t* data, size_t size, size_t index, FunctionDef* out) {
  std::string where = "function #" + std::to_string(index);
  // The signature (and so the name) may come after the body on the wire: find it first.
  {
    Reader r(data, size);
    while (!r.done()) {
      uint32_t f;
      int wt;
      if (!r.ReadTag(&f, &wt)) return Corrupt(where, "bad tag in FunctionDef");
      const uint8_t* d;
      size_t n;
      if (f == 1 && wt == wire::kLengthDelimited) {
        if (!r.ReadBytes(&d, &n)) return Corrupt(where, "truncated FunctionDef.signature");
        EMBER_RETURN_IF_ERROR(ParseSignature(d, n, where, out));
        where = "function '" + out->name + "'";
      } else if (!r.Skip(wt)) {
        return Corrupt(where, "truncated FunctionDef field " + std::to_string(f));
      }
    }
  }
  Reader r(data, size);
  while (!r.done()) {
    uint32_t f;
    int wt;
    if (!r.ReadTag(&f, &wt)) return Corrupt(where, "bad tag in FunctionDef");
    const uint8_t* d;
    size_t n;
    if (wt != wire::kLengthDelimited || f == 1 || f > 6 || f == 2) {
      if (!r.Skip(wt)) return Corrupt(where, "truncated FunctionDef field " + std::to_string(f));
      continue;
    }
    if (!r.ReadBytes(&d, &n)) {
      return Corrupt(where, "truncated FunctionDef field " + std::to_string(f));
    }
    if (f == 3) {
      NodeDef node;
      EMBER_RETURN_IF_ERROR(ParseNode(d, n, out->node_def.size(), &node, where + ": "));
      out->node_def.push_back(std::move(node));
    } else if (f == 4) {
      EMBER_RETURN_IF_ERROR(ParseStringMapEntry(d, n, where + " ret", &out->ret));
    } else if (f == 5) {
      EMBER_RETURN_IF_ERROR(ParseAttrMapEntry(d, n, where, 0, &out->attr));
    } else if (f == 6) {
      EMBER_RETURN_IF_ERROR(ParseStringMapEntry(d, n, where + " control_ret", &out->control_ret));
    }
  }
  return Status::OK();
}

}  // namespace

Status ParseLibrary(const uint8_t* data, size_t size, FunctionDefLibrary* out) {
  Reader r(data, size);
  while (!r.done()) {
    uint32_t f;
    int wt;
    if (!r.ReadTag(&f, &wt)) return Corrupt("GraphDef.library", "bad tag");
    if (f == 1 && wt == wire::kLengthDelimited) {
      const uint8_t* d;
      size_t n;
      if (!r.ReadBytes(&d, &n)) return Corrupt("GraphDef.library", "truncated FunctionDef");
      FunctionDef fn;
      EMBER_RETURN_IF_ERROR(ParseFunctionDef(d, n, out->function.size(), &fn));
      out->function.push_back(std::move(fn));
    } else if (!r.Skip(wt)) {
      return Corrupt("GraphDef.library", "truncated field " + std::to_string(f));
    }
  }
  return Status::OK();
}

namespace {

void WriteArgs(Writer* w, uint32_t field, const std::vector<FunctionArg>& args) {
  for (const FunctionArg& a : args) {
    Writer x;
    x.BytesField(1, a.name);
    if (a.type != DataType::kInvalid) x.VarintField(3, static_cast<uint64_t>(a.type));
    if (!a.type_attr.empty()) x.BytesField(4, a.type_attr);
    if (!a.number_attr.empty()) x.BytesField(5, a.number_attr);
    if (!a.type_list_attr.empty()) x.BytesField(6, a.type_list_attr);
    w->BytesField(field, x.buffer());
  }
}

void WriteStringMap(Writer* w, uint32_t field, const std::map<std::string, std::string>& m) {
  for (const auto& kv : m) {
    Writer entry;
    entry.BytesField(1, kv.first);
    entry.BytesField(2, kv.second);
    w->BytesField(field, entry.buffer());
  }
}

}  // namespace

std::string EncodeLibrary(const FunctionDefLibrary& lib) {
  Writer l;
  for (const FunctionDef& f : lib.function) {
    Writer fd, sig;
    sig.BytesField(1, f.name);
    WriteArgs(&sig, 2, f.input_arg);
    WriteArgs(&sig, 3, f.output_arg);
    for (const std::string& c : f.control_output) sig.BytesField(20, c);
    fd.BytesField(1, sig.buffer());
    for (const NodeDef& node : f.node_def) fd.BytesField(3, EncodeNode(node));
    WriteStringMap(&fd, 4, f.ret);
    WriteAttrMap(&fd, 5, f.attr);
    WriteStringMap(&fd, 6, f.control_ret);
    l.BytesField(1, fd.buffer());
  }
  return l.buffer();
}

}  // namespace graph_wire
}  // namespace ember
