#include "savedmodel/sstable.h"

#include <cstdint>
#include <cstring>

#include "core/wire_format.h"
#include "savedmodel/crc32c.h"

namespace ember {
namespace sstable {

namespace {

constexpr uint64_t kMagic = 0xdb4775248b80fb57ull;
constexpr size_t kFooterSize = 48;
constexpr size_t kTrailerSize = 5;

struct Handle {
  uint64_t offset = 0;
  uint64_t size = 0;
};

Status Bad(const std::string& name, const std::string& what) {
  return errors::DataLoss(name + ": corrupt checkpoint index (LevelDB table): " + what);
}

bool ReadHandle(wire::Reader* r, Handle* h) {
  return r->ReadVarint(&h->offset) && r->ReadVarint(&h->size);
}

uint32_t LoadLE32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// Checks a block's trailer and returns its contents.
Status ReadBlock(const std::string& name, const std::string& data, const Handle& h,
                 const std::string& what, std::string* out) {
  if (h.offset > data.size() || h.size > data.size() - h.offset ||
      data.size() - h.offset - h.size < kTrailerSize) {
    return Bad(name, what + " block handle (offset " + std::to_string(h.offset) + ", size " +
                         std::to_string(h.size) + ") points past the end of the file (" +
                         std::to_string(data.size()) + " bytes)");
  }
  const char* block = data.data() + h.offset;
  const char* trailer = block + h.size;
  uint8_t type = static_cast<uint8_t>(trailer[0]);
  uint32_t crc = crc32c::Value(block, h.size + 1);  // contents and the type byte
  if (crc32c::Unmask(LoadLE32(trailer + 1)) != crc) {
    return Bad(name,
               what + " block at offset " + std::to_string(h.offset) + " fails its crc32c check");
  }
  if (type != 0) {
    return Bad(name, what + " block is compressed (type " + std::to_string(type) +
                         "); only uncompressed tables are supported");
  }
  out->assign(block, h.size);
  return Status::OK();
}

// Walks the entries of a block in order.
template <typename Fn>
Status ForEachEntry(const std::string& name, const std::string& block, const std::string& what,
                    Fn fn) {
  if (block.size() < 4) return Bad(name, what + " block is shorter than its restart count");
  uint32_t num_restarts = LoadLE32(block.data() + block.size() - 4);
  uint64_t max_restarts = (block.size() - 4) / 4;
  if (num_restarts > max_restarts) {
    return Bad(name, what + " block claims " + std::to_string(num_restarts) + " restart points");
  }
  size_t limit = block.size() - 4 - 4 * static_cast<size_t>(num_restarts);
  for (uint32_t i = 0; i < num_restarts; ++i) {
    if (LoadLE32(block.data() + limit + 4 * i) > limit) {
      return Bad(name, what + " block has a restart point past its entries");
    }
  }
  const uint8_t* base = reinterpret_cast<const uint8_t*>(block.data());
  size_t pos = 0;
  std::string key;
  while (pos < limit) {
    wire::Reader r(base + pos, limit - pos);
    uint64_t shared, unshared, value_len;
    if (!r.ReadVarint(&shared) || !r.ReadVarint(&unshared) || !r.ReadVarint(&value_len)) {
      return Bad(name, what + " block has a truncated entry header");
    }
    if (shared > key.size()) {
      return Bad(name, what + " block entry shares " + std::to_string(shared) + " bytes of a " +
                           std::to_string(key.size()) + "-byte previous key");
    }
    if (unshared > r.remaining() || value_len > r.remaining() - unshared) {
      return Bad(name, what + " block entry runs past the block");
    }
    size_t start = limit - r.remaining();
    key.resize(static_cast<size_t>(shared));
    key.append(reinterpret_cast<const char*>(base + start), static_cast<size_t>(unshared));
    std::string value(reinterpret_cast<const char*>(base + start + unshared),
                      static_cast<size_t>(value_len));
    pos = start + static_cast<size_t>(unshared + value_len);
    EMBER_RETURN_IF_ERROR(fn(key, value));
  }
  return Status::OK();
}

}  // namespace

Status ReadTable(const std::string& name, const std::string& data,
                 std::map<std::string, std::string>* out) {
  out->clear();
  if (data.size() < kFooterSize) {
    return Bad(name, "file has " + std::to_string(data.size()) +
                         " bytes, less than the 48-byte footer (truncated?)");
  }
  const char* footer = data.data() + data.size() - kFooterSize;
  uint64_t magic;
  std::memcpy(&magic, footer + 40, 8);
  if (magic != kMagic) return Bad(name, "bad magic number in the footer (not a table file)");
  wire::Reader fr(reinterpret_cast<const uint8_t*>(footer), 40);
  Handle metaindex, index;
  if (!ReadHandle(&fr, &metaindex) || !ReadHandle(&fr, &index)) {
    return Bad(name, "footer block handles are malformed");
  }
  std::string index_block;
  EMBER_RETURN_IF_ERROR(ReadBlock(name, data, index, "index", &index_block));
  std::string last_key;
  bool first = true;
  return ForEachEntry(
      name, index_block, "index", [&](const std::string&, const std::string& value) -> Status {
        wire::Reader hr(reinterpret_cast<const uint8_t*>(value.data()), value.size());
        Handle h;
        if (!ReadHandle(&hr, &h)) return Bad(name, "index entry holds a malformed block handle");
        std::string block;
        EMBER_RETURN_IF_ERROR(ReadBlock(name, data, h, "data", &block));
        return ForEachEntry(
            name, block, "data", [&](const std::string& k, const std::string& v) -> Status {
              if (!first && k <= last_key) {
                return Bad(name, "keys are not in increasing order at \"" + k + "\"");
              }
              first = false;
              last_key = k;
              (*out)[k] = v;
              return Status::OK();
            });
      });
}

}  // namespace sstable
}  // namespace ember
