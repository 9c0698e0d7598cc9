// Status and StatusOr: error values with TensorFlow's canonical codes.
#ifndef EMBER_STATUS_H_
#define EMBER_STATUS_H_

#include <cassert>
#include <string>
#include <utility>

namespace ember {

// Numeric values match tensorflow/core/protobuf/error_codes.proto so that
// codes can cross process and language boundaries unchanged.
enum class Code : int {
  kOk = 0,
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kDataLoss = 15,
  kUnauthenticated = 16,
};

// "INVALID_ARGUMENT", "NOT_FOUND", ... as TensorFlow spells them.
const char* CodeName(Code code);

class Status {
 public:
  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status OK() { return Status(); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // "INVALID_ARGUMENT: message", or "OK".
  std::string ToString() const;

  bool operator==(const Status& other) const {
    return code_ == other.code_ && message_ == other.message_;
  }
  bool operator!=(const Status& other) const { return !(*this == other); }

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

namespace errors {
inline Status Cancelled(std::string m) { return Status(Code::kCancelled, std::move(m)); }
inline Status Unknown(std::string m) { return Status(Code::kUnknown, std::move(m)); }
inline Status InvalidArgument(std::string m) {
  return Status(Code::kInvalidArgument, std::move(m));
}
inline Status DeadlineExceeded(std::string m) {
  return Status(Code::kDeadlineExceeded, std::move(m));
}
inline Status NotFound(std::string m) { return Status(Code::kNotFound, std::move(m)); }
inline Status AlreadyExists(std::string m) { return Status(Code::kAlreadyExists, std::move(m)); }
inline Status ResourceExhausted(std::string m) {
  return Status(Code::kResourceExhausted, std::move(m));
}
inline Status FailedPrecondition(std::string m) {
  return Status(Code::kFailedPrecondition, std::move(m));
}
inline Status OutOfRange(std::string m) { return Status(Code::kOutOfRange, std::move(m)); }
inline Status Unimplemented(std::string m) { return Status(Code::kUnimplemented, std::move(m)); }
inline Status Internal(std::string m) { return Status(Code::kInternal, std::move(m)); }
inline Status DataLoss(std::string m) { return Status(Code::kDataLoss, std::move(m)); }
}  // namespace errors

// A value or the Status explaining why there is none.
template <typename T>
class StatusOr {
 public:
  StatusOr(const Status& status) : status_(status) { assert(!status.ok()); }  // NOLINT
  StatusOr(T value) : value_(std::move(value)), has_value_(true) {}           // NOLINT

  bool ok() const { return has_value_; }
  const Status& status() const { return status_; }
  T& value() & {
    assert(has_value_);
    return value_;
  }
  const T& value() const& {
    assert(has_value_);
    return value_;
  }
  T&& value() && {
    assert(has_value_);
    return std::move(value_);
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  Status status_;
  T value_{};
  bool has_value_ = false;
};

}  // namespace ember

// Returns early from the enclosing function when `expr` is not OK.
#define EMBER_RETURN_IF_ERROR(expr)                \
  do {                                             \
    ::ember::Status _ember_status = (expr);        \
    if (!_ember_status.ok()) return _ember_status; \
  } while (0)

#endif  // EMBER_STATUS_H_
