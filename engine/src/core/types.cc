#include "ember/types.h"

namespace ember {

size_t DataTypeSize(DataType dt) {
  switch (dt) {
    case DataType::kFloat:
      return 4;
    case DataType::kDouble:
      return 8;
    case DataType::kInt32:
      return 4;
    case DataType::kUInt8:
      return 1;
    case DataType::kInt16:
      return 2;
    case DataType::kInt8:
      return 1;
    case DataType::kInt64:
      return 8;
    case DataType::kBool:
      return 1;
    case DataType::kInvalid:
    case DataType::kString:
    case DataType::kResource:
    case DataType::kVariant:
      return 0;
  }
  return 0;
}

std::string DataTypeString(DataType dt) {
  switch (dt) {
    case DataType::kInvalid:
      return "INVALID";
    case DataType::kFloat:
      return "float";
    case DataType::kDouble:
      return "double";
    case DataType::kInt32:
      return "int32";
    case DataType::kUInt8:
      return "uint8";
    case DataType::kInt16:
      return "int16";
    case DataType::kInt8:
      return "int8";
    case DataType::kString:
      return "string";
    case DataType::kInt64:
      return "int64";
    case DataType::kBool:
      return "bool";
    case DataType::kResource:
      return "resource";
    case DataType::kVariant:
      return "variant";
  }
  return "unknown dtype enum (" + std::to_string(static_cast<int>(dt)) + ")";
}

bool DataTypeIsValid(int value) {
  switch (value) {
    case 1:
    case 2:
    case 3:
    case 4:
    case 5:
    case 6:
    case 7:
    case 9:
    case 10:
    case 20:
    case 21:
      return true;
    default:
      return false;
  }
}

}  // namespace ember
