// DataType: element types, numbered as TensorFlow's DataType enum (types.proto).
#ifndef EMBER_TYPES_H_
#define EMBER_TYPES_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace ember {

enum class DataType : int {
  kInvalid = 0,
  kFloat = 1,
  kDouble = 2,
  kInt32 = 3,
  kUInt8 = 4,
  kInt16 = 5,
  kInt8 = 6,
  kString = 7,
  kInt64 = 9,
  kBool = 10,
  kResource = 20,
  // A TensorList handle (TensorFlow's DT_VARIANT), held only inside a step: never fed or fetched.
  kVariant = 21,
};

// Size in bytes of one element; 0 for kInvalid, kString, kResource and kVariant.
size_t DataTypeSize(DataType dt);
// "float", "int32", ... as TensorFlow's DataTypeString prints them.
std::string DataTypeString(DataType dt);
// True for the values above that ember knows.
bool DataTypeIsValid(int value);

// Maps a C++ element type to its DataType at compile time.
template <typename T>
struct DataTypeOf;
template <>
struct DataTypeOf<float> {
  static constexpr DataType value = DataType::kFloat;
};
template <>
struct DataTypeOf<double> {
  static constexpr DataType value = DataType::kDouble;
};
template <>
struct DataTypeOf<int32_t> {
  static constexpr DataType value = DataType::kInt32;
};
template <>
struct DataTypeOf<uint8_t> {
  static constexpr DataType value = DataType::kUInt8;
};
template <>
struct DataTypeOf<int16_t> {
  static constexpr DataType value = DataType::kInt16;
};
template <>
struct DataTypeOf<int8_t> {
  static constexpr DataType value = DataType::kInt8;
};
template <>
struct DataTypeOf<int64_t> {
  static constexpr DataType value = DataType::kInt64;
};
template <>
struct DataTypeOf<bool> {
  static constexpr DataType value = DataType::kBool;
};

}  // namespace ember

#endif  // EMBER_TYPES_H_
