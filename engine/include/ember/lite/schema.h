// The subset of the TFLite (TFL3) schema ember understands: enum values and the in-memory
// description of a validated model. Numbers follow tensorflow/compiler/mlir/lite/schema/schema.fbs.
#ifndef EMBER_LITE_SCHEMA_H_
#define EMBER_LITE_SCHEMA_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ember {
namespace lite {

enum class TensorType : int8_t {
  kFloat32 = 0,
  kFloat16 = 1,
  kInt32 = 2,
  kUInt8 = 3,
  kInt64 = 4,
  kString = 5,
  kBool = 6,
  kInt16 = 7,
  kInt8 = 9,
};

enum class BuiltinOp : int32_t {
  kAdd = 0,
  kAveragePool2D = 1,
  kConcatenation = 2,
  kConv2D = 3,
  kDepthwiseConv2D = 4,
  kDequantize = 6,
  kFullyConnected = 9,
  kMaxPool2D = 17,
  kMul = 18,
  kRelu = 19,
  kRelu6 = 21,
  kReshape = 22,
  kSoftmax = 25,
  kMean = 40,
  kQuantize = 114,
  // Float/int/bool ops of transformer models (src/lite/kernels_misc.cc).
  kTanh = 28,
  kGather = 36,
  kTranspose = 39,
  kSub = 41,
  kDiv = 42,
  kStridedSlice = 45,
  kExp = 47,
  kCast = 53,
  kMaximum = 55,
  kMinimum = 57,
  kLess = 58,
  kNeg = 59,
  kGreater = 61,
  kGreaterEqual = 62,
  kLessEqual = 63,
  kSelect = 64,
  kEqual = 71,
  kNotEqual = 72,
  kLog = 73,
  kSqrt = 75,
  kRsqrt = 76,
  kPow = 78,
  kLogicalOr = 84,
  kLogicalAnd = 86,
  kLogicalNot = 87,
  kSquare = 92,
  kSquaredDifference = 99,
  kAbs = 101,
  kSelectV2 = 123,
  kBatchMatMul = 126,
  kGelu = 150,
  kLogistic = 14,
  kSqueeze = 43,
  kSplit = 49,
  kTile = 69,
  kExpandDims = 70,
  kSum = 74,
  kReduceMax = 82,
  kPack = 83,
  kUnpack = 88,
  kReduceMin = 89,
  kReduceAny = 91,
  kSplitV = 102,
  kReduceAll = 140,
  kPad = 34,
  kPadV2 = 60,
  kResizeBilinear = 23,  // src/lite/kernels_resize.cc
  kResizeNearestNeighbor = 97,
  kHardSwish = 117,
  kLeakyRelu = 98,
  kElu = 111,
  kPrelu = 54,
  kTransposeConv = 67,  // src/lite/kernels_transpose_conv.cc
  kSlice = 65,          // src/lite/kernels_slice.cc
  kReverseV2 = 105,
  kIf = 118,  // control flow (src/lite/kernels_control_flow.cc): run other subgraphs
  kWhile = 119,
  // src/lite/kernels_depth_space.cc, kernels_topk.cc, kernels_broadcast_to.cc, kernels_floor.cc,
  // kernels_one_hot.cc, kernels_gather_scatter_nd.cc
  kDepthToSpace = 5,
  kSpaceToDepth = 26,
  kTopKV2 = 48,
  kBroadcastTo = 130,
  kFloorDiv = 90,
  kFloor = 8,  // FLOOR .. COS, SIGN: float unary (kernels_misc.cc)
  kCeil = 104,
  kRound = 116,
  kSin = 66,
  kCos = 108,
  kSign = 158,
  kFloorMod = 95,
  kOneHot = 85,
  kGatherNd = 107,
  kScatterNd = 122,
  kCumsum = 128,  // src/lite/kernels_cumsum.cc
  kDynamicUpdateSlice = 151,
  // src/lite/kernels_argminmax.cc, kernels_norm.cc, kernels_mirror_pad.cc, kernels_reduce_prod.cc
  kArgMax = 56,
  kArgMin = 79,
  kLogSoftmax = 50,
  kL2Normalization = 11,
  kMirrorPad = 100,
  kReduceProd = 81,
  kShape = 77,  // src/lite/kernels_misc_shape.cc
  kFill = 94,   // src/lite/kernels_fill.cc
  // src/lite/kernels_space_batch.cc
  kSpaceToBatchNd = 38,
  kBatchToSpaceNd = 37,
  kUnidirectionalSequenceLstm = 44,  // src/lite/kernels_lstm.cc
  // src/lite/kernels_conv3d.cc
  kConv3D = 132,
  kConv3DTranspose = 141,
};

// BuiltinOptions union tags.
enum class OptionsType : uint8_t {
  kNone = 0,
  kConv2D = 1,
  kDepthwiseConv2D = 2,
  kPool2D = 5,
  kFullyConnected = 8,
  kSoftmax = 9,
  kConcatenation = 10,
  kAdd = 11,
  kReshape = 17,
  kMul = 21,
  kReducer = 27,
  kDequantize = 38,
  kQuantize = 89,
  kGather = 23,
  kTranspose = 26,
  kSub = 28,
  kDiv = 29,
  kStridedSlice = 32,
  kCast = 37,
  kBatchMatMul = 101,
  kGelu = 116,
  // Empty option tables, present in converted models.
  kExp = 33,
  kMaximumMinimum = 39,
  kLess = 41,
  kNeg = 42,
  kGreater = 44,
  kGreaterEqual = 45,
  kLessEqual = 46,
  kSelect = 47,
  kEqual = 53,
  kNotEqual = 54,
  kPow = 56,
  kLogicalOr = 60,
  kLogicalAnd = 62,
  kLogicalNot = 63,
  kSquare = 66,
  kSquaredDifference = 76,
  kAbs = 78,
  kSelectV2 = 98,
  kSqueeze = 30,
  kSplit = 35,
  kTile = 51,
  kExpandDims = 52,
  kPack = 59,
  kUnpack = 64,
  kSplitV = 79,
  kPad = 22,
  kPadV2 = 43,
  kResizeBilinear = 15,
  kResizeNearestNeighbor = 74,
  kHardSwish = 91,
  kLeakyRelu = 75,
  kTransposeConv = 49,
  kSlice = 48,
  kReverseV2 = 81,
  kIf = 92,
  kWhile = 93,
  kDepthToSpace = 94,
  kSpaceToDepth = 19,
  kTopKV2 = 34,
  kBroadcastTo = 104,
  kFloorDiv = 65,
  kFloorMod = 72,
  kOneHot = 61,
  kGatherNd = 83,
  kScatterNd = 97,
  kCumsum = 102,
  kDynamicUpdateSlice = 117,
  kArgMax = 40,
  kArgMin = 57,
  kLogSoftmax = 36,
  kL2Norm = 12,
  kMirrorPad = 77,
  kConv3D = 106,  // CONV_3D and CONV_3D_TRANSPOSE
  kShape = 55,
  kFill = 68,
  kBatchToSpaceNd = 24,
  kSpaceToBatchNd = 25,
  kUnidirectionalSequenceLstm = 71,
};

enum class Padding : int8_t { kSame = 0, kValid = 1 };
enum class Activation : int8_t { kNone = 0, kRelu = 1, kReluN1To1 = 2, kRelu6 = 3 };

// "FLOAT32", "INT8", ... as TFLite prints them; "UNKNOWN(n)" otherwise.
std::string TensorTypeName(TensorType type);
// Bytes per element; 0 for types ember cannot hold (STRING, unknown).
size_t TensorTypeSize(TensorType type);
// "CONV_2D", ...; "BUILTIN(n)" for codes ember does not know.
std::string BuiltinOpName(int32_t code);
// The builtin_options table an operator's FlatBuffer carries (OptionsType::kNone for operators
// without one and for those ember does not know).
OptionsType BuiltinOptionsType(BuiltinOp op);
// "[1,28,28,3]".
std::string ShapeString(const std::vector<int32_t>& shape);

struct QuantizationDef {
  std::vector<float> scale;
  std::vector<int64_t> zero_point;
  int32_t quantized_dimension = 0;
  bool empty() const { return scale.empty(); }
};

struct TensorDef {
  std::string name;
  TensorType type = TensorType::kFloat32;
  std::vector<int32_t> shape;
  uint32_t buffer = 0;
  // Constant data inside the model buffer (zero-copy), or null.
  const uint8_t* data = nullptr;
  size_t data_size = 0;
  QuantizationDef quant;
  size_t num_elements = 0;
  // The converter's shape_signature: -1 where a dimension is only known at run time (the output
  // of a SLICE with run-time begin/size inside a loop body). Empty when the file has none.
  std::vector<int32_t> shape_signature;
  // A variable tensor (an LSTM's state): zero when the tensors are allocated, kept from one
  // Invoke to the next, written by the operator that reads it (its buffer, if any, is ignored).
  bool is_variable = false;
};

// Options of every supported builtin; fields not used by an op keep their defaults.
struct OpOptions {
  Padding padding = Padding::kSame;
  int32_t stride_w = 1, stride_h = 1;
  int32_t dilation_w = 1, dilation_h = 1;
  int32_t filter_w = 1, filter_h = 1;
  int32_t depth_multiplier = 1;
  Activation activation = Activation::kNone;
  bool keep_num_dims = false;
  // FULLY_CONNECTED with int8 weights and float input (hybrid): quantize each input row with a
  // zero point (else symmetrically).
  bool asymmetric_quantize_inputs = false;
  int32_t axis = 0;
  float beta = 1.0f;
  bool keep_dims = false;
  std::vector<int32_t> new_shape;
  // STRIDED_SLICE
  int32_t begin_mask = 0, end_mask = 0, ellipsis_mask = 0, new_axis_mask = 0, shrink_axis_mask = 0;
  bool offset = false;
  int32_t batch_dims = 0;             // GATHER (axis above)
  bool adj_x = false, adj_y = false;  // BATCH_MATMUL
  bool approximate = false;           // GELU
  // RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR
  bool align_corners = false, half_pixel_centers = false;
  float alpha = 0.0f;                 // LEAKY_RELU
  int32_t num = 0;                    // SPLIT/SPLIT_V num_splits, PACK values_count, UNPACK num
  std::vector<int32_t> squeeze_dims;  // SQUEEZE
  int32_t block_size = 0;             // DEPTH_TO_SPACE, SPACE_TO_DEPTH (ONE_HOT: axis above)
  // Subgraph indices: WHILE's cond/body, IF's then/else (checked against the model at load).
  int32_t cond_subgraph = 0, body_subgraph = 0;
  int32_t then_subgraph = 0, else_subgraph = 0;
  bool exclusive = false, reverse = false;  // CUMSUM
  int8_t arg_output_type = 0;  // ARG_MAX/ARG_MIN output_type (a TensorType; 0 when absent)
  int8_t mirror_mode = 0;      // MIRROR_PAD: 0 REFLECT, 1 SYMMETRIC
  int8_t shape_out_type = 2;   // SHAPE out_type (a TensorType; INT32 when absent)
  int32_t stride_d = 1, dilation_d = 1;  // CONV_3D, CONV_3D_TRANSPOSE (w, h above)
  // UNIDIRECTIONAL_SEQUENCE_LSTM: its activation (an ActivationFunctionType: 0 NONE, 1 RELU,
  // 3 RELU6, 4 TANH, 6 SIGMOID), clips (0: none) and layout.
  int8_t lstm_activation = 0;
  float cell_clip = 0.0f, proj_clip = 0.0f;
  bool time_major = false;
};

struct OperatorDef {
  BuiltinOp op = BuiltinOp::kAdd;
  int32_t version = 1;
  std::vector<int32_t> inputs;  // -1 marks an absent optional input
  std::vector<int32_t> outputs;
  OpOptions options;
};

struct SubGraphDef {
  std::string name;
  std::vector<TensorDef> tensors;
  std::vector<OperatorDef> operators;
  std::vector<int32_t> inputs;
  std::vector<int32_t> outputs;
};

}  // namespace lite
}  // namespace ember

#endif  // EMBER_LITE_SCHEMA_H_
