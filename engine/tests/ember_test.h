// A minimal test harness (no external dependency, so tests also run cross-compiled
// under qemu). Each TEST registers itself; main() runs all or those named in argv and
// prints "N passed, N failed".
#ifndef EMBER_TESTS_EMBER_TEST_H_
#define EMBER_TESTS_EMBER_TEST_H_

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace ember_test {

struct TestCase {
  const char* suite;
  const char* name;
  std::function<void()> fn;
};

inline std::vector<TestCase>& Registry() {
  static std::vector<TestCase> tests;
  return tests;
}
inline int& Failures() {
  static int failures = 0;
  return failures;
}
struct Registrar {
  Registrar(const char* suite, const char* name, std::function<void()> fn) {
    Registry().push_back({suite, name, std::move(fn)});
  }
};

// Set by EMBER_NOT_RUN: why the running test could not check anything on this machine.
inline std::string& NotRunReason() {
  static std::string why;
  return why;
}

inline void Fail(const char* file, int line, const std::string& what) {
  std::fprintf(stderr, "%s:%d: FAILED: %s\n", file, line, what.c_str());
  ++Failures();
}

// Prints a value when it can be streamed; enums (DataType, Code) print as their number.
template <typename T, typename = void>
struct IsStreamable : std::false_type {};
template <typename T>
struct IsStreamable<T, decltype(void(std::declval<std::ostream&>() << std::declval<const T&>()))>
    : std::true_type {};
template <typename T>
void PrintValue(std::ostream& os, const T& v) {
  if constexpr (std::is_enum<T>::value) {
    os << static_cast<long long>(v);
  } else if constexpr (IsStreamable<T>::value) {
    os << v;
  } else {
    os << "<value>";
  }
}

template <typename A, typename B>
std::string Describe(const char* ea, const char* eb, const A& a, const B& b) {
  std::ostringstream os;
  os << ea << " == " << eb << " (";
  PrintValue(os, a);
  os << " vs ";
  PrintValue(os, b);
  os << ")";
  return os.str();
}

inline int RunAll(int argc, char** argv) {
  int passed = 0, failed = 0, not_run = 0;
  for (const TestCase& t : Registry()) {
    std::string full = std::string(t.suite) + "." + t.name;
    bool selected = argc <= 1;
    for (int i = 1; i < argc; ++i) selected = selected || full.find(argv[i]) != std::string::npos;
    if (!selected) continue;
    int before = Failures();
    NotRunReason().clear();
    t.fn();
    if (Failures() == before && !NotRunReason().empty()) {
      ++not_run;
      std::printf("[NOT RUN] %s: %s\n", full.c_str(), NotRunReason().c_str());
    } else if (Failures() == before) {
      ++passed;
      std::printf("[ OK ] %s\n", full.c_str());
    } else {
      ++failed;
      std::printf("[FAIL] %s\n", full.c_str());
    }
  }
  std::printf("%d passed, %d failed, %d not run\n", passed, failed, not_run);
  return failed == 0 && passed > 0 ? 0 : 1;
}

}  // namespace ember_test

#define EMBER_TEST_CONCAT_INNER(a, b) a##b
#define EMBER_TEST_CONCAT(a, b) EMBER_TEST_CONCAT_INNER(a, b)
#define TEST(suite, name)                                                            \
  static void suite##_##name##_body();                                               \
  static ::ember_test::Registrar EMBER_TEST_CONCAT(suite##_##name##_reg_, __LINE__)( \
      #suite, #name, suite##_##name##_body);                                         \
  static void suite##_##name##_body()

#define EXPECT_TRUE(c)                                    \
  do {                                                    \
    if (!(c)) ::ember_test::Fail(__FILE__, __LINE__, #c); \
  } while (0)
#define EXPECT_FALSE(c) EXPECT_TRUE(!(c))
#define EXPECT_EQ(a, b)                                                                 \
  do {                                                                                  \
    auto&& _ea = (a);                                                                   \
    auto&& _eb = (b);                                                                   \
    if (!(_ea == _eb))                                                                  \
      ::ember_test::Fail(__FILE__, __LINE__, ::ember_test::Describe(#a, #b, _ea, _eb)); \
  } while (0)
#define EXPECT_NEAR(a, b, tol)                                                          \
  do {                                                                                  \
    double _na = (a), _nb = (b);                                                        \
    if (!(std::fabs(_na - _nb) <= (tol)))                                               \
      ::ember_test::Fail(__FILE__, __LINE__, ::ember_test::Describe(#a, #b, _na, _nb)); \
  } while (0)
#define ASSERT_TRUE(c)                            \
  do {                                            \
    if (!(c)) {                                   \
      ::ember_test::Fail(__FILE__, __LINE__, #c); \
      return;                                     \
    }                                             \
  } while (0)
#define EXPECT_OK(s)                                                                   \
  do {                                                                                 \
    ::ember::Status _st = (s);                                                         \
    if (!_st.ok()) ::ember_test::Fail(__FILE__, __LINE__, #s " -> " + _st.ToString()); \
  } while (0)
#define ASSERT_OK(s)                                                      \
  do {                                                                    \
    ::ember::Status _st = (s);                                            \
    if (!_st.ok()) {                                                      \
      ::ember_test::Fail(__FILE__, __LINE__, #s " -> " + _st.ToString()); \
      return;                                                             \
    }                                                                     \
  } while (0)

// Ends the test as not run (neither passed nor failed), printing why: for a check this machine
// cannot make (a CPU feature it lacks). What the test checked before it still counts.
#define EMBER_NOT_RUN(why)                \
  do {                                    \
    ::ember_test::NotRunReason() = (why); \
    return;                               \
  } while (0)

#define EMBER_TEST_MAIN \
  int main(int argc, char** argv) { return ::ember_test::RunAll(argc, argv); }

#endif  // EMBER_TESTS_EMBER_TEST_H_
