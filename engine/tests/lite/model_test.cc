// Writer round trips and malformed-model handling: every corruption must give an error that
// names the problem, never a crash or an out-of-bounds read.
#include "ember/lite/model.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "ember/lite/interpreter.h"
#include "ember/lite/writer.h"
#include "ember_test.h"
#include "lite/lite_test_util.h"

using namespace ember::lite;
using ember::lite::testing::MakeTensor;

namespace {

const float kW[6] = {1, 2, 3, -1, 0.5f, 4};  // [2 units, 3 depth]
const float kB[2] = {0.25f, -10};

// x[1,3] -> FULLY_CONNECTED(W, b, RELU) -> y[1,2]
SubGraphDef FcGraph() {
  SubGraphDef g;
  g.tensors.push_back(MakeTensor("x", TensorType::kFloat32, {1, 3}));
  g.tensors.push_back(MakeTensor("w", TensorType::kFloat32, {2, 3}, kW, sizeof(kW)));
  g.tensors.push_back(MakeTensor("b", TensorType::kFloat32, {2}, kB, sizeof(kB)));
  g.tensors.push_back(MakeTensor("y", TensorType::kFloat32, {1, 2}));
  OperatorDef op;
  op.op = BuiltinOp::kFullyConnected;
  op.inputs = {0, 1, 2};
  op.outputs = {3};
  op.options.activation = Activation::kRelu;
  g.operators.push_back(op);
  g.inputs = {0};
  g.outputs = {3};
  return g;
}

std::vector<uint8_t> Write(const SubGraphDef& g) {
  auto bytes = WriteModel(g);
  return bytes.ok() ? *bytes : std::vector<uint8_t>();
}

// Loads, allocates and runs; returns the first error or OK.
ember::Status LoadAndRun(const std::vector<uint8_t>& bytes) {
  auto model = Model::FromBuffer(bytes.data(), bytes.size());
  if (!model.ok()) return model.status();
  auto interp = Interpreter::Create(*model);
  if (!interp.ok()) return interp.status();
  EMBER_RETURN_IF_ERROR((*interp)->AllocateTensors());
  return (*interp)->Invoke();
}

bool Contains(const ember::Status& s, const std::string& what) {
  if (s.message().find(what) == std::string::npos) {
    std::fprintf(stderr, "  message was: %s\n", s.message().c_str());
    return false;
  }
  return true;
}

}  // namespace

// The writer writes the options of the operators added with image models (TRANSPOSE_CONV,
// RESIZE_*), and the parser reads back what was written.
TEST(LiteModel, WrittenOptionsOfImageOpsRoundTrip) {
  SubGraphDef g;
  TensorDef x;
  x.name = "x";
  x.shape = {1, 4, 4, 2};
  g.tensors.push_back(x);
  OperatorDef tc;
  tc.op = BuiltinOp::kTransposeConv;
  tc.options.padding = Padding::kValid;
  tc.options.stride_w = 3;
  tc.options.stride_h = 2;
  tc.options.activation = Activation::kRelu6;
  OperatorDef rb;
  rb.op = BuiltinOp::kResizeBilinear;
  rb.options.half_pixel_centers = true;
  OperatorDef rn;
  rn.op = BuiltinOp::kResizeNearestNeighbor;
  rn.options.align_corners = true;
  for (OperatorDef* o : {&tc, &rb, &rn}) {
    o->inputs = {0};
    o->outputs = {0};
    g.operators.push_back(*o);
  }
  const std::vector<uint8_t> bytes = Write(g);
  ASSERT_TRUE(!bytes.empty());
  // Not runnable (each op's inputs are incomplete); the parser alone reads the options.
  auto model = Model::FromBuffer(bytes.data(), bytes.size());
  ASSERT_TRUE(model.ok());
  const std::vector<OperatorDef>& ops = (*model)->graph().operators;
  EXPECT_TRUE(ops[0].options.padding == Padding::kValid);
  EXPECT_EQ(ops[0].options.stride_w, 3);
  EXPECT_EQ(ops[0].options.stride_h, 2);
  EXPECT_TRUE(ops[0].options.activation == Activation::kRelu6);
  EXPECT_TRUE(ops[1].options.half_pixel_centers && !ops[1].options.align_corners);
  EXPECT_TRUE(ops[2].options.align_corners && !ops[2].options.half_pixel_centers);
}

TEST(LiteModel, WrittenModelRuns) {
  const std::vector<uint8_t> bytes = Write(FcGraph());
  ASSERT_TRUE(!bytes.empty());
  auto model = Model::FromBuffer(bytes.data(), bytes.size());
  ASSERT_TRUE(model.ok());
  const SubGraphDef& g = (*model)->graph();
  EXPECT_EQ(g.tensors.size(), size_t{4});
  EXPECT_EQ(g.tensors[1].name, std::string("w"));
  EXPECT_TRUE(g.operators[0].options.activation == Activation::kRelu);
  // Zero copy: the weights point into the model buffer.
  EXPECT_TRUE(g.tensors[1].data >= bytes.data() && g.tensors[1].data < bytes.data() + bytes.size());
  auto interp = Interpreter::Create(*model);
  ASSERT_TRUE(interp.ok());
  ASSERT_TRUE((*interp)->AllocateTensors().ok());
  float* x = (*interp)->input(0).as<float>();
  x[0] = 1;
  x[1] = 2;
  x[2] = 3;
  ASSERT_TRUE((*interp)->Invoke().ok());
  const float* y = (*interp)->output(0).as<float>();
  EXPECT_NEAR(y[0], 1 + 4 + 9 + 0.25, 1e-6);
  EXPECT_NEAR(y[1], 2.0, 1e-6);  // -1 + 1 + 12 - 10
  EXPECT_EQ((*interp)->InputIndex("x").ok(), true);
  EXPECT_EQ((*interp)->InputIndex("nope").status().code(), ember::Code::kNotFound);
}

TEST(LiteModel, TruncatedAtEveryLengthFails) {
  const std::vector<uint8_t> bytes = Write(FcGraph());
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<long>(n));
    ember::Status s = LoadAndRun(cut);
    if (s.ok()) {
      ::ember_test::Fail(__FILE__, __LINE__, "truncated to " + std::to_string(n) + " bytes loaded");
      return;
    }
  }
}

TEST(LiteModel, BadIdentifierAndRoot) {
  std::vector<uint8_t> bytes = Write(FcGraph());
  std::vector<uint8_t> bad = bytes;
  bad[4] = 'X';
  EXPECT_TRUE(Contains(LoadAndRun(bad), "TFL3"));
  bad = bytes;
  const uint32_t huge = 0x7ffffff0;
  std::memcpy(bad.data(), &huge, 4);
  EXPECT_TRUE(Contains(LoadAndRun(bad), "outside the buffer"));
  EXPECT_TRUE(Contains(LoadAndRun({1, 2, 3}), "too short"));
}

TEST(LiteModel, TargetedErrors) {
  {
    SubGraphDef g = FcGraph();
    g.operators[0].version = 99;
    EXPECT_TRUE(Contains(LoadAndRun(Write(g)), "version 99 is not supported"));
  }
  {
    SubGraphDef g = FcGraph();
    g.operators[0].inputs = {0, 7, 2};
    EXPECT_TRUE(Contains(LoadAndRun(Write(g)), "inputs[1] = 7 is not a tensor index"));
  }
  {
    SubGraphDef g = FcGraph();
    g.tensors[0].shape = {65536, 65536, 65536};
    EXPECT_TRUE(Contains(LoadAndRun(Write(g)), "more than 2^31 elements"));
  }
  {
    SubGraphDef g = FcGraph();
    g.tensors[1].data_size = 20;  // 5 floats for a [2,3] tensor
    EXPECT_TRUE(Contains(LoadAndRun(Write(g)), "holds 20 bytes but shape"));
  }
  {
    SubGraphDef g = FcGraph();
    g.tensors[3].shape = {1, 3};
    EXPECT_TRUE(Contains(LoadAndRun(Write(g)), "has shape [1,3] but the operator produces [1,2]"));
  }
  {
    SubGraphDef g = FcGraph();
    g.tensors[1].type = TensorType::kInt8;  // a hybrid FULLY_CONNECTED, but without a scale
    g.tensors[1].data_size = 6;
    EXPECT_TRUE(
        Contains(LoadAndRun(Write(g)), "weights 'w' of a float input have no quantization"));
  }
  {
    SubGraphDef g = FcGraph();
    g.operators[0].outputs = {1};  // writes a constant
    EXPECT_TRUE(Contains(LoadAndRun(Write(g)), "which is constant"));
  }
  {
    SubGraphDef g = FcGraph();
    g.inputs = {};
    EXPECT_TRUE(Contains(LoadAndRun(Write(g)), "no earlier operator writes"));
  }
}

TEST(LiteModel, RandomCorruptionNeverCrashes) {
  const std::vector<uint8_t> bytes = Write(FcGraph());
  std::mt19937 rng(1234);
  int loaded = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::vector<uint8_t> bad = bytes;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) bad[rng() % bad.size()] = static_cast<uint8_t>(rng());
    if (LoadAndRun(bad).ok()) ++loaded;
  }
  std::printf("  %d of 20000 corrupted models still loaded and ran\n", loaded);
  EXPECT_TRUE(loaded < 20000);
}

TEST(LiteModel, LoadOfFourMegabyteModelIsZeroCopy) {
  // FULLY_CONNECTED int8 4096 -> 1024: 4 MiB of weights.
  std::vector<int8_t> w(size_t{4096} * 1024, 3);
  std::vector<int32_t> bias(1024, 0);
  SubGraphDef g;
  g.tensors.push_back(MakeTensor("x", TensorType::kInt8, {1, 4096}));
  g.tensors.push_back(MakeTensor("w", TensorType::kInt8, {1024, 4096}, w.data(), w.size()));
  g.tensors.push_back(MakeTensor("b", TensorType::kInt32, {1024}, bias.data(), bias.size() * 4));
  g.tensors.push_back(MakeTensor("y", TensorType::kInt8, {1, 1024}));
  for (int i : {0, 3}) {
    g.tensors[static_cast<size_t>(i)].quant.scale = {0.1f};
    g.tensors[static_cast<size_t>(i)].quant.zero_point = {0};
  }
  g.tensors[1].quant.scale = {0.01f};
  g.tensors[1].quant.zero_point = {0};
  g.tensors[2].quant.scale = {0.001f};
  g.tensors[2].quant.zero_point = {0};
  OperatorDef op;
  op.op = BuiltinOp::kFullyConnected;
  op.inputs = {0, 1, 2};
  op.outputs = {3};
  g.operators.push_back(op);
  g.inputs = {0};
  g.outputs = {3};
  const std::vector<uint8_t> bytes = Write(g);
  ASSERT_TRUE(bytes.size() > size_t{4} << 20);
  // In the temporary directory: the working directory is the (possibly read-only) source tree.
  const char* tmp = std::getenv("TMPDIR");
  const std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/lite_model_test_4mb_" +
                           std::to_string(static_cast<long>(::getpid())) + ".tflite";
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
  auto model = Model::FromFile(path);
  std::remove(path.c_str());
  ASSERT_TRUE(model.ok());
  // Zero copy: the weights are read where the mapped file holds them, not from a copy. (How
  // fast a load is belongs in a benchmark, not in a pass/fail test.)
  const TensorDef& weights = (*model)->graph().tensors[1];
  const uint8_t* begin = (*model)->data();
  const uint8_t* end = begin + (*model)->size();
  EXPECT_EQ((*model)->size(), bytes.size());
  EXPECT_EQ(weights.data_size, w.size());
  EXPECT_TRUE(weights.data != nullptr && weights.data >= begin &&
              weights.data + weights.data_size <= end);
  EXPECT_TRUE(weights.data != nullptr && std::memcmp(weights.data, w.data(), w.size()) == 0);
}

EMBER_TEST_MAIN

namespace {

const float kStep[16] = {1, 2, 3, 4, 5, 6, 7, 8, -1, -2, -3, -4, -5, -6, -7, -8};

// x[1,16] -> ADD(c) -> t1 -> ADD(c) -> t2 ... -> t6 = y: six float ADDs in a chain.
SubGraphDef AddChain() {
  SubGraphDef g;
  g.tensors.push_back(MakeTensor("x", TensorType::kFloat32, {1, 16}));
  g.tensors.push_back(MakeTensor("c", TensorType::kFloat32, {1, 16}, kStep, sizeof(kStep)));
  for (int i = 1; i <= 6; ++i) {
    g.tensors.push_back(MakeTensor("t" + std::to_string(i), TensorType::kFloat32, {1, 16}));
    OperatorDef op;
    op.op = BuiltinOp::kAdd;
    op.inputs = {i == 1 ? 0 : i, 1};
    op.outputs = {i + 1};
    g.operators.push_back(op);
  }
  g.inputs = {0};
  g.outputs = {7};
  return g;
}

bool Overlap(const TensorView& a, const TensorView& b) {
  return a.data < b.data + b.bytes && b.data < a.data + a.bytes;
}

// An interpreter of `model`, with or without preserve_all_tensors, its tensors allocated; null
// when either step fails.
std::unique_ptr<Interpreter> Allocated(const std::shared_ptr<const Model>& model, bool preserve) {
  InterpreterOptions options;
  options.preserve_all_tensors = preserve;
  auto created = Interpreter::Create(model, options);
  if (!created.ok() || !(*created)->AllocateTensors().ok()) return nullptr;
  return std::move(*created);
}

}  // namespace

// swish as the converter writes it: LOGISTIC(x), then MUL(sigmoid, x), 300 values (not a
// multiple of a vector); the sigmoid is a graph output too when `sigmoid_out`.
SubGraphDef Swish(bool sigmoid_out) {
  SubGraphDef g;
  for (const char* name : {"x", "s", "y"}) {
    g.tensors.push_back(MakeTensor(name, TensorType::kFloat32, {1, 300}));
  }
  g.operators.push_back(ember::lite::testing::MakeOp(BuiltinOp::kLogistic, {0}, {1}));
  g.operators.push_back(ember::lite::testing::MakeOp(BuiltinOp::kMul, {1, 0}, {2}));
  g.inputs = {0};
  g.outputs = {2};
  if (sigmoid_out) g.outputs.push_back(1);
  return g;
}

// With tensors not preserved, a MUL of x and LOGISTIC(x) that alone reads the sigmoid computes
// x * sigmoid(x) from x and the LOGISTIC is not run (its tensor stays as calloc left it); the
// output has the bytes of the two operators run one after the other (preserve_all_tensors keeps
// them apart), and a sigmoid that is also a graph output is computed.
TEST(LiteFusion, SwishMatchesLogisticThenMul) {
  for (bool sigmoid_out : {false, true}) {
    const std::vector<uint8_t> bytes = Write(Swish(sigmoid_out));
    auto model = Model::FromBuffer(bytes.data(), bytes.size());
    ASSERT_TRUE(model.ok());
    const std::unique_ptr<Interpreter> fused = Allocated(*model, false);
    const std::unique_ptr<Interpreter> plain = Allocated(*model, true);
    ASSERT_TRUE(fused != nullptr && plain != nullptr);
    for (Interpreter* interp : {fused.get(), plain.get()}) {
      float* x = interp->input(0).as<float>();
      for (int i = 0; i < 300; ++i) x[i] = static_cast<float>(i - 150) * 0.13f;
      ASSERT_TRUE(interp->Invoke().ok());
    }
    const float* y = fused->output(0).as<float>();
    EXPECT_TRUE(std::memcmp(y, plain->output(0).as<float>(), 300 * sizeof(float)) == 0);
    for (int i = 0; i < 300; ++i) {
      const double v = static_cast<double>(i - 150) * 0.13f;
      EXPECT_NEAR(y[i], v / (1.0 + std::exp(-v)), 1e-6 * (1.0 + std::fabs(v)));
    }
    const float* s = fused->tensor(1).as<float>();
    const float* s_plain = plain->tensor(1).as<float>();
    EXPECT_EQ(s_plain[299], 1.0f / (1.0f + std::exp(-149 * 0.13f)));
    if (sigmoid_out) {
      EXPECT_TRUE(std::memcmp(s, s_plain, 300 * sizeof(float)) == 0);
    } else {
      EXPECT_TRUE(std::all_of(s, s + 300, [](float v) { return v == 0.0f; }));
    }
  }
}

TEST(LiteArena, TensorsShareMemoryOnlyWhenTheirLivesDoNotOverlap) {
  const std::vector<uint8_t> bytes = Write(AddChain());
  auto model = Model::FromBuffer(bytes.data(), bytes.size());
  ASSERT_TRUE(model.ok());
  for (bool preserve : {false, true}) {
    const std::unique_ptr<Interpreter> owned = Allocated(*model, preserve);
    ASSERT_TRUE(owned != nullptr);
    Interpreter& interp = *owned;
    // An operator's inputs and outputs never share memory, nor the graph's input and output.
    for (const OperatorDef& op : (*model)->graph().operators) {
      for (int32_t in : op.inputs) {
        EXPECT_FALSE(Overlap(interp.tensor(in), interp.tensor(op.outputs[0])));
      }
    }
    EXPECT_FALSE(Overlap(interp.input(0), interp.output(0)));
    // Without preserve_all_tensors, t1 and t3 (dead once t2, t4 are written) share memory.
    EXPECT_EQ(interp.tensor(2).data == interp.tensor(4).data, !preserve);
    for (int i = 2; i <= 7 && preserve; ++i) {
      for (int j = i + 1; j <= 7; ++j) EXPECT_FALSE(Overlap(interp.tensor(i), interp.tensor(j)));
    }
    float* x = interp.input(0).as<float>();
    for (int e = 0; e < 16; ++e) x[e] = static_cast<float>(100 * e);
    for (int round = 0; round < 2; ++round) {  // the input keeps its values: a second run agrees
      ASSERT_TRUE(interp.Invoke().ok());
      const float* y = interp.output(0).as<float>();
      for (int e = 0; e < 16; ++e) EXPECT_EQ(y[e], static_cast<float>(100 * e) + 6 * kStep[e]);
    }
    if (preserve) {  // every intermediate holds its value after Invoke
      for (int i = 1; i <= 6; ++i) {
        const float* t = interp.tensor(i + 1).as<float>();
        for (int e = 0; e < 16; ++e) EXPECT_EQ(t[e], static_cast<float>(100 * e) + i * kStep[e]);
      }
    }
  }
}

// x[1, n] -> RELU -> t1 -> RELU -> t2 -> RELU -> y. The kernels' 64-byte vector loads rely on
// every tensor starting on a 64-byte boundary; small arenas come from the heap and large ones
// from fresh pages, which malloc hands out 16 bytes past a page boundary.
TEST(LiteArena, EveryTensorStartsOnA64ByteBoundary) {
  for (int n : {3, 16, 1000, 50000}) {
    SubGraphDef g;
    g.tensors.push_back(MakeTensor("x", TensorType::kFloat32, {1, n}));
    for (int i = 1; i <= 3; ++i) {
      g.tensors.push_back(MakeTensor("t" + std::to_string(i), TensorType::kFloat32, {1, n}));
      OperatorDef op;
      op.op = BuiltinOp::kRelu;
      op.inputs = {i - 1};
      op.outputs = {i};
      g.operators.push_back(op);
    }
    g.inputs = {0};
    g.outputs = {3};
    const std::vector<uint8_t> bytes = Write(g);
    auto model = Model::FromBuffer(bytes.data(), bytes.size());
    ASSERT_TRUE(model.ok());
    for (bool preserve : {false, true}) {
      const std::unique_ptr<Interpreter> owned = Allocated(*model, preserve);
      ASSERT_TRUE(owned != nullptr);
      Interpreter& interp = *owned;
      for (int i = 0; i <= 3; ++i) {
        EXPECT_EQ(reinterpret_cast<uintptr_t>(interp.tensor(i).data) % 64, 0u);
      }
      float* x = interp.input(0).as<float>();
      for (int e = 0; e < n; ++e) x[e] = static_cast<float>(e % 7 - 3);
      ASSERT_TRUE(interp.Invoke().ok());
      const float* y = interp.output(0).as<float>();
      int wrong = 0;
      for (int e = 0; e < n; ++e) wrong += y[e] != std::max(0.0f, static_cast<float>(e % 7 - 3));
      EXPECT_EQ(wrong, 0);
    }
  }
}
