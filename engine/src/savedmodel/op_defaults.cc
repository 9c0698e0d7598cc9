#include "savedmodel/op_defaults.h"

#include <map>
#include <string>
#include <vector>

namespace ember {

namespace {

AttrValue Type(DataType t) {
  AttrValue v;
  v.kind = AttrValue::Kind::kType;
  v.type = t;
  return v;
}
AttrValue Bool(bool b) {
  AttrValue v;
  v.kind = AttrValue::Kind::kB;
  v.b = b;
  return v;
}
AttrValue Int(int64_t i) {
  AttrValue v;
  v.kind = AttrValue::Kind::kI;
  v.i = i;
  return v;
}
AttrValue Float(float f) {
  AttrValue v;
  v.kind = AttrValue::Kind::kF;
  v.f = f;
  return v;
}
AttrValue Str(const char* s) {
  AttrValue v;
  v.kind = AttrValue::Kind::kS;
  v.s = s;
  return v;
}
AttrValue Ints(std::vector<int64_t> i) {
  AttrValue v;
  v.kind = AttrValue::Kind::kList;
  v.list.i = std::move(i);
  return v;
}

using Defaults = std::map<std::string, std::map<std::string, AttrValue>>;

// From TensorFlow's op registrations (tensorflow/core/ops/*.cc), defaults only.
Defaults MakeDefaults() {
  Defaults d;
  const AttrValue i32 = Type(DataType::kInt32);
  for (const char* op : {"Sum", "Mean", "Max", "Min", "Prod", "All", "Any"}) {
    d[op] = {{"Tidx", i32}, {"keep_dims", Bool(false)}};
  }
  for (const char* op : {"ArgMax", "ArgMin"}) d[op] = {{"output_type", Type(DataType::kInt64)}};
  d["Reshape"] = {{"Tshape", i32}};
  d["ConcatV2"] = {{"Tidx", i32}};
  d["ReverseV2"] = {{"Tidx", i32}};
  d["Transpose"] = {{"Tperm", i32}};
  d["ExpandDims"] = {{"Tdim", i32}};
  d["Squeeze"] = {{"squeeze_dims", Ints({})}};
  d["Shape"] = {{"out_type", i32}};
  d["Size"] = {{"out_type", i32}};
  d["Fill"] = {{"index_type", i32}};
  d["Range"] = {{"Tidx", i32}};
  d["Tile"] = {{"Tmultiples", i32}};
  d["Pad"] = {{"Tpaddings", i32}};
  d["PadV2"] = {{"Tpaddings", i32}};
  d["MirrorPad"] = {{"Tpaddings", i32}};
  d["Pack"] = {{"axis", Int(0)}};
  d["Unpack"] = {{"axis", Int(0)}};
  d["Cast"] = {{"Truncate", Bool(false)}};
  d["MatMul"] = {{"transpose_a", Bool(false)}, {"transpose_b", Bool(false)}};
  for (const char* op : {"BatchMatMul", "BatchMatMulV2", "BatchMatMulV3"}) {
    d[op] = {{"adj_x", Bool(false)}, {"adj_y", Bool(false)}};
  }
  for (const char* op : {"Conv2D", "DepthwiseConv2dNative"}) {
    d[op] = {{"data_format", Str("NHWC")},
             {"dilations", Ints({1, 1, 1, 1})},
             {"explicit_paddings", Ints({})}};
  }
  d["Conv2D"]["use_cudnn_on_gpu"] = Bool(true);
  for (const char* op : {"MaxPool", "AvgPool", "BiasAdd"}) d[op] = {{"data_format", Str("NHWC")}};
  d["MaxPool"]["T"] = Type(DataType::kFloat);
  d["FusedBatchNormV3"] = {{"epsilon", Float(0.0001f)},
                           {"exponential_avg_factor", Float(1.0f)},
                           {"data_format", Str("NHWC")},
                           {"is_training", Bool(true)}};
  d["FusedBatchNorm"] = d["FusedBatchNormV3"];
  d["StridedSlice"] = {{"begin_mask", Int(0)},
                       {"end_mask", Int(0)},
                       {"ellipsis_mask", Int(0)},
                       {"new_axis_mask", Int(0)},
                       {"shrink_axis_mask", Int(0)}};
  d["GatherV2"] = {{"batch_dims", Int(0)}};
  d["ResourceGather"] = {{"batch_dims", Int(0)}, {"validate_indices", Bool(true)}};
  d["Gather"] = {{"validate_indices", Bool(true)}};
  d["LeakyRelu"] = {{"alpha", Float(0.2f)}};
  d["Cumsum"] = {{"exclusive", Bool(false)}, {"reverse", Bool(false)}, {"Tidx", i32}};
  d["OneHot"] = {{"axis", Int(-1)}, {"TI", Type(DataType::kInt64)}};
  d["Split"] = {};
  d["TopKV2"] = {{"sorted", Bool(true)}, {"index_type", i32}, {"Tk", i32}};
  for (const char* op : {"GatherNd", "ScatterNd", "TensorScatterUpdate", "TensorScatterAdd"}) {
    d[op] = {{"bad_indices_policy", Str("")}};
  }
  for (const char* op : {"DepthToSpace", "SpaceToDepth"}) d[op] = {{"data_format", Str("NHWC")}};
  d["LRN"] = {{"depth_radius", Int(5)},
              {"bias", Float(1.0f)},
              {"alpha", Float(1.0f)},
              {"beta", Float(0.5f)},
              {"T", Type(DataType::kFloat)}};
  d["Assert"] = {{"summarize", Int(3)}};
  d["ReverseSequence"] = {{"batch_dim", Int(0)}, {"Tlen", Type(DataType::kInt64)}};
  for (const char* op : {"MatrixDiagV3", "MatrixSetDiagV3"}) d[op] = {{"align", Str("RIGHT_LEFT")}};
  d["Unique"] = {{"out_idx", i32}};
  d["SpaceToBatchND"] = {{"Tblock_shape", i32}, {"Tpaddings", i32}};
  d["BatchToSpaceND"] = {{"Tblock_shape", i32}, {"Tcrops", i32}};
  for (const char* op : {"ResizeBilinear", "ResizeNearestNeighbor"}) {
    d[op] = {{"align_corners", Bool(false)}, {"half_pixel_centers", Bool(false)}};
  }
  d["ResizeBicubic"] = d["ResizeBilinear"];
  d["ResizeArea"] = {{"align_corners", Bool(false)}};
  for (const char* op :
       {"UnsortedSegmentSum", "UnsortedSegmentProd", "UnsortedSegmentMax", "UnsortedSegmentMin"}) {
    d[op] = {{"Tnumsegments", i32}};
  }
  d["Conv2DBackpropInput"] = d["Conv2D"];
  for (const char* op : {"Conv3D", "Conv3DBackpropInputV2"}) {
    d[op] = {{"data_format", Str("NDHWC")}, {"dilations", Ints({1, 1, 1, 1, 1})}};
  }
  d["Conv3DBackpropInputV2"]["Tshape"] = i32;
  for (const char* op : {"MaxPool3D", "AvgPool3D"}) d[op] = {{"data_format", Str("NDHWC")}};
  return d;
}

}  // namespace

void AddDefaultAttrs(NodeDef* node) {
  static const Defaults* defaults = new Defaults(MakeDefaults());
  auto it = defaults->find(node->op);
  if (it == defaults->end()) return;
  for (const auto& kv : it->second) node->attr.emplace(kv.first, kv.second);
}

}  // namespace ember
