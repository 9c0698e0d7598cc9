// ember/npy.h: round trips, and every kind of corrupt file is a clean error (never a throw, a
// crash or a read past the end; run under -fsanitize=address,undefined to check the last).
#include "ember/npy.h"

#include <cstdint>
#include <string>
#include <vector>

#include "ember_test.h"

namespace {

using ember::Code;
using ember::Status;
using ember::npy::Array;
using ember::npy::ParseArray;

std::string Valid() {
  const float data[6] = {1, 2, 3, 4, 5, 6};
  return ember::npy::Serialize("<f4", {2, 3}, data, sizeof(data));
}

// A file with the given header dict text and data.
std::string WithHeader(const std::string& dict, const std::string& data, char major = 1) {
  std::string h = dict + "\n";
  std::string out = "\x93NUMPY";
  out.push_back(major);
  out.push_back('\0');
  out.push_back(static_cast<char>(h.size() & 0xff));
  out.push_back(static_cast<char>((h.size() >> 8) & 0xff));
  if (major != 1) out.append(2, '\0');
  return out + h + data;
}

Status Parse(const std::string& bytes, Array* a = nullptr) {
  Array local;
  return ParseArray(bytes.data(), bytes.size(), "f.npy", a ? a : &local);
}

// The error is INVALID_ARGUMENT, names the file and contains `what`.
void ExpectBad(const std::string& bytes, const std::string& what) {
  Status s = Parse(bytes);
  EXPECT_TRUE(s.code() == Code::kInvalidArgument);
  EXPECT_TRUE(s.message().rfind("f.npy: ", 0) == 0);
  if (s.message().find(what) == std::string::npos) EXPECT_EQ(s.message(), what);
}

TEST(Npy, RoundTrip) {
  Array a;
  ASSERT_OK(Parse(Valid(), &a));
  EXPECT_EQ(a.descr, std::string("<f4"));
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(a.data.size(), size_t{24});
  EXPECT_EQ(Valid().size() % 64, size_t{24});  // header padded to 64 bytes, as numpy.save does
  ASSERT_OK(Parse(ember::npy::Serialize("|u1", {}, "\x07", 1), &a));
  EXPECT_TRUE(a.shape.empty());
  EXPECT_EQ(a.data[0], uint8_t{7});
  ASSERT_OK(Parse(ember::npy::Serialize("<i8", {0, 5}, nullptr, 0), &a));
  EXPECT_EQ(a.shape, (std::vector<int64_t>{0, 5}));
}

TEST(Npy, AcceptsWhatNumpyWrites) {
  Array a;
  const std::string four(4, '\0');
  ASSERT_OK(
      Parse(WithHeader("{'descr': '=i4', 'fortran_order': False, 'shape': (1,), }", four), &a));
  EXPECT_EQ(a.descr, std::string("<i4"));
  ASSERT_OK(Parse(
      WithHeader("{\"descr\":\"<f4\",\"fortran_order\":False,\"shape\":(1L,)}", four, 3), &a));
  EXPECT_EQ(a.shape, (std::vector<int64_t>{1}));
  ASSERT_OK(
      Parse(WithHeader("{'shape': (2, 2), 'fortran_order': False, 'descr': '|b1'}", four, 2), &a));
}

TEST(Npy, CorruptFilesAreCleanErrors) {
  const std::string f4 = "{'descr': '<f4', 'fortran_order': False, 'shape': ";
  ExpectBad("", "missing \\x93NUMPY magic");
  ExpectBad("PK\x03\x04 not numpy", "save arrays with numpy.save");
  ExpectBad(std::string("\x93NUMPY\x04\x00", 8) + "xx", "unsupported .npy format version 4.0");
  ExpectBad(std::string("\x93NUMPY\x01\x00\xff\xff", 10), "truncated .npy header");
  ExpectBad(std::string("\x93NUMPY\x02\x00\x10", 9), "truncated .npy header");
  ExpectBad(WithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)", "xxxx"),
            "malformed .npy header");
  ExpectBad(WithHeader("{'descr': '<f4, 'fortran_order': False, 'shape': (1,)}", "xxxx"),
            "malformed .npy header");
  ExpectBad(WithHeader("{'descr': '<f4', 'shape': (1,)}", "xxxx"), "no 'fortran_order'");
  ExpectBad(WithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", "xxxx"),
            "unknown key 'x'");
  ExpectBad(WithHeader(f4 + "(1,}", "xxxx"), "malformed .npy header");
  ExpectBad(WithHeader(f4 + "(2, -3)}", ""), "negative dimension -3");
  ExpectBad(WithHeader(f4 + "(2x,)}", ""), "bad dimension '2x'");
  ExpectBad(WithHeader(f4 + "(99999999999999999999999,)}", ""), "bad dimension");
  ExpectBad(WithHeader(f4 + "(4294967296, 4294967296, 4294967296)}", ""), "more elements");
  ExpectBad(WithHeader(f4 + "(4611686018427387904,)}", ""), "more elements");
  ExpectBad(WithHeader(f4 + "(0, 4611686018427387904)}", "x"), "data has 1 bytes");
  ExpectBad(WithHeader(f4 + "(2, 3)}", "short"),
            "data has 5 bytes but shape (2, 3) of '<f4' needs 24");
  ExpectBad(WithHeader("{'descr': '>f4', 'fortran_order': False, 'shape': (1,)}", "xxxx"),
            "newbyteorder('<')");
  ExpectBad(WithHeader("{'descr': '<fX', 'fortran_order': False, 'shape': (1,)}", "xxxx"),
            "dtype '<fX' is not supported");
  ExpectBad(WithHeader("{'descr': '<U5', 'fortran_order': False, 'shape': (1,)}", "xxxx"),
            "arr.astype(numpy.float32)");
  ExpectBad(WithHeader("{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (1,)}", "x"),
            "structured dtypes");
  ExpectBad(WithHeader("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2)}", "x"),
            "numpy.ascontiguousarray");
}

TEST(Npy, EveryTruncationAndByteFlipIsAnError) {
  const std::string good = Valid();
  for (size_t n = 0; n < good.size(); ++n) {
    Status s = Parse(good.substr(0, n));
    EXPECT_TRUE(s.code() == Code::kInvalidArgument);
  }
  const size_t header_end = good.size() - 24;
  const char values[] = {'\0', '\x80', '\xff', '(', ')', ',', '\'', '}', '-', '9', ' '};
  for (size_t i = 0; i < header_end; ++i) {
    for (char v : values) {
      std::string bytes = good;
      bytes[i] = v;
      Status s = Parse(bytes);  // a flipped pad byte still parses: no crash and no throw count
      EXPECT_TRUE(s.ok() || s.code() == Code::kInvalidArgument);
    }
  }
}

TEST(Npy, ReadArrayNamesAMissingFile) {
  auto a = ember::npy::ReadArray("/nonexistent/x.npy");
  EXPECT_TRUE(a.status().code() == Code::kNotFound);
  EXPECT_TRUE(a.status().message().find("/nonexistent/x.npy") != std::string::npos);
}

}  // namespace

EMBER_TEST_MAIN
