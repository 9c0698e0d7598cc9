// The protobuf JSON mapping of tensorflow.GraphDef (json_format.MessageToJson output), and
// ReadGraphDefFile, which picks the binary or JSON reader by content.
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <limits>
#include <map>
#include <memory>
#include <sstream>

#include "core/json.h"
#include "core/tensor_proto.h"
#include "ember/graph_def.h"

namespace ember {

namespace {

using json::Value;
using Type = json::Value::Type;

Status Bad(const std::string& where, const std::string& what) {
  return errors::InvalidArgument("Invalid GraphDef JSON: " + where + ": " + what);
}

// "tensor_content" -> "tensorContent"; protobuf's JSON parser accepts both spellings.
std::string ToCamel(const std::string& name) {
  std::string out;
  bool upper = false;
  for (char c : name) {
    if (c == '_') {
      upper = true;
    } else {
      out.push_back(upper && c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c);
      upper = false;
    }
  }
  return out;
}

using FieldFn = std::function<Status(const std::string& field, const Value& v)>;

Status ForEachField(const Value& obj, const std::string& where, const char* message,
                    std::initializer_list<const char*> known, const FieldFn& fn) {
  if (obj.type != Type::kObject) {
    return Bad(where,
               std::string("expected a ") + message + " object, got " + json::TypeName(obj.type));
  }
  for (const auto& kv : obj.object) {
    std::string field = ToCamel(kv.first);
    bool found = false;
    for (const char* k : known) found = found || field == k;
    if (!found) {
      std::string list;
      for (const char* k : known) list += std::string(list.empty() ? "" : ", ") + k;
      return Bad(where,
                 "unknown field \"" + kv.first + "\" in " + message + " (known: " + list + ")");
    }
    if (kv.second.type == Type::kNull) continue;  // null means "default"
    EMBER_RETURN_IF_ERROR(fn(field, kv.second));
  }
  return Status::OK();
}

Status GetInt64(const Value& v, const std::string& where, int64_t* out) {
  const std::string* text = nullptr;
  if (v.type == Type::kNumber || v.type == Type::kString) text = &v.text;
  if (text == nullptr || text->empty()) return Bad(where, "expected an integer");
  errno = 0;
  char* end = nullptr;
  long long x = std::strtoll(text->c_str(), &end, 10);
  if (errno == 0 && end != nullptr && *end == '\0') {
    *out = x;
    return Status::OK();
  }
  // An integral number written with an exponent or ".0" is accepted by protobuf too.
  double d = std::strtod(text->c_str(), &end);
  if (end != nullptr && *end == '\0' && std::isfinite(d) && d == std::floor(d) && d >= -9.2e18 &&
      d <= 9.2e18) {
    *out = static_cast<int64_t>(d);
    return Status::OK();
  }
  return Bad(where, "expected an integer, got \"" + *text + "\"");
}

Status GetFloat(const Value& v, const std::string& where, double* out) {
  if (v.type == Type::kNumber) {
    *out = v.number;
    return Status::OK();
  }
  if (v.type == Type::kString) {
    if (v.text == "NaN") {
      *out = std::numeric_limits<double>::quiet_NaN();
      return Status::OK();
    }
    if (v.text == "Infinity" || v.text == "-Infinity") {
      *out = v.text[0] == '-' ? -HUGE_VAL : HUGE_VAL;
      return Status::OK();
    }
    char* end = nullptr;
    *out = std::strtod(v.text.c_str(), &end);
    if (!v.text.empty() && end != nullptr && *end == '\0') return Status::OK();
  }
  return Bad(where, "expected a number");
}

Status GetBool(const Value& v, const std::string& where, bool* out) {
  if (v.type != Type::kBool) return Bad(where, "expected true or false");
  *out = v.b;
  return Status::OK();
}

Status GetString(const Value& v, const std::string& where, std::string* out) {
  if (v.type != Type::kString) return Bad(where, "expected a string");
  *out = v.text;
  return Status::OK();
}

Status GetBytes(const Value& v, const std::string& where, std::string* out) {
  if (v.type != Type::kString) return Bad(where, "expected base64 bytes in a string");
  out->clear();
  uint32_t acc = 0;
  int bits = 0;
  size_t pad = 0;
  for (char c : v.text) {
    int d;
    if (c >= 'A' && c <= 'Z') {
      d = c - 'A';
    } else if (c >= 'a' && c <= 'z') {
      d = c - 'a' + 26;
    } else if (c >= '0' && c <= '9') {
      d = c - '0' + 52;
    } else if (c == '+' || c == '-') {
      d = 62;
    } else if (c == '/' || c == '_') {
      d = 63;
    } else if (c == '=') {
      ++pad;
      continue;
    } else {
      return Bad(where, std::string("invalid base64 character '") + c + "'");
    }
    if (pad > 0) return Bad(where, "base64 data after '=' padding");
    acc = (acc << 6) | static_cast<uint32_t>(d);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out->push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  if (bits >= 6) return Bad(where, "truncated base64 data");
  return Status::OK();
}

Status GetDataType(const Value& v, const std::string& where, DataType* out) {
  int64_t number = -1;
  if (v.type == Type::kString) {
    std::string name = v.text;
    for (int i = 1; i < 300; ++i) {
      if (DataTypeProtoName(i) == name) number = i;
    }
    if (name == "DT_INVALID") number = 0;
    if (number < 0)
      return Bad(where, "unknown DataType \"" + name + "\" (expected e.g. \"DT_FLOAT\")");
  } else if (v.type == Type::kNumber) {
    EMBER_RETURN_IF_ERROR(GetInt64(v, where, &number));
  } else {
    return Bad(where, "expected a DataType name such as \"DT_FLOAT\"");
  }
  return DataTypeFromProto(number < 0 || number > 1000 ? 1000 : number, where, out);
}

template <typename Fn>
Status ForEachItem(const Value& v, const std::string& where, Fn fn) {
  if (v.type != Type::kArray)
    return Bad(where, std::string("expected an array, got ") + json::TypeName(v.type));
  for (size_t i = 0; i < v.array.size(); ++i) {
    EMBER_RETURN_IF_ERROR(fn(v.array[i], where + "[" + std::to_string(i) + "]"));
  }
  return Status::OK();
}

Status ParseShape(const Value& v, const std::string& where, PartialShape* out) {
  *out = PartialShape();
  return ForEachField(
      v, where, "TensorShapeProto", {"dim", "unknownRank"},
      [&](const std::string& f, const Value& x) {
        if (f == "unknownRank") return GetBool(x, where + ".unknownRank", &out->unknown_rank);
        return ForEachItem(x, where + ".dim", [&](const Value& d, const std::string& w) {
          int64_t size = 0;
          Status s = ForEachField(d, w, "TensorShapeProto.Dim", {"size", "name"},
                                  [&](const std::string& f2, const Value& y) {
                                    if (f2 == "size") return GetInt64(y, w + ".size", &size);
                                    return Status::OK();
                                  });
          EMBER_RETURN_IF_ERROR(s);
          if (size < -1) return Bad(w, "dimension " + std::to_string(size));
          out->dims.push_back(size);
          return Status::OK();
        });
      });
}

Status ParseTensor(const Value& v, const std::string& where, Tensor* out,
                   std::vector<std::string>* strings = nullptr) {
  TensorProtoFields f;
  auto ints = [&](const Value& x, const std::string& w, std::vector<int64_t>* vec) {
    return ForEachItem(x, w, [&](const Value& item, const std::string& w2) {
      int64_t i;
      if (item.type == Type::kBool) {
        i = item.b ? 1 : 0;
      } else {
        EMBER_RETURN_IF_ERROR(GetInt64(item, w2, &i));
      }
      vec->push_back(i);
      return Status::OK();
    });
  };
  Status s = ForEachField(
      v, where, "TensorProto",
      {"dtype", "tensorShape", "versionNumber", "tensorContent", "floatVal", "doubleVal", "intVal",
       "stringVal", "scomplexVal", "int64Val", "boolVal", "dcomplexVal", "halfVal",
       "resourceHandleVal", "variantVal", "uint32Val", "uint64Val"},
      [&](const std::string& field, const Value& x) -> Status {
        std::string w = where + "." + field;
        if (field == "dtype") {
          DataType dt;
          // Keep the raw number so that TensorFromFields reports unsupported types.
          if (x.type == Type::kString && x.text == "DT_STRING") {
            f.dtype = 7;
            return Status::OK();
          }
          EMBER_RETURN_IF_ERROR(GetDataType(x, w, &dt));
          f.dtype = static_cast<int>(dt);
          return Status::OK();
        }
        if (field == "tensorShape") return ParseShape(x, w, &f.shape);
        if (field == "tensorContent") {
          f.has_content = true;
          return GetBytes(x, w, &f.content);
        }
        if (field == "floatVal" || field == "doubleVal") {
          return ForEachItem(x, w, [&](const Value& item, const std::string& w2) {
            double d;
            EMBER_RETURN_IF_ERROR(GetFloat(item, w2, &d));
            if (field == "floatVal") {
              f.float_val.push_back(static_cast<float>(d));
            } else {
              f.double_val.push_back(d);
            }
            return Status::OK();
          });
        }
        if (field == "intVal" || field == "halfVal") return ints(x, w, &f.int_val);
        if (field == "int64Val") return ints(x, w, &f.int64_val);
        if (field == "boolVal") return ints(x, w, &f.bool_val);
        if (field == "stringVal" && strings != nullptr) {
          return ForEachItem(x, w, [&](const Value& item, const std::string& w2) {
            std::string sv;
            EMBER_RETURN_IF_ERROR(GetBytes(item, w2, &sv));
            strings->push_back(std::move(sv));
            return Status::OK();
          });
        }
        return Status::OK();  // string, complex, handle values: not materialized
      });
  EMBER_RETURN_IF_ERROR(s);
  return TensorFromFields(f, where, out);
}

Status ParseList(const Value& v, const std::string& where, AttrValue::List* out) {
  return ForEachField(
      v, where, "AttrValue.ListValue", {"s", "i", "f", "b", "type", "shape", "tensor", "func"},
      [&](const std::string& field, const Value& x) -> Status {
        std::string w = where + "." + field;
        return ForEachItem(x, w, [&](const Value& item, const std::string& w2) -> Status {
          if (field == "s") {
            std::string s;
            EMBER_RETURN_IF_ERROR(GetBytes(item, w2, &s));
            out->s.push_back(s);
          } else if (field == "i") {
            int64_t i;
            EMBER_RETURN_IF_ERROR(GetInt64(item, w2, &i));
            out->i.push_back(i);
          } else if (field == "f") {
            double d;
            EMBER_RETURN_IF_ERROR(GetFloat(item, w2, &d));
            out->f.push_back(static_cast<float>(d));
          } else if (field == "b") {
            bool b;
            EMBER_RETURN_IF_ERROR(GetBool(item, w2, &b));
            out->b.push_back(b);
          } else if (field == "type") {
            DataType dt;
            EMBER_RETURN_IF_ERROR(GetDataType(item, w2, &dt));
            out->type.push_back(dt);
          } else if (field == "shape") {
            PartialShape s;
            EMBER_RETURN_IF_ERROR(ParseShape(item, w2, &s));
            out->shape.push_back(s);
          } else if (field == "tensor") {
            Tensor t;
            EMBER_RETURN_IF_ERROR(ParseTensor(item, w2, &t));
            out->tensor.push_back(t);
          } else if (field == "func") {
            std::string name;
            const Value* n = item.type == Type::kObject ? item.Find("name") : nullptr;
            if (n != nullptr) EMBER_RETURN_IF_ERROR(GetString(*n, w2 + ".name", &name));
            out->func.push_back(name);
          }
          return Status::OK();
        });
      });
}

Status ParseAttr(const Value& v, const std::string& where, AttrValue* out, int depth = 0) {
  *out = AttrValue();
  return ForEachField(
      v, where, "AttrValue",
      {"list", "s", "i", "f", "b", "type", "shape", "tensor", "placeholder", "func"},
      [&](const std::string& field, const Value& x) -> Status {
        std::string w = where + "." + field;
        if (out->kind != AttrValue::Kind::kNone)
          return Bad(where, "more than one value in AttrValue");
        if (field == "list") {
          out->kind = AttrValue::Kind::kList;
          return ParseList(x, w, &out->list);
        }
        if (field == "s") {
          out->kind = AttrValue::Kind::kS;
          return GetBytes(x, w, &out->s);
        }
        if (field == "i") {
          out->kind = AttrValue::Kind::kI;
          return GetInt64(x, w, &out->i);
        }
        if (field == "f") {
          out->kind = AttrValue::Kind::kF;
          double d;
          EMBER_RETURN_IF_ERROR(GetFloat(x, w, &d));
          out->f = static_cast<float>(d);
          return Status::OK();
        }
        if (field == "b") {
          out->kind = AttrValue::Kind::kB;
          return GetBool(x, w, &out->b);
        }
        if (field == "type") {
          out->kind = AttrValue::Kind::kType;
          return GetDataType(x, w, &out->type);
        }
        if (field == "shape") {
          out->kind = AttrValue::Kind::kShape;
          return ParseShape(x, w, &out->shape);
        }
        if (field == "tensor") {
          out->kind = AttrValue::Kind::kTensor;
          return ParseTensor(x, w, &out->tensor, &out->string_val);
        }
        if (field == "placeholder") {
          out->kind = AttrValue::Kind::kPlaceholder;
          return GetString(x, w, &out->s);
        }
        out->kind = AttrValue::Kind::kFunc;
        if (x.type != Type::kObject) return Bad(w, "expected a NameAttrList object");
        const Value* name = x.Find("name");
        if (name != nullptr) EMBER_RETURN_IF_ERROR(GetString(*name, w + ".name", &out->s));
        const Value* attrs = x.Find("attr");
        if (attrs != nullptr && attrs->type == Type::kObject && !attrs->object.empty()) {
          if (depth > 16) return Bad(w, "function attrs nested too deeply");
          auto map = std::make_shared<std::map<std::string, AttrValue>>();
          for (const auto& kv : attrs->object) {
            EMBER_RETURN_IF_ERROR(
                ParseAttr(kv.second, w + " attr '" + kv.first + "'", &(*map)[kv.first], depth + 1));
          }
          out->func_attr = std::move(map);
        }
        return Status::OK();
      });
}

Status ParseNode(const Value& v, size_t index, NodeDef* node, const std::string& prefix = "") {
  std::string where = prefix + "node #" + std::to_string(index);
  if (v.type == Type::kObject) {
    const Value* name = v.Find("name");
    if (name != nullptr && name->type == Type::kString)
      where = prefix + "node '" + name->text + "'";
  }
  return ForEachField(
      v, where, "NodeDef",
      {"name", "op", "input", "device", "attr", "experimentalDebugInfo", "experimentalType"},
      [&](const std::string& field, const Value& x) -> Status {
        std::string w = where + "." + field;
        if (field == "name") return GetString(x, w, &node->name);
        if (field == "op") return GetString(x, w, &node->op);
        if (field == "device") return GetString(x, w, &node->device);
        if (field == "input") {
          return ForEachItem(x, w, [&](const Value& item, const std::string& w2) {
            std::string in;
            EMBER_RETURN_IF_ERROR(GetString(item, w2, &in));
            node->input.push_back(in);
            return Status::OK();
          });
        }
        if (field == "attr") {
          if (x.type != Type::kObject)
            return Bad(w, "expected an object mapping names to AttrValues");
          for (const auto& kv : x.object) {
            AttrValue a;
            EMBER_RETURN_IF_ERROR(ParseAttr(kv.second, where + " attr '" + kv.first + "'", &a));
            node->attr[kv.first] = std::move(a);
          }
        }
        return Status::OK();
      });
}

Status ParseStringMap(const Value& v, const std::string& where,
                      std::map<std::string, std::string>* out) {
  if (v.type != Type::kObject) return Bad(where, "expected an object of strings");
  for (const auto& kv : v.object) {
    EMBER_RETURN_IF_ERROR(GetString(kv.second, where + "." + kv.first, &(*out)[kv.first]));
  }
  return Status::OK();
}

Status ParseArgDefs(const Value& v, const std::string& where, std::vector<FunctionArg>* out) {
  return ForEachItem(v, where, [&](const Value& item, const std::string& w) -> Status {
    FunctionArg arg;
    EMBER_RETURN_IF_ERROR(
        ForEachField(item, w, "ArgDef",
                     {"name", "description", "type", "typeAttr", "numberAttr", "typeListAttr",
                      "handleData", "isRef", "experimentalFullType"},
                     [&](const std::string& f, const Value& x) -> Status {
                       if (f == "name") return GetString(x, w + ".name", &arg.name);
                       if (f == "type") return GetDataType(x, w + ".type", &arg.type);
                       if (f == "typeAttr") return GetString(x, w + ".typeAttr", &arg.type_attr);
                       if (f == "numberAttr")
                         return GetString(x, w + ".numberAttr", &arg.number_attr);
                       if (f == "typeListAttr")
                         return GetString(x, w + ".typeListAttr", &arg.type_list_attr);
                       return Status::OK();
                     }));
    out->push_back(std::move(arg));
    return Status::OK();
  });
}

Status ParseFunction(const Value& v, size_t index, FunctionDef* fn) {
  std::string where = "function #" + std::to_string(index);
  const Value* sig = v.type == Type::kObject ? v.Find("signature") : nullptr;
  if (sig != nullptr) {
    EMBER_RETURN_IF_ERROR(
        ForEachField(*sig, where + ".signature", "OpDef",
                     {"name", "inputArg", "outputArg", "controlOutput", "attr", "deprecation",
                      "summary", "description", "isCommutative", "isAggregate", "isStateful",
                      "allowsUninitializedInput", "isDistributedCommunication"},
                     [&](const std::string& f, const Value& x) -> Status {
                       std::string w = where + ".signature." + f;
                       if (f == "name") return GetString(x, w, &fn->name);
                       if (f == "inputArg") return ParseArgDefs(x, w, &fn->input_arg);
                       if (f == "outputArg") return ParseArgDefs(x, w, &fn->output_arg);
                       if (f == "controlOutput") {
                         return ForEachItem(x, w, [&](const Value& item, const std::string& w2) {
                           std::string c;
                           EMBER_RETURN_IF_ERROR(GetString(item, w2, &c));
                           fn->control_output.push_back(std::move(c));
                           return Status::OK();
                         });
                       }
                       return Status::OK();
                     }));
    where = "function '" + fn->name + "'";
  }
  return ForEachField(
      v, where, "FunctionDef",
      {"signature", "attr", "argAttr", "resourceArgUniqueId", "nodeDef", "ret", "controlRet"},
      [&](const std::string& f, const Value& x) -> Status {
        std::string w = where + "." + f;
        if (f == "nodeDef") {
          if (x.type != Type::kArray) return Bad(w, "expected an array of NodeDef objects");
          for (size_t i = 0; i < x.array.size(); ++i) {
            NodeDef node;
            EMBER_RETURN_IF_ERROR(ParseNode(x.array[i], i, &node, where + ": "));
            fn->node_def.push_back(std::move(node));
          }
        } else if (f == "ret") {
          return ParseStringMap(x, w, &fn->ret);
        } else if (f == "controlRet") {
          return ParseStringMap(x, w, &fn->control_ret);
        } else if (f == "attr") {
          if (x.type != Type::kObject) return Bad(w, "expected an object of AttrValues");
          for (const auto& kv : x.object) {
            EMBER_RETURN_IF_ERROR(
                ParseAttr(kv.second, where + " attr '" + kv.first + "'", &fn->attr[kv.first]));
          }
        }
        return Status::OK();
      });
}

}  // namespace

Status ParseGraphDefJson(const std::string& text, GraphDef* out) {
  *out = GraphDef();
  Value root;
  EMBER_RETURN_IF_ERROR(json::Parse(text, &root));
  return ForEachField(
      root, "GraphDef", "GraphDef", {"node", "library", "version", "versions", "debugInfo"},
      [&](const std::string& field, const Value& x) -> Status {
        if (field == "node") {
          if (x.type != Type::kArray)
            return Bad("GraphDef.node", "expected an array of NodeDef objects");
          for (size_t i = 0; i < x.array.size(); ++i) {
            NodeDef node;
            EMBER_RETURN_IF_ERROR(ParseNode(x.array[i], i, &node));
            out->node.push_back(std::move(node));
          }
        } else if (field == "library") {
          return ForEachField(x, "GraphDef.library", "FunctionDefLibrary",
                              {"function", "gradient", "registeredGradients"},
                              [&](const std::string& f, const Value& y) -> Status {
                                if (f != "function") return Status::OK();
                                if (y.type != Type::kArray)
                                  return Bad("GraphDef.library.function", "expected an array");
                                for (size_t i = 0; i < y.array.size(); ++i) {
                                  FunctionDef fn;
                                  EMBER_RETURN_IF_ERROR(ParseFunction(y.array[i], i, &fn));
                                  out->library.function.push_back(std::move(fn));
                                }
                                return Status::OK();
                              });
        } else if (field == "versions") {
          return ForEachField(
              x, "GraphDef.versions", "VersionDef", {"producer", "minConsumer", "badConsumers"},
              [&](const std::string& f, const Value& y) -> Status {
                int64_t n = 0;
                if (f == "badConsumers") return Status::OK();
                EMBER_RETURN_IF_ERROR(GetInt64(y, "GraphDef.versions." + f, &n));
                (f == "producer" ? out->producer : out->min_consumer) = static_cast<int32_t>(n);
                return Status::OK();
              });
        }
        return Status::OK();
      });
}

Status ReadGraphDefFile(const std::string& path, GraphDef* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return errors::NotFound(path + "; " + std::strerror(errno) +
                            " (pass the path of a .pb or .json GraphDef)");
  }
  std::ostringstream buf;
  buf << in.rdbuf();
  std::string data = buf.str();
  size_t i = 0;
  while (i < data.size() &&
         (data[i] == ' ' || data[i] == '\n' || data[i] == '\r' || data[i] == '\t'))
    ++i;
  Status s;
  bool json_name = path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0;
  if (json_name || (i < data.size() && (data[i] == '{' || data[i] == '['))) {
    s = ParseGraphDefJson(data, out);
  } else {
    s = ParseGraphDefBinary(data.data(), data.size(), out);
  }
  if (!s.ok()) return Status(s.code(), path + ": " + s.message());
  return Status::OK();
}

}  // namespace ember
