#include "core/json.h"

#include <cstdlib>

namespace ember {
namespace json {

const char* TypeName(Value::Type t) {
  switch (t) {
    case Value::Type::kNull:
      return "null";
    case Value::Type::kBool:
      return "boolean";
    case Value::Type::kNumber:
      return "number";
    case Value::Type::kString:
      return "string";
    case Value::Type::kArray:
      return "array";
    case Value::Type::kObject:
      return "object";
  }
  return "?";
}

namespace {

constexpr int kMaxDepth = 64;

class Parser {
 public:
  explicit Parser(const std::string& s) : s_(s) {}

  Status ParseDocument(Value* out) {
    SkipSpace();
    EMBER_RETURN_IF_ERROR(ParseValue(out, 0));
    SkipSpace();
    if (pos_ != s_.size()) return Error("unexpected text after the JSON value");
    return Status::OK();
  }

 private:
  Status Error(const std::string& what) const {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < pos_ && i < s_.size(); ++i) {
      if (s_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    return errors::InvalidArgument("Invalid JSON at line " + std::to_string(line) + ", column " +
                                   std::to_string(col) + ": " + what);
  }
  void SkipSpace() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool Consume(const char* lit) {
    size_t n = 0;
    while (lit[n] != '\0') ++n;
    if (s_.compare(pos_, n, lit) != 0) return false;
    pos_ += n;
    return true;
  }

  Status ParseValue(Value* out, int depth) {
    if (depth > kMaxDepth) return Error("nesting deeper than 64 levels");
    if (pos_ >= s_.size()) return Error("unexpected end of input");
    char c = s_[pos_];
    if (c == '{') return ParseObject(out, depth);
    if (c == '[') return ParseArray(out, depth);
    if (c == '"') {
      out->type = Value::Type::kString;
      return ParseString(&out->text);
    }
    if (Consume("true")) {
      out->type = Value::Type::kBool;
      out->b = true;
      return Status::OK();
    }
    if (Consume("false")) {
      out->type = Value::Type::kBool;
      return Status::OK();
    }
    if (Consume("null")) {
      out->type = Value::Type::kNull;
      return Status::OK();
    }
    if (c == '-' || (c >= '0' && c <= '9')) return ParseNumber(out);
    return Error(std::string("unexpected character '") + c + "'");
  }

  Status ParseNumber(Value* out) {
    size_t start = pos_;
    auto digits = [&] {
      size_t b = pos_;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
      return pos_ > b;
    };
    if (s_[pos_] == '-') ++pos_;
    if (pos_ < s_.size() && s_[pos_] == '0') {
      ++pos_;
    } else if (!digits()) {
      return Error("bad number");
    }
    if (pos_ < s_.size() && s_[pos_] == '.') {
      ++pos_;
      if (!digits()) return Error("bad number: digits expected after '.'");
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      if (!digits()) return Error("bad number: digits expected in exponent");
    }
    out->type = Value::Type::kNumber;
    out->text = s_.substr(start, pos_ - start);
    out->number = std::strtod(out->text.c_str(), nullptr);
    return Status::OK();
  }

  static void AppendUtf8(std::string* out, uint32_t cp) {
    if (cp < 0x80) {
      out->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out->push_back(static_cast<char>(0xc0 | (cp >> 6)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    } else if (cp < 0x10000) {
      out->push_back(static_cast<char>(0xe0 | (cp >> 12)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    } else {
      out->push_back(static_cast<char>(0xf0 | (cp >> 18)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    }
  }

  bool Hex4(uint32_t* out) {
    if (pos_ + 4 > s_.size()) return false;
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      char c = s_[pos_++];
      v <<= 4;
      if (c >= '0' && c <= '9') {
        v |= static_cast<uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        v |= static_cast<uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        v |= static_cast<uint32_t>(c - 'A' + 10);
      } else {
        return false;
      }
    }
    *out = v;
    return true;
  }

  Status ParseString(std::string* out) {
    ++pos_;  // opening quote
    out->clear();
    while (pos_ < s_.size()) {
      char c = s_[pos_++];
      if (c == '"') return Status::OK();
      if (static_cast<unsigned char>(c) < 0x20) return Error("control character in string");
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (pos_ >= s_.size()) break;
      char e = s_[pos_++];
      switch (e) {
        case '"':
          out->push_back('"');
          break;
        case '\\':
          out->push_back('\\');
          break;
        case '/':
          out->push_back('/');
          break;
        case 'b':
          out->push_back('\b');
          break;
        case 'f':
          out->push_back('\f');
          break;
        case 'n':
          out->push_back('\n');
          break;
        case 'r':
          out->push_back('\r');
          break;
        case 't':
          out->push_back('\t');
          break;
        case 'u': {
          uint32_t cp;
          if (!Hex4(&cp)) return Error("bad \\u escape");
          if (cp >= 0xd800 && cp < 0xdc00) {
            uint32_t lo;
            if (!Consume("\\u") || !Hex4(&lo) || lo < 0xdc00 || lo >= 0xe000) {
              return Error("unpaired surrogate in \\u escape");
            }
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
          } else if (cp >= 0xdc00 && cp < 0xe000) {
            return Error("unpaired surrogate in \\u escape");
          }
          AppendUtf8(out, cp);
          break;
        }
        default:
          return Error(std::string("bad escape '\\") + e + "'");
      }
    }
    return Error("unterminated string");
  }

  Status ParseArray(Value* out, int depth) {
    ++pos_;
    out->type = Value::Type::kArray;
    SkipSpace();
    if (pos_ < s_.size() && s_[pos_] == ']') {
      ++pos_;
      return Status::OK();
    }
    for (;;) {
      SkipSpace();
      Value v;
      EMBER_RETURN_IF_ERROR(ParseValue(&v, depth + 1));
      out->array.push_back(std::move(v));
      SkipSpace();
      if (pos_ >= s_.size()) return Error("unterminated array");
      char c = s_[pos_++];
      if (c == ']') return Status::OK();
      if (c != ',') return Error("expected ',' or ']' in array");
    }
  }

  Status ParseObject(Value* out, int depth) {
    ++pos_;
    out->type = Value::Type::kObject;
    SkipSpace();
    if (pos_ < s_.size() && s_[pos_] == '}') {
      ++pos_;
      return Status::OK();
    }
    for (;;) {
      SkipSpace();
      if (pos_ >= s_.size() || s_[pos_] != '"') return Error("expected a string key in object");
      std::string key;
      EMBER_RETURN_IF_ERROR(ParseString(&key));
      if (out->Find(key) != nullptr) return Error("duplicate key \"" + key + "\"");
      SkipSpace();
      if (pos_ >= s_.size() || s_[pos_] != ':') return Error("expected ':' after key");
      ++pos_;
      SkipSpace();
      Value v;
      EMBER_RETURN_IF_ERROR(ParseValue(&v, depth + 1));
      out->object.emplace_back(std::move(key), std::move(v));
      SkipSpace();
      if (pos_ >= s_.size()) return Error("unterminated object");
      char c = s_[pos_++];
      if (c == '}') return Status::OK();
      if (c != ',') return Error("expected ',' or '}' in object");
    }
  }

  const std::string& s_;
  size_t pos_ = 0;
};

}  // namespace

Status Parse(const std::string& text, Value* out) {
  *out = Value();
  return Parser(text).ParseDocument(out);
}

}  // namespace json
}  // namespace ember
