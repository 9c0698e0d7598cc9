// Round trips: (1) every test model parsed, written back with ember's writer, re-read and run
// must still give LiteRT's stored outputs; (2) GraphDef -> ember-convert -> run matches
// TensorFlow, in builds where CMake registered the ember-convert step (EMBER_LITE_CONVERTED).
#include <cstdio>
#include <string>
#include <vector>

#include "ember/lite/quant.h"
#include "ember/lite/writer.h"
#include "ember/testing/ember_test.h"
#include "lite_verify_util.h"

using namespace ember::lite;

TEST(VerifyLite, WriteReadRunRoundTrip) {
  const char* stems[] = {
      "small_cnn",      "small_cnn_int8", "fully_connected_int8_fio", "concatenation_int8",
      "mean_last_int8", "softmax_int8",   "add_broadcast_relu_int8",  "depthwise_conv2d"};
  for (const char* stem : stems) {
    const std::string base = std::string(EMBER_LITE_TESTDATA) + "/" + stem;
    auto model = Model::FromFile(base + ".tflite");
    ASSERT_TRUE(model.ok());
    auto bytes = WriteModel((*model)->graph(), "verify round trip");
    ASSERT_TRUE(bytes.ok());
    auto again = Model::FromBytes(std::move(*bytes));
    if (!again.ok()) {
      ::ember_test::Fail(__FILE__, __LINE__, std::string(stem) + ": " + again.status().message());
      continue;
    }
    std::vector<std::string> ins, outs;
    for (int i = 0; i < 2; ++i) {
      const std::string in = base + ".input_" + std::to_string(i) + ".npy";
      if (FILE* f = std::fopen(in.c_str(), "rb")) {
        std::fclose(f);
        ins.push_back(in);
      }
    }
    outs.push_back(base + ".expected_0.npy");
    const std::string r = verify_lite::RunAndCompare(*again, ins, outs, 1e-5, 1e-6);
    if (!r.empty()) ::ember_test::Fail(__FILE__, __LINE__, std::string(stem) + ": " + r);
  }
}

// Registered only where CMake ran ember-convert first (a host build with the tool installed):
// there each converted model must load, so a failed conversion is a failure, never a skip.
#ifdef EMBER_LITE_CONVERTED
TEST(VerifyLite, ConvertedGraphRuns) {
  const std::string graphs = std::string(EMBER_LITE_TESTDATA) + "/graphs/";
  for (const char* q : {"float", "int8"}) {
    const std::string path = std::string(EMBER_LITE_WORKDIR) + "/convert_cnn_" + q + ".tflite";
    auto model = Model::FromFile(path);
    if (!model.ok()) {
      ::ember_test::Fail(__FILE__, __LINE__, path + ": " + model.status().message());
      continue;
    }
    auto interp = Interpreter::Create(*model);
    ASSERT_TRUE(interp.ok());
    ASSERT_TRUE((*interp)->AllocateTensors().ok());
    auto x = ReadNpy(graphs + "convert_cnn.input.npy");
    auto want = ReadNpy(graphs + "convert_cnn.tf_output.npy");
    ASSERT_TRUE(x.ok() && want.ok());
    TensorView in = (*interp)->input(0);
    ASSERT_TRUE(in.bytes / (in.type() == TensorType::kFloat32 ? 4 : 1) == x->num_elements());
    const float* xf = reinterpret_cast<const float*>(x->data.data());
    for (size_t i = 0; i < x->num_elements(); ++i) {
      if (in.type() == TensorType::kFloat32) {
        in.as<float>()[i] = xf[i];
      } else {
        in.as<int8_t>()[i] = QuantizeValueInt8(xf[i], in.scale(), in.zero_point());
      }
    }
    ASSERT_TRUE((*interp)->Invoke().ok());
    TensorView out = (*interp)->output(0);
    ASSERT_TRUE(out.bytes / (out.type() == TensorType::kFloat32 ? 4 : 1) == want->num_elements());
    const float* wf = reinterpret_cast<const float*>(want->data.data());
    for (size_t i = 0; i < want->num_elements(); ++i) {
      const float got =
          out.type() == TensorType::kFloat32
              ? out.as<float>()[i]
              : out.scale() * static_cast<float>(out.as<int8_t>()[i] - out.zero_point());
      const double tol = out.type() == TensorType::kFloat32 ? 1e-4 : 4.0 * out.scale() + 0.01;
      EXPECT_NEAR(got, wf[i], tol);
    }
  }
}
#endif

EMBER_TEST_MAIN
