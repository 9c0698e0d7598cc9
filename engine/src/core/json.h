// A small strict JSON parser (RFC 8259) for the protobuf JSON mapping of GraphDefs.
#ifndef EMBER_CORE_JSON_H_
#define EMBER_CORE_JSON_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ember/status.h"

namespace ember {
namespace json {

struct Value {
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };
  Type type = Type::kNull;
  bool b = false;
  double number = 0;
  std::string text;  // the string, or a number's literal text (int64 precision)
  std::vector<Value> array;
  std::vector<std::pair<std::string, Value>> object;  // in document order

  const Value* Find(const std::string& key) const {
    for (const auto& kv : object) {
      if (kv.first == key) return &kv.second;
    }
    return nullptr;
  }
};

const char* TypeName(Value::Type t);

// Parses `text` fully (trailing garbage is an error); errors give line and column.
Status Parse(const std::string& text, Value* out);

}  // namespace json
}  // namespace ember

#endif  // EMBER_CORE_JSON_H_
