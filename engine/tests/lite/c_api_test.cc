// The lite C API (ember/lite/c_api.h) on a fixture model: details, a run equal to LiteRT's
// stored output, and errors as codes plus EMBER_LiteLastError.
#include "ember/lite/c_api.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "ember/lite/npy.h"
#include "ember_test.h"

namespace {
std::string Fixture(const std::string& file) {
  return std::string(EMBER_SOURCE_DIR) + "/testdata/lite/" + file;
}
}  // namespace

TEST(LiteCApi, RunsAFixtureAsLiteRT) {
  EMBER_LiteModel* model = EMBER_LiteModelCreateFromFile(Fixture("relu.tflite").c_str());
  ASSERT_TRUE(model != nullptr);
  EMBER_LiteInterpreter* interp = EMBER_LiteInterpreterCreate(model);
  EMBER_LiteModelDelete(model);  // the interpreter keeps what it needs
  ASSERT_TRUE(interp != nullptr);
  EXPECT_EQ(EMBER_LiteInterpreterGetInputTensorCount(interp), 1);
  EXPECT_EQ(EMBER_LiteInterpreterGetOutputTensorCount(interp), 1);
  const int in = EMBER_LiteInterpreterInputTensorIndex(interp, 0);
  const int out = EMBER_LiteInterpreterOutputTensorIndex(interp, 0);
  EXPECT_EQ(EMBER_LiteTensorType(interp, in), 0);  // FLOAT32
  EXPECT_TRUE(EMBER_LiteTensorName(interp, in) != nullptr);
  EXPECT_EQ(EMBER_LiteInterpreterOutputTensorIndex(interp, 1), -1);

  auto x = ember::lite::ReadNpy(Fixture("relu.input_0.npy"));
  auto want = ember::lite::ReadNpy(Fixture("relu.expected_0.npy"));
  ASSERT_OK(x.status());
  ASSERT_OK(want.status());
  EXPECT_EQ(EMBER_LiteTensorCopyFromBuffer(interp, in, x->data.data(), x->data.size()),
            EMBER_FAILED_PRECONDITION);  // not allocated yet
  EXPECT_TRUE(std::string(EMBER_LiteLastError()).find("AllocateTensors") != std::string::npos);
  EXPECT_EQ(EMBER_LiteInterpreterInvoke(interp), EMBER_FAILED_PRECONDITION);
  ASSERT_TRUE(EMBER_LiteInterpreterAllocateTensors(interp) == EMBER_OK);
  EXPECT_EQ(EMBER_LiteTensorByteSize(interp, in), x->data.size());
  EXPECT_EQ(EMBER_LiteTensorCopyFromBuffer(interp, in, x->data.data(), 3), EMBER_INVALID_ARGUMENT);
  ASSERT_TRUE(EMBER_LiteTensorCopyFromBuffer(interp, in, x->data.data(), x->data.size()) ==
              EMBER_OK);
  EXPECT_EQ(std::string(EMBER_LiteLastError()), "");
  ASSERT_TRUE(EMBER_LiteInterpreterInvoke(interp) == EMBER_OK);
  std::vector<uint8_t> got(EMBER_LiteTensorByteSize(interp, out));
  ASSERT_TRUE(EMBER_LiteTensorCopyToBuffer(interp, out, got.data(), got.size()) == EMBER_OK);
  EXPECT_TRUE(got == want->data);  // RELU is exact
  EXPECT_TRUE(std::memcmp(EMBER_LiteTensorData(interp, out), got.data(), got.size()) == 0);
  EMBER_LiteInterpreterDelete(interp);
}

TEST(LiteCApi, NumThreadsOption) {
  EMBER_LiteModel* model = EMBER_LiteModelCreateFromFile(Fixture("conv2d_same.tflite").c_str());
  ASSERT_TRUE(model != nullptr);
  EMBER_LiteInterpreterOptions* options = EMBER_LiteInterpreterOptionsCreate();
  ASSERT_TRUE(options != nullptr);
  EXPECT_EQ(EMBER_LiteInterpreterOptionsSetNumThreads(options, -2), EMBER_INVALID_ARGUMENT);
  EXPECT_TRUE(std::string(EMBER_LiteLastError()).find("num_threads is -2") != std::string::npos);
  EXPECT_EQ(EMBER_LiteInterpreterOptionsSetNumThreads(options, 100000), EMBER_INVALID_ARGUMENT);
  EXPECT_EQ(EMBER_LiteInterpreterOptionsSetNumThreads(nullptr, 2), EMBER_INVALID_ARGUMENT);
  ASSERT_TRUE(EMBER_LiteInterpreterOptionsSetNumThreads(options, 2) == EMBER_OK);
  EMBER_LiteInterpreter* interp = EMBER_LiteInterpreterCreateWithOptions(model, options);
  EMBER_LiteInterpreterOptionsDelete(options);
  ASSERT_TRUE(interp != nullptr);
  EXPECT_EQ(EMBER_LiteInterpreterNumThreads(interp), 2);
  ASSERT_TRUE(EMBER_LiteInterpreterAllocateTensors(interp) == EMBER_OK);
  auto x = ember::lite::ReadNpy(Fixture("conv2d_same.input_0.npy"));
  auto want = ember::lite::ReadNpy(Fixture("conv2d_same.expected_0.npy"));
  ASSERT_OK(x.status());
  ASSERT_OK(want.status());
  const int in = EMBER_LiteInterpreterInputTensorIndex(interp, 0);
  const int out = EMBER_LiteInterpreterOutputTensorIndex(interp, 0);
  ASSERT_TRUE(EMBER_LiteTensorCopyFromBuffer(interp, in, x->data.data(), x->data.size()) ==
              EMBER_OK);
  ASSERT_TRUE(EMBER_LiteInterpreterInvoke(interp) == EMBER_OK);
  std::vector<float> got(EMBER_LiteTensorByteSize(interp, out) / sizeof(float));
  ASSERT_TRUE(EMBER_LiteTensorCopyToBuffer(interp, out, got.data(), got.size() * sizeof(float)) ==
              EMBER_OK);
  ASSERT_TRUE(got.size() * sizeof(float) == want->data.size());
  const float* ref = reinterpret_cast<const float*>(want->data.data());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], ref[i], 1e-5 * std::fabs(ref[i]) + 1e-6);
  EMBER_LiteInterpreterDelete(interp);
  // The defaults (NULL options): one thread, as LiteRT.
  interp = EMBER_LiteInterpreterCreateWithOptions(model, nullptr);
  ASSERT_TRUE(interp != nullptr);
  EXPECT_EQ(EMBER_LiteInterpreterNumThreads(interp), 1);
  EMBER_LiteInterpreterDelete(interp);
  EMBER_LiteModelDelete(model);
}

TEST(LiteCApi, BadModelsAreErrors) {
  EXPECT_TRUE(EMBER_LiteModelCreateFromFile(Fixture("missing.tflite").c_str()) == nullptr);
  EXPECT_TRUE(std::string(EMBER_LiteLastError()).size() > 0);
  const char junk[] = "not a flatbuffer at all";
  EXPECT_TRUE(EMBER_LiteModelCreate(junk, sizeof(junk)) == nullptr);
  EXPECT_TRUE(EMBER_LiteInterpreterCreate(nullptr) == nullptr);
  EXPECT_EQ(EMBER_LiteInterpreterInvoke(nullptr), EMBER_INVALID_ARGUMENT);
}

EMBER_TEST_MAIN
