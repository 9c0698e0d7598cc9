// TF2's functional While (cond/body FunctionDefs) run through the loop kernel of frozen graphs
// (savedmodel/functional_while.h). The Keras and tf.while_loop SavedModels are in
// engine/testdata/savedmodels/ (keras_rnn, while_loop), checked by test_savedmodel.py.
#include <memory>
#include <string>
#include <vector>

#include "ember/session.h"
#include "ember_test.h"
#include "savedmodel/function_inline.h"
#include "savedmodel/savedmodel_test_util.h"

using namespace ember;
using ember::testing::Const;
using ember::testing::Func;
using ember::testing::Node;

namespace {

// (i, x) -> while (i < 3) { i += 1; x *= x_scale } with x_scale a third, unchanged, loop input.
GraphDef WhileGraph(DataType third) {
  const DataType i32 = DataType::kInt32, f = DataType::kFloat;
  FunctionDef cond;
  cond.name = "cond";
  cond.input_arg = {{"i", i32, "", "", ""}, {"x", f, "", "", ""}, {"s", third, "", "", ""}};
  cond.output_arg = {{"r", DataType::kBool, "", "", ""}};
  cond.node_def = {Const("three", Tensor::Scalar<int32_t>(3)),
                   Node("less", "Less", {"i", "three:output:0"}, i32)};
  cond.ret["r"] = "less:z:0";
  FunctionDef body;
  body.name = "body";
  body.input_arg = cond.input_arg;
  body.output_arg = {{"i2", i32, "", "", ""}, {"x2", f, "", "", ""}, {"s2", third, "", "", ""}};
  body.node_def = {Const("one", Tensor::Scalar<int32_t>(1)),
                   Node("add", "AddV2", {"i", "one:output:0"}, i32)};
  body.ret["i2"] = "add:z:0";
  body.ret["s2"] = "s";
  if (third == f) {
    body.node_def.push_back(Node("mul", "Mul", {"x", "s"}, f));
    body.ret["x2"] = "mul:z:0";
  } else {
    body.ret["x2"] = "x";
  }
  GraphDef g;
  g.library.function = {cond, body};
  NodeDef x;
  x.name = "x";
  x.op = "Placeholder";
  x.attr["dtype"] = TypeValue(f);
  NodeDef s = x;
  s.name = "s";
  s.attr["dtype"] = TypeValue(third);
  NodeDef w;
  w.name = "loop";
  w.op = "StatelessWhile";
  w.input = {"zero", "x", "s"};
  w.attr["T"].kind = AttrValue::Kind::kList;
  w.attr["T"].list.type = {i32, f, third};
  w.attr["cond"] = Func("cond");
  w.attr["body"] = Func("body");
  g.node = {Const("zero", Tensor::Scalar<int32_t>(0)), x, s, w};
  return g;
}

}  // namespace

TEST(FunctionalWhile, RunsCondAndBodyFunctions) {
  GraphDef flat;
  std::vector<std::string> roots;
  ASSERT_OK(InlineFunctionCalls(WhileGraph(DataType::kFloat), {"loop:0", "loop:1"}, InlineOptions(),
                                &flat, &roots));
  std::unique_ptr<Session> session = NewSession(SessionOptions());
  ASSERT_OK(session->Create(flat));
  std::vector<Tensor> out;
  ASSERT_OK(session->Run({{"x", Tensor::From<float>(TensorShape({2}), {1.5f, -1.0f})},
                          {"s", Tensor::From<float>(TensorShape({2}), {2.0f, 0.5f})}},
                         roots, {}, &out));
  EXPECT_EQ(out[0].data<int32_t>()[0], 3);
  EXPECT_EQ(out[1].data<float>()[0], 12.0f);
  EXPECT_EQ(out[1].data<float>()[1], -0.125f);
}

TEST(FunctionalWhile, RefusesAResourceThatIsNotAVariable) {
  GraphDef flat;
  std::vector<std::string> roots;
  Status s = InlineFunctionCalls(WhileGraph(DataType::kResource), {"loop:1"}, InlineOptions(),
                                 &flat, &roots);
  EXPECT_EQ(s.code(), Code::kUnimplemented);
  EXPECT_TRUE(s.message().find("StatelessWhile node 'loop': input 2 ('s:0')") != std::string::npos);
  EXPECT_TRUE(s.message().find("VarHandleOp") != std::string::npos);
}

TEST(FunctionalWhile, RefusesAWhileWithoutBody) {
  GraphDef g = WhileGraph(DataType::kFloat);
  g.node.back().attr.erase("body");
  GraphDef flat;
  std::vector<std::string> roots;
  Status s = InlineFunctionCalls(g, {"loop:1"}, InlineOptions(), &flat, &roots);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(s.message().find("StatelessWhile node 'loop' has no function attr 'body'") !=
              std::string::npos);
}

TEST(FunctionalWhile, RefusesABodyThatRunsItself) {
  GraphDef g = WhileGraph(DataType::kFloat);
  FunctionDef& body = g.library.function[1];
  NodeDef again = g.node.back();  // StatelessWhile(cond, body) over the body's own arguments
  again.name = "again";
  again.input = {"i", "x", "s"};
  body.node_def.push_back(again);
  body.ret["i2"] = "again:output:0";
  GraphDef flat;
  std::vector<std::string> roots;
  Status s = InlineFunctionCalls(g, {"loop:1"}, InlineOptions(), &flat, &roots);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(s.message().find("nest more than 64 deep") != std::string::npos);
}

EMBER_TEST_MAIN
