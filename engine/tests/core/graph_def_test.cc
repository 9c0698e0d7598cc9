// GraphDef loading: binary wire format (packed/unpacked, fills, unknown fields), JSON mapping,
// and malformed inputs that must fail cleanly.
#include "ember/graph_def.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "core/wire_format.h"
#include "ember_test.h"

using namespace ember;

namespace {
std::string Bytes(std::initializer_list<int> b) {
  std::string s;
  for (int x : b) s.push_back(static_cast<char>(x));
  return s;
}

// A Const node whose float tensor has shape [4] and the given TensorProto payload bytes.
std::string ConstNode(const std::string& name, const std::string& tensor_fields) {
  wire::Writer shape_dim, shape, tensor, attr_value, entry, dtype_value, dtype_entry, node;
  shape_dim.VarintField(1, 4);
  shape.BytesField(2, shape_dim.buffer());
  tensor.VarintField(1, 1);  // DT_FLOAT
  tensor.BytesField(2, shape.buffer());
  tensor.buffer() += tensor_fields;
  attr_value.BytesField(8, tensor.buffer());
  entry.BytesField(1, "value");
  entry.BytesField(2, attr_value.buffer());
  dtype_value.VarintField(6, 1);
  dtype_entry.BytesField(1, "dtype");
  dtype_entry.BytesField(2, dtype_value.buffer());
  node.BytesField(1, name);
  node.BytesField(2, "Const");
  node.BytesField(5, entry.buffer());
  node.BytesField(5, dtype_entry.buffer());
  node.VarintField(99, 7);  // unknown field: skipped
  wire::Writer graph;
  graph.BytesField(1, node.buffer());
  return graph.buffer();
}

std::string FloatBits(float f) {
  std::string s(4, '\0');
  std::memcpy(&s[0], &f, 4);
  return s;
}
}  // namespace

TEST(GraphDefBinary, PackedFloatValFillsWithLastValue) {
  wire::Writer t;
  t.BytesField(5, FloatBits(1.5f) + FloatBits(2.5f));  // packed float_val
  GraphDef g;
  std::string pb = ConstNode("c", t.buffer());
  ASSERT_OK(ParseGraphDefBinary(pb.data(), pb.size(), &g));
  ASSERT_TRUE(g.node.size() == 1);
  const Tensor& v = g.node[0].attr.at("value").tensor;
  EXPECT_EQ(v.NumElements(), 4);
  EXPECT_EQ(v.data<float>()[0], 1.5f);
  EXPECT_EQ(v.data<float>()[1], 2.5f);
  EXPECT_EQ(v.data<float>()[3], 2.5f);
  EXPECT_TRUE(g.node[0].attr.at("dtype").type == DataType::kFloat);
}

TEST(GraphDefBinary, UnpackedFloatValAndTensorContent) {
  wire::Writer t;
  t.Fixed32Field(5, 0x40400000);  // 3.0f, unpacked
  GraphDef g;
  std::string pb = ConstNode("c", t.buffer());
  ASSERT_OK(ParseGraphDefBinary(pb.data(), pb.size(), &g));
  EXPECT_EQ(g.node[0].attr.at("value").tensor.data<float>()[3], 3.0f);

  wire::Writer c;
  c.BytesField(4, FloatBits(1) + FloatBits(2) + FloatBits(3) + FloatBits(4));
  pb = ConstNode("c", c.buffer());
  ASSERT_OK(ParseGraphDefBinary(pb.data(), pb.size(), &g));
  EXPECT_EQ(g.node[0].attr.at("value").tensor.data<float>()[2], 3.0f);

  wire::Writer bad;
  bad.BytesField(4, FloatBits(1));
  pb = ConstNode("c", bad.buffer());
  Status s = ParseGraphDefBinary(pb.data(), pb.size(), &g);
  EXPECT_TRUE(s.code() == Code::kInvalidArgument);
  EXPECT_TRUE(s.message().find("node 'c'") != std::string::npos);
}

TEST(GraphDefBinary, EmptyTypedFieldMeansZeros) {
  GraphDef g;
  std::string pb = ConstNode("z", "");
  ASSERT_OK(ParseGraphDefBinary(pb.data(), pb.size(), &g));
  EXPECT_EQ(g.node[0].attr.at("value").tensor.data<float>()[3], 0.0f);
}

TEST(GraphDefBinary, RoundTripThroughSerializer) {
  GraphDef g;
  NodeDef n;
  n.name = "mm";
  n.op = "MatMul";
  n.input = {"a", "b:1", "^c"};
  n.device = "/cpu:0";
  AttrValue ta;
  ta.kind = AttrValue::Kind::kB;
  ta.b = true;
  n.attr["transpose_a"] = ta;
  AttrValue list;
  list.kind = AttrValue::Kind::kList;
  list.list.i = {1, -2, 3};
  list.list.type = {DataType::kInt32};
  list.list.f = {0.5f};
  n.attr["strides"] = list;
  AttrValue shape;
  shape.kind = AttrValue::Kind::kShape;
  shape.shape.dims = {-1, 3};
  n.attr["shape"] = shape;
  AttrValue tv;
  tv.kind = AttrValue::Kind::kTensor;
  tv.tensor = Tensor::From<int64_t>({2}, {7, -8});
  n.attr["value"] = tv;
  g.node.push_back(n);
  g.producer = 1234;
  std::string pb = SerializeGraphDefBinary(g);
  GraphDef back;
  ASSERT_OK(ParseGraphDefBinary(pb.data(), pb.size(), &back));
  ASSERT_TRUE(back.node.size() == 1);
  const NodeDef& b = back.node[0];
  EXPECT_EQ(b.name, std::string("mm"));
  EXPECT_EQ(b.input.size(), 3u);
  EXPECT_EQ(b.input[2], std::string("^c"));
  EXPECT_EQ(b.device, std::string("/cpu:0"));
  EXPECT_TRUE(b.attr.at("transpose_a").b);
  EXPECT_EQ(b.attr.at("strides").list.i[1], -2);
  EXPECT_TRUE(b.attr.at("strides").list.type[0] == DataType::kInt32);
  EXPECT_EQ(b.attr.at("strides").list.f[0], 0.5f);
  EXPECT_EQ(b.attr.at("shape").shape.dims[0], -1);
  EXPECT_EQ(b.attr.at("value").tensor.data<int64_t>()[1], -8);
  EXPECT_EQ(back.producer, 1234);
}

TEST(GraphDefBinary, EveryTruncationFailsCleanly) {
  wire::Writer t;
  t.BytesField(5, FloatBits(1.5f) + FloatBits(2.5f));
  std::string pb = ConstNode("c", t.buffer());
  int failures = 0;
  for (size_t n = 0; n < pb.size(); ++n) {
    GraphDef g;
    Status s = ParseGraphDefBinary(pb.data(), n, &g);
    if (!s.ok()) {
      ++failures;
      EXPECT_TRUE(s.code() == Code::kInvalidArgument);
    }
  }
  EXPECT_TRUE(failures > 0);
  GraphDef g;
  std::string garbage = Bytes({0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01});
  EXPECT_FALSE(ParseGraphDefBinary(garbage.data(), garbage.size(), &g).ok());
  garbage = Bytes({0x0b});  // wire type 3 (group): unsupported
  EXPECT_FALSE(ParseGraphDefBinary(garbage.data(), garbage.size(), &g).ok());
}

TEST(GraphDefBinary, HugeFilledShapeIsRejected) {
  wire::Writer dim, shape, tensor, attr_value, entry, node, graph;
  dim.VarintField(1, 1ull << 40);
  shape.BytesField(2, dim.buffer());
  tensor.VarintField(1, 1);
  tensor.BytesField(2, shape.buffer());
  attr_value.BytesField(8, tensor.buffer());
  entry.BytesField(1, "value");
  entry.BytesField(2, attr_value.buffer());
  node.BytesField(1, "big");
  node.BytesField(5, entry.buffer());
  graph.BytesField(1, node.buffer());
  GraphDef g;
  Status s = ParseGraphDefBinary(graph.buffer().data(), graph.buffer().size(), &g);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(s.message().find("node 'big'") != std::string::npos);
}

TEST(GraphDefJson, ParsesMessageToJsonOutput) {
  // 1.0f, 2.0f as base64 little-endian bytes: AACAPwAAAEA=
  const char* text = R"({
    "node": [
      {"name": "a", "op": "Const",
       "attr": {"dtype": {"type": "DT_FLOAT"},
                "value": {"tensor": {"dtype": "DT_FLOAT",
                                     "tensorShape": {"dim": [{"size": "2"}]},
                                     "tensorContent": "AACAPwAAAEA="}}}},
      {"name": "b", "op": "Const",
       "attr": {"dtype": {"type": "DT_INT64"},
                "value": {"tensor": {"dtype": "DT_INT64",
                                     "tensor_shape": {"dim": [{"size": "3"}]},
                                     "int64Val": ["-5", 6]}}}},
      {"name": "p", "op": "Placeholder", "input": ["a:0", "^b"],
       "attr": {"shape": {"shape": {"dim": [{"size": "-1"}, {"size": "3"}]}},
                "strides": {"list": {"i": ["1", "2"]}},
                "padding": {"s": "U0FNRQ=="},
                "alpha": {"f": "NaN"}, "flag": {"b": true}}}
    ],
    "versions": {"producer": 27}
  })";
  GraphDef g;
  ASSERT_OK(ParseGraphDefJson(text, &g));
  ASSERT_TRUE(g.node.size() == 3);
  EXPECT_EQ(g.node[0].attr.at("value").tensor.data<float>()[1], 2.0f);
  const Tensor& b = g.node[1].attr.at("value").tensor;
  EXPECT_EQ(b.data<int64_t>()[0], -5);
  EXPECT_EQ(b.data<int64_t>()[2], 6);
  EXPECT_EQ(g.node[2].input[1], std::string("^b"));
  EXPECT_EQ(g.node[2].attr.at("shape").shape.dims[0], -1);
  EXPECT_EQ(g.node[2].attr.at("strides").list.i[1], 2);
  EXPECT_EQ(g.node[2].attr.at("padding").s, std::string("SAME"));
  EXPECT_TRUE(std::isnan(g.node[2].attr.at("alpha").f));
  EXPECT_EQ(g.producer, 27);
}

TEST(GraphDefJson, WrongShapesAreClearErrors) {
  GraphDef g;
  Status s = ParseGraphDefJson(R"({"node": {"name": "x"}})", &g);
  EXPECT_TRUE(s.code() == Code::kInvalidArgument);
  EXPECT_TRUE(s.message().find("GraphDef.node") != std::string::npos);
  s = ParseGraphDefJson(R"({"node": [{"name": "x", "opp": "Add"}]})", &g);
  EXPECT_TRUE(s.message().find("node 'x'") != std::string::npos);
  EXPECT_TRUE(s.message().find("opp") != std::string::npos);
  s = ParseGraphDefJson(R"({"node": [{"name": "x", "attr": {"T": {"type": "DT_NOPE"}}}]})", &g);
  EXPECT_TRUE(s.message().find("DT_NOPE") != std::string::npos);
  s = ParseGraphDefJson(R"({"node": [}")", &g);
  EXPECT_TRUE(s.message().find("line 1") != std::string::npos);
  s = ParseGraphDefJson(std::string(1000, '['), &g);
  EXPECT_FALSE(s.ok());
  s = ParseGraphDefJson(
      R"({"node": [{"name": "h", "attr": {"value": {"tensor": {"dtype": "DT_HALF"}}}}]})", &g);
  EXPECT_TRUE(s.code() == Code::kUnimplemented);
  EXPECT_TRUE(s.message().find("node 'h'") != std::string::npos);
  EXPECT_FALSE(ParseGraphDefJson("{} x", &g).ok());
  EXPECT_FALSE(ParseGraphDefJson(R"({"a": 1, "a": 2})", &g).ok());
}

TEST(GraphDefFile, MissingFileIsNotFound) {
  GraphDef g;
  Status s = ReadGraphDefFile("/nonexistent/model.pb", &g);
  EXPECT_TRUE(s.code() == Code::kNotFound);
  EXPECT_TRUE(s.message().find("/nonexistent/model.pb") != std::string::npos);
}

TEST(GraphDefFile, ChoosesJsonByNameOrContent) {
  std::string path = "/tmp/ember_graph_def_test_" + std::to_string(::getpid()) + ".json";
  {
    std::ofstream f(path);
    f << "[1, 2]";
  }
  GraphDef g;
  Status s = ReadGraphDefFile(path, &g);
  EXPECT_TRUE(s.code() == Code::kInvalidArgument);
  EXPECT_TRUE(s.message().find("expected a GraphDef object, got array") != std::string::npos);
  {
    std::ofstream f(path);
    f << R"(  {"node": [{"name": "n", "op": "NoOp"}]})";
  }
  ASSERT_OK(ReadGraphDefFile(path, &g));
  EXPECT_EQ(g.node.size(), 1u);
  std::remove(path.c_str());
}

EMBER_TEST_MAIN
