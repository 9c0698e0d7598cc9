// The inference rewrites of core/graph_optimizer.h: which chains are fused, which are left
// alone, and that a session gives the same values with them as without (the unfused kernels
// are checked against TensorFlow elsewhere; engine/testdata/graphs/fused_chains checks the
// fused graph against TensorFlow through ember-run).
#include "core/graph_optimizer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <set>

#include "core/graph.h"
#include "ember/cc/ops.h"
#include "ember/session.h"
#include "ember_test.h"

using namespace ember;

namespace {

NodeDef Node(const std::string& name, const std::string& op, std::vector<std::string> inputs,
             std::map<std::string, AttrValue> attrs = {}) {
  NodeDef n;
  n.name = name;
  n.op = op;
  n.input = std::move(inputs);
  n.attr = std::move(attrs);
  if (op != "Const" && op != "Placeholder") n.attr["T"] = ops::TypeAttr(DT_FLOAT);
  return n;
}

AttrValue S(const std::string& s) {
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

Tensor Random(const TensorShape& shape, unsigned seed, float lo, float hi) {
  Tensor t(DataType::kFloat, shape);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (int64_t i = 0; i < t.NumElements(); ++i) t.data<float>()[i] = dist(gen);
  return t;
}

// Whether two float tensors have one shape and agree within 1e-5 absolute plus 1e-5 relative.
bool SameWithinTolerance(const Tensor& want, const Tensor& got) {
  if (!(want.shape() == got.shape())) return false;
  for (int64_t j = 0; j < want.NumElements(); ++j) {
    const float a = want.data<float>()[j], b = got.data<float>()[j];
    if (!(std::fabs(a - b) <= 1e-5f + 1e-5f * std::fabs(a))) return false;
  }
  return true;
}

NodeDef Const(const std::string& name, const Tensor& t) {
  AttrValue value;
  value.kind = AttrValue::Kind::kTensor;
  value.tensor = t;
  return Node(name, "Const", {}, {{"value", value}, {"dtype", ops::TypeAttr(t.dtype())}});
}

NodeDef Conv(const std::string& name, const std::string& op, const std::string& x,
             const std::string& w, int64_t stride) {
  return Node(name, op, {x, w},
              {{"strides", Ints({1, stride, stride, 1})}, {"padding", S("SAME")}});
}

// x [2,9,7,5] feeds:
//   conv 3x3 -> FusedBatchNormV3 (is_training false) -> Relu                 (fused)
//   depthwise 3x3 s2 mult 2 -> Mul(rsqrt(var + eps) * gamma) -> AddV2 -> Relu6 (fused)
//   conv 1x1 -> BiasAdd -> Relu, with the BiasAdd also fetched                (conv+bias only)
//   MatMul -> BiasAdd -> Relu6                                                (fused)
GraphDef TestGraph() {
  GraphDef g;
  g.node.push_back(Node("x", "Placeholder", {}, {{"dtype", ops::TypeAttr(DT_FLOAT)}}));
  g.node.push_back(Const("w1", Random(TensorShape({3, 3, 5, 6}), 1, -0.5f, 0.5f)));
  g.node.push_back(Conv("conv1", "Conv2D", "x", "w1", 1));
  g.node.push_back(Const("scale", Random(TensorShape({6}), 2, 0.5f, 1.5f)));
  g.node.push_back(Const("offset", Random(TensorShape({6}), 3, -0.5f, 0.5f)));
  g.node.push_back(Const("mean", Random(TensorShape({6}), 4, -0.5f, 0.5f)));
  g.node.push_back(Const("var", Random(TensorShape({6}), 5, 0.5f, 1.5f)));
  AttrValue no;
  no.kind = AttrValue::Kind::kB;
  no.b = false;
  AttrValue eps;
  eps.kind = AttrValue::Kind::kF;
  eps.f = 1e-3f;
  NodeDef bn = Node("bn1", "FusedBatchNormV3", {"conv1", "scale", "offset", "mean", "var"},
                    {{"is_training", no}, {"epsilon", eps}, {"U", ops::TypeAttr(DT_FLOAT)}});
  g.node.push_back(bn);
  g.node.push_back(Node("relu1", "Relu", {"bn1"}));

  g.node.push_back(Const("w2", Random(TensorShape({3, 3, 5, 2}), 6, -0.5f, 0.5f)));
  g.node.push_back(Conv("dw2", "DepthwiseConv2dNative", "x", "w2", 2));
  g.node.push_back(Const("var2", Random(TensorShape({10}), 7, 0.5f, 1.5f)));
  g.node.push_back(Const("eps2", Tensor::Scalar<float>(1e-3f)));
  g.node.push_back(Node("var2_eps", "AddV2", {"var2", "eps2"}));
  g.node.push_back(Node("rsqrt2", "Rsqrt", {"var2_eps"}));
  g.node.push_back(Const("gamma2", Random(TensorShape({10}), 8, 0.5f, 1.5f)));
  g.node.push_back(Node("mul2", "Mul", {"rsqrt2", "gamma2"}));
  g.node.push_back(Node("scaled2", "Mul", {"dw2", "mul2"}));
  g.node.push_back(Const("shift2", Random(TensorShape({1, 1, 1, 10}), 9, -0.5f, 0.5f)));
  g.node.push_back(Node("shifted2", "AddV2", {"shift2", "scaled2"}));
  g.node.push_back(Node("relu2", "Relu6", {"shifted2"}));

  g.node.push_back(Const("w3", Random(TensorShape({1, 1, 5, 4}), 10, -0.5f, 0.5f)));
  g.node.push_back(Conv("conv3", "Conv2D", "x", "w3", 1));
  g.node.push_back(Const("b3", Random(TensorShape({4}), 11, -0.5f, 0.5f)));
  g.node.push_back(Node("bias3", "BiasAdd", {"conv3", "b3"}));
  g.node.push_back(Node("relu3", "Relu", {"bias3"}));

  g.node.push_back(Const("flat_shape", Tensor::From<int32_t>(TensorShape({2}), {2, 315})));
  g.node.push_back(
      Node("flat", "Reshape", {"x", "flat_shape"}, {{"Tshape", ops::TypeAttr(DT_INT32)}}));
  g.node.push_back(Const("w4", Random(TensorShape({315, 7}), 12, -0.1f, 0.1f)));
  g.node.push_back(Node("mm4", "MatMul", {"flat", "w4"}));
  g.node.push_back(Const("b4", Random(TensorShape({7}), 13, -0.5f, 0.5f)));
  g.node.push_back(Node("bias4", "BiasAdd", {"mm4", "b4"}));
  g.node.push_back(Node("relu4", "Relu6", {"bias4"}));
  return g;
}

const std::vector<std::string> kFetches = {"relu1", "relu2", "relu3", "bias3", "relu4"};

std::vector<Tensor> RunSession(const GraphDef& g, bool optimize,
                               const std::vector<std::pair<std::string, Tensor>>& feeds,
                               int intra_threads = 1,
                               const std::vector<std::string>& fetches = kFetches) {
  SessionOptions options;
  options.optimize_graph = optimize;
  options.inter_op_parallelism_threads = -1;
  options.intra_op_parallelism_threads = intra_threads;
  std::unique_ptr<Session> session = NewSession(options);
  std::vector<Tensor> out;
  Status s = session->Create(g);
  if (s.ok()) s = session->Run(feeds, fetches, {}, &out);
  EXPECT_OK(s);
  return out;
}

// A frozen TF2 function's tail: the fetch waits (control edge) on a NoOp that waits on every
// variable read, each an Identity of a Const once frozen. Those edges order nothing and are
// dropped; an edge from a node that computes (s, a Neg of the fed x), from a fed Const, or from
// a NoOp that waits on either stays.
GraphDef FrozenTail() {
  GraphDef g;
  g.node.push_back(Node("x", "Placeholder", {}, {{"dtype", ops::TypeAttr(DT_FLOAT)}}));
  g.node.push_back(Const("c1", Tensor::Scalar<float>(3.f)));
  g.node.push_back(Node("r1", "Identity", {"c1"}));
  g.node.push_back(Const("c2", Tensor::Scalar<float>(5.f)));
  g.node.push_back(Node("r2", "Identity", {"c2"}));
  g.node.push_back(Node("r2b", "Identity", {"r2"}));
  NodeDef deps = Node("deps", "NoOp", {"^r1", "^r2b"});
  deps.attr.clear();
  g.node.push_back(deps);
  g.node.push_back(Node("y", "Mul", {"x", "r1"}));
  g.node.push_back(Node("out", "Identity", {"y", "^deps"}));
  g.node.push_back(Node("s", "Neg", {"x"}));
  g.node.push_back(Const("fed_c", Tensor::Scalar<float>(7.f)));
  NodeDef gate = Node("gate", "NoOp", {"^s", "^r1"});
  gate.attr.clear();
  g.node.push_back(gate);
  g.node.push_back(Node("out2", "Identity", {"x", "^gate", "^fed_c"}));
  return g;
}

// Zero Pads before convolutions (x [1,8,7,3]):
//   pad_a (H 1+2, W 0+1) -> conv_a VALID s2                    (fused, EXPLICIT 1,2,0,1)
//   pad_b (H 1+1, W 1+1) -> dw_b EXPLICIT (0,1,2,0) -> Relu6   (fused, EXPLICIT 1,2,3,1)
//   pad_c of the channels -> conv_c VALID                      (left alone)
//   pad_d PadV2 by 0.5 -> conv_d VALID                          (left alone)
//   pad_e -> conv_e SAME                                        (left alone)
NodeDef PadNode(const std::string& name, float value) {
  const std::string op = value == 0.f ? "Pad" : "PadV2";
  std::vector<std::string> in = {"x", name + "_amounts"};
  if (op == "PadV2") in.push_back(name + "_value");
  return Node(name, op, in, {{"Tpaddings", ops::TypeAttr(DT_INT32)}});
}

GraphDef PadGraph() {
  GraphDef g;
  g.node.push_back(Node("x", "Placeholder", {}, {{"dtype", ops::TypeAttr(DT_FLOAT)}}));
  auto pad = [&](const std::string& name, std::vector<int32_t> amounts, float value = 0.f) {
    g.node.push_back(Const(name + "_amounts", Tensor::From<int32_t>(TensorShape({4, 2}), amounts)));
    if (value != 0.f) g.node.push_back(Const(name + "_value", Tensor::Scalar<float>(value)));
    g.node.push_back(PadNode(name, value));
  };
  pad("pad_a", {0, 0, 1, 2, 0, 1, 0, 0});
  g.node.push_back(Const("wa", Random(TensorShape({3, 3, 3, 4}), 21, -0.5f, 0.5f)));
  g.node.push_back(Node("conv_a", "Conv2D", {"pad_a", "wa"},
                        {{"strides", Ints({1, 2, 2, 1})}, {"padding", S("VALID")}}));
  pad("pad_b", {0, 0, 1, 1, 1, 1, 0, 0});
  g.node.push_back(Const("wb", Random(TensorShape({3, 3, 3, 2}), 22, -0.5f, 0.5f)));
  g.node.push_back(Node("dw_b", "DepthwiseConv2dNative", {"pad_b", "wb"},
                        {{"strides", Ints({1, 1, 1, 1})},
                         {"padding", S("EXPLICIT")},
                         {"explicit_paddings", Ints({0, 0, 0, 1, 2, 0, 0, 0})}}));
  g.node.push_back(Node("relu_b", "Relu6", {"dw_b"}));
  pad("pad_c", {0, 0, 1, 1, 1, 1, 1, 0});
  g.node.push_back(Const("wc", Random(TensorShape({3, 3, 4, 2}), 23, -0.5f, 0.5f)));
  g.node.push_back(Node("conv_c", "Conv2D", {"pad_c", "wc"},
                        {{"strides", Ints({1, 1, 1, 1})}, {"padding", S("VALID")}}));
  pad("pad_d", {0, 0, 1, 1, 1, 1, 0, 0}, 0.5f);
  g.node.push_back(Node("conv_d", "Conv2D", {"pad_d", "wa"},
                        {{"strides", Ints({1, 1, 1, 1})}, {"padding", S("VALID")}}));
  pad("pad_e", {0, 0, 1, 1, 1, 1, 0, 0});
  g.node.push_back(Node("conv_e", "Conv2D", {"pad_e", "wa"},
                        {{"strides", Ints({1, 1, 1, 1})}, {"padding", S("SAME")}}));
  return g;
}

const std::vector<std::string> kPadFetches = {"conv_a", "relu_b", "conv_c", "conv_d", "conv_e"};

// Fused convolutions whose rows are 8 pixels or more read their filter rows in place from a
// zero-bordered copy of the input (conv_ops.cc, ConvInPlace) where lite's AVX-512 GEMM runs:
// every padding, stride and window shape against the unfused kernels (im2col and the
// framework's GEMM), and one thread against four bit for bit. x [2,11,19,c]:
//   a: 3x3 s1 SAME, 5 -> 6                 b: 3x3 s2 SAME (padded more after), 5 -> 16
//   c: 5x3 s1 VALID, 5 -> 8                d: 7x7 s2 SAME, 5 -> 8
//   e: 1x1 s2 VALID (not pointwise), 5 -> 24
//   f: Pad (H 1+2, W 0+1) -> 3x3 s2 VALID, folded into EXPLICIT padding, 5 -> 4 (6 x 9)
GraphDef InPlaceConvGraph(std::vector<std::string>* fetches) {
  GraphDef g;
  g.node.push_back(Node("x", "Placeholder", {}, {{"dtype", ops::TypeAttr(DT_FLOAT)}}));
  struct Layer {
    std::string name;
    int64_t kh, kw, oc, stride;
    std::string padding;
  };
  const std::vector<Layer> layers = {{"a", 3, 3, 6, 1, "SAME"},   {"b", 3, 3, 16, 2, "SAME"},
                                     {"c", 5, 3, 8, 1, "VALID"},  {"d", 7, 7, 8, 2, "SAME"},
                                     {"e", 1, 1, 24, 2, "VALID"}, {"f", 3, 3, 4, 2, "VALID"}};
  unsigned seed = 40;
  for (const Layer& l : layers) {
    std::string in = "x";
    if (l.name == "f") {
      g.node.push_back(
          Const("f_amounts", Tensor::From<int32_t>(TensorShape({4, 2}), {0, 0, 1, 2, 0, 1, 0, 0})));
      g.node.push_back(PadNode("f_pad", 0.f));
      g.node.back().input = {"x", "f_amounts"};
      in = "f_pad";
    }
    g.node.push_back(
        Const(l.name + "_w", Random(TensorShape({l.kh, l.kw, 5, l.oc}), ++seed, -0.5f, 0.5f)));
    g.node.push_back(
        Node(l.name + "_conv", "Conv2D", {in, l.name + "_w"},
             {{"strides", Ints({1, l.stride, l.stride, 1})}, {"padding", S(l.padding)}}));
    g.node.push_back(Const(l.name + "_b", Random(TensorShape({l.oc}), ++seed, -0.5f, 0.5f)));
    g.node.push_back(Node(l.name + "_bias", "BiasAdd", {l.name + "_conv", l.name + "_b"}));
    g.node.push_back(Node(l.name + "_relu", "Relu6", {l.name + "_bias"}));
    fetches->push_back(l.name + "_relu");
  }
  return g;
}

}  // namespace

TEST(GraphOptimizer, FusesChainsAndLeavesPinnedTensorsAlone) {
  GraphDef g = TestGraph();
  auto graph = std::make_shared<Graph>();
  ASSERT_OK(Graph::Build(g.node, GraphOptions(), graph.get()));
  std::shared_ptr<const Graph> optimized;
  OptimizerStats stats;
  ASSERT_OK(OptimizeGraphForInference(graph, {"x"}, kFetches, {}, &optimized, &stats));
  EXPECT_EQ(stats.fused, 4);
  // conv1+bn1+relu1, dw2+scaled2+shifted2+relu2, conv3+bias3 (bias3 is fetched),
  // mm4+bias4+relu4.
  EXPECT_EQ(stats.folded_nodes, 3 + 4 + 2 + 3);
  EXPECT_EQ(optimized->node(optimized->FindNode("relu1")).def.op, std::string("_EmberFusedConv2D"));
  EXPECT_EQ(optimized->node(optimized->FindNode("relu2")).def.op,
            std::string("_EmberFusedDepthwiseConv2dNative"));
  EXPECT_EQ(optimized->node(optimized->FindNode("bias3")).def.op, std::string("_EmberFusedConv2D"));
  EXPECT_EQ(optimized->node(optimized->FindNode("relu3")).def.op, std::string("Relu"));
  EXPECT_EQ(optimized->node(optimized->FindNode("relu4")).def.op, std::string("_EmberFusedMatMul"));
}

TEST(GraphOptimizer, LeavesFedAndFetchedInnerTensorsAlone) {
  GraphDef g = TestGraph();
  auto graph = std::make_shared<Graph>();
  ASSERT_OK(Graph::Build(g.node, GraphOptions(), graph.get()));
  std::shared_ptr<const Graph> optimized;
  OptimizerStats stats;
  ASSERT_OK(OptimizeGraphForInference(graph, {"x", "scaled2:0"}, {"relu2", "conv1", "relu1"}, {},
                                      &optimized, &stats));
  // dw2 ends at the fed scaled2 (one node: nothing fused); conv1 is fetched; mm4 and conv3
  // are still fused though nothing fetches them (the executor prunes them).
  EXPECT_EQ(stats.fused, 2);
  EXPECT_EQ(optimized->node(optimized->FindNode("relu2")).def.op, std::string("Relu6"));
  EXPECT_EQ(optimized->node(optimized->FindNode("relu1")).def.op, std::string("Relu"));
  EXPECT_EQ(optimized->node(optimized->FindNode("conv1")).def.op, std::string("Conv2D"));
}

TEST(GraphOptimizer, DropsControlEdgesFromInertNodes) {
  auto graph = std::make_shared<Graph>();
  ASSERT_OK(Graph::Build(FrozenTail().node, GraphOptions(), graph.get()));
  std::shared_ptr<const Graph> optimized;
  OptimizerStats stats;
  ASSERT_OK(
      OptimizeGraphForInference(graph, {"x", "fed_c"}, {"out", "out2"}, {}, &optimized, &stats));
  // deps: ^r1 and ^r2b; out: ^deps; gate: ^r1. Not gate's ^s, out2's ^gate or ^fed_c.
  EXPECT_EQ(stats.dropped_control_edges, 4);
  EXPECT_EQ(stats.fused, 0);
  EXPECT_TRUE(optimized->node(optimized->FindNode("out")).control_inputs.empty());
  EXPECT_TRUE(optimized->node(optimized->FindNode("deps")).control_inputs.empty());
  const ember::Node& gate = optimized->node(optimized->FindNode("gate"));
  ASSERT_TRUE(gate.control_inputs.size() == 1u);
  EXPECT_EQ(optimized->node(gate.control_inputs[0]).name(), std::string("s"));
  EXPECT_EQ(optimized->node(optimized->FindNode("out2")).control_inputs.size(), 2u);

  // Through a session: the reads no longer run; s and the gate still do; same values.
  for (bool optimize : {false, true}) {
    SessionOptions options;
    options.optimize_graph = optimize;
    std::unique_ptr<Session> session = NewSession(options);
    ASSERT_OK(session->Create(FrozenTail()));
    RunOptions traced;
    traced.trace_level = RunOptions::SOFTWARE_TRACE;
    RunMetadata md;
    std::vector<Tensor> out;
    ASSERT_OK(session->Run(
        traced, {{"x", Tensor::Scalar<float>(2.f)}, {"fed_c", Tensor::Scalar<float>(1.f)}},
        {"out", "out2"}, {}, &out, &md));
    ASSERT_TRUE(out.size() == 2u);
    EXPECT_EQ(out[0].data<float>()[0], 6.f);
    EXPECT_EQ(out[1].data<float>()[0], 2.f);
    std::set<std::string> ran;
    for (const DeviceStepStats& dev : md.step_stats.dev_stats) {
      for (const NodeExecStats& ns : dev.node_stats) ran.insert(ns.node_name);
    }
    EXPECT_EQ(ran.count("s"), 1u);
    EXPECT_EQ(ran.count("gate"), 1u);
    EXPECT_EQ(ran.count("r1"), 1u);  // y reads it
    EXPECT_EQ(ran.count("r2b") + ran.count("r2") + ran.count("c2") + ran.count("deps"),
              optimize ? 0u : 4u);
  }
}

TEST(GraphOptimizer, FoldsZeroPadsIntoConvolutions) {
  auto graph = std::make_shared<Graph>();
  ASSERT_OK(Graph::Build(PadGraph().node, GraphOptions(), graph.get()));
  std::shared_ptr<const Graph> optimized;
  OptimizerStats stats;
  ASSERT_OK(OptimizeGraphForInference(graph, {"x"}, kPadFetches, {}, &optimized, &stats));
  EXPECT_EQ(stats.fused, 2);
  EXPECT_EQ(stats.folded_nodes, 2 + 3);  // pad_a + conv_a; pad_b + dw_b + relu_b
  auto padding = [&](const std::string& name) {
    const NodeDef& def = optimized->node(optimized->FindNode(name)).def;
    std::string s = def.op + " " + def.attr.at("padding").s + " " + def.input[0];
    auto e = def.attr.find("explicit_paddings");
    if (e != def.attr.end()) {
      for (int64_t v : e->second.list.i) s += " " + std::to_string(v);
    }
    return s;
  };
  EXPECT_EQ(padding("conv_a"), std::string("_EmberFusedConv2D EXPLICIT x 0 0 1 2 0 1 0 0"));
  EXPECT_EQ(padding("relu_b"),
            std::string("_EmberFusedDepthwiseConv2dNative EXPLICIT x 0 0 1 2 3 1 0 0"));
  EXPECT_EQ(padding("conv_c"), std::string("Conv2D VALID pad_c"));
  EXPECT_EQ(padding("conv_d"), std::string("Conv2D VALID pad_d"));
  EXPECT_EQ(padding("conv_e"), std::string("Conv2D SAME pad_e"));
  // A Pad that is also fetched stays (and so does its convolution).
  ASSERT_OK(OptimizeGraphForInference(graph, {"x"}, {"conv_a", "pad_a"}, {}, &optimized, &stats));
  EXPECT_EQ(padding("conv_a"), std::string("Conv2D VALID pad_a"));

  // Values: the fused EXPLICIT kernels against the Pad and the unfused kernels.
  Tensor x = Random(TensorShape({1, 8, 7, 3}), 98, -1.f, 1.f);
  std::vector<Tensor> runs[2];
  for (int optimize = 0; optimize < 2; ++optimize) {
    SessionOptions options;
    options.optimize_graph = optimize != 0;
    std::unique_ptr<Session> session = NewSession(options);
    ASSERT_OK(session->Create(PadGraph()));
    ASSERT_OK(session->Run({{"x", x}}, kPadFetches, {}, &runs[optimize]));
  }
  for (size_t i = 0; i < kPadFetches.size(); ++i) {
    EXPECT_TRUE(SameWithinTolerance(runs[0][i], runs[1][i]));
  }
  EXPECT_TRUE(runs[1][0].shape() == TensorShape({1, 5, 3, 4}));  // (8+3-3)/2+1, (7+1-3)/2+1
  EXPECT_TRUE(runs[1][1].shape() == TensorShape({1, 9, 9, 6}));  // 8+3-2, 7+4-2
}

// TensorFlow's atrous convolutions (SpaceToBatchND -> VALID convolution -> BatchToSpaceND), x
// [1,9,8,5]:
//   a: block 2x2, paddings H 2+3, W 2+2 -> Conv2D 3x3 -> crops H 0+1 -> BiasAdd -> Relu
//      (fused: dilations 2x2, EXPLICIT 2 2 2 2, as Keras's Conv2D(dilation_rate=2, "same"))
//   b: block 3x1, no paddings -> DepthwiseConv2dNative 3x2 -> no crops (fused: dilations 3x1)
//   c: block 2x2 -> Conv2D 3x3 stride 2 -> BatchToSpaceND                  (left alone)
//   d: block 2x2, paddings H 0+1 -> Conv2D 1x1 -> crops H 1+0 (more than padded) (left alone)
namespace {
GraphDef AtrousGraph() {
  GraphDef g;
  g.node.push_back(Node("x", "Placeholder", {}, {{"dtype", ops::TypeAttr(DT_FLOAT)}}));
  auto ints = [&](const std::string& name, std::vector<int32_t> v) {
    const int64_t n = static_cast<int64_t>(v.size());
    g.node.push_back(
        Const(name, Tensor::From<int32_t>(n == 2 ? TensorShape({2}) : TensorShape({2, 2}), v)));
  };
  auto atrous = [&](const std::string& p, const std::string& op, std::vector<int32_t> block,
                    std::vector<int32_t> pads, std::vector<int32_t> crops, TensorShape filter,
                    int64_t stride) {
    ints(p + "_block", block);
    ints(p + "_pads", pads);
    ints(p + "_crops", crops);
    g.node.push_back(
        Node(p + "_s2b", "SpaceToBatchND", {"x", p + "_block", p + "_pads"},
             {{"Tblock_shape", ops::TypeAttr(DT_INT32)}, {"Tpaddings", ops::TypeAttr(DT_INT32)}}));
    g.node.push_back(Const(p + "_w", Random(filter, static_cast<unsigned>(p[0]), -0.5f, 0.5f)));
    g.node.push_back(Node(p + "_conv", op, {p + "_s2b", p + "_w"},
                          {{"strides", Ints({1, stride, stride, 1})}, {"padding", S("VALID")}}));
    g.node.push_back(
        Node(p + "_b2s", "BatchToSpaceND", {p + "_conv", p + "_block", p + "_crops"},
             {{"Tblock_shape", ops::TypeAttr(DT_INT32)}, {"Tcrops", ops::TypeAttr(DT_INT32)}}));
  };
  atrous("a", "Conv2D", {2, 2}, {2, 3, 2, 2}, {0, 1, 0, 0}, TensorShape({3, 3, 5, 6}), 1);
  g.node.push_back(Const("a_bias_v", Random(TensorShape({6}), 61, -0.5f, 0.5f)));
  g.node.push_back(Node("a_bias", "BiasAdd", {"a_b2s", "a_bias_v"}));
  g.node.push_back(Node("a_relu", "Relu", {"a_bias"}));
  atrous("b", "DepthwiseConv2dNative", {3, 1}, {0, 0, 0, 0}, {0, 0, 0, 0},
         TensorShape({3, 2, 5, 2}), 1);
  atrous("c", "Conv2D", {2, 2}, {2, 3, 2, 2}, {0, 1, 0, 0}, TensorShape({3, 3, 5, 4}), 2);
  atrous("d", "Conv2D", {2, 2}, {0, 1, 0, 0}, {1, 0, 0, 0}, TensorShape({1, 1, 5, 4}), 1);
  return g;
}
const std::vector<std::string> kAtrousFetches = {"a_relu", "b_b2s", "c_b2s", "d_b2s"};
}  // namespace

TEST(GraphOptimizer, FoldsAtrousConvolutionsIntoDilatedOnes) {
  auto graph = std::make_shared<Graph>();
  ASSERT_OK(Graph::Build(AtrousGraph().node, GraphOptions(), graph.get()));
  std::shared_ptr<const Graph> optimized;
  OptimizerStats stats;
  ASSERT_OK(OptimizeGraphForInference(graph, {"x"}, kAtrousFetches, {}, &optimized, &stats));
  EXPECT_EQ(stats.fused, 2);
  EXPECT_EQ(stats.folded_nodes, 5 + 3);  // a_s2b..a_relu; b_s2b, b_conv, b_b2s
  auto described = [&](const std::string& name) {
    const NodeDef& def = optimized->node(optimized->FindNode(name)).def;
    std::string s = def.op + " " + def.attr.at("padding").s + " " + def.input[0];
    for (const char* attr : {"dilations", "explicit_paddings", "space_to_batch"}) {
      auto e = def.attr.find(attr);
      if (e == def.attr.end()) continue;
      s += std::string(" ") + attr;
      for (int64_t v : e->second.list.i) s += " " + std::to_string(v);
    }
    return s;
  };
  EXPECT_EQ(described("a_relu"),
            std::string("_EmberFusedConv2D EXPLICIT x dilations 1 2 2 1 explicit_paddings 0 0 2 2 "
                        "2 2 0 0 space_to_batch 2 2 5 4"));
  EXPECT_EQ(described("b_b2s"), std::string("_EmberFusedDepthwiseConv2dNative EXPLICIT x dilations "
                                            "1 3 1 1 explicit_paddings 0 0 0 0 0 0 0 0 "
                                            "space_to_batch 3 1 0 0"));
  EXPECT_EQ(described("c_conv"), std::string("Conv2D VALID c_s2b"));
  EXPECT_EQ(described("d_conv"), std::string("Conv2D VALID d_s2b"));
  // A SpaceToBatchND that is also fetched stays (and so does its convolution).
  ASSERT_OK(OptimizeGraphForInference(graph, {"x"}, {"a_relu", "a_s2b"}, {}, &optimized, &stats));
  EXPECT_EQ(described("a_conv"), std::string("Conv2D VALID a_s2b"));

  // Values: the dilated fused kernels against the unfused SpaceToBatchND, convolution and
  // BatchToSpaceND.
  Tensor x = Random(TensorShape({1, 9, 8, 5}), 99, -1.f, 1.f);
  std::vector<Tensor> runs[2];
  for (int optimize = 0; optimize < 2; ++optimize) {
    SessionOptions options;
    options.optimize_graph = optimize != 0;
    std::unique_ptr<Session> session = NewSession(options);
    ASSERT_OK(session->Create(AtrousGraph()));
    ASSERT_OK(session->Run({{"x", x}}, kAtrousFetches, {}, &runs[optimize]));
    // An image whose padded height fills no whole block: the SpaceToBatchND's error either way.
    std::vector<Tensor> out;
    Status s = session->Run({{"x", Random(TensorShape({1, 10, 8, 5}), 7, -1.f, 1.f)}}, {"a_relu"},
                            {}, &out);
    EXPECT_TRUE(s.message().find("padded_shape[0]=15 is not divisible by block_shape[0]=2") !=
                std::string::npos);
  }
  for (size_t i = 0; i < kAtrousFetches.size(); ++i) {
    EXPECT_TRUE(SameWithinTolerance(runs[0][i], runs[1][i]));
  }
  EXPECT_TRUE(runs[1][0].shape() == TensorShape({1, 9, 8, 6}));
  EXPECT_TRUE(runs[1][1].shape() == TensorShape({1, 3, 7, 10}));  // 9 - 2 * 3, 8 - 1
}

// Grouped Conv2D (filter depth C / groups) in each fusion, x [2,9,7,8]:
//   conv_g1 3x3, 4 groups -> BiasAdd -> Relu                   (fused)
//   pad_g2 (H 1+1, W 1+1) -> conv_g2 VALID s2, 2 groups         (fused, EXPLICIT)
//   conv_g3 7x7, one filter per channel -> Mul -> AddV2 -> Relu6 (fused)
namespace {
GraphDef GroupedGraph() {
  GraphDef g;
  g.node.push_back(Node("x", "Placeholder", {}, {{"dtype", ops::TypeAttr(DT_FLOAT)}}));
  g.node.push_back(Const("w1", Random(TensorShape({3, 3, 2, 8}), 41, -0.5f, 0.5f)));
  g.node.push_back(Conv("conv_g1", "Conv2D", "x", "w1", 1));
  g.node.push_back(Const("b1", Random(TensorShape({8}), 42, -0.5f, 0.5f)));
  g.node.push_back(Node("bias_g1", "BiasAdd", {"conv_g1", "b1"}));
  g.node.push_back(Node("relu_g1", "Relu", {"bias_g1"}));
  g.node.push_back(Const("pad_g2_amounts",
                         Tensor::From<int32_t>(TensorShape({4, 2}), {0, 0, 1, 1, 1, 1, 0, 0})));
  g.node.push_back(
      Node("pad_g2", "Pad", {"x", "pad_g2_amounts"}, {{"Tpaddings", ops::TypeAttr(DT_INT32)}}));
  g.node.push_back(Const("w2", Random(TensorShape({3, 3, 4, 6}), 43, -0.5f, 0.5f)));
  g.node.push_back(Node("conv_g2", "Conv2D", {"pad_g2", "w2"},
                        {{"strides", Ints({1, 2, 2, 1})}, {"padding", S("VALID")}}));
  g.node.push_back(Const("w3", Random(TensorShape({7, 7, 1, 8}), 44, -0.5f, 0.5f)));
  g.node.push_back(Conv("conv_g3", "Conv2D", "x", "w3", 1));
  g.node.push_back(Const("scale3", Random(TensorShape({8}), 45, 0.5f, 1.5f)));
  g.node.push_back(Node("scaled_g3", "Mul", {"conv_g3", "scale3"}));
  g.node.push_back(Const("shift3", Random(TensorShape({8}), 46, -0.5f, 0.5f)));
  g.node.push_back(Node("shifted_g3", "AddV2", {"scaled_g3", "shift3"}));
  g.node.push_back(Node("relu_g3", "Relu6", {"shifted_g3"}));
  return g;
}
}  // namespace

TEST(GraphOptimizer, FusesGroupedConvolutions) {
  const std::vector<std::string> fetches = {"relu_g1", "conv_g2", "relu_g3"};
  auto graph = std::make_shared<Graph>();
  ASSERT_OK(Graph::Build(GroupedGraph().node, GraphOptions(), graph.get()));
  std::shared_ptr<const Graph> optimized;
  OptimizerStats stats;
  ASSERT_OK(OptimizeGraphForInference(graph, {"x"}, fetches, {}, &optimized, &stats));
  EXPECT_EQ(stats.fused, 3);
  for (const std::string& name : fetches) {
    EXPECT_EQ(optimized->node(optimized->FindNode(name)).def.op, std::string("_EmberFusedConv2D"));
  }
  Tensor x = Random(TensorShape({2, 9, 7, 8}), 47, -1.f, 1.f);
  const std::vector<Tensor> plain = RunSession(GroupedGraph(), false, {{"x", x}}, 1, fetches);
  const std::vector<Tensor> fused = RunSession(GroupedGraph(), true, {{"x", x}}, 1, fetches);
  const std::vector<Tensor> fused4 = RunSession(GroupedGraph(), true, {{"x", x}}, 4, fetches);
  const std::vector<TensorShape> shapes = {TensorShape({2, 9, 7, 8}), TensorShape({2, 5, 4, 6}),
                                           TensorShape({2, 9, 7, 8})};
  ASSERT_TRUE(plain.size() == 3 && fused.size() == 3 && fused4.size() == 3);
  for (size_t i = 0; i < fetches.size(); ++i) {
    ASSERT_TRUE(plain[i].shape() == shapes[i] && fused[i].shape() == shapes[i] &&
                fused4[i].shape() == shapes[i]);
    EXPECT_TRUE(std::memcmp(fused4[i].data<float>(), fused[i].data<float>(),
                            sizeof(float) * static_cast<size_t>(fused[i].NumElements())) == 0);
    float worst = 0.f;
    for (int64_t j = 0; j < plain[i].NumElements(); ++j) {
      const float a = plain[i].data<float>()[j], b = fused[i].data<float>()[j];
      worst = std::max(worst, std::fabs(a - b) / (1e-5f + 1e-5f * std::fabs(a)));
    }
    if (worst > 1.f) {
      std::fprintf(stderr, "%s: worst error %.3g of tolerance\n", fetches[i].c_str(), worst);
    }
    EXPECT_TRUE(worst <= 1.f);
  }
}

TEST(GraphOptimizer, SessionValuesMatchTheUnoptimizedGraph) {
  GraphDef g = TestGraph();
  Tensor x = Random(TensorShape({2, 9, 7, 5}), 99, -1.f, 1.f);
  std::vector<Tensor> plain = RunSession(g, false, {{"x", x}});
  std::vector<Tensor> fused = RunSession(g, true, {{"x", x}});
  // Four intra-op threads: a fused convolution's two images are fewer tasks than threads, so
  // each GEMM splits its output channels over the pool instead.
  std::vector<Tensor> fused4 = RunSession(g, true, {{"x", x}}, 4);
  ASSERT_TRUE(plain.size() == kFetches.size() && fused.size() == kFetches.size() &&
              fused4.size() == kFetches.size());
  for (size_t i = 0; i < kFetches.size(); ++i) {
    ASSERT_TRUE(fused4[i].shape() == fused[i].shape());
    EXPECT_TRUE(std::memcmp(fused4[i].data<float>(), fused[i].data<float>(),
                            sizeof(float) * static_cast<size_t>(fused[i].NumElements())) == 0);
  }
  for (size_t i = 0; i < kFetches.size(); ++i) {
    ASSERT_TRUE(plain[i].shape() == fused[i].shape());
    // Folding reorders float rounding: within the fixtures' tolerance (rtol 1e-5, atol 1e-5).
    bool close = true;
    for (int64_t j = 0; j < plain[i].NumElements(); ++j) {
      const float a = plain[i].data<float>()[j], b = fused[i].data<float>()[j];
      if (std::fabs(a - b) > 1e-5f + 1e-5f * std::fabs(a)) {
        std::fprintf(stderr, "%s[%lld]: %.9g fused vs %.9g\n", kFetches[i].c_str(),
                     static_cast<long long>(j), b, a);
        close = false;
        break;
      }
    }
    EXPECT_TRUE(close);
  }
  // The activations bite: some outputs are clamped at 0 and (Relu6) at 6.
  bool zero = false;
  for (int64_t j = 0; j < fused[1].NumElements(); ++j) zero |= fused[1].data<float>()[j] == 0.f;
  EXPECT_TRUE(zero);
}

EMBER_TEST_MAIN

TEST(GraphOptimizer, FusedConvolutionsReadingFilterRowsInPlace) {
  std::vector<std::string> fetches;
  const GraphDef g = InPlaceConvGraph(&fetches);
  Tensor x = Random(TensorShape({2, 11, 19, 5}), 39, -2.f, 2.f);
  const std::vector<Tensor> plain = RunSession(g, false, {{"x", x}}, 1, fetches);
  const std::vector<Tensor> fused = RunSession(g, true, {{"x", x}}, 1, fetches);
  const std::vector<Tensor> fused4 = RunSession(g, true, {{"x", x}}, 4, fetches);
  ASSERT_TRUE(plain.size() == fetches.size() && fused.size() == fetches.size() &&
              fused4.size() == fetches.size());
  const std::vector<TensorShape> shapes = {TensorShape({2, 11, 19, 6}), TensorShape({2, 6, 10, 16}),
                                           TensorShape({2, 7, 17, 8}),  TensorShape({2, 6, 10, 8}),
                                           TensorShape({2, 6, 10, 24}), TensorShape({2, 6, 9, 4})};
  for (size_t i = 0; i < fetches.size(); ++i) {
    ASSERT_TRUE(plain[i].shape() == shapes[i] && fused[i].shape() == shapes[i] &&
                fused4[i].shape() == shapes[i]);
    EXPECT_TRUE(std::memcmp(fused4[i].data<float>(), fused[i].data<float>(),
                            sizeof(float) * static_cast<size_t>(fused[i].NumElements())) == 0);
    float worst = 0.f;
    bool clamped_low = false;
    for (int64_t j = 0; j < plain[i].NumElements(); ++j) {
      const float a = plain[i].data<float>()[j], b = fused[i].data<float>()[j];
      worst = std::max(worst, std::fabs(a - b) / (1e-5f + 1e-5f * std::fabs(a)));
      clamped_low |= b == 0.f;
    }
    if (worst > 1.f)
      std::fprintf(stderr, "%s: worst error %.3g of tolerance\n", fetches[i].c_str(), worst);
    EXPECT_TRUE(worst <= 1.f);
    EXPECT_TRUE(clamped_low);  // Relu6's lower clamp bites in every layer
  }
}
