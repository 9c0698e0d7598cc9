#include "savedmodel/crc32c.h"

#include <array>

namespace ember {
namespace crc32c {

namespace {
// Reflected polynomial of CRC-32C (0x1EDC6F41 bit-reversed).
constexpr uint32_t kPoly = 0x82f63b78u;

// Slicing-by-4 tables: table[0] is the byte table; table[k][b] advances table[k-1][b] by a byte.
std::array<std::array<uint32_t, 256>, 4> MakeTables() {
  std::array<std::array<uint32_t, 256>, 4> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kPoly : c >> 1;
    t[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; ++i) {
    for (size_t k = 1; k < 4; ++k) t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xff];
  }
  return t;
}

const std::array<std::array<uint32_t, 256>, 4>& Tables() {
  static const auto tables = MakeTables();
  return tables;
}
}  // namespace

uint32_t Extend(uint32_t crc, const void* data, size_t size) {
  const auto& t = Tables();
  const uint8_t* p = static_cast<const uint8_t*>(data);
  uint32_t c = ~crc;
  while (size >= 4) {
    c ^= static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
    c = t[3][c & 0xff] ^ t[2][(c >> 8) & 0xff] ^ t[1][(c >> 16) & 0xff] ^ t[0][c >> 24];
    p += 4;
    size -= 4;
  }
  while (size-- > 0) c = (c >> 8) ^ t[0][(c ^ *p++) & 0xff];
  return ~c;
}

}  // namespace crc32c
}  // namespace ember
