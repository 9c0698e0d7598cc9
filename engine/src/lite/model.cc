// Loads and validates a .tflite FlatBuffer into ember::lite::Model.
#include "ember/lite/model.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <utility>

#include "lite/flatbuffer_reader.h"
#include "lite/model_control_flow.h"

namespace ember {
namespace lite {

std::string TensorTypeName(TensorType type) {
  switch (type) {
    case TensorType::kFloat32:
      return "FLOAT32";
    case TensorType::kFloat16:
      return "FLOAT16";
    case TensorType::kInt32:
      return "INT32";
    case TensorType::kUInt8:
      return "UINT8";
    case TensorType::kInt64:
      return "INT64";
    case TensorType::kString:
      return "STRING";
    case TensorType::kBool:
      return "BOOL";
    case TensorType::kInt16:
      return "INT16";
    case TensorType::kInt8:
      return "INT8";
  }
  return "UNKNOWN(" + std::to_string(static_cast<int>(type)) + ")";
}

size_t TensorTypeSize(TensorType type) {
  switch (type) {
    case TensorType::kFloat32:
      return 4;
    case TensorType::kFloat16:
      return 2;
    case TensorType::kInt32:
      return 4;
    case TensorType::kUInt8:
      return 1;
    case TensorType::kInt64:
      return 8;
    case TensorType::kBool:
      return 1;
    case TensorType::kInt16:
      return 2;
    case TensorType::kInt8:
      return 1;
    case TensorType::kString:
      return 0;
  }
  return 0;
}

namespace {

struct OpInfo {
  BuiltinOp op;
  const char* name;
  int32_t max_version;
  OptionsType options;
};

// Highest version of each builtin whose semantics ember implements.
constexpr OpInfo kOps[] = {
    {BuiltinOp::kAdd, "ADD", 5, OptionsType::kAdd},
    {BuiltinOp::kAveragePool2D, "AVERAGE_POOL_2D", 3, OptionsType::kPool2D},
    {BuiltinOp::kConcatenation, "CONCATENATION", 4, OptionsType::kConcatenation},
    {BuiltinOp::kConv2D, "CONV_2D", 8, OptionsType::kConv2D},
    {BuiltinOp::kDepthwiseConv2D, "DEPTHWISE_CONV_2D", 7, OptionsType::kDepthwiseConv2D},
    {BuiltinOp::kDequantize, "DEQUANTIZE", 6, OptionsType::kDequantize},
    {BuiltinOp::kFullyConnected, "FULLY_CONNECTED", 13, OptionsType::kFullyConnected},
    {BuiltinOp::kMaxPool2D, "MAX_POOL_2D", 3, OptionsType::kPool2D},
    {BuiltinOp::kMul, "MUL", 7, OptionsType::kMul},
    {BuiltinOp::kRelu, "RELU", 3, OptionsType::kNone},
    {BuiltinOp::kRelu6, "RELU6", 3, OptionsType::kNone},
    {BuiltinOp::kReshape, "RESHAPE", 1, OptionsType::kReshape},
    {BuiltinOp::kSoftmax, "SOFTMAX", 3, OptionsType::kSoftmax},
    {BuiltinOp::kMean, "MEAN", 3, OptionsType::kReducer},
    {BuiltinOp::kQuantize, "QUANTIZE", 3, OptionsType::kQuantize},
    // Float/int/bool (src/lite/kernels_misc.cc); int8 for LOGISTIC, TANH, GELU, HARD_SWISH,
    // RSQRT, LEAKY_RELU, SQUARED_DIFFERENCE (kernels_int8_misc.cc), whose int16 versions are
    // refused here (LOGISTIC/TANH/LEAKY_RELU 3) or in Prepare; other quantized variants in Prepare.
    {BuiltinOp::kTanh, "TANH", 2, OptionsType::kNone},
    {BuiltinOp::kLogistic, "LOGISTIC", 2, OptionsType::kNone},
    {BuiltinOp::kGather, "GATHER", 7, OptionsType::kGather},
    {BuiltinOp::kTranspose, "TRANSPOSE", 6, OptionsType::kTranspose},
    {BuiltinOp::kSub, "SUB", 3, OptionsType::kSub},
    {BuiltinOp::kDiv, "DIV", 2, OptionsType::kDiv},
    {BuiltinOp::kStridedSlice, "STRIDED_SLICE", 8, OptionsType::kStridedSlice},
    {BuiltinOp::kExp, "EXP", 2, OptionsType::kExp},
    {BuiltinOp::kCast, "CAST", 6, OptionsType::kCast},
    {BuiltinOp::kMaximum, "MAXIMUM", 4, OptionsType::kMaximumMinimum},
    {BuiltinOp::kMinimum, "MINIMUM", 4, OptionsType::kMaximumMinimum},
    {BuiltinOp::kLess, "LESS", 2, OptionsType::kLess},
    {BuiltinOp::kNeg, "NEG", 2, OptionsType::kNeg},
    {BuiltinOp::kGreater, "GREATER", 2, OptionsType::kGreater},
    {BuiltinOp::kGreaterEqual, "GREATER_EQUAL", 2, OptionsType::kGreaterEqual},
    {BuiltinOp::kLessEqual, "LESS_EQUAL", 2, OptionsType::kLessEqual},
    {BuiltinOp::kSelect, "SELECT", 2, OptionsType::kSelect},
    {BuiltinOp::kEqual, "EQUAL", 3, OptionsType::kEqual},
    {BuiltinOp::kNotEqual, "NOT_EQUAL", 3, OptionsType::kNotEqual},
    {BuiltinOp::kLog, "LOG", 2, OptionsType::kNone},
    {BuiltinOp::kFloor, "FLOOR", 1, OptionsType::kNone},
    {BuiltinOp::kCeil, "CEIL", 1, OptionsType::kNone},
    {BuiltinOp::kRound, "ROUND", 1, OptionsType::kNone},
    {BuiltinOp::kSin, "SIN", 1, OptionsType::kNone},
    {BuiltinOp::kCos, "COS", 1, OptionsType::kNone},
    {BuiltinOp::kSign, "SIGN", 2, OptionsType::kNone},  // float; 2 adds int32
    {BuiltinOp::kSqrt, "SQRT", 2, OptionsType::kNone},
    {BuiltinOp::kRsqrt, "RSQRT", 3, OptionsType::kNone},
    {BuiltinOp::kPow, "POW", 1, OptionsType::kPow},
    {BuiltinOp::kLogicalOr, "LOGICAL_OR", 1, OptionsType::kLogicalOr},
    {BuiltinOp::kLogicalAnd, "LOGICAL_AND", 1, OptionsType::kLogicalAnd},
    {BuiltinOp::kLogicalNot, "LOGICAL_NOT", 1, OptionsType::kLogicalNot},
    {BuiltinOp::kSquare, "SQUARE", 1, OptionsType::kSquare},
    {BuiltinOp::kSquaredDifference, "SQUARED_DIFFERENCE", 2, OptionsType::kSquaredDifference},
    {BuiltinOp::kAbs, "ABS", 5, OptionsType::kAbs},
    {BuiltinOp::kSelectV2, "SELECT_V2", 2, OptionsType::kSelectV2},
    {BuiltinOp::kBatchMatMul, "BATCH_MATMUL", 4, OptionsType::kBatchMatMul},
    {BuiltinOp::kGelu, "GELU", 2, OptionsType::kGelu},
    {BuiltinOp::kSqueeze, "SQUEEZE", 2, OptionsType::kSqueeze},
    {BuiltinOp::kSplit, "SPLIT", 4, OptionsType::kSplit},
    {BuiltinOp::kSplitV, "SPLIT_V", 2, OptionsType::kSplitV},
    {BuiltinOp::kTile, "TILE", 3, OptionsType::kTile},
    {BuiltinOp::kExpandDims, "EXPAND_DIMS", 1, OptionsType::kExpandDims},
    {BuiltinOp::kPack, "PACK", 4, OptionsType::kPack},
    {BuiltinOp::kUnpack, "UNPACK", 4, OptionsType::kUnpack},
    {BuiltinOp::kSum, "SUM", 2, OptionsType::kReducer},
    {BuiltinOp::kReduceMax, "REDUCE_MAX", 3, OptionsType::kReducer},
    {BuiltinOp::kReduceMin, "REDUCE_MIN", 3, OptionsType::kReducer},
    {BuiltinOp::kReduceAny, "REDUCE_ANY", 1, OptionsType::kReducer},
    {BuiltinOp::kReduceAll, "REDUCE_ALL", 1, OptionsType::kReducer},
    {BuiltinOp::kPad, "PAD", 4, OptionsType::kPad},
    {BuiltinOp::kPadV2, "PADV2", 4, OptionsType::kPadV2},
    // float and int8 (kernels_resize.cc); version 4 is int16.
    {BuiltinOp::kResizeBilinear, "RESIZE_BILINEAR", 3, OptionsType::kResizeBilinear},
    {BuiltinOp::kResizeNearestNeighbor, "RESIZE_NEAREST_NEIGHBOR", 3,
     OptionsType::kResizeNearestNeighbor},
    {BuiltinOp::kHardSwish, "HARD_SWISH", 1, OptionsType::kHardSwish},
    {BuiltinOp::kLeakyRelu, "LEAKY_RELU", 2, OptionsType::kLeakyRelu},
    // Float only: TFLiteConverter keeps ELU in float in int8 models (DEQUANTIZE, ELU, QUANTIZE).
    {BuiltinOp::kElu, "ELU", 1, OptionsType::kNone},
    {BuiltinOp::kPrelu, "PRELU", 2, OptionsType::kNone},  // float, int8 (kernels_extra.cc)
    // float and int8 (kernels_transpose_conv.cc); 3 adds the bias input, 4 the fused activation;
    // 5 (int16 with a quantized_bias_type) is refused.
    {BuiltinOp::kTransposeConv, "TRANSPOSE_CONV", 4, OptionsType::kTransposeConv},
    // Byte moves, any type ember holds (kernels_slice.cc); SLICE 5-6 add int16/5-D, which the
    // kernel handles too.
    {BuiltinOp::kSlice, "SLICE", 6, OptionsType::kSlice},
    {BuiltinOp::kReverseV2, "REVERSE_V2", 3, OptionsType::kReverseV2},
    // 2 takes int64 start indices, 3 int16 data, 4 more types: all byte moves here.
    {BuiltinOp::kDynamicUpdateSlice, "DYNAMIC_UPDATE_SLICE", 4, OptionsType::kDynamicUpdateSlice},
    // Control flow (kernels_control_flow.cc): the subgraph indices, counts and types are
    // checked by CheckControlFlow (model_control_flow.cc).
    {BuiltinOp::kIf, "IF", 1, OptionsType::kIf},
    {BuiltinOp::kWhile, "WHILE", 1, OptionsType::kWhile},
    // Index and layout ops: byte moves of float32, int8, uint8, int32, int64
    // (kernels_depth_space.cc; 2 is int8); TOPK_V2 3 and FLOOR_DIV 3 / FLOOR_MOD 2 are int16/int8
    // (kernels_topk.cc, kernels_floor.cc); BROADCAST_TO starts at 2, 3 is int8/int16
    // (kernels_broadcast_to.cc); GATHER_ND 2 is STRING (refused at Prepare), 3-5 int16 params,
    // int16 indices, bool (kernels_gather_scatter_nd.cc); ONE_HOT (kernels_one_hot.cc).
    {BuiltinOp::kDepthToSpace, "DEPTH_TO_SPACE", 2, OptionsType::kDepthToSpace},
    {BuiltinOp::kSpaceToDepth, "SPACE_TO_DEPTH", 2, OptionsType::kSpaceToDepth},
    {BuiltinOp::kTopKV2, "TOPK_V2", 2, OptionsType::kTopKV2},
    {BuiltinOp::kBroadcastTo, "BROADCAST_TO", 3, OptionsType::kBroadcastTo},
    {BuiltinOp::kFloorDiv, "FLOOR_DIV", 2, OptionsType::kFloorDiv},
    {BuiltinOp::kFloorMod, "FLOOR_MOD", 1, OptionsType::kFloorMod},
    {BuiltinOp::kOneHot, "ONE_HOT", 1, OptionsType::kOneHot},
    {BuiltinOp::kGatherNd, "GATHER_ND", 5, OptionsType::kGatherNd},
    {BuiltinOp::kScatterNd, "SCATTER_ND", 1, OptionsType::kScatterNd},
    // float32, int32, int64 (kernels_cumsum.cc)
    {BuiltinOp::kCumsum, "CUMSUM", 1, OptionsType::kCumsum},
    // kernels_argminmax.cc: float32, int8, uint8, int32 input (3 is BOOL, refused).
    {BuiltinOp::kArgMax, "ARG_MAX", 2, OptionsType::kArgMax},
    {BuiltinOp::kArgMin, "ARG_MIN", 2, OptionsType::kArgMin},
    // kernels_norm.cc: float32; 2 is int8 (uint8 refused at Prepare).
    {BuiltinOp::kLogSoftmax, "LOG_SOFTMAX", 2, OptionsType::kLogSoftmax},
    {BuiltinOp::kL2Normalization, "L2_NORMALIZATION", 2, OptionsType::kL2Norm},
    // kernels_mirror_pad.cc: byte moves of float32, int8, uint8, int32, int64.
    {BuiltinOp::kMirrorPad, "MIRROR_PAD", 2, OptionsType::kMirrorPad},
    // kernels_reduce_prod.cc: float32 and int32 (2 is int8, refused).
    {BuiltinOp::kReduceProd, "REDUCE_PROD", 1, OptionsType::kReducer},
    // kernels_conv3d.cc: float32 (the only version LiteRT has).
    {BuiltinOp::kConv3D, "CONV_3D", 1, OptionsType::kConv3D},
    {BuiltinOp::kConv3DTranspose, "CONV_3D_TRANSPOSE", 1, OptionsType::kConv3D},
    // kernels_misc_shape.cc: any input type, an INT32 or INT64 output (Keras's Reshape with a
    // dynamic batch: SHAPE, STRIDED_SLICE, PACK, RESHAPE in EfficientNet and MobileNetV3).
    {BuiltinOp::kShape, "SHAPE", 1, OptionsType::kShape},
    // kernels_fill.cc: any type of a fixed size (2 adds BOOL, 3 INT8/INT16 quantized; 4 is
    // STRING, refused at Prepare); a causal attention mask on a dynamic batch.
    {BuiltinOp::kFill, "FILL", 3, OptionsType::kFill},
    // kernels_space_batch.cc: byte moves of float32, int8, uint8, int16, int32, int64 (2 is int8,
    // 3 a rank-3 input, 4 int16); the converter wraps a dilated Conv1D/Conv2D of a dynamic batch
    // in them.
    {BuiltinOp::kSpaceToBatchNd, "SPACE_TO_BATCH_ND", 4, OptionsType::kSpaceToBatchNd},
    {BuiltinOp::kBatchToSpaceNd, "BATCH_TO_SPACE_ND", 4, OptionsType::kBatchToSpaceNd},
    // kernels_lstm.cc: float32 (versions 2-4 hybrid and integer are refused at Prepare); Keras 2's
    // LSTM layers convert to it.
    {BuiltinOp::kUnidirectionalSequenceLstm, "UNIDIRECTIONAL_SEQUENCE_LSTM", 4,
     OptionsType::kUnidirectionalSequenceLstm},
};

const OpInfo* FindOp(int32_t code) {
  for (const OpInfo& info : kOps) {
    if (static_cast<int32_t>(info.op) == code) return &info;
  }
  return nullptr;
}

bool KnownType(int8_t t) { return (t >= 0 && t <= 7) || t == 9; }

constexpr size_t kMaxElements = size_t{1} << 31;

class Parser {
 public:
  Parser(const uint8_t* data, size_t size) : buf_(data, size) {}

  Status Run(uint32_t* version, std::string* description, std::vector<SubGraphDef>* graphs) {
    if (buf_.size() < 8) {
      return Bad("file is " + std::to_string(buf_.size()) +
                 " bytes, too short for a FlatBuffer (truncated?)");
    }
    if (std::memcmp(buf_.data() + 4, "TFL3", 4) != 0) {
      return Bad("missing the \"TFL3\" file identifier at bytes 4-7: not a .tflite model");
    }
    const uint32_t root = fb::LoadScalar<uint32_t>(buf_.data());
    fb::Table model;
    if (!model.Init(&buf_, root, &err_)) return Bad("Model table: " + err_);
    if (!model.Scalar<uint32_t>(0, 0, version, &err_)) return Bad("Model.version: " + err_);
    if (*version != 3) {
      return Bad("Model.version is " + std::to_string(*version) + "; ember reads schema version 3");
    }
    if (!model.String(3, description, &err_)) return Bad("Model.description: " + err_);
    EMBER_RETURN_IF_ERROR(ParseBuffers(model));
    EMBER_RETURN_IF_ERROR(ParseOpcodes(model));
    fb::Vec subgraphs;
    if (!model.Vector(2, 4, &subgraphs, &err_)) return Bad("Model.subgraphs: " + err_);
    if (subgraphs.count == 0) return Bad("model has no subgraphs");
    graphs->resize(subgraphs.count);
    for (uint32_t i = 0; i < subgraphs.count; ++i) {
      fb::Table sg;
      if (!model.TableAt(subgraphs, i, &sg, &err_)) return Bad("subgraph " + Str(i) + ": " + err_);
      EMBER_RETURN_IF_ERROR(ParseSubGraph(sg, i, &(*graphs)[i]));
    }
    return CheckControlFlow(*graphs);
  }

 private:
  static std::string Str(uint64_t v) { return std::to_string(v); }

  static Status Bad(const std::string& what) {
    return errors::InvalidArgument("invalid .tflite model: " + what);
  }

  Status ParseBuffers(const fb::Table& model) {
    fb::Vec buffers;
    if (!model.Vector(4, 4, &buffers, &err_)) return Bad("Model.buffers: " + err_);
    buffers_.resize(buffers.count);
    for (uint32_t i = 0; i < buffers.count; ++i) {
      fb::Table b;
      if (!model.TableAt(buffers, i, &b, &err_)) return Bad("buffer " + Str(i) + ": " + err_);
      fb::Vec data;
      if (!b.Vector(0, 1, &data, &err_)) return Bad("buffer " + Str(i) + ".data: " + err_);
      uint64_t offset = 0, size = 0;
      if (!b.Scalar<uint64_t>(1, 0, &offset, &err_) || !b.Scalar<uint64_t>(2, 0, &size, &err_)) {
        return Bad("buffer " + Str(i) + ": " + err_);
      }
      if (data.present && data.count > 0) {
        buffers_[i] = {buf_.data() + data.pos, data.count};
      } else if (offset > 1) {
        if (offset > buf_.size() || size > buf_.size() - offset) {
          return Bad("buffer " + Str(i) + ": offset " + Str(offset) + " + size " + Str(size) +
                     " lies outside the " + Str(buf_.size()) + "-byte file");
        }
        buffers_[i] = {buf_.data() + offset, static_cast<size_t>(size)};
      }
    }
    if (!buffers_.empty() && buffers_[0].size != 0) {
      return Bad("buffer 0 must be the empty sentinel but holds " + Str(buffers_[0].size) +
                 " bytes");
    }
    return Status::OK();
  }

  Status ParseOpcodes(const fb::Table& model) {
    fb::Vec codes;
    if (!model.Vector(1, 4, &codes, &err_)) return Bad("Model.operator_codes: " + err_);
    for (uint32_t i = 0; i < codes.count; ++i) {
      fb::Table c;
      if (!model.TableAt(codes, i, &c, &err_)) return Bad("operator_code " + Str(i) + ": " + err_);
      int8_t deprecated = 0;
      int32_t builtin = 0, version = 1;
      std::string custom;
      if (!c.Scalar<int8_t>(0, 0, &deprecated, &err_) ||
          !c.Scalar<int32_t>(3, 0, &builtin, &err_) || !c.Scalar<int32_t>(2, 1, &version, &err_) ||
          !c.String(1, &custom, &err_)) {
        return Bad("operator_code " + Str(i) + ": " + err_);
      }
      const int32_t code = std::max<int32_t>(builtin, deprecated);
      opcodes_.push_back({code, version, custom});
    }
    return Status::OK();
  }

  Status ParseIndexVector(const fb::Table& t, int id, const std::string& what, size_t limit,
                          bool allow_absent, std::vector<int32_t>* out) {
    fb::Vec v;
    if (!t.Vector(id, 4, &v, &err_)) return Bad(what + ": " + err_);
    out->resize(v.count);
    for (uint32_t i = 0; i < v.count; ++i) {
      const int32_t idx = t.ElementAt<int32_t>(v, i);
      if ((idx == -1 && !allow_absent) || idx < -1 ||
          static_cast<int64_t>(idx) >= static_cast<int64_t>(limit)) {
        return Bad(what + "[" + Str(i) + "] = " + std::to_string(idx) +
                   " is not a tensor index (the subgraph has " + Str(limit) + " tensors)");
      }
      (*out)[i] = idx;
    }
    return Status::OK();
  }

  Status ParseQuant(const fb::Table& qt, const std::string& what, TensorDef* t) {
    fb::Vec scale, zp;
    if (!qt.Vector(2, 4, &scale, &err_) || !qt.Vector(3, 8, &zp, &err_) ||
        !qt.Scalar<int32_t>(6, 0, &t->quant.quantized_dimension, &err_)) {
      return Bad(what + ".quantization: " + err_);
    }
    uint8_t details = 0;
    if (!qt.Scalar<uint8_t>(4, 0, &details, &err_)) return Bad(what + ".quantization: " + err_);
    if (details != 0) return Bad(what + ": custom quantization details are not supported");
    if (scale.count == 0) return Status::OK();  // min/max only: not quantized
    if (zp.count != scale.count) {
      return Bad(what + ": quantization has " + Str(scale.count) + " scales but " + Str(zp.count) +
                 " zero points");
    }
    for (uint32_t i = 0; i < scale.count; ++i) {
      t->quant.scale.push_back(qt.ElementAt<float>(scale, i));
      t->quant.zero_point.push_back(qt.ElementAt<int64_t>(zp, i));
    }
    const int32_t qd = t->quant.quantized_dimension;
    if (scale.count > 1) {
      if (qd < 0 || static_cast<size_t>(qd) >= t->shape.size()) {
        return Bad(what + ": quantized_dimension " + std::to_string(qd) + " is outside its rank " +
                   Str(t->shape.size()));
      }
      if (static_cast<uint32_t>(t->shape[static_cast<size_t>(qd)]) != scale.count) {
        return Bad(what + ": " + Str(scale.count) + " per-channel scales for dimension " +
                   std::to_string(qd) + " of size " +
                   std::to_string(t->shape[static_cast<size_t>(qd)]));
      }
    }
    return Status::OK();
  }

  Status ParseTensor(const fb::Table& tt, const std::string& what, TensorDef* t) {
    int8_t type = 0;
    bool is_variable = false;
    if (!tt.Scalar<int8_t>(1, 0, &type, &err_) || !tt.Scalar<uint32_t>(2, 0, &t->buffer, &err_) ||
        !tt.String(3, &t->name, &err_) || !tt.Scalar<bool>(5, false, &is_variable, &err_)) {
      return Bad(what + ": " + err_);
    }
    const std::string named = what + " ('" + t->name + "')";
    if (!KnownType(type)) return Bad(named + ": unknown tensor type " + std::to_string(type));
    t->type = static_cast<TensorType>(type);
    t->is_variable = is_variable;
    size_t sparsity = 0;
    if (!tt.Offset(6, &sparsity, &err_)) return Bad(named + ": " + err_);
    if (sparsity != 0) return Bad(named + ": sparse tensors are not supported");
    fb::Vec shape;
    if (!tt.Vector(0, 4, &shape, &err_)) return Bad(named + ".shape: " + err_);
    if (shape.count > 8) return Bad(named + ": rank " + Str(shape.count) + " exceeds 8");
    size_t n = 1;
    for (uint32_t i = 0; i < shape.count; ++i) {
      const int32_t d = tt.ElementAt<int32_t>(shape, i);
      if (d < 0) return Bad(named + ": dimension " + Str(i) + " is " + std::to_string(d));
      t->shape.push_back(d);
      if (d != 0 && n > kMaxElements / static_cast<size_t>(d)) {
        return Bad(named + ": shape has more than 2^31 elements");
      }
      n *= static_cast<size_t>(d);
    }
    t->num_elements = n;
    fb::Vec sig;
    if (!tt.Vector(7, 4, &sig, &err_)) return Bad(named + ".shape_signature: " + err_);
    if (sig.count != 0 && sig.count != shape.count) {
      return Bad(named + ": shape_signature has rank " + Str(sig.count) + " but shape " +
                 Str(shape.count));
    }
    for (uint32_t i = 0; i < sig.count; ++i) {
      const int32_t d = tt.ElementAt<int32_t>(sig, i);
      if (d < -1)
        return Bad(named + ": shape_signature dimension " + Str(i) + " is " + std::to_string(d));
      t->shape_signature.push_back(d);
    }
    if (t->buffer >= buffers_.size()) {
      return Bad(named + ": buffer index " + Str(t->buffer) + " is out of range (the model has " +
                 Str(buffers_.size()) + " buffers)");
    }
    const BufferRef& b = buffers_[t->buffer];
    if (b.size != 0 && !t->is_variable) {  // a variable starts at zero (TFLite resets it so)
      const size_t elem = TensorTypeSize(t->type);
      if (elem == 0) return Bad(named + ": constant data of type " + TensorTypeName(t->type));
      if (b.size != n * elem) {
        return Bad(named + ": buffer " + Str(t->buffer) + " holds " + Str(b.size) +
                   " bytes but shape x " + TensorTypeName(t->type) + " needs " + Str(n * elem));
      }
      // Data not aligned to its element size (the converter aligns buffers to 4 bytes, so
      // int64 constants can land off 8) is copied into aligned storage by Model::Parse.
      t->data = b.data;
      t->data_size = b.size;
    }
    fb::Table qt;
    bool has_q = false;
    if (!tt.SubTable(4, &qt, &has_q, &err_)) return Bad(named + ".quantization: " + err_);
    if (has_q) EMBER_RETURN_IF_ERROR(ParseQuant(qt, named, t));
    return Status::OK();
  }

  Status ParseOptions(const fb::Table& ot, const OpInfo& info, const std::string& what,
                      OpOptions* o) {
    auto fail = [&]() { return Bad(what + " options: " + err_); };
    int8_t padding = 0, act = 0;
    switch (info.options) {
      case OptionsType::kConv2D:
      case OptionsType::kDepthwiseConv2D: {
        const bool dw = info.options == OptionsType::kDepthwiseConv2D;
        if (!ot.Scalar<int8_t>(0, 0, &padding, &err_) ||
            !ot.Scalar<int32_t>(1, 0, &o->stride_w, &err_) ||
            !ot.Scalar<int32_t>(2, 0, &o->stride_h, &err_)) {
          return fail();
        }
        const int base = dw ? 4 : 3;
        if (dw && !ot.Scalar<int32_t>(3, 0, &o->depth_multiplier, &err_)) return fail();
        if (!ot.Scalar<int8_t>(base, 0, &act, &err_) ||
            !ot.Scalar<int32_t>(base + 1, 1, &o->dilation_w, &err_) ||
            !ot.Scalar<int32_t>(base + 2, 1, &o->dilation_h, &err_)) {
          return fail();
        }
        break;
      }
      case OptionsType::kPool2D:
        if (!ot.Scalar<int8_t>(0, 0, &padding, &err_) ||
            !ot.Scalar<int32_t>(1, 0, &o->stride_w, &err_) ||
            !ot.Scalar<int32_t>(2, 0, &o->stride_h, &err_) ||
            !ot.Scalar<int32_t>(3, 0, &o->filter_w, &err_) ||
            !ot.Scalar<int32_t>(4, 0, &o->filter_h, &err_) ||
            !ot.Scalar<int8_t>(5, 0, &act, &err_)) {
          return fail();
        }
        break;
      case OptionsType::kFullyConnected: {
        int8_t format = 0;
        if (!ot.Scalar<int8_t>(0, 0, &act, &err_) || !ot.Scalar<int8_t>(1, 0, &format, &err_) ||
            !ot.Scalar<bool>(2, false, &o->keep_num_dims, &err_) ||
            !ot.Scalar<bool>(3, false, &o->asymmetric_quantize_inputs, &err_)) {
          return fail();
        }
        if (format != 0) return Bad(what + ": only the DEFAULT weights_format is supported");
        break;
      }
      case OptionsType::kSoftmax:
        if (!ot.Scalar<float>(0, 0.0f, &o->beta, &err_)) return fail();
        break;
      case OptionsType::kConcatenation:
        if (!ot.Scalar<int32_t>(0, 0, &o->axis, &err_) || !ot.Scalar<int8_t>(1, 0, &act, &err_)) {
          return fail();
        }
        break;
      case OptionsType::kAdd:
      case OptionsType::kMul:
        if (!ot.Scalar<int8_t>(0, 0, &act, &err_)) return fail();
        break;
      case OptionsType::kReshape: {
        fb::Vec ns;
        if (!ot.Vector(0, 4, &ns, &err_)) return fail();
        for (uint32_t i = 0; i < ns.count && i < 16; ++i) {
          o->new_shape.push_back(ot.ElementAt<int32_t>(ns, i));
        }
        break;
      }
      case OptionsType::kReducer:
        if (!ot.Scalar<bool>(0, false, &o->keep_dims, &err_)) return fail();
        break;
      case OptionsType::kSub:
      case OptionsType::kDiv:
        if (!ot.Scalar<int8_t>(0, 0, &act, &err_)) return fail();
        break;
      case OptionsType::kGather:
        if (!ot.Scalar<int32_t>(0, 0, &o->axis, &err_) ||
            !ot.Scalar<int32_t>(1, 0, &o->batch_dims, &err_)) {
          return fail();
        }
        break;
      case OptionsType::kStridedSlice:
        if (!ot.Scalar<int32_t>(0, 0, &o->begin_mask, &err_) ||
            !ot.Scalar<int32_t>(1, 0, &o->end_mask, &err_) ||
            !ot.Scalar<int32_t>(2, 0, &o->ellipsis_mask, &err_) ||
            !ot.Scalar<int32_t>(3, 0, &o->new_axis_mask, &err_) ||
            !ot.Scalar<int32_t>(4, 0, &o->shrink_axis_mask, &err_) ||
            !ot.Scalar<bool>(5, false, &o->offset, &err_)) {
          return fail();
        }
        break;
      case OptionsType::kBatchMatMul:
        if (!ot.Scalar<bool>(0, false, &o->adj_x, &err_) ||
            !ot.Scalar<bool>(1, false, &o->adj_y, &err_)) {
          return fail();
        }
        break;
      case OptionsType::kGelu:
        if (!ot.Scalar<bool>(0, false, &o->approximate, &err_)) return fail();
        break;
      case OptionsType::kLeakyRelu:
        if (!ot.Scalar<float>(0, 0.0f, &o->alpha, &err_)) return fail();
        break;
      case OptionsType::kTransposeConv:
        if (!ot.Scalar<int8_t>(0, 0, &padding, &err_) ||
            !ot.Scalar<int32_t>(1, 0, &o->stride_w, &err_) ||
            !ot.Scalar<int32_t>(2, 0, &o->stride_h, &err_) ||
            !ot.Scalar<int8_t>(3, 0, &act, &err_)) {
          return fail();
        }
        break;
      case OptionsType::kSplit:
      case OptionsType::kSplitV:
        if (!ot.Scalar<int32_t>(0, 0, &o->num, &err_)) return fail();
        break;
      case OptionsType::kResizeBilinear:  // ids 0-1 are the deprecated new_height/new_width
      case OptionsType::kResizeNearestNeighbor: {
        const int base = info.options == OptionsType::kResizeBilinear ? 2 : 0;
        if (!ot.Scalar<bool>(base, false, &o->align_corners, &err_) ||
            !ot.Scalar<bool>(base + 1, false, &o->half_pixel_centers, &err_)) {
          return fail();
        }
        break;
      }
      case OptionsType::kPack:
      case OptionsType::kUnpack:
        if (!ot.Scalar<int32_t>(0, 0, &o->num, &err_) ||
            !ot.Scalar<int32_t>(1, 0, &o->axis, &err_)) {
          return fail();
        }
        break;
      case OptionsType::kWhile:
        if (!ot.Scalar<int32_t>(0, 0, &o->cond_subgraph, &err_) ||
            !ot.Scalar<int32_t>(1, 0, &o->body_subgraph, &err_)) {
          return fail();
        }
        break;
      case OptionsType::kCumsum:
        if (!ot.Scalar<bool>(0, false, &o->exclusive, &err_) ||
            !ot.Scalar<bool>(1, false, &o->reverse, &err_)) {
          return fail();
        }
        break;
      case OptionsType::kArgMax:
      case OptionsType::kArgMin:
        if (!ot.Scalar<int8_t>(0, 0, &o->arg_output_type, &err_)) return fail();
        break;
      case OptionsType::kMirrorPad:
        if (!ot.Scalar<int8_t>(0, 0, &o->mirror_mode, &err_)) return fail();
        break;
      case OptionsType::kShape:
        if (!ot.Scalar<int8_t>(0, static_cast<int8_t>(TensorType::kInt32), &o->shape_out_type,
                               &err_)) {
          return fail();
        }
        break;
      case OptionsType::kL2Norm:
        if (!ot.Scalar<int8_t>(0, 0, &act, &err_)) return fail();
        break;
      case OptionsType::kConv3D:
        if (!ot.Scalar<int8_t>(0, 0, &padding, &err_) ||
            !ot.Scalar<int32_t>(1, 0, &o->stride_d, &err_) ||
            !ot.Scalar<int32_t>(2, 0, &o->stride_w, &err_) ||
            !ot.Scalar<int32_t>(3, 0, &o->stride_h, &err_) ||
            !ot.Scalar<int8_t>(4, 0, &act, &err_) ||
            !ot.Scalar<int32_t>(5, 1, &o->dilation_d, &err_) ||
            !ot.Scalar<int32_t>(6, 1, &o->dilation_w, &err_) ||
            !ot.Scalar<int32_t>(7, 1, &o->dilation_h, &err_)) {
          return fail();
        }
        break;
      case OptionsType::kIf:
        if (!ot.Scalar<int32_t>(0, 0, &o->then_subgraph, &err_) ||
            !ot.Scalar<int32_t>(1, 0, &o->else_subgraph, &err_)) {
          return fail();
        }
        break;
      case OptionsType::kDepthToSpace:
      case OptionsType::kSpaceToDepth:
        if (!ot.Scalar<int32_t>(0, 0, &o->block_size, &err_)) return fail();
        break;
      case OptionsType::kOneHot:
        if (!ot.Scalar<int32_t>(0, 0, &o->axis, &err_)) return fail();
        break;
      case OptionsType::kUnidirectionalSequenceLstm:
        if (!ot.Scalar<int8_t>(0, 0, &o->lstm_activation, &err_) ||
            !ot.Scalar<float>(1, 0.0f, &o->cell_clip, &err_) ||
            !ot.Scalar<float>(2, 0.0f, &o->proj_clip, &err_) ||
            !ot.Scalar<bool>(3, false, &o->time_major, &err_) ||
            !ot.Scalar<bool>(4, false, &o->asymmetric_quantize_inputs, &err_)) {
          return fail();
        }
        break;
      case OptionsType::kSqueeze: {
        fb::Vec dims;
        if (!ot.Vector(0, 4, &dims, &err_)) return fail();
        for (uint32_t i = 0; i < dims.count && i < 16; ++i) {
          o->squeeze_dims.push_back(ot.ElementAt<int32_t>(dims, i));
        }
        break;
      }
      default:
        break;
    }
    if (padding != 0 && padding != 1)
      return Bad(what + ": unknown padding " + std::to_string(padding));
    if (act < 0 || act > 3) {
      return Bad(what + ": fused activation " + std::to_string(act) +
                 " is not supported (NONE, RELU, RELU_N1_TO_1, RELU6 are)");
    }
    o->padding = static_cast<Padding>(padding);
    o->activation = static_cast<Activation>(act);
    return Status::OK();
  }

  Status ParseOperator(const fb::Table& ot, const std::string& what, size_t num_tensors,
                       OperatorDef* op) {
    uint32_t opcode_index = 0;
    if (!ot.Scalar<uint32_t>(0, 0, &opcode_index, &err_)) return Bad(what + ": " + err_);
    if (opcode_index >= opcodes_.size()) {
      return Bad(what + ": opcode_index " + Str(opcode_index) + " is out of range (the model has " +
                 Str(opcodes_.size()) + " operator codes)");
    }
    const Opcode& code = opcodes_[opcode_index];
    const OpInfo* info = FindOp(code.code);
    if (info == nullptr) {
      std::string name =
          code.code == 32 ? "CUSTOM '" + code.custom + "'" : BuiltinOpName(code.code);
      return errors::Unimplemented(what + ": operator " + name + " is not supported by ember lite");
    }
    if (code.version < 1 || code.version > info->max_version) {
      return errors::Unimplemented(what + ": " + info->name + " version " +
                                   std::to_string(code.version) + " is not supported (ember " +
                                   "implements versions 1-" + std::to_string(info->max_version) +
                                   ")");
    }
    op->op = info->op;
    op->version = code.version;
    EMBER_RETURN_IF_ERROR(ParseIndexVector(ot, 1, what + " (" + info->name + ").inputs",
                                           num_tensors, true, &op->inputs));
    EMBER_RETURN_IF_ERROR(ParseIndexVector(ot, 2, what + " (" + info->name + ").outputs",
                                           num_tensors, false, &op->outputs));
    uint8_t options_type = 0;
    if (!ot.Scalar<uint8_t>(3, 0, &options_type, &err_)) return Bad(what + ": " + err_);
    if (options_type != 0 && options_type != static_cast<uint8_t>(info->options)) {
      return Bad(what + " (" + info->name + "): builtin_options_type " + Str(options_type) +
                 " does not match the operator (expected " +
                 Str(static_cast<uint8_t>(info->options)) + ")");
    }
    // Defaults when the options table is absent match TFLite's parser.
    op->options.stride_w = op->options.stride_h = 1;
    fb::Table opts;
    bool has_opts = false;
    if (!ot.SubTable(4, &opts, &has_opts, &err_)) return Bad(what + " options: " + err_);
    if (has_opts && options_type != 0) {
      EMBER_RETURN_IF_ERROR(
          ParseOptions(opts, *info, what + " (" + info->name + ")", &op->options));
    }
    return Status::OK();
  }

  Status ParseSubGraph(const fb::Table& sg, uint32_t index, SubGraphDef* out) {
    const std::string prefix = "subgraph " + Str(index);
    if (!sg.String(4, &out->name, &err_)) return Bad(prefix + ".name: " + err_);
    fb::Vec tensors;
    if (!sg.Vector(0, 4, &tensors, &err_)) return Bad(prefix + ".tensors: " + err_);
    out->tensors.resize(tensors.count);
    for (uint32_t i = 0; i < tensors.count; ++i) {
      fb::Table tt;
      const std::string what = prefix + " tensor " + Str(i);
      if (!sg.TableAt(tensors, i, &tt, &err_)) return Bad(what + ": " + err_);
      EMBER_RETURN_IF_ERROR(ParseTensor(tt, what, &out->tensors[i]));
    }
    const size_t n = out->tensors.size();
    EMBER_RETURN_IF_ERROR(ParseIndexVector(sg, 1, prefix + ".inputs", n, false, &out->inputs));
    EMBER_RETURN_IF_ERROR(ParseIndexVector(sg, 2, prefix + ".outputs", n, false, &out->outputs));
    fb::Vec ops;
    if (!sg.Vector(3, 4, &ops, &err_)) return Bad(prefix + ".operators: " + err_);
    out->operators.resize(ops.count);
    for (uint32_t i = 0; i < ops.count; ++i) {
      fb::Table ot;
      const std::string what = prefix + " operator " + Str(i);
      if (!sg.TableAt(ops, i, &ot, &err_)) return Bad(what + ": " + err_);
      EMBER_RETURN_IF_ERROR(ParseOperator(ot, what, n, &out->operators[i]));
    }
    return Status::OK();
  }

  struct BufferRef {
    const uint8_t* data = nullptr;
    size_t size = 0;
  };
  struct Opcode {
    int32_t code;
    int32_t version;
    std::string custom;
  };

  fb::Buffer buf_;
  std::string err_;
  std::vector<BufferRef> buffers_;
  std::vector<Opcode> opcodes_;
};

}  // namespace

std::string BuiltinOpName(int32_t code) {
  const OpInfo* info = FindOp(code);
  if (info != nullptr) return info->name;
  return "BUILTIN(" + std::to_string(code) + ")";
}

OptionsType BuiltinOptionsType(BuiltinOp op) {
  const OpInfo* info = FindOp(static_cast<int32_t>(op));
  return info != nullptr ? info->options : OptionsType::kNone;
}

Model::~Model() {
  if (mapping_ != nullptr) munmap(mapping_, mapping_size_);
}

Status Model::Parse() {
  Parser parser(data_, size_);
  EMBER_RETURN_IF_ERROR(parser.Run(&version_, &description_, &graphs_));
  for (SubGraphDef& g : graphs_) {
    for (TensorDef& t : g.tensors) {
      const size_t elem = TensorTypeSize(t.type);
      if (t.data == nullptr || elem == 0 || reinterpret_cast<uintptr_t>(t.data) % elem == 0) {
        continue;
      }
      aligned_consts_.emplace_back((t.data_size + 7) / 8);
      std::memcpy(aligned_consts_.back().data(), t.data, t.data_size);
      t.data = reinterpret_cast<const uint8_t*>(aligned_consts_.back().data());
    }
  }
  return Status::OK();
}

StatusOr<std::shared_ptr<const Model>> Model::FromFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return errors::NotFound("cannot open .tflite model '" + path + "': " + std::strerror(errno));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return errors::InvalidArgument("'" + path + "' is not a regular file");
  }
  std::shared_ptr<Model> model(new Model());
  const size_t size = static_cast<size_t>(st.st_size);
  if (size > 0) {
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      ::close(fd);
      return errors::Internal("cannot map '" + path + "': " + std::strerror(errno));
    }
    model->mapping_ = p;
    model->mapping_size_ = size;
    model->data_ = static_cast<const uint8_t*>(p);
  }
  ::close(fd);
  model->size_ = size;
  Status s = model->Parse();
  if (!s.ok()) return Status(s.code(), path + ": " + s.message());
  return std::shared_ptr<const Model>(std::move(model));
}

namespace {
// Copies `size` bytes into `store` at a 16-byte aligned position and returns it.
const uint8_t* AlignedCopy(std::vector<uint8_t>* store, const void* data, size_t size) {
  std::vector<uint8_t> fresh(size + 16);
  const uintptr_t base = reinterpret_cast<uintptr_t>(fresh.data());
  const size_t skip = (16 - base % 16) % 16;
  if (size != 0) std::memcpy(fresh.data() + skip, data, size);
  *store = std::move(fresh);
  return store->data() + skip;
}
}  // namespace

StatusOr<std::shared_ptr<const Model>> Model::FromBuffer(const void* data, size_t size) {
  if (data == nullptr && size != 0) return errors::InvalidArgument("null model buffer");
  std::shared_ptr<Model> model(new Model());
  if (reinterpret_cast<uintptr_t>(data) % 16 != 0) {
    model->data_ = AlignedCopy(&model->owned_, data, size);
  } else {
    model->data_ = static_cast<const uint8_t*>(data);
  }
  model->size_ = size;
  EMBER_RETURN_IF_ERROR(model->Parse());
  return std::shared_ptr<const Model>(std::move(model));
}

StatusOr<std::shared_ptr<const Model>> Model::FromBytes(std::vector<uint8_t> bytes) {
  std::shared_ptr<Model> model(new Model());
  model->size_ = bytes.size();
  if (reinterpret_cast<uintptr_t>(bytes.data()) % 16 != 0) {
    model->data_ = AlignedCopy(&model->owned_, bytes.data(), bytes.size());
  } else {
    model->owned_ = std::move(bytes);
    model->data_ = model->owned_.data();
  }
  EMBER_RETURN_IF_ERROR(model->Parse());
  return std::shared_ptr<const Model>(std::move(model));
}

}  // namespace lite
}  // namespace ember
