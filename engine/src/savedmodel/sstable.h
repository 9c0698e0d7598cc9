// A reader for LevelDB's table format ("SSTable"), as TensorFlow writes checkpoint indexes:
//   [data block]* [metaindex block] [index block] [footer: 48 bytes]
// A block is a run of prefix-compressed entries (varint shared, unshared, value length, key
// suffix, value), then uint32 restart offsets and their count; each block is followed by a
// 5-byte trailer (compression type, masked crc32c of block + type). The index block maps the
// last key of each data block to its handle (varint offset, varint size). The footer holds the
// metaindex and index handles, padding to 40 bytes, and the 64-bit magic 0xdb4775248b80fb57.
// Written from that public description; no compression is supported (TensorFlow writes none).
#ifndef EMBER_SAVEDMODEL_SSTABLE_H_
#define EMBER_SAVEDMODEL_SSTABLE_H_

#include <map>
#include <string>

#include "ember/status.h"

namespace ember {
namespace sstable {

// Reads every key/value of the table in `data` into `out` (keys in order, checked to increase).
// Errors start with `name` (the file).
Status ReadTable(const std::string& name, const std::string& data,
                 std::map<std::string, std::string>* out);

}  // namespace sstable
}  // namespace ember

#endif  // EMBER_SAVEDMODEL_SSTABLE_H_
