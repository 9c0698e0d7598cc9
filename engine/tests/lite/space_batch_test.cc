// SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND on models written by hand: rank 4 (block 2x3 over a
// batch of 2) and rank 3 (Conv1D's [b, h, c]) against a direct transcription of LiteRT's
// reference loops, int8 padding filled with the output zero point, the round trip back, and the
// refusals at AllocateTensors naming the operator and tensor. The converted dilated Conv1D /
// Conv2D models are compared with LiteRT in tests/lite/test_lite_space_batch.py.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ember/lite/interpreter.h"
#include "ember/lite/model.h"
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

// LiteRT's reference SpaceToBatchND for [b, h, w, c] (w 1 for rank 3), int8.
std::vector<int8_t> SpaceToBatch(const std::vector<int8_t>& x, int b, int h, int w, int c, int bh,
                                 int bw, int top, int left, int oh, int ow, int8_t pad) {
  std::vector<int8_t> y;
  for (int ob = 0; ob < b * bh * bw; ++ob) {
    const int ib = ob % b, sw = (ob / b) % bw, sh = (ob / b) / bw;
    for (int r = 0; r < oh; ++r) {
      for (int q = 0; q < ow; ++q) {
        const int ih = r * bh + sh - top, iw = q * bw + sw - left;
        for (int d = 0; d < c; ++d) {
          const bool in = ih >= 0 && ih < h && iw >= 0 && iw < w;
          y.push_back(in ? x[static_cast<size_t>(((ib * h + ih) * w + iw) * c + d)] : pad);
        }
      }
    }
  }
  return y;
}

// x -> SPACE_TO_BATCH_ND -> s -> BATCH_TO_SPACE_ND (crops = paddings) -> y, int8 with zero
// point -3; both outputs are graph outputs.
SubGraphDef RoundTrip(std::vector<int32_t> x_shape, std::vector<int32_t> s_shape,
                      const int32_t* block, int m, const int32_t* pads) {
  SubGraphDef g;
  const int32_t rank_m = m;
  g.tensors = {
      Quantized(MakeTensor("x", TensorType::kInt8, x_shape), 0.5f, -3),
      MakeTensor("block", TensorType::kInt32, {rank_m}, block, 4 * static_cast<size_t>(m)),
      MakeTensor("pads", TensorType::kInt32, {rank_m, 2}, pads, 8 * static_cast<size_t>(m)),
      Quantized(MakeTensor("s", TensorType::kInt8, s_shape), 0.5f, -3),
      Quantized(MakeTensor("y", TensorType::kInt8, x_shape), 0.5f, -3)};
  g.operators = {MakeOp(BuiltinOp::kSpaceToBatchNd, {0, 1, 2}, {3}),
                 MakeOp(BuiltinOp::kBatchToSpaceNd, {3, 1, 2}, {4})};
  g.inputs = {0};
  g.outputs = {3, 4};
  return g;
}

void ExpectRoundTrip(const SubGraphDef& g, int b, int h, int w, int c, int bh, int bw, int top,
                     int left, int oh, int ow) {
  Run r = Load(g);
  ASSERT_OK(r.status);
  const size_t n = static_cast<size_t>(b * h * w * c);
  std::vector<int8_t> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = static_cast<int8_t>(i % 120);
  std::memcpy(r.interp->input(0).data, x.data(), n);
  ASSERT_OK(r.interp->Invoke());
  const std::vector<int8_t> want = SpaceToBatch(x, b, h, w, c, bh, bw, top, left, oh, ow, -3);
  const int8_t* s = r.interp->output(0).as<int8_t>();
  ASSERT_TRUE(r.interp->output(0).bytes == want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(static_cast<int>(s[i]), want[i]);
  const int8_t* y = r.interp->output(1).as<int8_t>();
  for (size_t i = 0; i < n; ++i) EXPECT_EQ(static_cast<int>(y[i]), x[i]);
}

}  // namespace

TEST(LiteSpaceBatch, Rank4BlockOfTwoByThreeOverTwoImages) {
  // [2, 3, 4, 2] padded to [2, 4, 6, 2] ([1, 0] rows, [1, 1] columns), block 2x3.
  const int32_t block[2] = {2, 3};
  const int32_t pads[4] = {1, 0, 1, 1};
  ExpectRoundTrip(RoundTrip({2, 3, 4, 2}, {12, 2, 2, 2}, block, 2, pads), 2, 3, 4, 2, 2, 3, 1, 1, 2,
                  2);
  // Block width 1 (whole runs of columns) and no padding on the left.
  const int32_t block_h[2] = {3, 1};
  const int32_t pads_h[4] = {2, 1, 0, 0};
  ExpectRoundTrip(RoundTrip({1, 6, 5, 3}, {3, 3, 5, 3}, block_h, 2, pads_h), 1, 6, 5, 3, 3, 1, 2, 0,
                  3, 5);
}

TEST(LiteSpaceBatch, Rank3IsHeightByOne) {
  // Conv1D's [b, h, c]: [2, 5, 3] padded by [1, 2] to 8 rows, block 2: [4, 4, 3].
  const int32_t block[1] = {2};
  const int32_t pads[2] = {1, 2};
  ExpectRoundTrip(RoundTrip({2, 5, 3}, {4, 4, 3}, block, 1, pads), 2, 5, 1, 3, 2, 1, 1, 0, 4, 1);
}

TEST(LiteSpaceBatch, FloatAndWideTypesMoveWholeValues) {
  // float: the padding is 0.0f; int64 and int16: whole values, padding 0.
  const int32_t block[2] = {2, 2};
  const int32_t pads[4] = {0, 1, 1, 0};
  for (TensorType type : {TensorType::kFloat32, TensorType::kInt64, TensorType::kInt16}) {
    SubGraphDef g = RoundTrip({1, 3, 3, 1}, {4, 2, 2, 1}, block, 2, pads);
    for (TensorDef& t : g.tensors) {
      if (t.name != "block" && t.name != "pads") {
        t.type = type;
        t.quant = QuantizationDef();
      }
    }
    Run r = Load(g);
    ASSERT_OK(r.status);
    const size_t elem = TensorTypeSize(type);
    std::vector<uint8_t> x(9 * elem, 0x5A);
    std::memcpy(r.interp->input(0).data, x.data(), x.size());
    ASSERT_OK(r.interp->Invoke());
    // Image 0 (shift 0, 0) reads rows 0, 2 and columns -1, 1: padding, then x[0][1] and x[2][1].
    const uint8_t* s = r.interp->output(0).as<uint8_t>();
    for (size_t i = 0; i < elem; ++i) {
      EXPECT_EQ(static_cast<int>(s[i]), 0);
      EXPECT_EQ(static_cast<int>(s[elem + i]), 0x5A);
    }
    EXPECT_EQ(std::memcmp(r.interp->output(1).data, x.data(), x.size()), 0);
  }
}

TEST(LiteSpaceBatch, Refusals) {
  const int32_t block[2] = {2, 3};
  const int32_t pads[4] = {1, 0, 1, 1};
  const SubGraphDef g = RoundTrip({2, 3, 4, 2}, {12, 2, 2, 2}, block, 2, pads);
  ASSERT_OK(Load(g).status);

  SubGraphDef bad = g;
  bad.tensors[1] = MakeTensor("block", TensorType::kInt32, {2});
  bad.inputs = {0, 1};
  EXPECT_TRUE(Contains(Load(bad).status,
                       "operator 0 (SPACE_TO_BATCH_ND): block_shape 'block' is computed at run "
                       "time; ember lite needs a constant block_shape"));
  bad = g;
  bad.tensors[2] = MakeTensor("pads", TensorType::kInt32, {2, 2});
  bad.inputs = {0, 2};
  EXPECT_TRUE(Contains(Load(bad).status,
                       "operator 0 (SPACE_TO_BATCH_ND): paddings 'pads' is computed at run time"));
  const int32_t zero_block[2] = {2, 0};
  bad = g;
  bad.tensors[1].data = reinterpret_cast<const uint8_t*>(zero_block);
  EXPECT_TRUE(Contains(Load(bad).status, "block_shape [2,0]: each block size must be at least 1"));
  const int32_t negative[4] = {1, 0, -1, 1};
  bad = g;
  bad.tensors[2].data = reinterpret_cast<const uint8_t*>(negative);
  EXPECT_TRUE(Contains(Load(bad).status, "paddings [1,0,-1,1]: each value must be at least 0"));
  const int32_t uneven[4] = {1, 1, 1, 1};  // 3 + 2 rows: not a multiple of 2
  bad = g;
  bad.tensors[2].data = reinterpret_cast<const uint8_t*>(uneven);
  EXPECT_TRUE(Contains(Load(bad).status,
                       "(SPACE_TO_BATCH_ND): input 'x' of shape [2,3,4,2], block_shape 'block', "
                       "paddings 'pads': dimension 1 (3) padded by 1 and 1 is 5, not a multiple "
                       "of its block size 2"));
  bad = g;
  bad.tensors[3].shape = {2, 2, 2, 2};  // the converter's placeholder batch, left unrefined
  EXPECT_TRUE(Contains(Load(bad).status,
                       "(SPACE_TO_BATCH_ND): output 's' has shape [2,2,2,2] but the operator "
                       "produces [12,2,2,2]"));
  bad = g;
  bad.tensors[4].shape = {2, 3, 3, 2};
  EXPECT_TRUE(Contains(Load(bad).status,
                       "operator 1 (BATCH_TO_SPACE_ND): output 'y' has shape [2,3,3,2] but the "
                       "operator produces [2,3,4,2]"));
  const int32_t big_crops[4] = {3, 2, 0, 0};  // 2 rows x 2 = 4 < 5
  bad = g;
  bad.tensors.push_back(MakeTensor("crops", TensorType::kInt32, {2, 2}, big_crops, 16));
  bad.operators[1].inputs[2] = 5;
  EXPECT_TRUE(Contains(Load(bad).status,
                       "(BATCH_TO_SPACE_ND): input 's' of shape [12,2,2,2], block_shape 'block', "
                       "crops 'crops': crops 3 and 2 of dimension 1 (2) exceed 4, its size "
                       "times its block size 2"));
  SubGraphDef b2s = g;
  b2s.operators.erase(b2s.operators.begin());
  b2s.tensors[3].shape = {10, 2, 2, 2};
  b2s.inputs = {3};
  b2s.outputs = {4};
  EXPECT_TRUE(Contains(Load(b2s).status,
                       "batch 10 is not a multiple of the block's product 6 (block_shape [2,3])"));
  bad = g;
  bad.tensors[3] = Quantized(bad.tensors[3], 0.25f, -3);
  EXPECT_TRUE(Contains(Load(bad).status,
                       "(SPACE_TO_BATCH_ND): input 'x' and output 's' are quantized differently"));
  bad = g;
  bad.tensors[3].type = TensorType::kUInt8;
  EXPECT_TRUE(Contains(Load(bad).status, "output 's' is UINT8, expected INT8"));
  bad = g;
  for (TensorDef& t : bad.tensors) {
    if (t.name != "block" && t.name != "pads") t.type = TensorType::kBool;
  }
  EXPECT_TRUE(Contains(Load(bad).status, "input 'x' is BOOL, which ember lite does not support"));
  bad = g;
  for (TensorDef& t : bad.tensors) {
    if (t.name != "block" && t.name != "pads") t.type = TensorType::kInt16;
  }
  EXPECT_TRUE(Contains(Load(bad).status, "INT16 input 'x' has zero point -3"));
  bad = g;
  bad.tensors[0].shape = {2, 3, 4, 2, 1};
  EXPECT_TRUE(Contains(Load(bad).status,
                       "input 'x' has shape [2,3,4,2,1]; rank 3 [batch, height, depth] and rank 4 "
                       "NHWC are supported"));
  bad = g;
  bad.tensors[1].shape = {1};
  bad.tensors[1].data_size = 4;
  EXPECT_TRUE(Contains(Load(bad).status,
                       "block_shape 'block' has shape [1]; an input of rank 4 takes [2]"));
  const int64_t block64[2] = {2, 3};
  bad = g;
  bad.tensors[1] = MakeTensor("block", TensorType::kInt64, {2}, block64, 16);
  EXPECT_TRUE(Contains(Load(bad).status, "block_shape 'block' is INT64, expected INT32"));
  bad = g;
  bad.operators[0].inputs.pop_back();
  EXPECT_TRUE(Contains(Load(bad).status,
                       "(SPACE_TO_BATCH_ND): expects 3 inputs (input, block_shape, paddings)"));
  bad = g;
  bad.operators[1].version = 5;
  EXPECT_TRUE(Contains(Load(bad).status, "BATCH_TO_SPACE_ND version 5 is not supported"));
}

EMBER_TEST_MAIN
