// TF2's functional If / StatelessIf lowered to Switch/Merge with both branches inlined
// (savedmodel/functional_if.h). The TensorFlow-made graphs are engine/testdata/graphs/
// cond_functional (checked against TF by test_tf_agreement.py) and the SavedModel
// engine/testdata/savedmodels/cond_module (test_savedmodel.py).
#include <map>
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

const DataType kF = DataType::kFloat;
const DataType kB = DataType::kBool;
const DataType kI = DataType::kInt32;
const DataType kR = DataType::kResource;

FunctionArg Arg(const std::string& name, DataType t) { return {name, t, "", "", ""}; }

NodeDef Placeholder(const std::string& name, DataType t) {
  NodeDef n;
  n.name = name;
  n.op = "Placeholder";
  n.attr["dtype"] = TypeValue(t);
  return n;
}

NodeDef VarOp(const std::string& name, const std::string& op, std::vector<std::string> inputs) {
  NodeDef n;
  n.name = name;
  n.op = op;
  n.input = std::move(inputs);
  n.attr["dtype"] = TypeValue(kF);
  if (op == "VarHandleOp") {
    n.attr["shape"].kind = AttrValue::Kind::kShape;
    n.attr["shared_name"].kind = AttrValue::Kind::kS;
    n.attr["shared_name"].s = name;
  }
  return n;
}

NodeDef If(const std::string& name, std::vector<std::string> inputs, std::vector<DataType> tin,
           std::vector<DataType> tout, const std::string& then_fn, const std::string& else_fn,
           const std::string& op = "StatelessIf") {
  NodeDef n;
  n.name = name;
  n.op = op;
  n.input = std::move(inputs);
  n.attr["Tcond"] = TypeValue(kB);
  n.attr["Tin"] = TypeList(tin);
  n.attr["Tout"] = TypeList(tout);
  n.attr["then_branch"] = Func(then_fn);
  n.attr["else_branch"] = Func(else_fn);
  return n;
}

FunctionDef Fn(const std::string& name, std::vector<FunctionArg> in, std::vector<FunctionArg> out,
               std::vector<NodeDef> nodes, std::map<std::string, std::string> ret) {
  FunctionDef f;
  f.name = name;
  f.input_arg = std::move(in);
  f.output_arg = std::move(out);
  f.node_def = std::move(nodes);
  f.ret = std::move(ret);
  return f;
}

// (x * 2, x) when pred, else (reshape(x, [3]), -x): the else branch fails when it runs on a
// 2-element x, so a result for one proves the untaken branch (its Consts too) stayed dead.
GraphDef BranchGraph() {
  FunctionDef then_fn =
      Fn("double_and_same", {Arg("x", kF)}, {Arg("y", kF), Arg("s", kF)},
         {Const("two", Tensor::Scalar<float>(2.0f)), Node("mul", "Mul", {"x", "two:output:0"}, kF)},
         {{"y", "mul:z:0"}, {"s", "x"}});
  NodeDef reshape = Node("reshape", "Reshape", {"x", "shape:output:0"}, kF);
  reshape.attr["Tshape"] = TypeValue(kI);
  FunctionDef else_fn = Fn("reshape_and_neg", {Arg("x", kF)}, {Arg("y", kF), Arg("s", kF)},
                           {Const("shape", Tensor::From<int32_t>(TensorShape({1}), {3})), reshape,
                            Node("neg", "Neg", {"x"}, kF)},
                           {{"y", "reshape:output:0"}, {"s", "neg:y:0"}});
  GraphDef g;
  g.library.function = {then_fn, else_fn};
  g.node = {Placeholder("x", kF), Placeholder("pred", kB),
            If("cond", {"pred", "x"}, {kF}, {kF, kF}, "double_and_same", "reshape_and_neg"),
            Node("second", "Identity", {"cond:1"}, kF)};
  return g;
}

Status Flatten(const GraphDef& g, const std::vector<std::string>& roots, GraphDef* flat,
               std::vector<std::string>* flat_roots) {
  return InlineFunctionCalls(g, roots, InlineOptions(), flat, flat_roots);
}

Status RunFlat(const GraphDef& g, const std::vector<std::pair<std::string, Tensor>>& feeds,
               const std::vector<std::string>& fetches, std::vector<Tensor>* out) {
  GraphDef flat;
  std::vector<std::string> roots;
  EMBER_RETURN_IF_ERROR(Flatten(g, fetches, &flat, &roots));
  std::unique_ptr<Session> session = NewSession(SessionOptions());
  EMBER_RETURN_IF_ERROR(session->Create(flat));
  return session->Run(feeds, roots, {}, out);
}

Tensor Floats(std::vector<float> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::From<float>(TensorShape({n}), std::move(v));
}

std::vector<float> Values(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.NumElements());
}

bool Has(const Status& s, const std::string& needle) {
  return s.message().find(needle) != std::string::npos;
}

}  // namespace

TEST(FunctionalIf, RunsTheTakenBranchOnly) {
  GraphDef g = BranchGraph();
  std::vector<Tensor> out;
  ASSERT_OK(RunFlat(g, {{"x", Floats({1.5f, -1.0f})}, {"pred", Tensor::Scalar<bool>(true)}},
                    {"cond:0", "second"}, &out));
  EXPECT_TRUE(Values(out[0]) == (std::vector<float>{3.0f, -2.0f}));
  EXPECT_TRUE(Values(out[1]) == (std::vector<float>{1.5f, -1.0f}));
  ASSERT_OK(RunFlat(g, {{"x", Floats({1.0f, 2.0f, 3.0f})}, {"pred", Tensor::Scalar<bool>(false)}},
                    {"cond:0", "second"}, &out));
  EXPECT_TRUE(Values(out[0]) == (std::vector<float>{1.0f, 2.0f, 3.0f}));
  EXPECT_TRUE(Values(out[1]) == (std::vector<float>{-1.0f, -2.0f, -3.0f}));
  // The else branch really runs when taken: it fails on a 2-element x.
  Status s = RunFlat(g, {{"x", Floats({1.0f, 2.0f})}, {"pred", Tensor::Scalar<bool>(false)}},
                     {"cond:0"}, &out);
  EXPECT_FALSE(s.ok());
}

TEST(FunctionalIf, LowersToSwitchAndMergeUnderTheIfsName) {
  GraphDef flat;
  std::vector<std::string> roots;
  ASSERT_OK(Flatten(BranchGraph(), {"cond:0", "^cond"}, &flat, &roots));
  EXPECT_EQ(roots[0], std::string("cond:0"));
  EXPECT_EQ(roots[1], std::string("^cond"));
  int switches = 0, merges = 0;
  for (const NodeDef& n : flat.node) {
    if (n.name == "cond") EXPECT_EQ(n.op, std::string("IdentityN"));
    EXPECT_TRUE(n.op != "StatelessIf" && n.op != "PartitionedCall");
    switches += n.op == "Switch";
    merges += n.op == "Merge";
  }
  EXPECT_EQ(switches, 2);  // the pivot and x
  EXPECT_EQ(merges, 3);    // two outputs and the branch-executed marker
}

TEST(FunctionalIf, NestedIfInABranch) {
  FunctionDef twice =
      Fn("twice", {Arg("x", kF)}, {Arg("y", kF)},
         {Const("two", Tensor::Scalar<float>(2.0f)), Node("mul", "Mul", {"x", "two:output:0"}, kF)},
         {{"y", "mul:z:0"}});
  FunctionDef minus_one =
      Fn("minus_one", {Arg("x", kF)}, {Arg("y", kF)},
         {Const("one", Tensor::Scalar<float>(1.0f)), Node("sub", "Sub", {"x", "one:output:0"}, kF)},
         {{"y", "sub:z:0"}});
  FunctionDef outer_then = Fn("outer_then", {Arg("q", kB), Arg("x", kF)}, {Arg("y", kF)},
                              {If("inner", {"q", "x"}, {kF}, {kF}, "twice", "minus_one"),
                               Node("id", "Identity", {"inner:output:0"}, kF)},
                              {{"y", "id:output:0"}});
  FunctionDef outer_else = Fn("outer_else", {Arg("q", kB), Arg("x", kF)}, {Arg("y", kF)},
                              {Node("neg", "Neg", {"x"}, kF)}, {{"y", "neg:y:0"}});
  GraphDef g;
  g.library.function = {twice, minus_one, outer_then, outer_else};
  g.node = {Placeholder("x", kF), Placeholder("p", kB), Placeholder("q", kB),
            If("outer", {"p", "q", "x"}, {kB, kF}, {kF}, "outer_then", "outer_else")};
  const float want[2][2] = {{-3.0f, -3.0f}, {2.0f, 6.0f}};  // [p][q] for x = 3
  for (int p = 0; p < 2; ++p) {
    for (int q = 0; q < 2; ++q) {
      std::vector<Tensor> out;
      ASSERT_OK(RunFlat(g,
                        {{"x", Floats({3.0f})},
                         {"p", Tensor::Scalar<bool>(p == 1)},
                         {"q", Tensor::Scalar<bool>(q == 1)}},
                        {"outer"}, &out));
      EXPECT_EQ(out[0].data<float>()[0], want[p][q]);
    }
  }
}

// v = 2; If(pred, v, value) with no outputs assigns value (then) or -value (else) to v; a read
// waits for it by a control edge only. A second If reads v in its then branch.
GraphDef VariableGraph() {
  NodeDef assign_then = VarOp("assign", "AssignVariableOp", {"r", "val"});
  FunctionDef set_then = Fn("set_value", {Arg("r", kR), Arg("val", kF)}, {}, {assign_then}, {});
  set_then.control_ret["assign"] = "assign";
  NodeDef assign_else = VarOp("assign", "AssignVariableOp", {"r", "neg:y:0"});
  FunctionDef set_else = Fn("set_negated", {Arg("r", kR), Arg("val", kF)}, {},
                            {Node("neg", "Neg", {"val"}, kF), assign_else}, {});
  set_else.control_ret["assign"] = "assign";
  FunctionDef scale =
      Fn("scale_by_var", {Arg("r", kR), Arg("val", kF)}, {Arg("y", kF)},
         {VarOp("read", "ReadVariableOp", {"r"}), Node("mul", "Mul", {"read:value:0", "val"}, kF)},
         {{"y", "mul:z:0"}});
  FunctionDef keep = Fn("keep", {Arg("r", kR), Arg("val", kF)}, {Arg("y", kF)}, {}, {{"y", "val"}});
  GraphDef g;
  g.library.function = {set_then, set_else, scale, keep};
  g.node = {VarOp("v", "VarHandleOp", {}),
            Const("two", Tensor::Scalar<float>(2.0f)),
            VarOp("init", "AssignVariableOp", {"v", "two"}),
            Placeholder("value", kF),
            Placeholder("pred", kB),
            If("set", {"pred", "v", "value"}, {kR, kF}, {}, "set_value", "set_negated", "If"),
            VarOp("read", "ReadVariableOp", {"v", "^set"}),
            If("use", {"pred", "v", "value"}, {kR, kF}, {kF}, "scale_by_var", "keep", "If")};
  return g;
}

TEST(FunctionalIf, ResourceArgsAndAnIfWithoutOutputs) {
  GraphDef flat;
  std::vector<std::string> roots;
  ASSERT_OK(Flatten(VariableGraph(), {"read", "use", "^init"}, &flat, &roots));
  for (const NodeDef& n : flat.node) {
    if (n.name == "set") EXPECT_EQ(n.op, std::string("NoOp"));
    // The variable reaches the branches as itself, never through a Switch.
    if (n.op == "Switch") EXPECT_TRUE(n.input[0] != "v" && n.input[0] != "v:0");
    if (n.op == "AssignVariableOp" || n.op == "ReadVariableOp") {
      EXPECT_TRUE(n.input[0] == "v" || n.input[0] == "v:0");
    }
  }
  std::unique_ptr<Session> session = NewSession(SessionOptions());
  ASSERT_OK(session->Create(flat));
  std::vector<Tensor> out;
  ASSERT_OK(session->Run({}, {}, {roots[2].substr(1)}, &out));
  ASSERT_OK(
      session->Run({{"value", Tensor::Scalar<float>(3.0f)}, {"pred", Tensor::Scalar<bool>(true)}},
                   {"use"}, {}, &out));
  EXPECT_EQ(out[0].data<float>()[0], 6.0f);  // v (2) * 3
  ASSERT_OK(
      session->Run({{"value", Tensor::Scalar<float>(5.0f)}, {"pred", Tensor::Scalar<bool>(false)}},
                   {"read"}, {}, &out));
  EXPECT_EQ(out[0].data<float>()[0], -5.0f);
  ASSERT_OK(
      session->Run({{"value", Tensor::Scalar<float>(4.0f)}, {"pred", Tensor::Scalar<bool>(true)}},
                   {"read"}, {}, &out));
  EXPECT_EQ(out[0].data<float>()[0], 4.0f);
  ASSERT_OK(
      session->Run({{"value", Tensor::Scalar<float>(3.0f)}, {"pred", Tensor::Scalar<bool>(false)}},
                   {"use"}, {}, &out));
  EXPECT_EQ(out[0].data<float>()[0], 3.0f);
}

// while (i < 3) { x = If(i < 1, x * v, x + 1); i += 1 } with v a variable passed into both.
TEST(FunctionalIf, IfInsideAWhileBody) {
  FunctionDef times_var =
      Fn("times_var", {Arg("x", kF), Arg("r", kR)}, {Arg("y", kF)},
         {VarOp("read", "ReadVariableOp", {"r"}), Node("mul", "Mul", {"x", "read:value:0"}, kF)},
         {{"y", "mul:z:0"}});
  FunctionDef plus_one = Fn(
      "plus_one", {Arg("x", kF), Arg("r", kR)}, {Arg("y", kF)},
      {Const("one", Tensor::Scalar<float>(1.0f)), Node("add", "AddV2", {"x", "one:output:0"}, kF)},
      {{"y", "add:z:0"}});
  std::vector<FunctionArg> vars = {Arg("i", kI), Arg("x", kF), Arg("v", kR)};
  FunctionDef cond = Fn("cond", vars, {Arg("r", kB)},
                        {Const("three", Tensor::Scalar<int32_t>(3)),
                         Node("less", "Less", {"i", "three:output:0"}, kI)},
                        {{"r", "less:z:0"}});
  FunctionDef body = Fn(
      "body", vars, {Arg("i2", kI), Arg("x2", kF), Arg("v2", kR)},
      {Const("one", Tensor::Scalar<int32_t>(1)), Node("first", "Less", {"i", "one:output:0"}, kI),
       If("step", {"first:z:0", "x", "v"}, {kF, kR}, {kF}, "times_var", "plus_one", "If"),
       Node("next", "AddV2", {"i", "one:output:0"}, kI)},
      {{"i2", "next:z:0"}, {"x2", "step:output:0"}, {"v2", "v"}});
  GraphDef g;
  g.library.function = {times_var, plus_one, cond, body};
  NodeDef loop;
  loop.name = "loop";
  loop.op = "While";
  loop.input = {"zero", "x", "v"};
  loop.attr["T"] = TypeList({kI, kF, kR});
  loop.attr["cond"] = Func("cond");
  loop.attr["body"] = Func("body");
  g.node = {VarOp("v", "VarHandleOp", {}),
            Const("two", Tensor::Scalar<float>(2.0f)),
            VarOp("init", "AssignVariableOp", {"v", "two"}),
            Const("zero", Tensor::Scalar<int32_t>(0)),
            Placeholder("x", kF),
            loop};
  GraphDef flat;
  std::vector<std::string> roots;
  ASSERT_OK(Flatten(g, {"loop:1", "^init"}, &flat, &roots));
  std::unique_ptr<Session> session = NewSession(SessionOptions());
  ASSERT_OK(session->Create(flat));
  std::vector<Tensor> out;
  ASSERT_OK(session->Run({}, {}, {"init"}, &out));
  ASSERT_OK(session->Run({{"x", Floats({1.5f, -1.0f})}}, {roots[0]}, {}, &out));
  EXPECT_TRUE(Values(out[0]) == (std::vector<float>{5.0f, 0.0f}));  // x*2, +1, +1
}

TEST(FunctionalIf, RefusesABranchMissingOrNotInTheLibrary) {
  GraphDef flat;
  std::vector<std::string> roots;
  GraphDef g = BranchGraph();
  g.node[2].attr.erase("else_branch");
  Status s = Flatten(g, {"cond:0"}, &flat, &roots);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Has(s, "StatelessIf node 'cond' has no function attr 'else_branch'"));
  g = BranchGraph();
  g.node[2].attr["then_branch"] = Func("nope");
  s = Flatten(g, {"cond:0"}, &flat, &roots);
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_TRUE(Has(s,
                  "StatelessIf node 'cond': its then_branch 'nope' is not in the graph's "
                  "function library"));
}

TEST(FunctionalIf, RefusesInputsOrOutputsThatDisagreeWithTinTout) {
  GraphDef flat;
  std::vector<std::string> roots;
  GraphDef g = BranchGraph();
  g.node[2].input = {"pred"};
  Status s = Flatten(g, {"cond:0"}, &flat, &roots);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Has(s,
                  "StatelessIf node 'cond' has 1 data inputs; its cond and the 1 args that "
                  "attr Tin lists make 2"));
  g = BranchGraph();
  g.node[2].attr["Tout"] = TypeList({kF});
  s = Flatten(g, {"cond:0"}, &flat, &roots);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Has(s, "then_branch 'double_and_same' has 2 outputs but attr Tout lists 1"));
  g = BranchGraph();
  g.node[2].attr["Tin"] = TypeList({kI});
  s = Flatten(g, {"cond:0"}, &flat, &roots);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Has(s, "argument 0 ('x') is float but Tin[0] is int32"));
  g = BranchGraph();
  g.node[2].attr["Tcond"] = TypeValue(kI);
  s = Flatten(g, {"cond:0"}, &flat, &roots);
  EXPECT_EQ(s.code(), Code::kUnimplemented);
  EXPECT_TRUE(Has(s, "its cond is int32"));
}

TEST(FunctionalIf, RefusesABranchThatRunsItsOwnIf) {
  GraphDef g = BranchGraph();
  FunctionDef& then_fn = g.library.function[0];
  then_fn.input_arg.push_back(Arg("p", kB));
  then_fn.node_def.push_back(
      If("again", {"p", "x", "p"}, {kF, kB}, {kF, kF}, "double_and_same", "reshape_and_neg"));
  then_fn.ret["y"] = "again:output:0";
  FunctionDef& else_fn = g.library.function[1];
  else_fn.input_arg.push_back(Arg("p", kB));
  g.node[2] =
      If("cond", {"pred", "x", "pred"}, {kF, kB}, {kF, kF}, "double_and_same", "reshape_and_neg");
  GraphDef flat;
  std::vector<std::string> roots;
  Status s = Flatten(g, {"cond:0"}, &flat, &roots);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Has(s,
                  "its then_branch 'double_and_same' runs an If of itself "
                  "(double_and_same -> double_and_same)"));
}

TEST(FunctionalIf, NamesTheNestedIfThatIsBroken) {
  GraphDef g = BranchGraph();
  FunctionDef& then_fn = g.library.function[0];
  then_fn.input_arg.push_back(Arg("p", kB));
  then_fn.node_def.push_back(
      If("inner", {"p", "x", "p"}, {kF, kB}, {kF, kF}, "reshape_and_neg", "missing_fn"));
  then_fn.ret["s"] = "inner:output:1";
  g.library.function[1].input_arg.push_back(Arg("p", kB));
  g.node[2] =
      If("cond", {"pred", "x", "pred"}, {kF, kB}, {kF, kF}, "double_and_same", "reshape_and_neg");
  GraphDef flat;
  std::vector<std::string> roots;
  Status s = Flatten(g, {"cond:0"}, &flat, &roots);
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_TRUE(Has(s, "In the then_branch 'double_and_same' of StatelessIf node 'cond'"));
  EXPECT_TRUE(Has(s, "its else_branch 'missing_fn' is not in the graph's function library"));
}

// A Session given a GraphDef with a function library inlines its calls itself, as TensorFlow's
// runs them: the If and a PartitionedCall stay fetchable (and the call feedable) by name.
TEST(SessionWithLibrary, RunsIfAndCallsWithoutFlatteningFirst) {
  GraphDef g = BranchGraph();
  NodeDef call = Node("call", "PartitionedCall", {"x"}, kF);
  call.attr.erase("T");
  call.attr["Tin"] = TypeList({kF});
  call.attr["Tout"] = TypeList({kF, kF});
  call.attr["f"] = Func("double_and_same");
  g.node.push_back(call);
  g.node.push_back(Node("after_call", "Neg", {"call"}, kF));
  std::unique_ptr<Session> session = NewSession(SessionOptions());
  ASSERT_OK(session->Create(g));
  std::vector<Tensor> out;
  ASSERT_OK(session->Run({{"x", Floats({1.5f, -1.0f})}, {"pred", Tensor::Scalar<bool>(true)}},
                         {"cond:0", "second", "call:0", "call:1", "after_call"}, {}, &out));
  ASSERT_TRUE(out.size() == 5u);
  EXPECT_TRUE(Values(out[0]) == (std::vector<float>{3.0f, -2.0f}));
  EXPECT_TRUE(Values(out[1]) == (std::vector<float>{1.5f, -1.0f}));
  EXPECT_TRUE(Values(out[2]) == (std::vector<float>{3.0f, -2.0f}));
  EXPECT_TRUE(Values(out[3]) == (std::vector<float>{1.5f, -1.0f}));
  EXPECT_TRUE(Values(out[4]) == (std::vector<float>{-3.0f, 2.0f}));
  // Feeding the call's output replaces it for its consumers, as for any node's.
  ASSERT_OK(session->Run({{"call:0", Floats({7.0f})}}, {"after_call"}, {}, &out));
  EXPECT_TRUE(Values(out[0]) == (std::vector<float>{-7.0f}));
  // The untaken-branch failure still reaches the caller.
  Status s = session->Run({{"x", Floats({1.0f, 2.0f})}, {"pred", Tensor::Scalar<bool>(false)}},
                          {"cond:0"}, {}, &out);
  EXPECT_FALSE(s.ok());
}

TEST(SessionWithLibrary, ExtendAddsFunctionsAndRefusesARedefinition) {
  GraphDef g = BranchGraph();
  GraphDef first;
  first.node = {g.node[0], g.node[1]};
  GraphDef second;
  second.node = {g.node[2], g.node[3]};
  second.library = g.library;
  std::unique_ptr<Session> session = NewSession(SessionOptions());
  ASSERT_OK(session->Create(first));
  ASSERT_OK(session->Extend(second));
  std::vector<Tensor> out;
  ASSERT_OK(session->Run({{"x", Floats({2.0f})}, {"pred", Tensor::Scalar<bool>(true)}}, {"cond:0"},
                         {}, &out));
  EXPECT_TRUE(Values(out[0]) == (std::vector<float>{4.0f}));
  GraphDef third;
  third.node = {Placeholder("y", kF)};
  third.library.function = {g.library.function[0]};
  third.library.function[0].ret["y"] = "x";
  Status s = session->Extend(third);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Has(s, "redefines 'double_and_same'"));
}

// An op ember lacks inside a called function: TensorFlow's message, naming the inlined node.
TEST(SessionWithLibrary, AnUnregisteredOpInAFunctionIsNamedAsTensorFlowNamesIt) {
  GraphDef g;
  g.library.function = {Fn("uses_unknown", {Arg("x", kF)}, {Arg("y", kF)},
                           {Node("odd", "NoSuchOpAnywhere", {"x"}, kF)}, {{"y", "odd:y:0"}})};
  NodeDef call = Node("call", "PartitionedCall", {"x"}, kF);
  call.attr.erase("T");
  call.attr["Tin"] = TypeList({kF});
  call.attr["Tout"] = TypeList({kF});
  call.attr["f"] = Func("uses_unknown");
  g.node = {Placeholder("x", kF), call};
  std::unique_ptr<Session> session = NewSession(SessionOptions());
  Status s = session->Create(g);
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_TRUE(
      Has(s, "Op type not registered 'NoSuchOpAnywhere' in binary running node 'call/odd'"));
}

TEST(SessionWithLibrary, AMissingFunctionIsNamed) {
  GraphDef g = BranchGraph();
  g.library.function.pop_back();
  std::unique_ptr<Session> session = NewSession(SessionOptions());
  Status s = session->Create(g);
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_TRUE(Has(s, "reshape_and_neg"));
}

EMBER_TEST_MAIN
