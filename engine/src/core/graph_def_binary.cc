// Binary tensorflow.GraphDef decoder and encoder (protobuf wire format, hand-written).
#include <cstring>
#include <utility>

#include "core/graph_def_wire.h"
#include "core/tensor_proto.h"
#include "core/wire_format.h"
#include "ember/graph_def.h"

namespace ember {

namespace graph_wire {
Status Corrupt(const std::string& where, const std::string& what) {
  return errors::InvalidArgument("Corrupt GraphDef: " + where + ": " + what +
                                 " (the .pb is truncated or not a GraphDef; re-export it)");
}
}  // namespace graph_wire

namespace {

using graph_wire::Corrupt;
using wire::Reader;
using wire::Writer;

// Reads a repeated scalar field that may be packed (wire type 2) or not.
template <typename Fn>
bool ReadRepeatedVarint(Reader* r, int wt, Fn add) {
  uint64_t v = 0;
  if (wt == wire::kVarint) {
    if (!r->ReadVarint(&v)) return false;
    add(v);
    return true;
  }
  if (wt != wire::kLengthDelimited) return false;
  const uint8_t* d;
  size_t n;
  if (!r->ReadBytes(&d, &n)) return false;
  Reader sub(d, n);
  while (!sub.done()) {
    if (!sub.ReadVarint(&v)) return false;
    add(v);
  }
  return true;
}

bool ReadRepeatedFloat(Reader* r, int wt, std::vector<float>* out) {
  uint32_t bits = 0;
  float f;
  if (wt == wire::kFixed32) {
    if (!r->ReadFixed32(&bits)) return false;
    std::memcpy(&f, &bits, 4);
    out->push_back(f);
    return true;
  }
  if (wt != wire::kLengthDelimited) return false;
  const uint8_t* d;
  size_t n;
  if (!r->ReadBytes(&d, &n) || n % 4 != 0) return false;
  for (size_t i = 0; i < n; i += 4) {
    std::memcpy(&f, d + i, 4);
    out->push_back(f);
  }
  return true;
}

bool ReadRepeatedDouble(Reader* r, int wt, std::vector<double>* out) {
  uint64_t bits;
  double v;
  if (wt == wire::kFixed64) {
    if (!r->ReadFixed64(&bits)) return false;
    std::memcpy(&v, &bits, 8);
    out->push_back(v);
    return true;
  }
  if (wt != wire::kLengthDelimited) return false;
  const uint8_t* d;
  size_t n;
  if (!r->ReadBytes(&d, &n) || n % 8 != 0) return false;
  for (size_t i = 0; i < n; i += 8) {
    std::memcpy(&v, d + i, 8);
    out->push_back(v);
  }
  return true;
}

Status ParseShape(const uint8_t* data, size_t size, const std::string& where, PartialShape* out) {
  Reader r(data, size);
  *out = PartialShape();
  while (!r.done()) {
    uint32_t field;
    int wt;
    if (!r.ReadTag(&field, &wt)) return Corrupt(where, "bad tag in TensorShapeProto");
    if (field == 2 && wt == wire::kLengthDelimited) {
      const uint8_t* d;
      size_t n;
      if (!r.ReadBytes(&d, &n)) return Corrupt(where, "truncated TensorShapeProto.dim");
      Reader dim(d, n);
      int64_t size_value = 0;
      while (!dim.done()) {
        uint32_t f2;
        int wt2;
        if (!dim.ReadTag(&f2, &wt2)) return Corrupt(where, "bad tag in TensorShapeProto.Dim");
        uint64_t v = 0;
        if (f2 == 1 && wt2 == wire::kVarint) {
          if (!dim.ReadVarint(&v)) return Corrupt(where, "truncated Dim.size");
          size_value = static_cast<int64_t>(v);
        } else if (!dim.Skip(wt2)) {
          return Corrupt(where, "truncated TensorShapeProto.Dim");
        }
      }
      if (size_value < -1) return Corrupt(where, "dimension " + std::to_string(size_value));
      out->dims.push_back(size_value);
    } else if (field == 3 && wt == wire::kVarint) {
      uint64_t v = 0;
      if (!r.ReadVarint(&v)) return Corrupt(where, "truncated unknown_rank");
      out->unknown_rank = v != 0;
    } else if (!r.Skip(wt)) {
      return Corrupt(where, "truncated TensorShapeProto");
    }
  }
  return Status::OK();
}

Status ParseTensor(const uint8_t* data, size_t size, const std::string& where, Tensor* out,
                   std::vector<std::string>* strings = nullptr) {
  Reader r(data, size);
  TensorProtoFields f;
  while (!r.done()) {
    uint32_t field;
    int wt;
    if (!r.ReadTag(&field, &wt)) return Corrupt(where, "bad tag in TensorProto");
    bool ok = true;
    uint64_t v = 0;
    const uint8_t* d;
    size_t n;
    auto push = [](std::vector<int64_t>* vec) {
      return [vec](uint64_t x) { vec->push_back(static_cast<int64_t>(x)); };
    };
    switch (field) {
      case 1:
        ok = wt == wire::kVarint && r.ReadVarint(&v);
        f.dtype = static_cast<int>(v > 1000 ? 1000 : v);
        break;
      case 2:
        ok = wt == wire::kLengthDelimited && r.ReadBytes(&d, &n);
        if (ok) EMBER_RETURN_IF_ERROR(ParseShape(d, n, where, &f.shape));
        break;
      case 4:
        ok = wt == wire::kLengthDelimited && r.ReadString(&f.content);
        f.has_content = true;
        break;
      case 5:
        ok = ReadRepeatedFloat(&r, wt, &f.float_val);
        break;
      case 6:
        ok = ReadRepeatedDouble(&r, wt, &f.double_val);
        break;
      case 7:
      case 13:  // half_val holds bit patterns; no half dtype is supported, kept for skipping
        ok = ReadRepeatedVarint(&r, wt, push(&f.int_val));
        break;
      case 8: {
        std::string sv;
        ok = wt == wire::kLengthDelimited && r.ReadString(&sv);
        if (ok && strings != nullptr) strings->push_back(std::move(sv));
        break;
      }
      case 10:
        ok = ReadRepeatedVarint(&r, wt, push(&f.int64_val));
        break;
      case 11:
        ok = ReadRepeatedVarint(&r, wt, push(&f.bool_val));
        break;
      default:
        ok = r.Skip(wt);
        break;
    }
    if (!ok)
      return Corrupt(where, "truncated or mistyped TensorProto field " + std::to_string(field));
  }
  if (f.float_val.size() + f.double_val.size() + f.int_val.size() + f.int64_val.size() +
          f.bool_val.size() >
      static_cast<size_t>(kMaxGraphTensorBytes)) {
    return Corrupt(where, "too many tensor values");
  }
  return TensorFromFields(f, where, out);
}

Status ParseList(const uint8_t* data, size_t size, const std::string& where, AttrValue::List* out) {
  Reader r(data, size);
  while (!r.done()) {
    uint32_t field;
    int wt;
    if (!r.ReadTag(&field, &wt)) return Corrupt(where, "bad tag in AttrValue.ListValue");
    bool ok = true;
    const uint8_t* d;
    size_t n;
    Status type_status;
    switch (field) {
      case 2: {
        std::string s;
        ok = wt == wire::kLengthDelimited && r.ReadString(&s);
        out->s.push_back(std::move(s));
        break;
      }
      case 3:
        ok = ReadRepeatedVarint(&r, wt,
                                [&](uint64_t v) { out->i.push_back(static_cast<int64_t>(v)); });
        break;
      case 4:
        ok = ReadRepeatedFloat(&r, wt, &out->f);
        break;
      case 5:
        ok = ReadRepeatedVarint(&r, wt, [&](uint64_t v) { out->b.push_back(v != 0); });
        break;
      case 6:
        ok = ReadRepeatedVarint(&r, wt, [&](uint64_t v) {
          DataType dt = DataType::kInvalid;
          Status s = DataTypeFromProto(static_cast<int64_t>(v > 1000 ? 1000 : v), where, &dt);
          if (!s.ok() && type_status.ok()) type_status = s;
          out->type.push_back(dt);
        });
        EMBER_RETURN_IF_ERROR(type_status);
        break;
      case 7: {
        ok = wt == wire::kLengthDelimited && r.ReadBytes(&d, &n);
        if (!ok) break;
        PartialShape shape;
        EMBER_RETURN_IF_ERROR(ParseShape(d, n, where, &shape));
        out->shape.push_back(std::move(shape));
        break;
      }
      case 8: {
        ok = wt == wire::kLengthDelimited && r.ReadBytes(&d, &n);
        if (!ok) break;
        Tensor t;
        EMBER_RETURN_IF_ERROR(ParseTensor(d, n, where, &t));
        out->tensor.push_back(std::move(t));
        break;
      }
      case 9: {  // NameAttrList: the name only
        ok = wt == wire::kLengthDelimited && r.ReadBytes(&d, &n);
        if (!ok) break;
        Reader fr(d, n);
        std::string name;
        while (!fr.done()) {
          uint32_t f2;
          int wt2;
          if (!fr.ReadTag(&f2, &wt2)) return Corrupt(where, "bad tag in NameAttrList");
          bool ok2 =
              (f2 == 1 && wt2 == wire::kLengthDelimited) ? fr.ReadString(&name) : fr.Skip(wt2);
          if (!ok2) return Corrupt(where, "truncated NameAttrList");
        }
        out->func.push_back(std::move(name));
        break;
      }
      default:
        ok = r.Skip(wt);
        break;
    }
    if (!ok)
      return Corrupt(where, "truncated or mistyped ListValue field " + std::to_string(field));
  }
  return Status::OK();
}

}  // namespace
namespace graph_wire {
Status ParseAttrMapEntry(const uint8_t* data, size_t size, const std::string& where, int depth,
                         std::map<std::string, AttrValue>* attrs);
}  // namespace graph_wire
namespace {
using graph_wire::ParseAttrMapEntry;

// `depth` bounds NameAttrList nesting (a func attr's attrs may hold func attrs).
Status ParseAttrValue(const uint8_t* data, size_t size, const std::string& where, AttrValue* out,
                      int depth = 0) {
  if (depth > 16) return Corrupt(where, "function attrs nested too deeply");
  Reader r(data, size);
  *out = AttrValue();
  while (!r.done()) {
    uint32_t field;
    int wt;
    if (!r.ReadTag(&field, &wt)) return Corrupt(where, "bad tag in AttrValue");
    bool ok = true;
    uint64_t v = 0;
    uint32_t bits = 0;
    const uint8_t* d;
    size_t n;
    switch (field) {
      case 1:
        ok = wt == wire::kLengthDelimited && r.ReadBytes(&d, &n);
        if (ok) EMBER_RETURN_IF_ERROR(ParseList(d, n, where, &out->list));
        out->kind = AttrValue::Kind::kList;
        break;
      case 2:
        ok = wt == wire::kLengthDelimited && r.ReadString(&out->s);
        out->kind = AttrValue::Kind::kS;
        break;
      case 3:
        ok = wt == wire::kVarint && r.ReadVarint(&v);
        out->i = static_cast<int64_t>(v);
        out->kind = AttrValue::Kind::kI;
        break;
      case 4:
        ok = wt == wire::kFixed32 && r.ReadFixed32(&bits);
        std::memcpy(&out->f, &bits, 4);
        out->kind = AttrValue::Kind::kF;
        break;
      case 5:
        ok = wt == wire::kVarint && r.ReadVarint(&v);
        out->b = v != 0;
        out->kind = AttrValue::Kind::kB;
        break;
      case 6:
        ok = wt == wire::kVarint && r.ReadVarint(&v);
        if (ok) {
          EMBER_RETURN_IF_ERROR(
              DataTypeFromProto(static_cast<int64_t>(v > 1000 ? 1000 : v), where, &out->type));
        }
        out->kind = AttrValue::Kind::kType;
        break;
      case 7:
        ok = wt == wire::kLengthDelimited && r.ReadBytes(&d, &n);
        if (ok) EMBER_RETURN_IF_ERROR(ParseShape(d, n, where, &out->shape));
        out->kind = AttrValue::Kind::kShape;
        break;
      case 8:
        ok = wt == wire::kLengthDelimited && r.ReadBytes(&d, &n);
        if (ok) EMBER_RETURN_IF_ERROR(ParseTensor(d, n, where, &out->tensor, &out->string_val));
        out->kind = AttrValue::Kind::kTensor;
        break;
      case 9:
        ok = wt == wire::kLengthDelimited && r.ReadString(&out->s);
        out->kind = AttrValue::Kind::kPlaceholder;
        break;
      case 10: {  // NameAttrList: the function name and its instantiation attrs
        ok = wt == wire::kLengthDelimited && r.ReadBytes(&d, &n);
        if (!ok) break;
        Reader fr(d, n);
        auto attrs = std::make_shared<std::map<std::string, AttrValue>>();
        while (!fr.done()) {
          uint32_t f2;
          int wt2;
          if (!fr.ReadTag(&f2, &wt2)) return Corrupt(where, "bad tag in NameAttrList");
          const uint8_t* ed;
          size_t en;
          if (f2 == 1 && wt2 == wire::kLengthDelimited) {
            if (!fr.ReadString(&out->s)) return Corrupt(where, "truncated NameAttrList.name");
          } else if (f2 == 2 && wt2 == wire::kLengthDelimited) {
            if (!fr.ReadBytes(&ed, &en)) return Corrupt(where, "truncated NameAttrList.attr");
            EMBER_RETURN_IF_ERROR(ParseAttrMapEntry(ed, en, where, depth + 1, attrs.get()));
          } else if (!fr.Skip(wt2)) {
            return Corrupt(where, "truncated NameAttrList");
          }
        }
        if (!attrs->empty()) out->func_attr = std::move(attrs);
        out->kind = AttrValue::Kind::kFunc;
        break;
      }
      default:
        ok = r.Skip(wt);
        break;
    }
    if (!ok)
      return Corrupt(where, "truncated or mistyped AttrValue field " + std::to_string(field));
  }
  return Status::OK();
}

}  // namespace

namespace graph_wire {
Status ParseAttrMapEntry(const uint8_t* data, size_t size, const std::string& where, int depth,
                         std::map<std::string, AttrValue>* attrs) {
  Reader entry(data, size);
  std::string key;
  const uint8_t* vd = nullptr;
  size_t vn = 0;
  while (!entry.done()) {
    uint32_t f2;
    int wt2;
    if (!entry.ReadTag(&f2, &wt2)) return Corrupt(where, "bad tag in attr map entry");
    bool ok2;
    if (f2 == 1 && wt2 == wire::kLengthDelimited) {
      ok2 = entry.ReadString(&key);
    } else if (f2 == 2 && wt2 == wire::kLengthDelimited) {
      ok2 = entry.ReadBytes(&vd, &vn);
    } else {
      ok2 = entry.Skip(wt2);
    }
    if (!ok2) return Corrupt(where, "truncated attr map entry");
  }
  AttrValue value;
  if (vd != nullptr) {
    EMBER_RETURN_IF_ERROR(ParseAttrValue(vd, vn, where + " attr '" + key + "'", &value, depth));
  }
  (*attrs)[key] = std::move(value);
  return Status::OK();
}

Status ParseNode(const uint8_t* data, size_t size, size_t index, NodeDef* node,
                 const std::string& prefix) {
  Reader r(data, size);
  std::string where = prefix + "node #" + std::to_string(index);
  while (!r.done()) {
    uint32_t field;
    int wt;
    if (!r.ReadTag(&field, &wt)) return Corrupt(where, "bad tag in NodeDef");
    bool ok = true;
    switch (field) {
      case 1:
        ok = wt == wire::kLengthDelimited && r.ReadString(&node->name);
        if (ok) where = prefix + "node '" + node->name + "'";
        break;
      case 2:
        ok = wt == wire::kLengthDelimited && r.ReadString(&node->op);
        break;
      case 3: {
        std::string in;
        ok = wt == wire::kLengthDelimited && r.ReadString(&in);
        node->input.push_back(std::move(in));
        break;
      }
      case 4:
        ok = wt == wire::kLengthDelimited && r.ReadString(&node->device);
        break;
      case 5: {
        const uint8_t* d;
        size_t n;
        ok = wt == wire::kLengthDelimited && r.ReadBytes(&d, &n);
        if (!ok) break;
        EMBER_RETURN_IF_ERROR(ParseAttrMapEntry(d, n, where, 0, &node->attr));
        break;
      }
      default:
        ok = r.Skip(wt);
        break;
    }
    if (!ok) return Corrupt(where, "truncated or mistyped NodeDef field " + std::to_string(field));
  }
  return Status::OK();
}

}  // namespace graph_wire

namespace {
using graph_wire::ParseNode;

// ---- encoder ----
void WriteShape(Writer* w, uint32_t field, const PartialShape& shape) {
  Writer s;
  for (int64_t d : shape.dims) {
    Writer dim;
    dim.VarintField(1, static_cast<uint64_t>(d));
    s.BytesField(2, dim.buffer());
  }
  if (shape.unknown_rank) s.VarintField(3, 1);
  w->BytesField(field, s.buffer());
}

void WriteTensor(Writer* w, uint32_t field, const Tensor& t,
                 const std::vector<std::string>* strings = nullptr) {
  Writer s;
  s.VarintField(1, static_cast<uint64_t>(t.dtype()));
  PartialShape shape;
  shape.dims = t.shape().dim_sizes();
  WriteShape(&s, 2, shape);
  if (t.raw_data() != nullptr && t.TotalBytes() > 0) {
    s.BytesField(4, std::string(static_cast<const char*>(t.raw_data()), t.TotalBytes()));
  }
  if (strings != nullptr) {
    for (const std::string& v : *strings) s.BytesField(8, v);
  }
  w->BytesField(field, s.buffer());
}

void WritePackedVarints(Writer* w, uint32_t field, const std::vector<uint64_t>& values) {
  if (values.empty()) return;
  Writer p;
  for (uint64_t v : values) p.Varint(v);
  w->BytesField(field, p.buffer());
}

std::string EncodeAttrValue(const AttrValue& v) {
  Writer w;
  switch (v.kind) {
    case AttrValue::Kind::kNone:
      break;
    case AttrValue::Kind::kS:
      w.BytesField(2, v.s);
      break;
    case AttrValue::Kind::kI:
      w.VarintField(3, static_cast<uint64_t>(v.i));
      break;
    case AttrValue::Kind::kF: {
      uint32_t bits = 0;
      std::memcpy(&bits, &v.f, 4);
      w.Fixed32Field(4, bits);
      break;
    }
    case AttrValue::Kind::kB:
      w.VarintField(5, v.b ? 1 : 0);
      break;
    case AttrValue::Kind::kType:
      w.VarintField(6, static_cast<uint64_t>(v.type));
      break;
    case AttrValue::Kind::kShape:
      WriteShape(&w, 7, v.shape);
      break;
    case AttrValue::Kind::kTensor:
      WriteTensor(&w, 8, v.tensor, &v.string_val);
      break;
    case AttrValue::Kind::kPlaceholder:
      w.BytesField(9, v.s);
      break;
    case AttrValue::Kind::kFunc: {
      Writer f;
      f.BytesField(1, v.s);
      if (v.func_attr) {
        for (const auto& kv : *v.func_attr) {
          Writer entry;
          entry.BytesField(1, kv.first);
          entry.BytesField(2, EncodeAttrValue(kv.second));
          f.BytesField(2, entry.buffer());
        }
      }
      w.BytesField(10, f.buffer());
      break;
    }
    case AttrValue::Kind::kList: {
      Writer l;
      for (const std::string& s : v.list.s) l.BytesField(2, s);
      std::vector<uint64_t> ints, bools, types;
      for (int64_t i : v.list.i) ints.push_back(static_cast<uint64_t>(i));
      for (bool b : v.list.b) bools.push_back(b ? 1 : 0);
      for (DataType t : v.list.type) types.push_back(static_cast<uint64_t>(t));
      WritePackedVarints(&l, 3, ints);
      if (!v.list.f.empty()) {
        std::string packed(v.list.f.size() * 4, '\0');
        std::memcpy(&packed[0], v.list.f.data(), packed.size());
        l.BytesField(4, packed);
      }
      WritePackedVarints(&l, 5, bools);
      WritePackedVarints(&l, 6, types);
      for (const PartialShape& s : v.list.shape) WriteShape(&l, 7, s);
      for (const Tensor& t : v.list.tensor) WriteTensor(&l, 8, t);
      for (const std::string& name : v.list.func) {
        Writer f;
        f.BytesField(1, name);
        l.BytesField(9, f.buffer());
      }
      w.BytesField(1, l.buffer());
      break;
    }
  }
  return w.buffer();
}

}  // namespace

Status ParseGraphDefBinary(const void* data, size_t size, GraphDef* out) {
  *out = GraphDef();
  if (size > 0 && data == nullptr) return errors::InvalidArgument("GraphDef buffer is null");
  Reader r(static_cast<const uint8_t*>(data), size);
  while (!r.done()) {
    uint32_t field;
    int wt;
    if (!r.ReadTag(&field, &wt)) return Corrupt("GraphDef", "bad field tag");
    if (field == 1 && wt == wire::kLengthDelimited) {
      const uint8_t* d;
      size_t n;
      if (!r.ReadBytes(&d, &n)) {
        return Corrupt("node #" + std::to_string(out->node.size()), "truncated NodeDef");
      }
      NodeDef node;
      EMBER_RETURN_IF_ERROR(ParseNode(d, n, out->node.size(), &node));
      out->node.push_back(std::move(node));
    } else if (field == 2 && wt == wire::kLengthDelimited) {
      const uint8_t* d;
      size_t n;
      if (!r.ReadBytes(&d, &n)) return Corrupt("GraphDef.library", "truncated");
      EMBER_RETURN_IF_ERROR(graph_wire::ParseLibrary(d, n, &out->library));
    } else if (field == 4 && wt == wire::kLengthDelimited) {
      const uint8_t* d;
      size_t n;
      if (!r.ReadBytes(&d, &n)) return Corrupt("GraphDef.versions", "truncated VersionDef");
      Reader vr(d, n);
      while (!vr.done()) {
        uint32_t f2;
        int wt2;
        uint64_t v = 0;
        if (!vr.ReadTag(&f2, &wt2)) return Corrupt("GraphDef.versions", "bad tag");
        if ((f2 == 1 || f2 == 2) && wt2 == wire::kVarint) {
          if (!vr.ReadVarint(&v)) return Corrupt("GraphDef.versions", "truncated");
          (f2 == 1 ? out->producer : out->min_consumer) = static_cast<int32_t>(v);
        } else if (!vr.Skip(wt2)) {
          return Corrupt("GraphDef.versions", "truncated");
        }
      }
    } else if (!r.Skip(wt)) {
      return Corrupt("GraphDef", "truncated field " + std::to_string(field));
    }
  }
  return Status::OK();
}

namespace graph_wire {
void WriteAttrMap(Writer* w, uint32_t field, const std::map<std::string, AttrValue>& attrs) {
  for (const auto& kv : attrs) {
    Writer entry;
    entry.BytesField(1, kv.first);
    entry.BytesField(2, EncodeAttrValue(kv.second));
    w->BytesField(field, entry.buffer());
  }
}

std::string EncodeNode(const NodeDef& node) {
  Writer n;
  n.BytesField(1, node.name);
  n.BytesField(2, node.op);
  for (const std::string& in : node.input) n.BytesField(3, in);
  if (!node.device.empty()) n.BytesField(4, node.device);
  WriteAttrMap(&n, 5, node.attr);
  return n.buffer();
}
}  // namespace graph_wire

std::string SerializeGraphDefBinary(const GraphDef& graph) {
  Writer w;
  for (const NodeDef& node : graph.node) w.BytesField(1, graph_wire::EncodeNode(node));
  if (!graph.library.function.empty()) {
    w.BytesField(2, graph_wire::EncodeLibrary(graph.library));
  }
  if (graph.producer != 0 || graph.min_consumer != 0) {
    Writer v;
    if (graph.producer != 0) v.VarintField(1, static_cast<uint64_t>(graph.producer));
    if (graph.min_consumer != 0) v.VarintField(2, static_cast<uint64_t>(graph.min_consumer));
    w.BytesField(4, v.buffer());
  }
  return w.buffer();
}

}  // namespace ember
