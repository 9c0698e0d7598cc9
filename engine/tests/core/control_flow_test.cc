// While loops (src/core/control_flow.h, kernels/cpu/while_op.cc), tf.cond's Switch/Merge outside
// loops (dead tensors, Executor::RunCondNode) and TensorLists (kernels/cpu/list_ops.cc):
// hand-written v1 loops and conds, the malformed ones ember refuses, and TensorList reads
// TensorFlow answers with an error. Keras RNN models are in
// engine/testdata/graphs/ (gen_loops.py), checked against TensorFlow by test_tf_agreement.py.
#include "core/control_flow.h"

#include <map>
#include <string>
#include <vector>

#include "ember/cc/ops.h"
#include "ember/session.h"
#include "ember_test.h"

using namespace ember;
using namespace ember::ops;

namespace {

NodeDef Node(const std::string& name, const std::string& op, std::vector<std::string> inputs,
             std::map<std::string, AttrValue> attrs = {}) {
  NodeDef n;
  n.name = name;
  n.op = op;
  n.input = std::move(inputs);
  n.attr = std::move(attrs);
  return n;
}

AttrValue Str(const std::string& s) {
  AttrValue v;
  v.kind = AttrValue::Kind::kS;
  v.s = s;
  return v;
}

AttrValue TypeList(const std::vector<DataType>& types) {
  AttrValue v;
  v.kind = AttrValue::Kind::kList;
  v.list.type = types;
  return v;
}

AttrValue Bool(bool b) {
  AttrValue v;
  v.kind = AttrValue::Kind::kB;
  v.b = b;
  return v;
}

template <typename T>
NodeDef ConstNode(const std::string& name, const TensorShape& shape, std::vector<T> values,
                  std::vector<std::string> inputs = {}) {
  AttrValue value;
  value.kind = AttrValue::Kind::kTensor;
  value.tensor = Tensor::From<T>(shape, values);
  return Node(name, "Const", std::move(inputs),
              {{"value", value}, {"dtype", TypeAttr(DataTypeOf<T>::value)}});
}

NodeDef Enter(const std::string& name, const std::string& input, DataType t, bool constant) {
  return Node(name, "Enter", {input},
              {{"T", TypeAttr(t)}, {"frame_name", Str("loop")}, {"is_constant", Bool(constant)}});
}

NodeDef Typed(const std::string& name, const std::string& op, std::vector<std::string> inputs,
              DataType t) {
  return Node(name, op, std::move(inputs), {{"T", TypeAttr(t)}});
}

// acc = x; i = 0; while (i < n) { i += 1; acc *= w; }  fetch: "exit_acc", "exit_i".
std::vector<NodeDef> PowerLoop(int n) {
  const DataType f = DataType::kFloat, i32 = DataType::kInt32;
  return {
      Node("x", "Placeholder", {}, {{"dtype", TypeAttr(f)}}),
      ConstNode<int32_t>("zero", TensorShape(), {0}),
      ConstNode<int32_t>("n", TensorShape(), {n}),
      ConstNode<float>("w", TensorShape({2}), {2.0f, -0.5f}),
      Enter("enter_i", "zero", i32, false),
      Enter("enter_acc", "x", f, false),
      Enter("enter_n", "n", i32, true),
      Enter("enter_w", "w", f, true),
      Typed("merge_i", "Merge", {"enter_i", "next_i"}, i32),
      Typed("merge_acc", "Merge", {"enter_acc", "next_acc"}, f),
      Typed("less", "Less", {"merge_i", "enter_n"}, i32),
      Node("cond", "LoopCond", {"less"}),
      Typed("switch_i", "Switch", {"merge_i", "cond"}, i32),
      Typed("switch_acc", "Switch", {"merge_acc", "cond"}, f),
      Typed("exit_i", "Exit", {"switch_i"}, i32),
      Typed("exit_acc", "Exit", {"switch_acc"}, f),
      Typed("body_i", "Identity", {"switch_i:1"}, i32),
      Typed("body_acc", "Identity", {"switch_acc:1"}, f),
      ConstNode<int32_t>("one", TensorShape(), {1}, {"^body_i"}),
      Typed("add", "AddV2", {"body_i", "one"}, i32),
      Typed("mul", "Mul", {"body_acc", "enter_w"}, f),
      Typed("next_i", "NextIteration", {"add"}, i32),
      Typed("next_acc", "NextIteration", {"mul"}, f),
  };
}

GraphDef Graph(std::vector<NodeDef> nodes) {
  GraphDef g;
  g.node = std::move(nodes);
  return g;
}

NodeDef* Find(std::vector<NodeDef>* nodes, const std::string& name) {
  for (NodeDef& n : *nodes) {
    if (n.name == name) return &n;
  }
  return nullptr;
}

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

Status RunPowerLoop(const std::vector<NodeDef>& nodes, std::vector<Tensor>* out) {
  auto session = NewSession(SessionOptions());
  EMBER_RETURN_IF_ERROR(session->Create(Graph(nodes)));
  return session->Run({{"x", Tensor::From<float>(TensorShape({2}), {1.5f, 4.0f})}},
                      {"exit_acc", "exit_i"}, {}, out);
}

}  // namespace

TEST(ControlFlow, RunsAWhileLoop) {
  for (int n : {0, 1, 3}) {
    std::vector<Tensor> out;
    ASSERT_OK(RunPowerLoop(PowerLoop(n), &out));
    float a = 1.5f, b = 4.0f;
    for (int k = 0; k < n; ++k) {
      a *= 2.0f;
      b *= -0.5f;
    }
    EXPECT_EQ(out[0].data<float>()[0], a);
    EXPECT_EQ(out[0].data<float>()[1], b);
    EXPECT_EQ(out[1].data<int32_t>()[0], n);
  }
}

TEST(ControlFlow, LowersTheLoopToOneNode) {
  std::vector<NodeDef> nodes = PowerLoop(3);
  ASSERT_OK(LowerWhileLoops(&nodes));
  int whiles = 0;
  for (const NodeDef& n : nodes) {
    EXPECT_TRUE(n.op != "Enter" && n.op != "Merge" && n.op != "Switch" && n.op != "LoopCond" &&
                n.op != "NextIteration" && n.op != "Exit");
    whiles += n.op == "_EmberWhile" ? 1 : 0;
  }
  EXPECT_EQ(whiles, 1);
  // The Exits keep their names, as Identities of the loop's outputs.
  ASSERT_TRUE(Find(&nodes, "exit_acc") != nullptr);
  EXPECT_EQ(Find(&nodes, "exit_acc")->op, std::string("Identity"));
}

TEST(ControlFlow, RefusesAMergeWithoutNextIteration) {
  std::vector<NodeDef> nodes = PowerLoop(3);
  Find(&nodes, "merge_acc")->input = {"enter_acc", "enter_w"};
  std::vector<Tensor> out;
  Status s = RunPowerLoop(nodes, &out);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "Merge node 'merge_acc'"));
  EXPECT_TRUE(Contains(s.message(), "no NextIteration input"));
}

TEST(ControlFlow, RefusesAnExitOutsideEveryLoop) {
  std::vector<NodeDef> nodes = {
      Node("x", "Placeholder", {}, {{"dtype", TypeAttr(DataType::kFloat)}}),
      Typed("exit", "Exit", {"x"}, DataType::kFloat),
  };
  auto session = NewSession(SessionOptions());
  Status s = session->Create(Graph(nodes));
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "Exit node 'exit' is not inside a while loop"));
}

TEST(ControlFlow, RefusesALoopWithoutLoopCond) {
  std::vector<NodeDef> nodes = PowerLoop(3);
  Find(&nodes, "switch_i")->input = {"merge_i", "less"};
  Find(&nodes, "switch_acc")->input = {"merge_acc", "less"};
  nodes.erase(nodes.begin() + (Find(&nodes, "cond") - nodes.data()));
  std::vector<Tensor> out;
  Status s = RunPowerLoop(nodes, &out);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "while loop 'loop'"));
  EXPECT_TRUE(Contains(s.message(), "has no LoopCond node"));
}

TEST(ControlFlow, ANodeOfTheBodyCannotBeFetched) {
  // `peek` reads only loop values, so it runs in the loop's frame: it has no value after the
  // loop (TensorFlow cannot fetch it either), and the lowered graph has no such node.
  std::vector<NodeDef> nodes = PowerLoop(3);
  nodes.push_back(Typed("peek", "Identity", {"mul"}, DataType::kFloat));
  auto session = NewSession(SessionOptions());
  ASSERT_OK(session->Create(Graph(nodes)));
  std::vector<Tensor> out;
  Status s =
      session->Run({{"x", Tensor::From<float>(TensorShape({2}), {1, 1})}}, {"peek"}, {}, &out);
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_TRUE(Contains(s.message(), "peek"));
}

TEST(ControlFlow, RefusesANonConstantEnterReadOutsideItsMerge) {
  std::vector<NodeDef> nodes = PowerLoop(3);
  Find(&nodes, "mul")->input = {"body_acc", "enter_acc"};
  std::vector<Tensor> out;
  Status s = RunPowerLoop(nodes, &out);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "Enter node 'enter_acc'"));
}

TEST(ControlFlow, AnEndlessLoopStopsAtTheDeadline) {
  std::vector<NodeDef> nodes = PowerLoop(3);
  Find(&nodes, "add")->input = {"body_i", "zero_in_loop"};
  nodes.push_back(ConstNode<int32_t>("zero_in_loop", TensorShape(), {0}, {"^body_i"}));
  auto session = NewSession(SessionOptions());
  ASSERT_OK(session->Create(Graph(nodes)));
  RunOptions options;
  options.timeout_in_ms = 100;
  std::vector<Tensor> out;
  Status s = session->Run(options, {{"x", Tensor::From<float>(TensorShape({2}), {1, 1})}},
                          {"exit_i"}, {}, &out, nullptr);
  EXPECT_EQ(s.code(), Code::kDeadlineExceeded);
}

TEST(ControlFlow, UnusedVariantPlaceholdersDoNotStopAGraph) {
  std::vector<NodeDef> nodes = PowerLoop(2);
  nodes.push_back(Node("unused_control_flow_input", "Placeholder", {},
                       {{"dtype", TypeAttr(DataType::kVariant)}}));
  std::vector<Tensor> out;
  ASSERT_OK(RunPowerLoop(nodes, &out));
  EXPECT_EQ(out[1].data<int32_t>()[0], 2);
}

namespace {

// list = TensorListReserve(element_shape, 3); then the extra nodes; fetch `fetch`.
Status RunList(const Tensor& element_shape, std::vector<NodeDef> extra, const std::string& fetch,
               Tensor* out) {
  const AttrValue f = TypeAttr(DataType::kFloat);
  std::vector<NodeDef> nodes = {
      Node("shape", "Const", {},
           {{"value",
             [&] {
               AttrValue v;
               v.kind = AttrValue::Kind::kTensor;
               v.tensor = element_shape;
               return v;
             }()},
            {"dtype", TypeAttr(DataType::kInt32)}}),
      ConstNode<int32_t>("three", TensorShape(), {3}),
      ConstNode<int32_t>("i0", TensorShape(), {0}),
      ConstNode<int32_t>("i2", TensorShape(), {2}),
      ConstNode<float>("item", TensorShape({2}), {7, 8}),
      Node("list", "TensorListReserve", {"shape", "three"},
           {{"element_dtype", f}, {"shape_type", TypeAttr(DataType::kInt32)}}),
  };
  nodes.insert(nodes.end(), extra.begin(), extra.end());
  auto session = NewSession(SessionOptions());
  EMBER_RETURN_IF_ERROR(session->Create(Graph(nodes)));
  std::vector<Tensor> outs;
  EMBER_RETURN_IF_ERROR(session->Run({}, {fetch}, {}, &outs));
  *out = outs[0];
  return Status::OK();
}

NodeDef ListOp(const std::string& name, const std::string& op, std::vector<std::string> inputs) {
  return Node(name, op, std::move(inputs), {{"element_dtype", TypeAttr(DataType::kFloat)}});
}

}  // namespace

// y = p ? x * 2 : x + 1 with the pivots' control edges reaching each branch's constant, and an
// Assert(false) in the true branch: it must not run when the branch is not taken. "idx" is the
// Merge's value_index.
std::vector<NodeDef> CondGraph() {
  const DataType f = DataType::kFloat, b = DataType::kBool;
  return {
      Node("x", "Placeholder", {}, {{"dtype", TypeAttr(f)}}),
      Node("p", "Placeholder", {}, {{"dtype", TypeAttr(b)}}),
      Typed("pivot", "Switch", {"p", "p"}, b),
      Typed("pivot_t", "Identity", {"pivot:1"}, b),
      Typed("pivot_f", "Identity", {"pivot"}, b),
      Typed("sw_x", "Switch", {"x", "p"}, f),
      ConstNode<float>("two", TensorShape(), {2.0f}, {"^pivot_t"}),
      ConstNode<float>("one", TensorShape(), {1.0f}, {"^pivot_f"}),
      ConstNode<bool>("no", TensorShape(), {false}, {"^pivot_t"}),
      Node("never", "Assert", {"no", "two"}, {{"T", TypeList({f})}}),
      Node("mul", "Mul", {"sw_x:1", "two", "^never"}, {{"T", TypeAttr(f)}}),
      Typed("add", "AddV2", {"sw_x", "one"}, f),
      Node("merge", "Merge", {"add", "mul"}, {{"T", TypeAttr(f)}, {"N", IntAttr(2)}}),
      Typed("y", "Identity", {"merge"}, f),
      Node("idx", "Identity", {"merge:1"}, {{"T", TypeAttr(DataType::kInt32)}}),
  };
}

Status RunCond(const std::vector<NodeDef>& nodes, const Tensor& pred,
               const std::vector<std::string>& fetches, std::vector<Tensor>* out) {
  auto session = NewSession(SessionOptions());
  EMBER_RETURN_IF_ERROR(session->Create(Graph(nodes)));
  return session->Run({{"x", Tensor::From<float>(TensorShape({2}), {1.5f, -4.0f})}, {"p", pred}},
                      fetches, {}, out);
}

TEST(Cond, RunsTheTakenBranchOnly) {
  for (bool p : {true, false}) {
    std::vector<Tensor> out;
    // The Assert in the true branch fails when it runs: taken, it stops the step.
    Status s = RunCond(CondGraph(), Tensor::From<bool>(TensorShape(), {p}), {"y", "idx"}, &out);
    if (p) {
      EXPECT_EQ(s.code(), Code::kInvalidArgument);
      EXPECT_TRUE(Contains(s.message(), "assertion failed"));
      continue;
    }
    ASSERT_OK(s);
    EXPECT_EQ(out[0].data<float>()[0], 2.5f);
    EXPECT_EQ(out[0].data<float>()[1], -3.0f);
    EXPECT_EQ(out[1].data<int32_t>()[0], 0);
  }
  std::vector<NodeDef> nodes = CondGraph();
  Find(&nodes, "mul")->input.pop_back();  // no Assert: the true branch runs through
  std::vector<Tensor> out;
  ASSERT_OK(RunCond(nodes, Tensor::From<bool>(TensorShape(), {true}), {"y", "idx"}, &out));
  EXPECT_EQ(out[0].data<float>()[0], 3.0f);
  EXPECT_EQ(out[1].data<int32_t>()[0], 1);
}

TEST(Cond, FetchingTheUntakenBranchFails) {
  std::vector<Tensor> out;
  Status s = RunCond(CondGraph(), Tensor::From<bool>(TensorShape(), {false}), {"y", "mul"}, &out);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  // TensorFlow numbers the fetches as the session sorts them: "mul" before "y".
  EXPECT_TRUE(Contains(s.message(), "Retval[0] does not have value"));
  // Running an untaken node as a target is no error: it is dead and does nothing.
  auto session = NewSession(SessionOptions());
  ASSERT_OK(session->Create(Graph(CondGraph())));
  ASSERT_OK(session->Run({{"x", Tensor::From<float>(TensorShape({2}), {1.5f, -4.0f})},
                          {"p", Tensor::From<bool>(TensorShape(), {false})}},
                         {"y"}, {"never"}, &out));
}

TEST(Cond, ANonScalarPredicateIsRefused) {
  std::vector<Tensor> out;
  Status s = RunCond(CondGraph(), Tensor::From<bool>(TensorShape({2}), {true, false}), {"y"}, &out);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "The second input must be a scalar, but it has shape [2]"));
}

TEST(TensorList, GetItemWithUnknownElementShapeAndNothingSetFails) {
  Tensor out;
  Status s = RunList(Tensor::Scalar<int32_t>(-1),
                     {ListOp("get", "TensorListGetItem", {"list", "i0", "shape"})}, "get", &out);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(),
                       "Trying to read an uninitialized tensor but element_shape is "
                       "not fully defined: <unknown> and no list element is set."));
}

TEST(TensorList, GetItemOfAnUnsetElementTakesTheShapeOfTheSetOnes) {
  Tensor out;
  ASSERT_OK(RunList(Tensor::Scalar<int32_t>(-1),
                    {ListOp("set", "TensorListSetItem", {"list", "i2", "item"}),
                     ListOp("get", "TensorListGetItem", {"set", "i0", "shape"})},
                    "get", &out));
  EXPECT_EQ(out.shape(), TensorShape({2}));
  EXPECT_EQ(out.data<float>()[0], 0.0f);
}

TEST(TensorList, StackFillsUnsetElementsWithZeros) {
  Tensor out;
  ASSERT_OK(RunList(Tensor::From<int32_t>(TensorShape({1}), {2}),
                    {ListOp("set", "TensorListSetItem", {"list", "i2", "item"}),
                     ListOp("stack", "TensorListStack", {"set", "shape"})},
                    "stack", &out));
  EXPECT_EQ(out.shape(), TensorShape({3, 2}));
  EXPECT_EQ(out.data<float>()[0], 0.0f);
  EXPECT_EQ(out.data<float>()[4], 7.0f);
  EXPECT_EQ(out.data<float>()[5], 8.0f);
}

TEST(TensorList, SetItemOutOfRangeNamesTheIndex) {
  Tensor out;
  std::vector<NodeDef> extra = {ConstNode<int32_t>("i5", TensorShape(), {5}),
                                ListOp("set", "TensorListSetItem", {"list", "i5", "item"}),
                                ListOp("stack", "TensorListStack", {"set", "shape"})};
  Status s = RunList(Tensor::From<int32_t>(TensorShape({1}), {2}), extra, "stack", &out);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "Trying to modify element 5 in a list with 3 elements."));
}

TEST(TensorList, SetItemOfAnotherShapeFails) {
  Tensor out;
  Status s = RunList(Tensor::From<int32_t>(TensorShape({1}), {3}),
                     {ListOp("set", "TensorListSetItem", {"list", "i0", "item"})}, "set", &out);
  EXPECT_FALSE(s.ok());
}

EMBER_TEST_MAIN
