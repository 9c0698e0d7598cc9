// DEPTH_TO_SPACE, SPACE_TO_DEPTH, TOPK_V2, BROADCAST_TO, FLOOR_DIV, FLOOR_MOD, ONE_HOT,
// GATHER_ND and SCATTER_ND on models written by hand: what the converted fixtures
// (engine/testdata/lite/models index_ops, index_ops_int8) cannot hold: refusals at load or
// AllocateTensors naming the operator and tensor, run-time values that fail Invoke with an error
// (never a crash or a read outside a tensor), and LiteRT's edge cases (ties, division by zero,
// INT32_MIN / -1, int64 one-hot indices truncated to int32, duplicate scatter indices).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "ember/lite/interpreter.h"
#include "ember/lite/model.h"
#include "ember/lite/writer.h"
#include "ember_test.h"
#include "lite/lite_test_util.h"

using namespace ember::lite;
using ember::lite::testing::Contains;
using ember::lite::testing::Load;
using ember::lite::testing::MakeOp;
using ember::lite::testing::MakeTensor;
using ember::lite::testing::Quantized;
using ember::lite::testing::Run;

namespace {

// One operator: tensors[inputs] -> tensors[outputs]; graph inputs are the non-constant inputs.
SubGraphDef OneOp(BuiltinOp code, std::vector<TensorDef> tensors, std::vector<int32_t> inputs,
                  std::vector<int32_t> outputs) {
  SubGraphDef g;
  g.tensors = std::move(tensors);
  g.operators.push_back(MakeOp(code, inputs, outputs));
  for (int32_t i : inputs) {
    if (g.tensors[static_cast<size_t>(i)].data == nullptr) g.inputs.push_back(i);
  }
  g.outputs = outputs;
  return g;
}

}  // namespace

TEST(LiteDepthSpace, RoundTripAndRefusals) {
  // x[1, 2, 2, 8] -> DEPTH_TO_SPACE(2) [1, 4, 4, 2] -> SPACE_TO_DEPTH(2) [1, 2, 2, 8] (int8).
  SubGraphDef g;
  g.tensors = {MakeTensor("x", TensorType::kInt8, {1, 2, 2, 8}),
               MakeTensor("s", TensorType::kInt8, {1, 4, 4, 2}),
               MakeTensor("y", TensorType::kInt8, {1, 2, 2, 8})};
  g.operators = {MakeOp(BuiltinOp::kDepthToSpace, {0}, {1}),
                 MakeOp(BuiltinOp::kSpaceToDepth, {1}, {2})};
  g.operators[0].options.block_size = 2;
  g.operators[1].options.block_size = 2;
  g.inputs = {0};
  g.outputs = {1, 2};
  Run r = Load(g);
  ASSERT_OK(r.status);
  int8_t* x = r.interp->input(0).as<int8_t>();
  for (int i = 0; i < 32; ++i) x[i] = static_cast<int8_t>(i);
  ASSERT_OK(r.interp->Invoke());
  const int8_t* s = r.interp->output(0).as<int8_t>();
  const int8_t* y = r.interp->output(1).as<int8_t>();
  for (int h = 0; h < 4; ++h) {
    for (int w = 0; w < 4; ++w) {
      for (int d = 0; d < 2; ++d) {
        const int in = ((h / 2) * 2 + w / 2) * 8 + ((h % 2) * 2 + w % 2) * 2 + d;
        EXPECT_EQ(static_cast<int>(s[(h * 4 + w) * 2 + d]), in);
      }
    }
  }
  for (int i = 0; i < 32; ++i) EXPECT_EQ(static_cast<int>(y[i]), i);

  SubGraphDef bad = g;
  bad.operators[0].options.block_size = 0;
  EXPECT_TRUE(Contains(Load(bad).status,
                       "operator 0 (DEPTH_TO_SPACE): block_size is 0; it must be positive"));
  bad = g;
  bad.operators[0].options.block_size = 3;  // 8 channels: not a multiple of 9
  EXPECT_TRUE(Contains(Load(bad).status, "input depth 8 of 'x' is not a multiple of block_size^2"));
  bad = g;
  bad.tensors[1].shape = {1, 4, 2, 4};
  EXPECT_TRUE(Contains(Load(bad).status,
                       "output 's' has shape [1,4,2,4] but the operator produces [1,4,4,2]"));
  bad = g;
  bad.tensors[0].shape = {2, 2, 8};
  EXPECT_TRUE(Contains(Load(bad).status, "input 'x' has shape [2,2,8]; the operator takes NHWC"));
  bad = g;
  bad.tensors[1] = Quantized(bad.tensors[1], 0.5f, 0);
  EXPECT_TRUE(Contains(Load(bad).status, "input 'x' and output 's' are quantized differently"));
  bad = g;
  bad.operators[1].options.block_size = 3;  // 4x4 is not a multiple of 3
  EXPECT_TRUE(Contains(Load(bad).status,
                       "operator 1 (SPACE_TO_DEPTH): input 's' of shape [1,4,4,2]: height and "
                       "width must be multiples of block_size 3"));
  bad = g;
  for (TensorDef& t : bad.tensors) t.type = TensorType::kBool;
  EXPECT_TRUE(Contains(Load(bad).status, "input 'x' is BOOL, which ember lite does not support"));
  bad = g;
  bad.operators[0].version = 3;
  EXPECT_TRUE(Contains(Load(bad).status, "DEPTH_TO_SPACE version 3 is not supported"));
}

TEST(LiteTopK, TiesRunTimeKAndRefusals) {
  const float kRow[2][6] = {{1, 3, 3, 2, 3, -1}, {0, -0.0f, 5, 5, 4, 5}};
  const int32_t kThree = 3;
  SubGraphDef g = OneOp(BuiltinOp::kTopKV2,
                        {MakeTensor("x", TensorType::kFloat32, {2, 6}),
                         MakeTensor("k", TensorType::kInt32, {}, &kThree, 4),
                         MakeTensor("values", TensorType::kFloat32, {2, 3}),
                         MakeTensor("indices", TensorType::kInt32, {2, 3})},
                        {0, 1}, {2, 3});
  Run r = Load(g);
  ASSERT_OK(r.status);
  std::memcpy(r.interp->input(0).data, kRow, sizeof(kRow));
  ASSERT_OK(r.interp->Invoke());
  const float* v = r.interp->output(0).as<float>();
  const int32_t* idx = r.interp->output(1).as<int32_t>();
  const int32_t want_idx[6] = {1, 2, 4, 2, 3, 5};  // equal values keep their order
  const float want_v[6] = {3, 3, 3, 5, 5, 5};
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(idx[i], want_idx[i]);
    EXPECT_EQ(v[i], want_v[i]);
  }

  // k at run time: the value the outputs were shaped for runs, another fails Invoke.
  SubGraphDef dyn = g;
  dyn.tensors[1] = MakeTensor("k", TensorType::kInt32, {});
  dyn.inputs = {0, 1};
  r = Load(dyn);
  ASSERT_OK(r.status);
  std::memcpy(r.interp->input(0).data, kRow, sizeof(kRow));
  std::memcpy(r.interp->input(1).data, &kThree, 4);
  ASSERT_OK(r.interp->Invoke());
  EXPECT_EQ(r.interp->output(1).as<int32_t>()[5], 5);
  const int32_t other = 2;
  std::memcpy(r.interp->input(1).data, &other, 4);
  EXPECT_TRUE(Contains(r.interp->Invoke(),
                       "operator 0 (TOPK_V2): k is 2 at run time but the outputs' last "
                       "dimension is 3"));

  SubGraphDef bad = g;
  const int32_t seven = 7;
  bad.tensors[1] = MakeTensor("k", TensorType::kInt32, {}, &seven, 4);
  EXPECT_TRUE(Contains(Load(bad).status, "(TOPK_V2): k is 7; it must lie in 0..6"));
  bad = g;
  bad.tensors[3].type = TensorType::kInt16;
  EXPECT_TRUE(Contains(Load(bad).status, "indices output 'indices' is INT16"));
  bad = g;
  bad.tensors[2].shape = {2, 2};
  EXPECT_TRUE(Contains(Load(bad).status, "values output 'values' has shape [2,2]"));
  bad = g;
  const int64_t three64 = 3;
  bad.tensors[1] = MakeTensor("k", TensorType::kInt64, {}, &three64, 8);
  EXPECT_TRUE(Contains(Load(bad).status, "k 'k' is INT64"));
  bad = g;
  bad.operators[0].version = 3;
  EXPECT_TRUE(Contains(Load(bad).status, "TOPK_V2 version 3 is not supported"));
  bad = g;
  bad.operators[0].outputs = {2};
  bad.outputs = {2};
  EXPECT_TRUE(Contains(Load(bad).status, "(TOPK_V2): expects 2 inputs (input, k) and 2 outputs"));
}

TEST(LiteBroadcastTo, ShapesAndRefusals) {
  const int32_t kShape[3] = {2, 3, 4};
  SubGraphDef g = OneOp(BuiltinOp::kBroadcastTo,
                        {MakeTensor("x", TensorType::kInt32, {3, 1}),
                         MakeTensor("shape", TensorType::kInt32, {3}, kShape, 12),
                         MakeTensor("y", TensorType::kInt32, {2, 3, 4})},
                        {0, 1}, {2});
  Run r = Load(g);
  ASSERT_OK(r.status);
  int32_t* x = r.interp->input(0).as<int32_t>();
  for (int i = 0; i < 3; ++i) x[i] = 10 + i;
  ASSERT_OK(r.interp->Invoke());
  const int32_t* y = r.interp->output(0).as<int32_t>();
  for (int i = 0; i < 24; ++i) EXPECT_EQ(y[i], 10 + (i / 4) % 3);

  SubGraphDef dyn = g;
  dyn.tensors[1] = MakeTensor("shape", TensorType::kInt32, {3});
  dyn.inputs = {0, 1};
  r = Load(dyn);
  ASSERT_OK(r.status);
  std::memcpy(r.interp->input(1).data, kShape, 12);
  ASSERT_OK(r.interp->Invoke());
  const int32_t other[3] = {2, 3, 5};
  std::memcpy(r.interp->input(1).data, other, 12);
  EXPECT_TRUE(Contains(r.interp->Invoke(),
                       "(BROADCAST_TO): shape 'shape' is [2,3,5] but the output's shape is "
                       "[2,3,4]"));

  SubGraphDef bad = g;
  bad.tensors[0].shape = {2, 4};
  EXPECT_TRUE(
      Contains(Load(bad).status, "input 'x' of shape [2,4] cannot be broadcast to [2,3,4]"));
  bad = g;
  bad.tensors[0].shape = {1, 1, 3, 1};
  EXPECT_TRUE(Contains(Load(bad).status, "cannot be broadcast to [2,3,4] (a lower rank)"));
  bad = g;
  const float fshape[3] = {2, 3, 4};
  bad.tensors[1] = MakeTensor("shape", TensorType::kFloat32, {3}, fshape, 12);
  EXPECT_TRUE(Contains(Load(bad).status, "shape 'shape' is FLOAT32"));
  bad = g;
  bad.tensors[2].type = TensorType::kInt64;
  EXPECT_TRUE(Contains(Load(bad).status, "output 'y' is INT64, expected INT32"));
}

TEST(LiteFloorDivMod, EdgeCasesAndDivisionByZero) {
  // int32 with the divisor broadcast: LiteRT's floor semantics, INT32_MIN / -1 and % -1.
  SubGraphDef g;
  g.tensors = {
      MakeTensor("a", TensorType::kInt32, {2, 4}), MakeTensor("b", TensorType::kInt32, {4}),
      MakeTensor("div", TensorType::kInt32, {2, 4}), MakeTensor("mod", TensorType::kInt32, {2, 4})};
  g.operators = {MakeOp(BuiltinOp::kFloorDiv, {0, 1}, {2}),
                 MakeOp(BuiltinOp::kFloorMod, {0, 1}, {3})};
  g.inputs = {0, 1};
  g.outputs = {2, 3};
  Run r = Load(g);
  ASSERT_OK(r.status);
  const int32_t kMin = std::numeric_limits<int32_t>::min();
  const int32_t a[8] = {7, -7, 7, kMin, -7, 6, -6, kMin};
  const int32_t b[4] = {2, 2, -2, -1};
  std::memcpy(r.interp->input(0).data, a, sizeof(a));
  std::memcpy(r.interp->input(1).data, b, sizeof(b));
  ASSERT_OK(r.interp->Invoke());
  const int32_t want_div[8] = {3, -4, -4, kMin, -4, 3, 3, kMin};
  const int32_t want_mod[8] = {1, 1, -1, 0, 1, 0, 0, 0};
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(r.interp->output(0).as<int32_t>()[i], want_div[i]);
    EXPECT_EQ(r.interp->output(1).as<int32_t>()[i], want_mod[i]);
  }
  const int32_t zero[4] = {2, 0, 1, 1};
  std::memcpy(r.interp->input(1).data, zero, sizeof(zero));
  EXPECT_TRUE(Contains(r.interp->Invoke(),
                       "operator 0 (FLOOR_DIV): division by zero (a zero in divisor 'b')"));

  // float: FLOOR_DIV by zero fails as in LiteRT, FLOOR_MOD by zero is NaN.
  SubGraphDef f = g;
  for (TensorDef& t : f.tensors) t.type = TensorType::kFloat32;
  r = Load(f);
  ASSERT_OK(r.status);
  const float fa[8] = {7.5f, -7.5f, 7.5f, -7.5f, 1, 2, 3, 4};
  const float fb[4] = {2, 2, -2, -2};
  std::memcpy(r.interp->input(0).data, fa, sizeof(fa));
  std::memcpy(r.interp->input(1).data, fb, sizeof(fb));
  ASSERT_OK(r.interp->Invoke());
  const float want_fdiv[4] = {3, -4, -4, 3};
  const float want_fmod[4] = {1.5f, 0.5f, -0.5f, -1.5f};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(r.interp->output(0).as<float>()[i], want_fdiv[i]);
    EXPECT_EQ(r.interp->output(1).as<float>()[i], want_fmod[i]);
  }
  const float fzero[4] = {2, -0.0f, 1, 1};
  std::memcpy(r.interp->input(1).data, fzero, sizeof(fzero));
  EXPECT_TRUE(Contains(r.interp->Invoke(), "(FLOOR_DIV): division by zero"));
  SubGraphDef mod_only = f;
  mod_only.operators = {f.operators[1]};
  mod_only.outputs = {3};
  r = Load(mod_only);
  ASSERT_OK(r.status);
  std::memcpy(r.interp->input(0).data, fa, sizeof(fa));
  std::memcpy(r.interp->input(1).data, fzero, sizeof(fzero));
  ASSERT_OK(r.interp->Invoke());
  EXPECT_TRUE(std::isnan(r.interp->output(0).as<float>()[1]));

  SubGraphDef bad = g;
  for (TensorDef& t : bad.tensors) t.type = TensorType::kInt64;
  EXPECT_TRUE(Contains(Load(bad).status, "(FLOOR_DIV): input 'a' is INT64"));
  bad = g;
  bad.tensors[1].shape = {3};
  EXPECT_TRUE(Contains(Load(bad).status, "inputs 'a' [2,4] and 'b' [3] do not broadcast"));
  bad = g;
  bad.operators[0].version = 3;
  EXPECT_TRUE(Contains(Load(bad).status, "FLOOR_DIV version 3 is not supported"));
  bad = g;
  bad.operators[1].version = 2;
  EXPECT_TRUE(Contains(Load(bad).status, "FLOOR_MOD version 2 is not supported"));
  bad = g;
  for (TensorDef& t : bad.tensors) t.type = TensorType::kInt8;
  EXPECT_TRUE(Contains(Load(bad).status, "input 'a' is INT8"));
}

TEST(LiteOneHot, AxesTruncationAndRefusals) {
  // int64 indices compare after their conversion to int32, as LiteRT: 2^32 + 1 is 1.
  const int32_t kDepth = 3;
  const float kOn = 1.0f, kOff = -2.0f;
  SubGraphDef g = OneOp(BuiltinOp::kOneHot,
                        {MakeTensor("i", TensorType::kInt64, {2, 2}),
                         MakeTensor("depth", TensorType::kInt32, {}, &kDepth, 4),
                         MakeTensor("on", TensorType::kFloat32, {}, &kOn, 4),
                         MakeTensor("off", TensorType::kFloat32, {}, &kOff, 4),
                         MakeTensor("y", TensorType::kFloat32, {2, 3, 2})},
                        {0, 1, 2, 3}, {4});
  g.operators[0].options.axis = 1;
  Run r = Load(g);
  ASSERT_OK(r.status);
  const int64_t idx[4] = {0, (int64_t{1} << 32) + 1, -1, 2};
  std::memcpy(r.interp->input(0).data, idx, sizeof(idx));
  ASSERT_OK(r.interp->Invoke());
  const float want[12] = {1, -2, -2, 1, -2, -2, -2, -2, -2, -2, -2, 1};
  for (int i = 0; i < 12; ++i) EXPECT_EQ(r.interp->output(0).as<float>()[i], want[i]);

  SubGraphDef dyn = g;
  dyn.tensors[1] = MakeTensor("depth", TensorType::kInt32, {});
  dyn.inputs = {0, 1};
  r = Load(dyn);
  ASSERT_OK(r.status);
  const int32_t four = 4;
  std::memcpy(r.interp->input(1).data, &four, 4);
  EXPECT_TRUE(
      Contains(r.interp->Invoke(), "(ONE_HOT): depth is 4 at run time but the output has 3"));

  SubGraphDef bad = g;
  bad.operators[0].options.axis = -2;
  EXPECT_TRUE(Contains(Load(bad).status, "(ONE_HOT): axis -2 is out of range for rank-2 indices"));
  bad = g;
  const int32_t negative = -1;
  bad.tensors[1] = MakeTensor("depth", TensorType::kInt32, {}, &negative, 4);
  EXPECT_TRUE(Contains(Load(bad).status, "depth is -1; it must not be negative"));
  bad = g;
  const int32_t on_i = 1;
  bad.tensors[2] = MakeTensor("on", TensorType::kInt32, {}, &on_i, 4);
  EXPECT_TRUE(Contains(Load(bad).status, "off_value 'off' is FLOAT32, expected INT32"));
  bad = g;
  bad.operators[0].options.axis = -1;
  EXPECT_TRUE(
      Contains(Load(bad).status, "output 'y' has shape [2,3,2] but the operator produces [2,2,3]"));
  bad = g;
  bad.tensors[0].type = TensorType::kFloat32;
  EXPECT_TRUE(Contains(Load(bad).status, "indices 'i' is FLOAT32"));
}

TEST(LiteGatherNd, IndicesCheckedAtInvoke) {
  SubGraphDef g = OneOp(
      BuiltinOp::kGatherNd,
      {MakeTensor("params", TensorType::kFloat32, {3, 4}),
       MakeTensor("idx", TensorType::kInt32, {2, 2}), MakeTensor("y", TensorType::kFloat32, {2})},
      {0, 1}, {2});
  Run r = Load(g);
  ASSERT_OK(r.status);
  float* p = r.interp->input(0).as<float>();
  for (int i = 0; i < 12; ++i) p[i] = static_cast<float>(i);
  const int32_t ok[4] = {2, 3, 1, 0};
  std::memcpy(r.interp->input(1).data, ok, sizeof(ok));
  ASSERT_OK(r.interp->Invoke());
  EXPECT_EQ(r.interp->output(0).as<float>()[0], 11.0f);
  EXPECT_EQ(r.interp->output(0).as<float>()[1], 4.0f);
  const int32_t past[4] = {2, 3, 3, 0};
  std::memcpy(r.interp->input(1).data, past, sizeof(past));
  EXPECT_TRUE(Contains(r.interp->Invoke(),
                       "(GATHER_ND): index [3,0] (entry 1 of 'idx') is out of range for "
                       "dimension 0 of params shape [3,4]"));
  const int32_t negative[4] = {0, 0, 1, -1};
  std::memcpy(r.interp->input(1).data, negative, sizeof(negative));
  EXPECT_TRUE(Contains(r.interp->Invoke(), "indices 'idx' hold -1 (element 3); indices must not"));

  SubGraphDef bad = g;
  bad.tensors[1].shape = {2, 3};
  EXPECT_TRUE(
      Contains(Load(bad).status, "the last dimension of indices 'idx' is 3; it must lie in 0..2"));
  bad = g;
  bad.tensors[1].type = TensorType::kFloat32;
  EXPECT_TRUE(Contains(Load(bad).status, "indices 'idx' is FLOAT32"));
  bad = g;
  bad.tensors[2].shape = {2, 4};
  EXPECT_TRUE(
      Contains(Load(bad).status, "output 'y' has shape [2,4] but the operator produces [2]"));
  bad = g;
  bad.tensors[0].type = bad.tensors[2].type = TensorType::kString;
  EXPECT_TRUE(
      Contains(Load(bad).status, "('params') has type STRING, which ember lite cannot hold"));
  bad = g;
  bad.operators[0].version = 6;
  EXPECT_TRUE(Contains(Load(bad).status, "GATHER_ND version 6 is not supported"));
}

TEST(LiteScatterNd, DuplicatesSumAndIndicesCheckedAtInvoke) {
  const int32_t kShape[2] = {3, 2};
  SubGraphDef g = OneOp(BuiltinOp::kScatterNd,
                        {MakeTensor("idx", TensorType::kInt32, {3, 1}),
                         MakeTensor("updates", TensorType::kInt8, {3, 2}),
                         MakeTensor("shape", TensorType::kInt32, {2}, kShape, 8),
                         MakeTensor("y", TensorType::kInt8, {3, 2})},
                        {0, 1, 2}, {3});
  Run r = Load(g);
  ASSERT_OK(r.status);
  const int32_t idx[3] = {2, 0, 2};
  const int8_t upd[6] = {100, -3, 5, 6, 100, 7};
  std::memcpy(r.interp->input(0).data, idx, sizeof(idx));
  std::memcpy(r.interp->input(1).data, upd, sizeof(upd));
  ASSERT_OK(r.interp->Invoke());
  const int8_t want[6] = {5, 6, 0, 0, -56, 4};  // 100 + 100 wraps, as LiteRT's WrappingAdd
  for (int i = 0; i < 6; ++i) EXPECT_EQ(r.interp->output(0).as<int8_t>()[i], want[i]);
  const int32_t past[3] = {2, 3, 0};
  std::memcpy(r.interp->input(0).data, past, sizeof(past));
  EXPECT_TRUE(Contains(r.interp->Invoke(),
                       "(SCATTER_ND): index [3] (entry 1 of 'idx') is out of range for "
                       "dimension 0 of the output shape [3,2]"));
  const int32_t negative[3] = {-1, 0, 0};
  std::memcpy(r.interp->input(0).data, negative, sizeof(negative));
  EXPECT_TRUE(Contains(r.interp->Invoke(), "index [-1] (entry 0 of 'idx') is out of range"));

  // bool updates are ORed; a run-time shape must be the output's.
  SubGraphDef b = g;
  b.tensors[1].type = b.tensors[3].type = TensorType::kBool;
  b.tensors[2] = MakeTensor("shape", TensorType::kInt32, {2});
  b.inputs = {0, 1, 2};
  r = Load(b);
  ASSERT_OK(r.status);
  const uint8_t bupd[6] = {1, 0, 0, 1, 1, 1};
  std::memcpy(r.interp->input(0).data, idx, sizeof(idx));
  std::memcpy(r.interp->input(1).data, bupd, sizeof(bupd));
  std::memcpy(r.interp->input(2).data, kShape, sizeof(kShape));
  ASSERT_OK(r.interp->Invoke());
  const uint8_t bwant[6] = {0, 1, 0, 0, 1, 1};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(r.interp->output(0).as<uint8_t>()[i], bwant[i]);
  const int32_t other[2] = {2, 3};
  std::memcpy(r.interp->input(2).data, other, sizeof(other));
  EXPECT_TRUE(Contains(r.interp->Invoke(), "shape 'shape' is [2,3] at run time"));

  SubGraphDef bad = g;
  bad.tensors[0].type = TensorType::kInt64;
  EXPECT_TRUE(Contains(Load(bad).status, "(SCATTER_ND): indices 'idx' is INT64"));
  bad = g;
  bad.tensors[1].shape = {3, 3};
  EXPECT_TRUE(Contains(Load(bad).status,
                       "indices 'idx' [3,1], updates 'updates' [3,3] and shape "
                       "[3,2] do not agree"));
  bad = g;
  bad.tensors[3] = Quantized(bad.tensors[3], 0.25f, 0);
  EXPECT_TRUE(Contains(Load(bad).status, "are quantized differently"));
  bad = g;
  bad.tensors[1].type = bad.tensors[3].type = TensorType::kInt16;
  EXPECT_TRUE(Contains(Load(bad).status, "updates 'updates' is INT16"));
}

EMBER_TEST_MAIN
