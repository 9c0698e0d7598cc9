// Internal kernel interface of ember lite: each builtin has a Prepare (checks types and
// shapes against the model, precomputes multipliers) and an Eval.
#ifndef EMBER_SRC_LITE_KERNELS_H_
#define EMBER_SRC_LITE_KERNELS_H_

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/aligned_vector.h"
#include "ember/lite/interpreter.h"
#include "ember/lite/schema.h"
#include "ember/status.h"
#include "lite/depthwise.h"
#include "lite/gemm_f32.h"
#include "lite/gemm_int8.h"
#include "lite/thread_pool.h"

namespace ember {
namespace lite {

struct OpTensors {
  std::vector<const TensorDef*> in;  // null for an absent optional input
  std::vector<uint8_t*> in_data;
  std::vector<const TensorDef*> out;
  std::vector<uint8_t*> out_data;
  // Run-time shapes (subgraph.cc): in_dims[i] is null unless input i is the output of a kernel
  // whose shape is only known at run time (SLICE with a run-time begin/size); out_dims[i] is where
  // such a kernel writes its output's shape, sized in Prepare.
  std::vector<const std::vector<int32_t>*> in_dims;
  std::vector<std::vector<int32_t>*> out_dims;
  template <typename T>
  const T* In(size_t i) const {
    return reinterpret_cast<const T*>(in_data[i]);
  }
  template <typename T>
  T* Out(size_t i) const {
    return reinterpret_cast<T*>(out_data[i]);
  }
};

struct SubgraphState;

// Hybrid (dynamic-range) FULLY_CONNECTED, CONV_2D and DEPTHWISE_CONV_2D (kernels_hybrid.cc):
// int8 weights, float activations quantized to int8 at every Invoke.
struct HybridParams {
  bool asymmetric = false;          // inputs quantized with a zero point (else symmetrically)
  bool per_channel = false;         // CONV_2D: LiteRT's EvalHybridPerChannel (else EvalHybrid)
  std::vector<float> weight_scale;  // per output channel
  std::vector<int32_t> row_sums;    // per output channel: the sum of its weights
  std::vector<int8_t> q;            // the quantized input
  std::vector<float> in_scale;      // per quantized batch (row for FULLY_CONNECTED)
  std::vector<int32_t> in_offset;   // per quantized batch: the input zero point
};

struct Interpreter::NodeState {
  const OperatorDef* op = nullptr;
  int index = 0;
  std::string what;  // "operator 3 (CONV_2D)" for messages
  OpTensors t;
  Status (*eval)(NodeState*) = nullptr;
  ThreadPool* pool = nullptr;  // the interpreter's; kernels split their work over it
  int threads = 1;             // pool->num_threads(): per-thread scratch is sized for this many

  // Shared precomputed parameters (each op uses what it needs).
  float f_min = 0, f_max = 0;
  int32_t act_min = -128, act_max = 127;
  int32_t in_zp = 0, in2_zp = 0, out_zp = 0;
  int32_t multiplier = 0;
  int shift = 0;
  int32_t m1 = 0, m2 = 0;
  int s1 = 0, s2 = 0;
  int left_shift = 0;
  std::vector<int32_t> multipliers;
  std::vector<int> shifts;
  std::vector<int32_t> bias;     // int8 path: bias + input offset correction folded in
  std::vector<int32_t> bias_u8;  // same for the VNNI path (activations offset by 128)
  PackedWeights packed;          // VNNI-packed weights when the CPU has them
  bool vnni = false;
  bool add_avx2 = false;      // int8 ADD on AddI8Avx2 (same shapes, AVX2 without AVX-512 VNNI)
  bool sum_rescale = false;   // int8 SUM whose output is quantized unlike its input
  int gemm_rows = 1;          // int8 CONV_2D on GemmI16: output rows per GEMM
  bool im2col_widen = false;  // and its im2col widened as it is gathered (Im2ColRowWidenI8)
  // int8 3x3 DEPTHWISE_CONV_2D on DepthwiseRowsI8Fused (AVX2 without VNNI), its constants.
  bool dw_fused_avx2 = false;
  DepthwiseFusedI8 dw_fused;
  bool mean_rows = false;  // MEAN over consecutive axes, not the last: [outer, inner, depth] input
  bool softmax_vbmi = false;  // int8 SOFTMAX: outputs per difference on AVX-512 VBMI
  // int8 MUL whose other input is an int8 table activation of input `table_input` (swish,
  // x * sigmoid(x)): set by PrepareSubgraph before Prepare; the output is then a function of
  // that input's byte alone (EvalMulI8Table).
  const NodeState* table_producer = nullptr;
  int table_input = 0;
  // Float MUL of x (input `swish_input`) and LOGISTIC(x), swish, whose LOGISTIC output nothing
  // else reads: set by PrepareSubgraph before Prepare; the MUL computes x * sigmoid(x) from x
  // alone (EvalSwishF32) and the LOGISTIC is not run.
  bool swish = false;
  int swish_input = 0;
  AlignedVector<int8_t> scratch8;  // im2col
  AlignedVector<float> scratchf;   // float im2col: `threads` slices of scratch_slice values
  // Convolutions: state sized in Prepare, so Invoke allocates nothing. Scratch that a task
  // writes has one slice per thread (slice t at t * the stride below).
  PackedF32 packed_f32;              // float CONV_2D weights in 16-channel panels
  std::vector<int32_t> scratch32;    // int8 accumulators (int8 SOFTMAX: its exp table)
  AlignedVector<uint8_t> scratchu8;  // int8 activations offset by 128 (VNNI), then im2col slices
  size_t scratch_slice = 0;          // per-thread slice of scratchf / scratchu8 (im2col)
  size_t acc_slice = 0;              // per-thread slice of scratch32 (accumulators)
  size_t im2col_base = 0;            // where the im2col slices of scratchu8 start
  bool direct_1x1 = false;           // 1x1, stride 1: the input rows are the GEMM's rows
  // int8 CONV_2D on AVX2 CPUs without VNNI: int16 weight pairs, and per-thread slices of the
  // im2col row widened to int16 (GemmI16).
  PackedI16 w16;
  AlignedVector<int16_t> scratch16;
  size_t scratch16_slice = 0;
  // int8 3x3 DEPTHWISE_CONV_2D with VNNI: packed filter, and rows built in scratchu8 slices.
  bool dw3_vnni = false;
  Depthwise3x3Vnni dw3;
  // int8 DEPTHWISE_CONV_2D of other filter sizes up to 8x8 with VNNI (DepthwiseRowI8VnniKxK).
  bool dwk_vnni = false;
  DepthwiseKxKVnni dwk;
  // DEPTHWISE_CONV_2D with a depth multiplier M > 1: each input channel repeated M times into
  // dw_input (ic is then C * M), which the multiplier-1 rows read (kernels_conv.cc).
  int dw_expand = 1;
  AlignedVector<uint8_t> dw_input;
  // Geometry (NHWC): batches, in_h, in_w, in_c, out_h, out_w, out_c, filter_h, filter_w.
  int n = 1, ih = 0, iw = 0, ic = 0, oh = 0, ow = 0, oc = 0, kh = 1, kw = 1;
  int pad_h = 0, pad_w = 0;
  int64_t outer = 1, inner = 1, depth = 1;
  int diff_min = 0;
  std::vector<int32_t> in_shape6, in2_shape6, out_shape6;
  std::vector<int> axes;
  // Set by Prepare when the outputs' shapes are only known at run time (in t.out_dims).
  bool dynamic_out = false;
  // WHILE (cond, body) and IF (then, else): the subgraphs it runs, and the byte copies between
  // their tensors and its own, listed at Prepare (kernels_control_flow.cc).
  struct ByteCopy {
    uint8_t* dst;
    const uint8_t* src;
    size_t bytes;
  };
  std::vector<SubgraphState*> callees;
  std::vector<ByteCopy> copies[4];
  const uint8_t* flag = nullptr;  // WHILE: the cond subgraph's BOOL output
  HybridParams hybrid;
};

using NodeState = Interpreter::NodeState;

// One subgraph's run-time state: its tensors' memory (an arena of its own), and its prepared
// operators. The interpreter makes one for the main subgraph and one for each subgraph that its
// WHILE/IF operators run (subgraph.cc).
struct SubgraphState {
  const SubGraphDef* def = nullptr;
  int index = 0;
  std::string where;           // "" for the main subgraph, else "subgraph 2 " (messages)
  std::vector<uint8_t*> data;  // per tensor
  std::vector<size_t> bytes;
  std::vector<char> dynamic;  // per tensor: its shape is set at run time, in dims
  std::vector<std::vector<int32_t>> dims;
  void* arena_block = nullptr;  // what calloc returned; arena is its first 64-byte boundary
  uint8_t* arena = nullptr;
  size_t arena_bytes = 0;
  std::vector<std::unique_ptr<NodeState>> nodes;
  int callers = 0;  // WHILE/IF operators (of the subgraphs that run) that run this one
  // DEQUANTIZE of a constant is computed once (fold_dequantize.cc): its output becomes a
  // float32 constant held here, and the operator is not run. defs[i] is the tensor every
  // check and kernel sees: the model's, its folded constant, or the model's with the shape
  // RefineShapes gave it (shape_refine.cc).
  std::vector<const TensorDef*> defs;
  std::vector<std::unique_ptr<TensorDef>> folded_defs;
  std::vector<std::unique_ptr<AlignedVector<float>>> folded_data;
  // The integer tensors of shape computations RefineShapes evaluated (their operators folded).
  std::vector<std::unique_ptr<std::vector<int64_t>>> folded_ints;
  std::vector<char> folded_op;  // per operator
  bool preserve_all = false;    // InterpreterOptions::preserve_all_tensors: no operator fused away
  SubgraphState() = default;
  SubgraphState(const SubgraphState&) = delete;
  SubgraphState& operator=(const SubgraphState&) = delete;
  ~SubgraphState() { std::free(arena_block); }
};

// Makes `state->defs`, with the constant DEQUANTIZE outputs of `def` folded (fold_dequantize.cc).
Status FoldConstantDequantize(const SubGraphDef& def, SubgraphState* state);
// Evaluates the small integer tensors of shape computations (SHAPE, GATHER, PACK, ... of static
// shapes and constants) once, folding their operators into constants, and gives the tensors
// whose shape_signature leaves a dimension open the shapes their operators give them
// (shape_refine.cc); the new TensorDefs are held in folded_defs. After FoldConstantDequantize.
void RefineShapes(const SubGraphDef& def, SubgraphState* state);
// IEEE 754 binary16 to float (exact).
float HalfToFloat(uint16_t h);

// Checks `def`'s dataflow and lays out its arena (`*total` adds its size; with the options'
// max_arena_bytes a cap on it): data and bytes for every tensor, no operator prepared.
Status PlanSubgraph(const SubGraphDef& def, int index, const InterpreterOptions& options,
                    SubgraphState* state, size_t* total);
// Prepares every operator of a planned subgraph; `graphs` (by subgraph index, null for those
// that never run) gives WHILE/IF their callees, already planned.
Status PrepareSubgraph(SubgraphState* state,
                       const std::vector<std::unique_ptr<SubgraphState>>& graphs, ThreadPool* pool);
// Runs a prepared subgraph's operators in order.
inline Status RunSubgraph(SubgraphState* state) {
  for (auto& node : state->nodes) EMBER_RETURN_IF_ERROR(node->eval(node.get()));
  return Status::OK();
}

// How many tasks to split `units` independent pieces of work into, each costing about
// `cost_per_unit` multiply-adds: 1 (run inline) when the node has one thread or the work is too
// small to pay for waking the others, else a few tasks per thread so that a thread slowed by
// another process does not hold up the rest.
int TaskCount(const NodeState& node, int64_t units, int64_t cost_per_unit);
// Tests: the least work (multiply-adds) worth a task of its own; 1 splits everything.
void SetMinTaskCostForTesting(int64_t cost);

// Runs fn(task, thread) for task < tasks on the node's pool (inline when tasks <= 1).
template <typename Fn>
void RunTasks(const NodeState& node, int tasks, Fn fn) {
  if (tasks <= 1 || node.pool == nullptr) {
    for (int t = 0; t < tasks; ++t) fn(t, 0);
    return;
  }
  node.pool->Run(tasks, fn);
}

Status PrepareNode(NodeState* node);

// Helpers shared by the kernel files.
Status CheckShape(const NodeState& node, const TensorDef& t, const std::vector<int32_t>& expected,
                  const char* role);
Status CheckType(const NodeState& node, const TensorDef& t, TensorType type, const char* role);
Status NeedQuant(const NodeState& node, const TensorDef& t, const char* role);
// NeedQuant, and one scale and zero point (ops whose kernels take no per-channel parameters).
Status NeedPerTensorQuant(const NodeState& node, const TensorDef& t, const char* role);
// NeedPerTensorQuant for an int8 output that LiteRT's kernel writes on a fixed scale (and zero
// point, where one is given): `needs` names them in the refusal ("1/128 and 0").
Status NeedFixedOutputQuant(const NodeState& node, const TensorDef& out, float scale,
                            std::optional<int64_t> zero_point, const char* needs);
void FloatActivationRange(Activation act, float* lo, float* hi);
int ComputeOutSize(Padding padding, int in, int filter, int stride, int dilation);
int ComputePadding(int stride, int dilation, int in, int filter, int out);

Status PrepareFullyConnected(NodeState* node);
// Float input with int8 weights: LiteRT's hybrid kernels (kernels_hybrid.cc). The conv ones are
// called once PrepareSpatial has set the geometry.
bool IsHybrid(const NodeState& node);
Status PrepareFullyConnectedHybrid(NodeState* node);
Status PrepareConv2DHybrid(NodeState* node);
Status PrepareDepthwiseConv2DHybrid(NodeState* node);
Status PrepareConv2D(NodeState* node);
Status PrepareDepthwiseConv2D(NodeState* node);
Status PrepareAddMul(NodeState* node);
Status PrepareActivation(NodeState* node);
Status PrepareQuantize(NodeState* node);
Status PrepareDequantize(NodeState* node);
Status PrepareReshape(NodeState* node);
Status PrepareConcatenation(NodeState* node);
Status PrepareSoftmax(NodeState* node);
Status PreparePool(NodeState* node);
Status PrepareMean(NodeState* node);
// Float/int/bool ops of transformer models (kernels_misc.cc, kernels_misc_array.cc).
Status PrepareMiscUnary(NodeState* node);
Status PrepareMiscBinary(NodeState* node);
Status PrepareSelect(NodeState* node);
Status PrepareCast(NodeState* node);
Status PrepareGather(NodeState* node);
Status PrepareTranspose(NodeState* node);
Status PrepareStridedSlice(NodeState* node);
Status PrepareBatchMatMul(NodeState* node);
// PRELU (kernels_extra.cc)
Status PreparePrelu(NodeState* node);
// int8 LOGISTIC, TANH, GELU, HARD_SWISH, RSQRT, LEAKY_RELU and SQUARED_DIFFERENCE
// (kernels_int8_misc.cc); PrepareMiscUnary / PrepareMiscBinary route int8 nodes here.
Status PrepareUnaryInt8(NodeState* node);
Status PrepareSquaredDifferenceInt8(NodeState* node);
// kernels_misc_shape.cc
Status PrepareShapeCopy(NodeState* node);
Status PrepareSplit(NodeState* node);
Status PreparePack(NodeState* node);
Status PrepareTile(NodeState* node);
Status PrepareReduce(NodeState* node);
Status PreparePad(NodeState* node);
// RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR (kernels_resize.cc)
Status PrepareResize(NodeState* node);
// TRANSPOSE_CONV (kernels_transpose_conv.cc)
Status PrepareTransposeConv(NodeState* node);
// CONV_3D and CONV_3D_TRANSPOSE (kernels_conv3d.cc)
Status PrepareConv3D(NodeState* node);
Status PrepareConv3DTranspose(NodeState* node);
// SLICE, REVERSE_V2, DYNAMIC_UPDATE_SLICE, and CONCATENATION of inputs with run-time shapes
// (kernels_slice.cc)
Status PrepareSlice(NodeState* node);
Status PrepareReverse(NodeState* node);
Status PrepareDynamicUpdateSlice(NodeState* node);
Status PrepareConcatDynamic(NodeState* node);
// CUMSUM (kernels_cumsum.cc)
Status PrepareCumsum(NodeState* node);
// ARG_MAX and ARG_MIN (kernels_argminmax.cc)
Status PrepareArgMinMax(NodeState* node);
Status PrepareShape(NodeState* node);
// LOG_SOFTMAX and L2_NORMALIZATION (kernels_norm.cc)
Status PrepareLogSoftmax(NodeState* node);
Status PrepareL2Normalization(NodeState* node);
// MIRROR_PAD (kernels_mirror_pad.cc)
Status PrepareMirrorPad(NodeState* node);
// REDUCE_PROD (kernels_reduce_prod.cc)
Status PrepareReduceProd(NodeState* node);
// FULLY_CONNECTED whose weights are computed at run time (kernels_fc_runtime.cc); called by
// PrepareFullyConnected for weights that are not constant.
Status PrepareFullyConnectedRuntimeWeights(NodeState* node);
// FULLY_CONNECTED's shape checks, shared by every weights form (kernels_conv.cc).
Status FullyConnectedGeometry(NodeState* node);
// The int8 and hybrid FULLY_CONNECTED without VNNI: acc_slice, and on AVX2 CPUs the int16
// weight pairs and row buffer RunFullyConnectedInt8 uses (kernels_conv.cc).
void PrepareFullyConnectedNoVnni(NodeState* node, const int8_t* w, int n, int k);
// WHILE and IF (kernels_control_flow.cc)
Status PrepareWhile(NodeState* node);
Status PrepareIf(NodeState* node);
// DEPTH_TO_SPACE / SPACE_TO_DEPTH (kernels_depth_space.cc), TOPK_V2 (kernels_topk.cc),
// BROADCAST_TO (kernels_broadcast_to.cc), FLOOR_DIV / FLOOR_MOD (kernels_floor.cc), ONE_HOT
// (kernels_one_hot.cc), GATHER_ND / SCATTER_ND (kernels_gather_scatter_nd.cc)
Status PrepareDepthToSpace(NodeState* node);
Status PrepareSpaceToDepth(NodeState* node);
Status PrepareTopK(NodeState* node);
Status PrepareBroadcastTo(NodeState* node);
Status PrepareFloorDiv(NodeState* node);
Status PrepareFloorMod(NodeState* node);
Status PrepareOneHot(NodeState* node);
Status PrepareGatherNd(NodeState* node);
Status PrepareScatterNd(NodeState* node);
Status PrepareFill(NodeState* node);                        // kernels_fill.cc
Status PrepareUnidirectionalSequenceLstm(NodeState* node);  // kernels_lstm.cc
// SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND (kernels_space_batch.cc), and their output shape for an
// input of shape `in` (rank 3 or 4), `block` and the [M, 2] paddings / crops `pads` (flattened),
// or an INVALID_ARGUMENT naming the value at fault.
Status PrepareSpaceBatchNd(NodeState* node);
StatusOr<std::vector<int32_t>> SpaceBatchNdShape(bool to_batch, const std::vector<int32_t>& in,
                                                 const std::vector<int64_t>& block,
                                                 const std::vector<int64_t>& pads);

// out[r] = sum_i rows[r * k + i] * x[i] for r < nrows (kernels_conv.cc; vectorised for the
// ISA lite/loop_isa.h chooses).
void DotRowsInt8(const int8_t* rows, int nrows, const int8_t* x, int k, int32_t* out);

// FULLY_CONNECTED int8 rows per VNNI GEMM call (the accumulators of that many rows per thread):
// 4 where the op has that many rows (its weights then grouped for the 4-row x 4-block tile), else
// 1 (matrix-vector products, wide groups).
inline int64_t FcRowBlock(const NodeState& node) { return node.outer >= 4 ? 4 : 1; }

// The int8 FULLY_CONNECTED driver that the int8 and hybrid kernels share: the int32 sums of each
// of the node's `outer` rows of x (`inner` int8 values each) with its weights (input 1, packed
// once when node->vnni), split by blocks of columns over the node's pool. For each row r and
// column range [c0, c1) it calls emit(r, c0, c1, acc, vnni), where acc[c] is the sum for column
// c; on the VNNI path the row went in as unsigned bytes (x + 128), so acc[c] also holds 128
// times column c's weight sum, for emit to take off.
template <typename Emit>
void RunFullyConnectedInt8(NodeState* node, const int8_t* x, Emit emit) {
  constexpr int64_t kAlign = 16;
  const int k = static_cast<int>(node->inner), n = node->oc;
  if (node->vnni) {
    const PackedWeights& p = node->packed;
    const int stride = p.k4 * 4;
    uint8_t* xu = node->scratchu8.data();
    for (int64_t r = 0; r < node->outer; ++r) {
      OffsetToUnsigned(x + r * k, static_cast<size_t>(k), xu + static_cast<size_t>(r) * stride);
    }
    const int groups = p.nb / p.nr;
    const int tasks = TaskCount(*node, groups, int64_t{16} * p.nr * k * node->outer);
    RunTasks(*node, tasks, [&](int task, int thread) {
      int64_t g0, g1;
      ChunkRange(groups, tasks, task, 1, &g0, &g1);
      const int c0 = static_cast<int>(g0) * p.nr * 16;
      const int c1 = std::min(n, static_cast<int>(g1) * p.nr * 16);
      if (c0 >= c1) return;
      int32_t* acc = node->scratch32.data() + static_cast<size_t>(thread) * node->acc_slice;
      // FcRowBlock rows per GEMM call (each weight group then serves them all; one row at a
      // time streamed the weights once per row).
      const int64_t block = FcRowBlock(*node);
      for (int64_t r = 0; r < node->outer; r += block) {
        const int rows = static_cast<int>(std::min(block, node->outer - r));
        GemmVnniGroups(xu + static_cast<size_t>(r) * stride, rows, stride, p, static_cast<int>(g0),
                       static_cast<int>(g1), acc, p.nb * 16);
        for (int i = 0; i < rows; ++i) {
          emit(r + i, int64_t{c0}, int64_t{c1},
               static_cast<const int32_t*>(acc + static_cast<size_t>(i) * p.nb * 16), true);
        }
      }
    });
    return;
  }
  const int8_t* w = node->t.In<int8_t>(1);
  const PackedI16& w16 = node->w16;  // AVX2 without VNNI: rows widened to int16 once
  const int16_t* x16 = node->scratch16.data();
  if (w16.blocks > 0)
    WidenRowsI8(x, static_cast<int>(node->outer), k, k, w16.k2, node->scratch16.data());
  const int tasks = TaskCount(*node, (n + kAlign - 1) / kAlign, kAlign * k * node->outer);
  RunTasks(*node, tasks, [&](int task, int thread) {
    int64_t c0, c1;
    ChunkRange(n, tasks, task, kAlign, &c0, &c1);
    if (c0 >= c1) return;
    int32_t* acc = node->scratch32.data() + static_cast<size_t>(thread) * node->acc_slice;
    for (int64_t r = 0; r < node->outer; ++r) {
      if (w16.blocks > 0) {
        GemmI16Blocks(x16 + r * 2 * w16.k2, 1, w16, static_cast<int>(c0 / 8),
                      static_cast<int>((c1 + 7) / 8), acc, 0);
      } else {
        DotRowsInt8(w + c0 * k, static_cast<int>(c1 - c0), x + r * k, k, acc + c0);
      }
      emit(r, c0, c1, static_cast<const int32_t*>(acc), false);
    }
  });
}

}  // namespace lite
}  // namespace ember

#endif  // EMBER_SRC_LITE_KERNELS_H_
