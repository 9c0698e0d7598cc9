// Inference rewrites of a Graph for one signature, the part of TensorFlow's grappler
// (constant folding into weights, the remapper's fused convolutions) that frozen Keras and
// TF1 models need to run fast:
//
//   Conv2D | DepthwiseConv2dNative | MatMul
//     -> any of BiasAdd / Add / AddV2 / Sub / Mul by per-channel constants, and
//        FusedBatchNorm(V2/V3) with is_training=false (the unfused Mul/Add form of a batch
//        norm is such a run of Mul/Add/Sub)
//     -> optionally Relu or Relu6
//
// becomes one `_EmberFusedConv2D` / `_EmberFusedDepthwiseConv2dNative` / `_EmberFusedMatMul`
// node with the scales folded into its filter and the shifts into its bias (both attrs, so the
// kernel packs them once). The fused node takes the last node's name, so fetches and consumers
// are unchanged; the replaced nodes stay in the graph and are pruned by the executor when
// nothing else needs them. A chain is left alone when one of its inner tensors is fed,
// fetched or consumed elsewhere, or has control edges. A Conv2D or DepthwiseConv2dNative with
// VALID or EXPLICIT padding whose image is a zero Pad (Pad, or PadV2 by 0) of its height and
// width, read by nothing else, is fused with it, the Pad's amounts becoming EXPLICIT padding
// (Keras's ZeroPadding2D before a strided convolution): the padded copy is never made.
// TensorFlow's atrous convolution (Keras's dilated Conv2D and DepthwiseConv2D), a
// SpaceToBatchND by a constant block, a VALID stride-1 undilated convolution and a
// BatchToSpaceND by the same block whose crops are at most the paddings, becomes one fused
// convolution dilated by the block, its EXPLICIT padding the paddings less the crops (the same
// sums, no batch of phase images); the fused kernel keeps SpaceToBatchND's check that the padded
// image fills whole blocks, with its message.
//
// Like grappler's dependency optimizer, it also drops control edges from inert nodes: a Const,
// or an Identity or NoOp fed only by such nodes. A frozen TF2 function ends in a NoOp that
// waits on every variable read (an Identity of a Const once frozen) and gates the fetches by a
// control edge; without the edge the executor prunes them all.
#ifndef EMBER_CORE_GRAPH_OPTIMIZER_H_
#define EMBER_CORE_GRAPH_OPTIMIZER_H_

#include <memory>
#include <string>
#include <vector>

#include "core/graph.h"
#include "ember/status.h"

namespace ember {

struct OptimizerStats {
  int fused = 0;                  // chains replaced by one fused node
  int folded_nodes = 0;           // nodes those chains absorbed (head included)
  int dropped_control_edges = 0;  // control edges from inert nodes (Const, Identity, NoOp)
};

// Rewrites `graph` for a step that feeds `feeds` and fetches `fetches` (tensor names) and runs
// `targets` (node names). `*out` is `graph` itself when nothing was rewritten. Fails only when
// the rewritten graph does not build (a bug); a chain whose constants cannot be evaluated is
// skipped.
Status OptimizeGraphForInference(const std::shared_ptr<const Graph>& graph,
                                 const std::vector<std::string>& feeds,
                                 const std::vector<std::string>& fetches,
                                 const std::vector<std::string>& targets,
                                 std::shared_ptr<const Graph>* out,
                                 OptimizerStats* stats = nullptr);

}  // namespace ember

#endif  // EMBER_CORE_GRAPH_OPTIMIZER_H_
