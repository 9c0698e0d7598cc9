// Reader for TensorFlow's TensorBundle checkpoints (`<prefix>.index` + `<prefix>.data-*`), the
// format of a SavedModel's variables/. The index is a LevelDB-format table (sstable.h) mapping
// checkpoint keys to BundleEntryProto; the empty key holds the BundleHeaderProto.
#ifndef EMBER_SAVEDMODEL_TENSOR_BUNDLE_H_
#define EMBER_SAVEDMODEL_TENSOR_BUNDLE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ember/status.h"
#include "ember/tensor.h"

namespace ember {

struct BundleEntry {
  DataType dtype = DataType::kInvalid;
  std::vector<int64_t> shape;
  int32_t shard_id = 0;
  int64_t offset = 0;
  int64_t size = 0;
  uint32_t masked_crc32c = 0;
  bool has_crc = false;
  bool sliced = false;   // partitioned variable: not supported
  int dtype_number = 0;  // the raw DataType number, for error messages
};

class TensorBundleReader {
 public:
  // Reads and checks `<prefix>.index` (not the data shards). Errors name the file.
  Status Open(const std::string& prefix);
  // Parses index bytes that came from `index_name` (used by Open and the fuzzer).
  Status ParseIndex(const std::string& index_name, const std::string& bytes);

  bool Contains(const std::string& key) const { return entries_.count(key) != 0; }
  std::vector<std::string> Keys() const;
  // The raw BundleEntryProto bytes of `key` (e.g. _CHECKPOINTABLE_OBJECT_GRAPH's entry).
  Status LookupEntry(const std::string& key, BundleEntry* out) const;
  // Reads `key`'s tensor from its data shard and checks its size and crc32c.
  Status Lookup(const std::string& key, Tensor* out) const;
  // Reads a DT_STRING tensor (e.g. _CHECKPOINTABLE_OBJECT_GRAPH): per element a varint64
  // length, then a masked crc32c of the lengths, then the bytes.
  Status LookupStrings(const std::string& key, std::vector<std::string>* out) const;
  int num_shards() const { return num_shards_; }

 private:
  std::string prefix_;
  std::string index_name_;
  int num_shards_ = 1;
  Status ReadShardBytes(const std::string& key, const BundleEntry& e, std::string* out) const;
  std::map<std::string, std::string> entries_;  // key -> BundleEntryProto bytes
};

// Parses one BundleEntryProto. `where` names the key for errors.
Status ParseBundleEntry(const std::string& bytes, const std::string& where, BundleEntry* out);

}  // namespace ember

#endif  // EMBER_SAVEDMODEL_TENSOR_BUNDLE_H_
