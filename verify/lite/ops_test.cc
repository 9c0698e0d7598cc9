// Every model in engine/testdata/lite (each op, float and int8, made by TensorFlow's
// converter) against the outputs LiteRT's reference kernels stored next to it.
#include <dirent.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "ember/testing/ember_test.h"
#include "lite_verify_util.h"

namespace {

std::vector<std::string> Stems() {
  std::vector<std::string> stems;
  if (DIR* d = opendir(EMBER_LITE_TESTDATA)) {
    while (dirent* e = readdir(d)) {
      const std::string n = e->d_name;
      if (n.size() > 7 && n.compare(n.size() - 7, 7, ".tflite") == 0)
        stems.push_back(n.substr(0, n.size() - 7));
    }
    closedir(d);
  }
  std::sort(stems.begin(), stems.end());
  return stems;
}

std::vector<std::string> Files(const std::string& stem, const char* kind) {
  std::vector<std::string> out;
  for (int i = 0;; ++i) {
    const std::string p = std::string(EMBER_LITE_TESTDATA) + "/" + stem + "." + kind + "_" +
                          std::to_string(i) + ".npy";
    if (FILE* f = std::fopen(p.c_str(), "rb")) {
      std::fclose(f);
      out.push_back(p);
    } else {
      return out;
    }
  }
}

}  // namespace

TEST(VerifyLite, EveryOpMatchesStoredLiteRtOutputs) {
  const std::vector<std::string> stems = Stems();
  EXPECT_TRUE(stems.size() >= 30);
  for (const std::string& stem : stems) {
    auto model =
        ember::lite::Model::FromFile(std::string(EMBER_LITE_TESTDATA) + "/" + stem + ".tflite");
    if (!model.ok()) {
      ::ember_test::Fail(__FILE__, __LINE__, stem + ": " + model.status().message());
      continue;
    }
    const std::string r = verify_lite::RunAndCompare(*model, Files(stem, "input"),
                                                     Files(stem, "expected"), 1e-5, 1e-6);
    if (!r.empty()) ::ember_test::Fail(__FILE__, __LINE__, stem + ": " + r);
  }
}

EMBER_TEST_MAIN
