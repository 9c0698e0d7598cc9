// Model -> .tflite FlatBuffer, field ids as in ../shared/spec/ENGINE.md section 3.
#include "ember/lite/writer.h"

#include <algorithm>
#include <map>
#include <utility>

#include "lite/flatbuffer_writer.h"

namespace ember {
namespace lite {
namespace {

using fb::Builder;
using Offset = Builder::Offset;

Offset WriteOptions(Builder* b, const OperatorDef& op) {
  const OpOptions& o = op.options;
  const int8_t pad = static_cast<int8_t>(o.padding);
  const int8_t act = static_cast<int8_t>(o.activation);
  Offset new_shape = 0;
  if (op.op == BuiltinOp::kReshape) {
    new_shape = b->CreateVector(o.new_shape.data(), o.new_shape.size(), 4);
  }
  if (op.op == BuiltinOp::kSqueeze) {
    new_shape = b->CreateVector(o.squeeze_dims.data(), o.squeeze_dims.size(), 4);
  }
  b->StartTable();
  switch (BuiltinOptionsType(op.op)) {
    case OptionsType::kConv2D:
      b->AddScalar<int8_t>(0, pad);
      b->AddScalar<int32_t>(1, o.stride_w);
      b->AddScalar<int32_t>(2, o.stride_h);
      b->AddScalar<int8_t>(3, act);
      b->AddScalar<int32_t>(4, o.dilation_w);
      b->AddScalar<int32_t>(5, o.dilation_h);
      break;
    case OptionsType::kConv3D:
      b->AddScalar<int8_t>(0, pad);
      b->AddScalar<int32_t>(1, o.stride_d);
      b->AddScalar<int32_t>(2, o.stride_w);
      b->AddScalar<int32_t>(3, o.stride_h);
      b->AddScalar<int8_t>(4, act);
      b->AddScalar<int32_t>(5, o.dilation_d);
      b->AddScalar<int32_t>(6, o.dilation_w);
      b->AddScalar<int32_t>(7, o.dilation_h);
      break;
    case OptionsType::kTransposeConv:
      b->AddScalar<int8_t>(0, pad);
      b->AddScalar<int32_t>(1, o.stride_w);
      b->AddScalar<int32_t>(2, o.stride_h);
      b->AddScalar<int8_t>(3, act);
      break;
    case OptionsType::kDepthwiseConv2D:
      b->AddScalar<int8_t>(0, pad);
      b->AddScalar<int32_t>(1, o.stride_w);
      b->AddScalar<int32_t>(2, o.stride_h);
      b->AddScalar<int32_t>(3, o.depth_multiplier);
      b->AddScalar<int8_t>(4, act);
      b->AddScalar<int32_t>(5, o.dilation_w);
      b->AddScalar<int32_t>(6, o.dilation_h);
      break;
    case OptionsType::kPool2D:
      b->AddScalar<int8_t>(0, pad);
      b->AddScalar<int32_t>(1, o.stride_w);
      b->AddScalar<int32_t>(2, o.stride_h);
      b->AddScalar<int32_t>(3, o.filter_w);
      b->AddScalar<int32_t>(4, o.filter_h);
      b->AddScalar<int8_t>(5, act);
      break;
    case OptionsType::kFullyConnected:
      b->AddScalar<int8_t>(0, act);
      b->AddScalar<uint8_t>(2, o.keep_num_dims ? 1 : 0);
      b->AddScalar<uint8_t>(3, o.asymmetric_quantize_inputs ? 1 : 0);
      break;
    case OptionsType::kSoftmax:
      b->AddScalar<float>(0, o.beta);
      break;
    case OptionsType::kConcatenation:
      b->AddScalar<int32_t>(0, o.axis);
      b->AddScalar<int8_t>(1, act);
      break;
    case OptionsType::kAdd:
    case OptionsType::kMul:
      b->AddScalar<int8_t>(0, act);
      break;
    case OptionsType::kReshape:
      b->AddOffset(0, new_shape);
      break;
    case OptionsType::kReducer:
      b->AddScalar<uint8_t>(0, o.keep_dims ? 1 : 0);
      break;
    case OptionsType::kSub:
    case OptionsType::kDiv:
      b->AddScalar<int8_t>(0, act);
      break;
    case OptionsType::kGather:
      b->AddScalar<int32_t>(0, o.axis);
      b->AddScalar<int32_t>(1, o.batch_dims);
      break;
    case OptionsType::kStridedSlice:
      b->AddScalar<int32_t>(0, o.begin_mask);
      b->AddScalar<int32_t>(1, o.end_mask);
      b->AddScalar<int32_t>(2, o.ellipsis_mask);
      b->AddScalar<int32_t>(3, o.new_axis_mask);
      b->AddScalar<int32_t>(4, o.shrink_axis_mask);
      b->AddScalar<uint8_t>(5, o.offset ? 1 : 0);
      break;
    case OptionsType::kBatchMatMul:
      b->AddScalar<uint8_t>(0, o.adj_x ? 1 : 0);
      b->AddScalar<uint8_t>(1, o.adj_y ? 1 : 0);
      break;
    case OptionsType::kGelu:
      b->AddScalar<uint8_t>(0, o.approximate ? 1 : 0);
      break;
    case OptionsType::kLeakyRelu:
      b->AddScalar<float>(0, o.alpha);
      break;
    case OptionsType::kUnidirectionalSequenceLstm:
      b->AddScalar<int8_t>(0, o.lstm_activation);
      b->AddScalar<float>(1, o.cell_clip);
      b->AddScalar<float>(2, o.proj_clip);
      b->AddScalar<bool>(3, o.time_major);
      b->AddScalar<bool>(4, o.asymmetric_quantize_inputs);
      break;
    case OptionsType::kSplit:
    case OptionsType::kSplitV:
      b->AddScalar<int32_t>(0, o.num);
      break;
    case OptionsType::kPack:
    case OptionsType::kUnpack:
      b->AddScalar<int32_t>(0, o.num);
      b->AddScalar<int32_t>(1, o.axis);
      break;
    case OptionsType::kSqueeze:
      b->AddOffset(0, new_shape);
      break;
    case OptionsType::kResizeBilinear:
      b->AddScalar<uint8_t>(2, o.align_corners ? 1 : 0);
      b->AddScalar<uint8_t>(3, o.half_pixel_centers ? 1 : 0);
      break;
    case OptionsType::kResizeNearestNeighbor:
      b->AddScalar<uint8_t>(0, o.align_corners ? 1 : 0);
      b->AddScalar<uint8_t>(1, o.half_pixel_centers ? 1 : 0);
      break;
    case OptionsType::kWhile:
      b->AddScalar<int32_t>(0, o.cond_subgraph);
      b->AddScalar<int32_t>(1, o.body_subgraph);
      break;
    case OptionsType::kIf:
      b->AddScalar<int32_t>(0, o.then_subgraph);
      b->AddScalar<int32_t>(1, o.else_subgraph);
      break;
    case OptionsType::kDepthToSpace:
    case OptionsType::kSpaceToDepth:
      b->AddScalar<int32_t>(0, o.block_size);
      break;
    case OptionsType::kOneHot:
      b->AddScalar<int32_t>(0, o.axis);
      break;
    case OptionsType::kCumsum:
      b->AddScalar<uint8_t>(0, o.exclusive ? 1 : 0);
      b->AddScalar<uint8_t>(1, o.reverse ? 1 : 0);
      break;
    case OptionsType::kArgMax:
    case OptionsType::kArgMin:
      b->AddScalar<int8_t>(0, o.arg_output_type);
      break;
    case OptionsType::kMirrorPad:
      b->AddScalar<int8_t>(0, o.mirror_mode);
      break;
    case OptionsType::kShape:
      b->AddScalar<int8_t>(0, o.shape_out_type);
      break;
    case OptionsType::kL2Norm:
      b->AddScalar<int8_t>(0, act);
      break;
    default:
      break;
  }
  return b->EndTable();
}

// Writes one subgraph's tensors and operators; its constants get buffers appended to `buffers`
// and its operator codes join `codes`.
Offset WriteSubGraph(Builder* bp, const SubGraphDef& graph, std::vector<Offset>* buffers,
                     std::map<std::pair<int32_t, int32_t>, uint32_t>* code_index,
                     std::vector<std::pair<int32_t, int32_t>>* codes) {
  Builder& b = *bp;
  const size_t nt = graph.tensors.size();
  std::vector<uint32_t> tensor_buffer(nt, 0);
  for (size_t i = 0; i < nt; ++i) {
    const TensorDef& t = graph.tensors[i];
    if (t.data == nullptr || t.data_size == 0) continue;
    const Offset data = b.CreateVector(t.data, t.data_size, 1, 16);
    b.StartTable();
    b.AddOffset(0, data);
    tensor_buffer[i] = static_cast<uint32_t>(buffers->size());
    buffers->push_back(b.EndTable());
  }
  std::vector<Offset> tensors;
  for (size_t i = 0; i < nt; ++i) {
    const TensorDef& t = graph.tensors[i];
    const Offset shape = b.CreateVector(t.shape.data(), t.shape.size(), 4);
    const Offset signature =
        t.shape_signature.empty()
            ? 0
            : b.CreateVector(t.shape_signature.data(), t.shape_signature.size(), 4);
    const Offset name = b.CreateString(t.name);
    Offset quant = 0;
    if (!t.quant.empty()) {
      const Offset scale = b.CreateVector(t.quant.scale.data(), t.quant.scale.size(), 4);
      const Offset zp = b.CreateVector(t.quant.zero_point.data(), t.quant.zero_point.size(), 8, 8);
      b.StartTable();
      b.AddOffset(2, scale);
      b.AddOffset(3, zp);
      b.AddScalar<int32_t>(6, t.quant.quantized_dimension);
      quant = b.EndTable();
    }
    b.StartTable();
    b.AddOffset(0, shape);
    b.AddScalar<int8_t>(1, static_cast<int8_t>(t.type));
    b.AddScalar<uint32_t>(2, tensor_buffer[i]);
    b.AddOffset(3, name);
    b.AddOffset(4, quant);
    if (t.is_variable) b.AddScalar<bool>(5, true);
    if (signature != 0) b.AddOffset(7, signature);
    tensors.push_back(b.EndTable());
  }
  std::vector<Offset> ops;
  for (const OperatorDef& op : graph.operators) {
    const auto key = std::make_pair(static_cast<int32_t>(op.op), op.version);
    auto it = code_index->find(key);
    if (it == code_index->end()) {
      it = code_index->emplace(key, static_cast<uint32_t>(codes->size())).first;
      codes->push_back(key);
    }
    const Offset ins = b.CreateVector(op.inputs.data(), op.inputs.size(), 4);
    const Offset outs = b.CreateVector(op.outputs.data(), op.outputs.size(), 4);
    const OptionsType ot = BuiltinOptionsType(op.op);
    const Offset opts = ot == OptionsType::kNone ? 0 : WriteOptions(&b, op);
    b.StartTable();
    b.AddScalar<uint32_t>(0, it->second);
    b.AddOffset(1, ins);
    b.AddOffset(2, outs);
    if (ot != OptionsType::kNone) {
      b.AddScalar<uint8_t>(3, static_cast<uint8_t>(ot));
      b.AddOffset(4, opts);
    }
    ops.push_back(b.EndTable());
  }
  const Offset tensors_vec = b.CreateOffsetVector(tensors);
  const Offset inputs = b.CreateVector(graph.inputs.data(), graph.inputs.size(), 4);
  const Offset outputs = b.CreateVector(graph.outputs.data(), graph.outputs.size(), 4);
  const Offset ops_vec = b.CreateOffsetVector(ops);
  const Offset sg_name = b.CreateString(graph.name.empty() ? "main" : graph.name);
  b.StartTable();
  b.AddOffset(0, tensors_vec);
  b.AddOffset(1, inputs);
  b.AddOffset(2, outputs);
  b.AddOffset(3, ops_vec);
  b.AddOffset(4, sg_name);
  return b.EndTable();
}

}  // namespace

StatusOr<std::vector<uint8_t>> WriteModel(const SubGraphDef& graph,
                                          const std::string& description) {
  for (size_t i = 0; i < graph.operators.size(); ++i) {
    const BuiltinOp op = graph.operators[i].op;
    if (op == BuiltinOp::kWhile || op == BuiltinOp::kIf) {
      return errors::InvalidArgument(
          "WriteModel: operator " + std::to_string(i) + " (" +
          BuiltinOpName(static_cast<int32_t>(op)) +
          ") runs other subgraphs; write the model with WriteModel(subgraphs) to include them");
    }
  }
  return WriteModel(std::vector<SubGraphDef>{graph}, description);
}

StatusOr<std::vector<uint8_t>> WriteModel(const std::vector<SubGraphDef>& graphs,
                                          const std::string& description) {
  if (graphs.empty()) return errors::InvalidArgument("WriteModel: no subgraphs");
  Builder b;
  // Buffers: 0 is the empty sentinel, then one per constant tensor.
  std::vector<Offset> buffers;
  {
    b.StartTable();
    buffers.push_back(b.EndTable());
  }
  std::map<std::pair<int32_t, int32_t>, uint32_t> code_index;
  std::vector<std::pair<int32_t, int32_t>> codes;
  std::vector<Offset> subgraph_tables;
  for (const SubGraphDef& g : graphs) {
    subgraph_tables.push_back(WriteSubGraph(&b, g, &buffers, &code_index, &codes));
  }

  std::vector<Offset> code_tables;
  for (const auto& c : codes) {
    b.StartTable();
    b.AddScalar<int8_t>(0, static_cast<int8_t>(std::min(c.first, 127)));
    b.AddScalar<int32_t>(2, c.second);
    b.AddScalar<int32_t>(3, c.first);
    code_tables.push_back(b.EndTable());
  }
  const Offset codes_vec = b.CreateOffsetVector(code_tables);
  const Offset subgraphs = b.CreateOffsetVector(subgraph_tables);
  const Offset desc = b.CreateString(description);
  const Offset buffers_vec = b.CreateOffsetVector(buffers);
  b.StartTable();
  b.AddScalar<uint32_t>(0, 3);
  b.AddOffset(1, codes_vec);
  b.AddOffset(2, subgraphs);
  b.AddOffset(3, desc);
  b.AddOffset(4, buffers_vec);
  const Offset model = b.EndTable();
  return b.Finish(model, "TFL3");
}

}  // namespace lite
}  // namespace ember
