// CRC-32C (Castagnoli), as LevelDB tables and TensorFlow's TensorBundle use it, with LevelDB's
// masking of stored checksums. Table-driven, written from the polynomial's definition.
#ifndef EMBER_SAVEDMODEL_CRC32C_H_
#define EMBER_SAVEDMODEL_CRC32C_H_

#include <cstddef>
#include <cstdint>

namespace ember {
namespace crc32c {

// Extends `crc` (0 to start) over `size` bytes.
uint32_t Extend(uint32_t crc, const void* data, size_t size);
inline uint32_t Value(const void* data, size_t size) { return Extend(0, data, size); }

// Stored checksums are masked so that a CRC of data containing CRCs stays well distributed.
constexpr uint32_t kMaskDelta = 0xa282ead8u;
inline uint32_t Mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kMaskDelta; }
inline uint32_t Unmask(uint32_t masked) {
  uint32_t rot = masked - kMaskDelta;
  return (rot >> 17) | (rot << 15);
}

}  // namespace crc32c
}  // namespace ember

#endif  // EMBER_SAVEDMODEL_CRC32C_H_
