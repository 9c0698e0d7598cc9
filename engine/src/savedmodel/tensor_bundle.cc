#include "savedmodel/tensor_bundle.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/tensor_proto.h"
#include "core/wire_format.h"
#include "savedmodel/crc32c.h"
#include "savedmodel/sstable.h"

namespace ember {

namespace {

Status Bad(const std::string& where, const std::string& what) {
  return errors::DataLoss(where + ": " + what);
}

Status ParseShapeDims(const uint8_t* data, size_t size, const std::string& where,
                      std::vector<int64_t>* dims) {
  wire::Reader r(data, size);
  while (!r.done()) {
    uint32_t f;
    int wt;
    if (!r.ReadTag(&f, &wt)) return Bad(where, "bad tag in TensorShapeProto");
    if (f == 2 && wt == wire::kLengthDelimited) {
      const uint8_t* d;
      size_t n;
      if (!r.ReadBytes(&d, &n)) return Bad(where, "truncated TensorShapeProto.dim");
      wire::Reader dr(d, n);
      int64_t size_value = 0;
      while (!dr.done()) {
        uint32_t f2;
        int wt2;
        uint64_t v;
        if (!dr.ReadTag(&f2, &wt2)) return Bad(where, "bad tag in TensorShapeProto.Dim");
        if (f2 == 1 && wt2 == wire::kVarint) {
          if (!dr.ReadVarint(&v)) return Bad(where, "truncated Dim.size");
          size_value = static_cast<int64_t>(v);
        } else if (!dr.Skip(wt2)) {
          return Bad(where, "truncated TensorShapeProto.Dim");
        }
      }
      if (size_value < 0) return Bad(where, "negative dimension " + std::to_string(size_value));
      dims->push_back(size_value);
    } else if (!r.Skip(wt)) {
      return Bad(where, "truncated TensorShapeProto");
    }
  }
  return Status::OK();
}

Status ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return errors::NotFound(path + ": " + std::strerror(errno));
  std::ostringstream buf;
  buf << in.rdbuf();
  *out = buf.str();
  return Status::OK();
}

std::string ShardName(const std::string& prefix, int shard, int num_shards) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), ".data-%05d-of-%05d", shard, num_shards);
  return prefix + buf;
}

}  // namespace

Status ParseBundleEntry(const std::string& bytes, const std::string& where, BundleEntry* out) {
  *out = BundleEntry();
  wire::Reader r(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  while (!r.done()) {
    uint32_t f;
    int wt;
    if (!r.ReadTag(&f, &wt)) return Bad(where, "bad tag in BundleEntryProto");
    uint64_t v = 0;
    uint32_t v32 = 0;
    const uint8_t* d;
    size_t n;
    bool ok = true;
    switch (f) {
      case 1:
        ok = wt == wire::kVarint && r.ReadVarint(&v);
        out->dtype_number = static_cast<int>(v > 1000 ? 1000 : v);
        break;
      case 2:
        ok = wt == wire::kLengthDelimited && r.ReadBytes(&d, &n);
        if (ok) EMBER_RETURN_IF_ERROR(ParseShapeDims(d, n, where, &out->shape));
        break;
      case 3:
        ok = wt == wire::kVarint && r.ReadVarint(&v);
        out->shard_id = static_cast<int32_t>(v > 1000000 ? 1000000 : v);
        break;
      case 4:
      case 5:
        ok = wt == wire::kVarint && r.ReadVarint(&v);
        (f == 4 ? out->offset : out->size) = static_cast<int64_t>(v);
        if (static_cast<int64_t>(v) < 0) return Bad(where, "negative offset or size");
        break;
      case 6:
        ok = wt == wire::kFixed32 && r.ReadFixed32(&v32);
        out->masked_crc32c = v32;
        out->has_crc = true;
        break;
      case 7:
        out->sliced = true;
        ok = r.Skip(wt);
        break;
      default:
        ok = r.Skip(wt);
        break;
    }
    if (!ok) return Bad(where, "truncated or mistyped BundleEntryProto field " + std::to_string(f));
  }
  if (out->dtype_number != 0) {
    Status s = DataTypeFromProto(out->dtype_number, where, &out->dtype);
    if (!s.ok()) out->dtype = DataType::kInvalid;  // reported when the tensor is read
  }
  return Status::OK();
}

Status TensorBundleReader::Open(const std::string& prefix) {
  prefix_ = prefix;
  std::string name = prefix + ".index";
  std::string bytes;
  Status s = ReadFile(name, &bytes);
  if (!s.ok()) {
    return errors::NotFound("Cannot read the checkpoint index " + s.message() +
                            " (a SavedModel keeps its variables in variables/variables.index)");
  }
  return ParseIndex(name, bytes);
}

Status TensorBundleReader::ParseIndex(const std::string& index_name, const std::string& bytes) {
  index_name_ = index_name;
  if (prefix_.empty() && index_name.size() > 6) {
    prefix_ = index_name.substr(0, index_name.size() - 6);
  }
  EMBER_RETURN_IF_ERROR(sstable::ReadTable(index_name, bytes, &entries_));
  auto header = entries_.find("");
  if (header == entries_.end()) {
    return Bad(index_name, "no BundleHeaderProto (the entry with the empty key)");
  }
  wire::Reader r(reinterpret_cast<const uint8_t*>(header->second.data()), header->second.size());
  num_shards_ = 1;
  while (!r.done()) {
    uint32_t f;
    int wt;
    uint64_t v = 0;
    if (!r.ReadTag(&f, &wt)) return Bad(index_name, "bad tag in BundleHeaderProto");
    if ((f == 1 || f == 2) && wt == wire::kVarint) {
      if (!r.ReadVarint(&v)) return Bad(index_name, "truncated BundleHeaderProto");
      if (f == 1) {
        if (v == 0 || v > 100000) {
          return Bad(index_name, "BundleHeaderProto.num_shards is " + std::to_string(v));
        }
        num_shards_ = static_cast<int>(v);
      } else if (v != 0) {
        return errors::Unimplemented(index_name +
                                     ": the checkpoint is big-endian; ember reads little-endian");
      }
    } else if (!r.Skip(wt)) {
      return Bad(index_name, "truncated BundleHeaderProto");
    }
  }
  entries_.erase(header);
  return Status::OK();
}

std::vector<std::string> TensorBundleReader::Keys() const {
  std::vector<std::string> keys;
  for (const auto& kv : entries_) keys.push_back(kv.first);
  return keys;
}

Status TensorBundleReader::LookupEntry(const std::string& key, BundleEntry* out) const {
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    return errors::NotFound(index_name_ + ": no checkpoint entry for key \"" + key + "\"");
  }
  return ParseBundleEntry(it->second, index_name_ + " entry \"" + key + "\"", out);
}

Status TensorBundleReader::Lookup(const std::string& key, Tensor* out) const {
  BundleEntry e;
  EMBER_RETURN_IF_ERROR(LookupEntry(key, &e));
  std::string where = index_name_ + " entry \"" + key + "\"";
  if (e.sliced) {
    return errors::Unimplemented(where + " is a partitioned (sliced) variable; not supported");
  }
  if (e.dtype == DataType::kInvalid || DataTypeSize(e.dtype) == 0) {
    return errors::Unimplemented(where + " has dtype " + DataTypeProtoName(e.dtype_number) + " (" +
                                 std::to_string(e.dtype_number) + "), which ember cannot load");
  }
  if (e.shard_id < 0 || e.shard_id >= num_shards_) {
    return Bad(where, "shard " + std::to_string(e.shard_id) + " of " + std::to_string(num_shards_));
  }
  StatusOr<TensorShape> shape = TensorShape::FromDims(e.shape);
  if (!shape.ok()) return Bad(where, shape.status().message());
  int64_t elems = shape->num_elements();
  int64_t elem = static_cast<int64_t>(DataTypeSize(e.dtype));
  if (elems > (int64_t{1} << 40) / elem || e.size != elems * elem) {
    return Bad(where, "holds " + std::to_string(e.size) + " bytes but " + DataTypeString(e.dtype) +
                          " shape " + shape->DebugString() + " needs " +
                          std::to_string(elems * elem));
  }
  std::string shard = ShardName(prefix_, e.shard_id, num_shards_);
  std::ifstream in(shard, std::ios::binary);
  if (!in) {
    return errors::NotFound("Cannot open the checkpoint data shard " + shard + ": " +
                            std::strerror(errno) + " (needed for \"" + key + "\")");
  }
  in.seekg(0, std::ios::end);
  int64_t file_size = static_cast<int64_t>(in.tellg());
  if (e.offset > file_size || e.size > file_size - e.offset) {
    return Bad(shard, "is " + std::to_string(file_size) + " bytes, but \"" + key +
                          "\" lies at offset " + std::to_string(e.offset) + ", size " +
                          std::to_string(e.size) + " (truncated shard?)");
  }
  Tensor t(e.dtype, *shape);
  if (e.size > 0) {
    if (t.raw_data() == nullptr) return errors::ResourceExhausted(where + ": out of memory");
    in.seekg(e.offset);
    in.read(static_cast<char*>(t.raw_data()), static_cast<std::streamsize>(e.size));
    if (!in) return Bad(shard, "read failed for \"" + key + "\"");
  }
  if (e.has_crc) {
    uint32_t crc = crc32c::Value(t.raw_data(), static_cast<size_t>(e.size));
    if (crc != crc32c::Unmask(e.masked_crc32c)) {
      return Bad(shard, "\"" + key + "\" fails its crc32c check (corrupt data shard)");
    }
  }
  *out = std::move(t);
  return Status::OK();
}

Status TensorBundleReader::ReadShardBytes(const std::string& key, const BundleEntry& e,
                                          std::string* out) const {
  if (e.shard_id < 0 || e.shard_id >= num_shards_) {
    return Bad(index_name_ + " entry \"" + key + "\"",
               "shard " + std::to_string(e.shard_id) + " of " + std::to_string(num_shards_));
  }
  std::string shard = ShardName(prefix_, e.shard_id, num_shards_);
  std::ifstream in(shard, std::ios::binary);
  if (!in) {
    return errors::NotFound("Cannot open the checkpoint data shard " + shard + ": " +
                            std::strerror(errno) + " (needed for \"" + key + "\")");
  }
  in.seekg(0, std::ios::end);
  int64_t file_size = static_cast<int64_t>(in.tellg());
  if (e.offset > file_size || e.size > file_size - e.offset) {
    return Bad(shard, "is " + std::to_string(file_size) + " bytes, but \"" + key +
                          "\" lies at offset " + std::to_string(e.offset) + ", size " +
                          std::to_string(e.size) + " (truncated shard?)");
  }
  out->assign(static_cast<size_t>(e.size), '\0');
  in.seekg(e.offset);
  if (e.size > 0) in.read(&(*out)[0], static_cast<std::streamsize>(e.size));
  if (!in) return Bad(shard, "read failed for \"" + key + "\"");
  return Status::OK();
}

Status TensorBundleReader::LookupStrings(const std::string& key,
                                         std::vector<std::string>* out) const {
  out->clear();
  BundleEntry e;
  EMBER_RETURN_IF_ERROR(LookupEntry(key, &e));
  std::string where = index_name_ + " entry \"" + key + "\"";
  if (e.dtype != DataType::kString) return Bad(where, "is not a string tensor");
  StatusOr<TensorShape> shape = TensorShape::FromDims(e.shape);
  if (!shape.ok()) return Bad(where, shape.status().message());
  int64_t n = shape->num_elements();
  if (n > e.size) return Bad(where, "claims more strings than it has bytes");
  std::string bytes;
  EMBER_RETURN_IF_ERROR(ReadShardBytes(key, e, &bytes));
  wire::Reader r(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  std::vector<uint64_t> lengths;
  uint32_t crc = 0;
  for (int64_t i = 0; i < n; ++i) {
    uint64_t len;
    if (!r.ReadVarint(&len)) return Bad(where, "truncated string lengths");
    lengths.push_back(len);
    if (len > 0xffffffffu) return Bad(where, "a string is longer than 4 GiB");
    uint32_t len32 = static_cast<uint32_t>(len);
    crc = crc32c::Extend(crc, &len32, sizeof(len32));  // the checksums cover uint32 lengths
  }
  uint32_t length_crc;
  if (!r.ReadFixed32(&length_crc)) return Bad(where, "truncated string length checksum");
  if (crc32c::Unmask(length_crc) != crc) return Bad(where, "string lengths fail their crc32c");
  uint32_t entry_crc = crc32c::Extend(crc, &length_crc, sizeof(length_crc));
  for (uint64_t len : lengths) {
    if (len > r.remaining()) return Bad(where, "a string runs past the entry");
    size_t start = bytes.size() - r.remaining();
    out->push_back(bytes.substr(start, static_cast<size_t>(len)));
    entry_crc = crc32c::Extend(entry_crc, bytes.data() + start, static_cast<size_t>(len));
    wire::Reader rest(reinterpret_cast<const uint8_t*>(bytes.data()) + start + len,
                      r.remaining() - static_cast<size_t>(len));
    r = rest;
  }
  if (e.has_crc && crc32c::Unmask(e.masked_crc32c) != entry_crc) {
    return Bad(where, "fails its crc32c check (corrupt data shard)");
  }
  return Status::OK();
}

}  // namespace ember
