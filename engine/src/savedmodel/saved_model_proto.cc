#include "savedmodel/saved_model_proto.h"

#include <utility>

#include "core/tensor_proto.h"
#include "core/wire_format.h"

namespace ember {

namespace {

using wire::Reader;

Status Bad(const std::string& where, const std::string& what) {
  return errors::DataLoss(where + ": " + what + " (the file is truncated or not a SavedModel)");
}

// Calls fn(field, wire_type, reader) for each field; fn consumes the value or returns false to
// have it skipped.
template <typename Fn>
Status ForEachField(const uint8_t* data, size_t size, const std::string& where, const char* message,
                    Fn fn) {
  Reader r(data, size);
  while (!r.done()) {
    uint32_t f;
    int wt;
    if (!r.ReadTag(&f, &wt)) return Bad(where, std::string("bad tag in ") + message);
    bool consumed = false;
    EMBER_RETURN_IF_ERROR(fn(f, wt, &r, &consumed));
    if (!consumed && !r.Skip(wt)) {
      return Bad(where, std::string("truncated ") + message + " field " + std::to_string(f));
    }
  }
  return Status::OK();
}

Status ReadLen(Reader* r, int wt, const std::string& where, const uint8_t** d, size_t* n) {
  if (wt != wire::kLengthDelimited || !r->ReadBytes(d, n)) {
    return Bad(where, "truncated or mistyped length-delimited field");
  }
  return Status::OK();
}

Status ReadStr(Reader* r, int wt, const std::string& where, std::string* out) {
  if (wt != wire::kLengthDelimited || !r->ReadString(out)) {
    return Bad(where, "truncated or mistyped string field");
  }
  return Status::OK();
}

Status ParseShape(const uint8_t* data, size_t size, const std::string& where, PartialShape* out) {
  return ForEachField(data, size, where, "TensorShapeProto",
                      [&](uint32_t f, int wt, Reader* r, bool* used) -> Status {
                        if (f == 3 && wt == wire::kVarint) {
                          uint64_t v;
                          if (!r->ReadVarint(&v)) return Bad(where, "truncated unknown_rank");
                          out->unknown_rank = v != 0;
                          *used = true;
                        } else if (f == 2) {
                          const uint8_t* d;
                          size_t n;
                          EMBER_RETURN_IF_ERROR(ReadLen(r, wt, where, &d, &n));
                          *used = true;
                          int64_t dim = 0;
                          EMBER_RETURN_IF_ERROR(ForEachField(
                              d, n, where, "TensorShapeProto.Dim",
                              [&](uint32_t f2, int wt2, Reader* r2, bool* used2) -> Status {
                                if (f2 == 1 && wt2 == wire::kVarint) {
                                  uint64_t v;
                                  if (!r2->ReadVarint(&v)) return Bad(where, "truncated Dim.size");
                                  dim = static_cast<int64_t>(v);
                                  *used2 = true;
                                }
                                return Status::OK();
                              }));
                          out->dims.push_back(dim < -1 ? -1 : dim);
                        }
                        return Status::OK();
                      });
}

Status ParseTensorInfo(const uint8_t* data, size_t size, const std::string& where,
                       TensorInfo* out) {
  return ForEachField(
      data, size, where, "TensorInfo", [&](uint32_t f, int wt, Reader* r, bool* used) -> Status {
        if (f == 1) {
          *used = true;
          return ReadStr(r, wt, where, &out->name);
        }
        if (f == 2 && wt == wire::kVarint) {
          uint64_t v;
          if (!r->ReadVarint(&v)) return Bad(where, "truncated dtype");
          *used = true;
          Status s =
              DataTypeFromProto(static_cast<int64_t>(v > 1000 ? 1000 : v), where, &out->dtype);
          if (!s.ok()) out->dtype = DataType::kInvalid;
          return Status::OK();
        }
        if (f == 3) {
          const uint8_t* d;
          size_t n;
          *used = true;
          EMBER_RETURN_IF_ERROR(ReadLen(r, wt, where, &d, &n));
          return ParseShape(d, n, where, &out->shape);
        }
        return Status::OK();
      });
}

// map<string, TensorInfo> entry.
Status ParseTensorInfoEntry(const uint8_t* data, size_t size, const std::string& where,
                            std::map<std::string, TensorInfo>* out) {
  std::string key;
  TensorInfo info;
  EMBER_RETURN_IF_ERROR(ForEachField(
      data, size, where, "map entry", [&](uint32_t f, int wt, Reader* r, bool* used) -> Status {
        if (f == 1) {
          *used = true;
          return ReadStr(r, wt, where, &key);
        }
        if (f == 2) {
          const uint8_t* d;
          size_t n;
          *used = true;
          EMBER_RETURN_IF_ERROR(ReadLen(r, wt, where, &d, &n));
          return ParseTensorInfo(d, n, where + " '" + key + "'", &info);
        }
        return Status::OK();
      }));
  (*out)[key] = std::move(info);
  return Status::OK();
}

Status ParseSignature(const uint8_t* data, size_t size, const std::string& where,
                      SignatureDef* out) {
  return ForEachField(data, size, where, "SignatureDef",
                      [&](uint32_t f, int wt, Reader* r, bool* used) -> Status {
                        const uint8_t* d;
                        size_t n;
                        if (f == 1 || f == 2) {
                          *used = true;
                          EMBER_RETURN_IF_ERROR(ReadLen(r, wt, where, &d, &n));
                          return ParseTensorInfoEntry(d, n, where + (f == 1 ? " input" : " output"),
                                                      f == 1 ? &out->inputs : &out->outputs);
                        }
                        if (f == 3) {
                          *used = true;
                          return ReadStr(r, wt, where, &out->method_name);
                        }
                        return Status::OK();
                      });
}

// SavedObjectGraph: concrete_functions = 2 (map<string, SavedConcreteFunction>), whose
// bound_inputs = 2 (repeated int32).
Status ParseObjectGraph(const uint8_t* data, size_t size, const std::string& where,
                        MetaGraphInfo* out) {
  return ForEachField(data, size, where, "SavedObjectGraph",
                      [&](uint32_t f, int wt, Reader* r, bool* used) -> Status {
                        if (f != 2) return Status::OK();
                        const uint8_t* d;
                        size_t n;
                        *used = true;
                        EMBER_RETURN_IF_ERROR(ReadLen(r, wt, where, &d, &n));
                        std::string key;
                        std::vector<int> ids;
                        EMBER_RETURN_IF_ERROR(ForEachField(
                            d, n, where, "concrete_functions entry",
                            [&](uint32_t f2, int wt2, Reader* r2, bool* used2) -> Status {
                              if (f2 == 1) {
                                *used2 = true;
                                return ReadStr(r2, wt2, where, &key);
                              }
                              if (f2 != 2) return Status::OK();
                              const uint8_t* d2;
                              size_t n2;
                              *used2 = true;
                              EMBER_RETURN_IF_ERROR(ReadLen(r2, wt2, where, &d2, &n2));
                              return ForEachField(
                                  d2, n2, where, "SavedConcreteFunction",
                                  [&](uint32_t f3, int wt3, Reader* r3, bool* used3) -> Status {
                                    if (f3 != 2) return Status::OK();
                                    *used3 = true;
                                    uint64_t v;
                                    if (wt3 == wire::kVarint) {
                                      if (!r3->ReadVarint(&v))
                                        return Bad(where, "truncated bound_inputs");
                                      ids.push_back(static_cast<int>(v & 0x7fffffff));
                                      return Status::OK();
                                    }
                                    const uint8_t* d3;
                                    size_t n3;
                                    EMBER_RETURN_IF_ERROR(ReadLen(r3, wt3, where, &d3, &n3));
                                    Reader packed(d3, n3);
                                    while (!packed.done()) {
                                      if (!packed.ReadVarint(&v))
                                        return Bad(where, "truncated bound_inputs");
                                      ids.push_back(static_cast<int>(v & 0x7fffffff));
                                    }
                                    return Status::OK();
                                  });
                            }));
                        out->bound_inputs[key] = std::move(ids);
                        return Status::OK();
                      });
}

Status ParseMetaGraph(const std::string& name, const uint8_t* data, size_t size, size_t index,
                      MetaGraphInfo* out) {
  std::string where = name + ": meta_graphs[" + std::to_string(index) + "]";
  return ForEachField(
      data, size, where, "MetaGraphDef", [&](uint32_t f, int wt, Reader* r, bool* used) -> Status {
        const uint8_t* d;
        size_t n;
        if (f < 1 || f > 7 || f == 4 || f == 6) return Status::OK();
        *used = true;
        EMBER_RETURN_IF_ERROR(ReadLen(r, wt, where, &d, &n));
        if (f == 1) {  // MetaInfoDef: tags = 4
          return ForEachField(d, n, where, "MetaInfoDef",
                              [&](uint32_t f2, int wt2, Reader* r2, bool* used2) -> Status {
                                if (f2 != 4) return Status::OK();
                                *used2 = true;
                                std::string tag;
                                EMBER_RETURN_IF_ERROR(ReadStr(r2, wt2, where, &tag));
                                out->tags.push_back(std::move(tag));
                                return Status::OK();
                              });
        }
        if (f == 2) {
          Status s = ParseGraphDefBinary(d, n, &out->graph);
          if (!s.ok()) return Status(s.code(), where + ".graph_def: " + s.message());
          return Status::OK();
        }
        if (f == 3) {  // SaverDef
          out->has_saver = true;
          return ForEachField(d, n, where, "SaverDef",
                              [&](uint32_t f2, int wt2, Reader* r2, bool* used2) -> Status {
                                std::string* dst = f2 == 1   ? &out->saver.filename_tensor_name
                                                   : f2 == 2 ? &out->saver.save_tensor_name
                                                   : f2 == 3 ? &out->saver.restore_op_name
                                                             : nullptr;
                                if (dst == nullptr) return Status::OK();
                                *used2 = true;
                                return ReadStr(r2, wt2, where + ".saver_def", dst);
                              });
        }
        if (f == 7) return ParseObjectGraph(d, n, where + ".object_graph_def", out);
        // f == 5: map<string, SignatureDef> entry
        std::string key;
        SignatureDef sig;
        EMBER_RETURN_IF_ERROR(ForEachField(
            d, n, where, "signature_def entry",
            [&](uint32_t f2, int wt2, Reader* r2, bool* used2) -> Status {
              if (f2 == 1) {
                *used2 = true;
                return ReadStr(r2, wt2, where, &key);
              }
              if (f2 == 2) {
                const uint8_t* d2;
                size_t n2;
                *used2 = true;
                EMBER_RETURN_IF_ERROR(ReadLen(r2, wt2, where, &d2, &n2));
                return ParseSignature(d2, n2, where + " signature '" + key + "'", &sig);
              }
              return Status::OK();
            }));
        out->signatures[key] = std::move(sig);
        return Status::OK();
      });
}

}  // namespace

Status ParseTrackableObjectGraph(const std::string& where, const std::string& bytes,
                                 std::vector<std::string>* variable_keys) {
  variable_keys->clear();
  const uint8_t* data = reinterpret_cast<const uint8_t*>(bytes.data());
  return ForEachField(data, bytes.size(), where, "TrackableObjectGraph",
                      [&](uint32_t f, int wt, Reader* r, bool* used) -> Status {
                        if (f != 1) return Status::OK();
                        const uint8_t* d;
                        size_t n;
                        *used = true;
                        EMBER_RETURN_IF_ERROR(ReadLen(r, wt, where, &d, &n));
                        std::string key;
                        EMBER_RETURN_IF_ERROR(ForEachField(
                            d, n, where, "TrackableObject",
                            [&](uint32_t f2, int wt2, Reader* r2, bool* used2) -> Status {
                              if (f2 != 2) return Status::OK();
                              const uint8_t* d2;
                              size_t n2;
                              *used2 = true;
                              EMBER_RETURN_IF_ERROR(ReadLen(r2, wt2, where, &d2, &n2));
                              std::string name, ckpt;
                              EMBER_RETURN_IF_ERROR(ForEachField(
                                  d2, n2, where, "SerializedTensor",
                                  [&](uint32_t f3, int wt3, Reader* r3, bool* used3) -> Status {
                                    if (f3 != 1 && f3 != 3) return Status::OK();
                                    *used3 = true;
                                    return ReadStr(r3, wt3, where, f3 == 1 ? &name : &ckpt);
                                  }));
                              if (name == "VARIABLE_VALUE") key = ckpt;
                              return Status::OK();
                            }));
                        variable_keys->push_back(std::move(key));
                        return Status::OK();
                      });
}

Status ParseSavedModel(const std::string& name, const std::string& bytes,
                       std::vector<MetaGraphInfo>* out) {
  out->clear();
  if (bytes.empty()) return Bad(name, "the file is empty");
  const uint8_t* data = reinterpret_cast<const uint8_t*>(bytes.data());
  return ForEachField(data, bytes.size(), name, "SavedModel",
                      [&](uint32_t f, int wt, Reader* r, bool* used) -> Status {
                        if (f != 2) return Status::OK();
                        const uint8_t* d;
                        size_t n;
                        *used = true;
                        EMBER_RETURN_IF_ERROR(ReadLen(r, wt, name, &d, &n));
                        MetaGraphInfo mg;
                        EMBER_RETURN_IF_ERROR(ParseMetaGraph(name, d, n, out->size(), &mg));
                        out->push_back(std::move(mg));
                        return Status::OK();
                      });
}

}  // namespace ember
