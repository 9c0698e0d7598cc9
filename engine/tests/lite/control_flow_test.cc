// WHILE and IF: models written by hand with several subgraphs. The loop's results are checked
// against TensorFlow's semantics (loop variables swapped by the body keep both values, a loop
// whose condition is false at once returns its inputs), and every malformed control-flow
// model is refused at load or AllocateTensors with a message naming what is wrong.
#include <cstring>
#include <string>
#include <vector>

#include "ember/lite/interpreter.h"
#include "ember/lite/model.h"
#include "ember/lite/writer.h"
#include "ember_test.h"
#include "lite/lite_test_util.h"

using namespace ember::lite;
using ember::lite::testing::Contains;
using ember::lite::testing::Load;
using ember::lite::testing::MakeOp;
using ember::lite::testing::MakeTensor;
using ember::lite::testing::Run;

namespace {

const int32_t kZero = 0;
const int32_t kOne = 1;
const float kTwo = 2.0f;

// Loop variables (i, n, a, b, s), a, b, s FLOAT32 [2]:
//   while i < n: i, a, b, s = i + 1, b, a, s + a
// The body's outputs for a and b are its inputs for b and a (a swap through the body's inputs),
// n passes through unchanged.
struct LoopModel {
  std::vector<SubGraphDef> graphs;
  LoopModel() {
    SubGraphDef main;
    main.name = "main";
    main.tensors = {MakeTensor("n", TensorType::kInt32, {}),
                    MakeTensor("a", TensorType::kFloat32, {2}),
                    MakeTensor("b", TensorType::kFloat32, {2}),
                    MakeTensor("zero_i", TensorType::kInt32, {}, &kZero, 4),
                    MakeTensor("s0", TensorType::kFloat32, {2}),
                    MakeTensor("i_out", TensorType::kInt32, {}),
                    MakeTensor("n_out", TensorType::kInt32, {}),
                    MakeTensor("a_out", TensorType::kFloat32, {2}),
                    MakeTensor("b_out", TensorType::kFloat32, {2}),
                    MakeTensor("s_out", TensorType::kFloat32, {2})};
    // s0 = a - a (zeros, without a constant of the loop's shape)
    main.operators.push_back(MakeOp(BuiltinOp::kSub, {1, 1}, {4}));
    OperatorDef loop = MakeOp(BuiltinOp::kWhile, {3, 0, 1, 2, 4}, {5, 6, 7, 8, 9});
    loop.options.cond_subgraph = 1;
    loop.options.body_subgraph = 2;
    main.operators.push_back(loop);
    main.inputs = {0, 1, 2};
    main.outputs = {5, 7, 8, 9};

    SubGraphDef cond;
    cond.name = "cond";
    cond.tensors = {
        MakeTensor("i", TensorType::kInt32, {}),    MakeTensor("n", TensorType::kInt32, {}),
        MakeTensor("a", TensorType::kFloat32, {2}), MakeTensor("b", TensorType::kFloat32, {2}),
        MakeTensor("s", TensorType::kFloat32, {2}), MakeTensor("more", TensorType::kBool, {})};
    cond.operators.push_back(MakeOp(BuiltinOp::kLess, {0, 1}, {5}));
    cond.inputs = {0, 1, 2, 3, 4};
    cond.outputs = {5};

    SubGraphDef body;
    body.name = "body";
    body.tensors = {MakeTensor("i", TensorType::kInt32, {}),
                    MakeTensor("n", TensorType::kInt32, {}),
                    MakeTensor("a", TensorType::kFloat32, {2}),
                    MakeTensor("b", TensorType::kFloat32, {2}),
                    MakeTensor("s", TensorType::kFloat32, {2}),
                    MakeTensor("one", TensorType::kInt32, {}, &kOne, 4),
                    MakeTensor("i1", TensorType::kInt32, {}),
                    MakeTensor("s1", TensorType::kFloat32, {2})};
    body.operators.push_back(MakeOp(BuiltinOp::kAdd, {0, 5}, {6}));
    body.operators.push_back(MakeOp(BuiltinOp::kAdd, {4, 2}, {7}));
    body.inputs = {0, 1, 2, 3, 4};
    body.outputs = {6, 1, 3, 2, 7};
    graphs = {main, cond, body};
  }
  SubGraphDef& main() { return graphs[0]; }
  SubGraphDef& cond() { return graphs[1]; }
  SubGraphDef& body() { return graphs[2]; }
};

std::vector<uint8_t> Write(const std::vector<SubGraphDef>& graphs) {
  auto bytes = WriteModel(graphs);
  return bytes.ok() ? *bytes : std::vector<uint8_t>();
}

struct LoopResult {
  int32_t i = -1;
  float a[2] = {0, 0}, b[2] = {0, 0}, s[2] = {0, 0};
};

LoopResult RunLoop(Interpreter* in, int32_t n, const float a[2], const float b[2]) {
  std::memcpy(in->input(0).data, &n, 4);
  std::memcpy(in->input(1).data, a, 8);
  std::memcpy(in->input(2).data, b, 8);
  LoopResult r;
  EXPECT_OK(in->Invoke());
  std::memcpy(&r.i, in->output(0).data, 4);
  std::memcpy(r.a, in->output(1).data, 8);
  std::memcpy(r.b, in->output(2).data, 8);
  std::memcpy(r.s, in->output(3).data, 8);
  return r;
}

}  // namespace

TEST(LiteWhile, SwappedVariablesKeepBothValues) {
  LoopModel m;
  Run run = Load(m.graphs);
  ASSERT_OK(run.status);
  EXPECT_EQ(run.model->subgraphs().size(), size_t{3});
  Interpreter& in = *run.interp;
  const float a[2] = {1, 2}, b[2] = {10, 20};
  // 3 iterations: (a, b) = (b, a) three times, s = a + b + a.
  for (int round = 0; round < 2; ++round) {  // the second Invoke starts from the inputs again
    const LoopResult r = RunLoop(&in, 3, a, b);
    EXPECT_EQ(r.i, 3);
    EXPECT_EQ(r.a[0], 10.0f);
    EXPECT_EQ(r.a[1], 20.0f);
    EXPECT_EQ(r.b[0], 1.0f);
    EXPECT_EQ(r.b[1], 2.0f);
    EXPECT_EQ(r.s[0], 12.0f);
    EXPECT_EQ(r.s[1], 24.0f);
  }
  const LoopResult even = RunLoop(&in, 4, a, b);
  EXPECT_EQ(even.i, 4);
  EXPECT_EQ(even.a[0], 1.0f);
  EXPECT_EQ(even.b[1], 20.0f);
  EXPECT_EQ(even.s[0], 22.0f);
}

TEST(LiteWhile, ZeroIterationsReturnTheInputs) {
  LoopModel m;
  Run run = Load(m.graphs);
  ASSERT_OK(run.status);
  const float a[2] = {1, 2}, b[2] = {10, 20};
  RunLoop(run.interp.get(), 5, a, b);  // leave other values in the subgraphs' tensors first
  for (int32_t n : {0, -3}) {
    const LoopResult r = RunLoop(run.interp.get(), n, a, b);
    EXPECT_EQ(r.i, 0);
    EXPECT_EQ(r.a[0], 1.0f);
    EXPECT_EQ(r.a[1], 2.0f);
    EXPECT_EQ(r.b[0], 10.0f);
    EXPECT_EQ(r.b[1], 20.0f);
    EXPECT_EQ(r.s[0], 0.0f);
    EXPECT_EQ(r.s[1], 0.0f);
  }
}

TEST(LiteWhile, ProfilingCountsTheLoopAsOneOperator) {
  LoopModel m;
  Run run = Load(m.graphs);
  ASSERT_OK(run.status);
  run.interp->EnableProfiling(true);
  const float a[2] = {1, 2}, b[2] = {10, 20};
  RunLoop(run.interp.get(), 3, a, b);
  const auto& times = run.interp->operator_times();
  ASSERT_TRUE(times.size() == 2);
  EXPECT_TRUE(times[1].label.find("WHILE") != std::string::npos);
  EXPECT_EQ(times[1].calls, int64_t{1});
}

TEST(LiteWhile, BadSubgraphIndicesAreRefusedAtLoad) {
  for (int32_t bad : {7, -1, 0}) {
    LoopModel m;
    m.main().operators[1].options.cond_subgraph = bad;
    const ember::Status s = Load(m.graphs).status;
    EXPECT_TRUE(Contains(s, "subgraph 0 operator 1 (WHILE): cond_subgraph_index"));
  }
  LoopModel m;
  m.main().operators[1].options.body_subgraph = 3;
  EXPECT_TRUE(Contains(Load(m.graphs).status,
                       "body_subgraph_index 3 is out of range (the model has 3 subgraphs)"));
  LoopModel same;
  same.main().operators[1].options.body_subgraph = 1;
  EXPECT_TRUE(
      Contains(Load(same.graphs).status, "cond_subgraph_index and body_subgraph_index are both 1"));
}

// Appends to `g` a WHILE of (cond, body) on tensors `ins`, with outputs of their types.
void AddLoop(SubGraphDef* g, const std::vector<int32_t>& ins, int32_t cond, int32_t body) {
  OperatorDef op = MakeOp(BuiltinOp::kWhile, ins, {});
  for (int32_t i : ins) {
    const TensorDef& t = g->tensors[static_cast<size_t>(i)];
    op.outputs.push_back(static_cast<int32_t>(g->tensors.size()));
    g->tensors.push_back(MakeTensor(t.name + "_next", t.type, t.shape));
  }
  op.options.cond_subgraph = cond;
  op.options.body_subgraph = body;
  g->operators.push_back(op);
}

TEST(LiteWhile, SelfRecursiveSubgraphsAreRefused) {
  // The body runs a WHILE whose body is the body itself.
  LoopModel direct;
  AddLoop(&direct.body(), {6, 1, 2, 3, 7}, 1, 2);
  EXPECT_TRUE(
      Contains(Load(direct.graphs).status, "subgraph 2 runs itself (subgraph 2 -> subgraph 2)"));

  // Indirectly: body 2 runs a loop of body 4, which runs a loop of body 2.
  LoopModel indirect;
  AddLoop(&indirect.body(), {6, 1, 2, 3, 7}, 3, 4);
  SubGraphDef body4 = LoopModel().body();
  AddLoop(&body4, {6, 1, 2, 3, 7}, 1, 2);
  indirect.graphs.push_back(LoopModel().cond());
  indirect.graphs.push_back(body4);
  const ember::Status s = Load(indirect.graphs).status;
  EXPECT_TRUE(Contains(s, "subgraph 2 runs itself (subgraph 2 -> subgraph 4 -> subgraph 2)"));
}

TEST(LiteWhile, TwoLoopsOfOneBodyRunOneAfterTheOther) {
  // A second WHILE of the same cond and body on the first one's results (no cycle). The
  // subgraphs then have two callers: n, passed through, is copied every iteration.
  LoopModel twice;
  AddLoop(&twice.main(), {3, 0, 7, 8, 9}, 1, 2);
  twice.main().outputs = {10, 12, 13, 14};
  Run run = Load(twice.graphs);
  ASSERT_OK(run.status);
  const float a[2] = {1, 2}, b[2] = {10, 20};
  const LoopResult r = RunLoop(run.interp.get(), 3, a, b);
  // First loop: (a, b) = (b, a), s = 2a + b; the second swaps back and adds b + a + b.
  EXPECT_EQ(r.i, 3);
  EXPECT_EQ(r.a[0], 1.0f);
  EXPECT_EQ(r.b[1], 20.0f);
  EXPECT_EQ(r.s[0], 33.0f);
  EXPECT_EQ(r.s[1], 66.0f);
}

TEST(LiteWhile, MismatchedCountsAndTypesAreRefusedAtLoad) {
  LoopModel fewer;
  fewer.cond().inputs.pop_back();
  EXPECT_TRUE(Contains(Load(fewer.graphs).status,
                       "(WHILE): it has 5 inputs but cond subgraph 1's inputs has 4"));
  LoopModel outs;
  outs.body().outputs.push_back(0);
  EXPECT_TRUE(
      Contains(Load(outs.graphs).status, "it has 5 inputs but body subgraph 2's outputs has 6"));
  LoopModel op_outs;
  op_outs.main().operators[1].outputs.pop_back();
  EXPECT_TRUE(Contains(Load(op_outs.graphs).status, "the operator's outputs has 4"));
  LoopModel types;
  types.cond().tensors[2].type = TensorType::kInt32;  // a in cond
  EXPECT_TRUE(Contains(Load(types.graphs).status, "loop variable 2 is INT32 in cond"));
  LoopModel flag;
  flag.cond().outputs = {0};
  EXPECT_TRUE(Contains(Load(flag.graphs).status, "output 'i' is INT32 [], not one BOOL"));
}

TEST(LiteWhile, ShapeMismatchesAreRefusedAtAllocate) {
  // The body's s grows each iteration (CONCATENATION of s with itself): a dynamic loop.
  LoopModel grow;
  SubGraphDef& body = grow.body();
  body.tensors.push_back(MakeTensor("s_grown", TensorType::kFloat32, {4}));
  body.operators.push_back(MakeOp(BuiltinOp::kConcatenation, {7, 7}, {8}));
  body.outputs[4] = 8;
  const ember::Status s = Load(grow.graphs).status;
  EXPECT_TRUE(Contains(s, "operator 1 (WHILE): subgraph 2 output 4 's_grown' has shape [4]"));
  EXPECT_TRUE(Contains(s, "a loop whose variables change shape is not supported"));
  // The cond's copy of a has another shape than the operator's input.
  LoopModel cond_shape;
  cond_shape.cond().tensors[2].shape = {3};
  EXPECT_TRUE(Contains(Load(cond_shape.graphs).status,
                       "input 2 'a' has shape [2] but subgraph 1 tensor 'a' has shape [3]"));
}

// x FLOAT32 [2]; IF(c, x): then x * 2, else x + x + x (three subgraphs, then = 1, else = 2).
std::vector<SubGraphDef> IfModel() {
  SubGraphDef main;
  main.tensors = {MakeTensor("c", TensorType::kBool, {}),
                  MakeTensor("x", TensorType::kFloat32, {2}),
                  MakeTensor("y", TensorType::kFloat32, {2})};
  OperatorDef op = MakeOp(BuiltinOp::kIf, {0, 1}, {2});
  op.options.then_subgraph = 1;
  op.options.else_subgraph = 2;
  main.operators.push_back(op);
  main.inputs = {0, 1};
  main.outputs = {2};
  SubGraphDef then_g;
  then_g.tensors = {MakeTensor("x", TensorType::kFloat32, {2}),
                    MakeTensor("two", TensorType::kFloat32, {}, &kTwo, 4),
                    MakeTensor("y", TensorType::kFloat32, {2})};
  then_g.operators.push_back(MakeOp(BuiltinOp::kMul, {0, 1}, {2}));
  then_g.inputs = {0};
  then_g.outputs = {2};
  SubGraphDef else_g;
  else_g.tensors = {MakeTensor("x", TensorType::kFloat32, {2}),
                    MakeTensor("x2", TensorType::kFloat32, {2}),
                    MakeTensor("y", TensorType::kFloat32, {2})};
  else_g.operators.push_back(MakeOp(BuiltinOp::kAdd, {0, 0}, {1}));
  else_g.operators.push_back(MakeOp(BuiltinOp::kAdd, {1, 0}, {2}));
  else_g.inputs = {0};
  else_g.outputs = {2};
  return {main, then_g, else_g};
}

TEST(LiteIf, RunsTheBranchTheConditionPicks) {
  Run run = Load(IfModel());
  ASSERT_OK(run.status);
  Interpreter& in = *run.interp;
  const float x[2] = {1.5f, -4.0f};
  std::memcpy(in.input(1).data, x, 8);
  for (bool c : {true, false, true}) {
    in.input(0).data[0] = c ? 1 : 0;
    ASSERT_OK(in.Invoke());
    const float* y = in.output(0).as<float>();
    EXPECT_EQ(y[0], c ? 3.0f : 4.5f);
    EXPECT_EQ(y[1], c ? -8.0f : -12.0f);
  }
}

TEST(LiteIf, MismatchesAreRefused) {
  std::vector<SubGraphDef> count = IfModel();
  count[2].inputs = {0, 1};
  EXPECT_TRUE(Contains(Load(count).status,
                       "subgraph 0 operator 0 (IF): it passes 1 inputs (after the condition) but "
                       "else subgraph 2 has 2"));
  std::vector<SubGraphDef> outs = IfModel();
  outs[1].outputs = {2, 0};
  EXPECT_TRUE(Contains(Load(outs).status, "it has 1 outputs but then subgraph 1 has 2"));
  std::vector<SubGraphDef> index = IfModel();
  index[0].operators[0].options.else_subgraph = 9;
  EXPECT_TRUE(Contains(Load(index).status, "else_subgraph_index 9 is out of range"));
  std::vector<SubGraphDef> flag = IfModel();
  flag[0].tensors[0].type = TensorType::kFloat32;
  EXPECT_TRUE(Contains(Load(flag).status, "condition input 'c' is FLOAT32 [], not one BOOL"));
  std::vector<SubGraphDef> shape = IfModel();
  shape[2].tensors[2].shape = {1, 2};
  shape[2].tensors[1].shape = {1, 2};
  EXPECT_TRUE(Contains(Load(shape).status, "output 0 'y' has shape [2] but subgraph 2 tensor"));
}

TEST(LiteIf, ChainsDeeperThan64SubgraphsAreRefused) {
  // Subgraph k runs subgraph k + 1 through an IF (both branches), the last returns x.
  for (const int depth : {64, 65}) {
    std::vector<SubGraphDef> graphs;
    for (int k = 0; k < depth; ++k) {
      SubGraphDef g;
      g.tensors = {MakeTensor("c", TensorType::kBool, {}),
                   MakeTensor("x", TensorType::kFloat32, {2}),
                   MakeTensor("y", TensorType::kFloat32, {2})};
      g.inputs = {0, 1};
      g.outputs = {1};
      if (k + 1 < depth) {
        OperatorDef op = MakeOp(BuiltinOp::kIf, {0, 0, 1}, {2});
        op.options.then_subgraph = op.options.else_subgraph = k + 1;
        g.operators.push_back(op);
        g.outputs = {2};
      }
      graphs.push_back(g);
    }
    const ember::Status s = Load(graphs).status;
    if (depth == 64) {
      EXPECT_OK(s);
    } else {
      EXPECT_TRUE(Contains(s, "subgraph 0 starts a chain of 65 subgraphs"));
    }
  }
}

TEST(LiteWriter, MultiSubgraphModelsRoundTrip) {
  LoopModel m;
  auto single = WriteModel(m.main());
  EXPECT_FALSE(single.ok());
  EXPECT_TRUE(Contains(single.status(), "operator 1 (WHILE) runs other subgraphs"));
  const std::vector<uint8_t> bytes = Write(m.graphs);
  auto model = Model::FromBuffer(bytes.data(), bytes.size());
  ASSERT_OK(model.status());
  const auto& graphs = (*model)->subgraphs();
  ASSERT_TRUE(graphs.size() == 3);
  EXPECT_EQ(graphs[0].operators[1].op, BuiltinOp::kWhile);
  EXPECT_EQ(graphs[0].operators[1].options.cond_subgraph, 1);
  EXPECT_EQ(graphs[0].operators[1].options.body_subgraph, 2);
  EXPECT_EQ(graphs[2].name, std::string("body"));
  EXPECT_EQ(graphs[2].outputs, m.body().outputs);
  // Writing the loaded model again gives the same bytes.
  auto again = WriteModel(graphs);
  ASSERT_OK(again.status());
  EXPECT_TRUE(*again == bytes);
}

EMBER_TEST_MAIN
