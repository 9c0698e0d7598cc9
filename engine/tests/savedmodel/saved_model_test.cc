// SavedModel loading pieces: crc32c, the LevelDB table reader, function inlining (nested calls,
// node:arg:index names, missing ops), and LoadSavedModel on the checked-in fixtures.
#include "ember/saved_model.h"

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "core/wire_format.h"
#include "ember_test.h"
#include "savedmodel/crc32c.h"
#include "savedmodel/function_inline.h"
#include "savedmodel/sstable.h"

using namespace ember;

namespace {

std::string FixtureDir(const std::string& name) {
#ifdef EMBER_SOURCE_DIR
  return std::string(EMBER_SOURCE_DIR) + "/testdata/savedmodels/" + name;
#else
  return "../testdata/savedmodels/" + name;
#endif
}

void PutLE32(std::string* s, uint32_t v) {
  char b[4];
  std::memcpy(b, &v, 4);
  s->append(b, 4);
}

// A one-data-block table holding `kv` (sorted), built from the format description.
std::string MakeTable(const std::vector<std::pair<std::string, std::string>>& kv) {
  auto block = [](const std::vector<std::pair<std::string, std::string>>& entries) {
    wire::Writer w;
    std::string prev;
    for (const auto& e : entries) {
      size_t shared = 0;
      while (shared < prev.size() && shared < e.first.size() && prev[shared] == e.first[shared])
        ++shared;
      w.Varint(shared);
      w.Varint(e.first.size() - shared);
      w.Varint(e.second.size());
      w.buffer() += e.first.substr(shared) + e.second;
      prev = e.first;
    }
    std::string b = w.buffer();
    PutLE32(&b, 0);  // restart at offset 0
    PutLE32(&b, 1);
    return b;
  };
  auto with_trailer = [](std::string* file, const std::string& b) {
    uint64_t offset = file->size();
    *file += b;
    file->push_back('\0');
    PutLE32(file, crc32c::Mask(crc32c::Value(file->data() + offset, b.size() + 1)));
    return offset;
  };
  std::string file;
  std::string data = block(kv);
  uint64_t data_off = with_trailer(&file, data);
  wire::Writer handle;
  handle.Varint(data_off);
  handle.Varint(data.size());
  std::string index = block({{kv.back().first, handle.buffer()}});
  std::string meta = block({});
  uint64_t meta_off = with_trailer(&file, meta);
  uint64_t index_off = with_trailer(&file, index);
  wire::Writer footer;
  footer.Varint(meta_off);
  footer.Varint(meta.size());
  footer.Varint(index_off);
  footer.Varint(index.size());
  std::string f = footer.buffer();
  f.resize(40, '\0');
  uint64_t magic = 0xdb4775248b80fb57ull;
  char m[8];
  std::memcpy(m, &magic, 8);
  f.append(m, 8);
  return file + f;
}

}  // namespace

TEST(Crc32c, KnownValues) {
  EXPECT_EQ(crc32c::Value("123456789", 9), 0xe3069283u);
  std::string zeros(32, '\0');
  EXPECT_EQ(crc32c::Value(zeros.data(), zeros.size()), 0x8a9136aau);
  EXPECT_EQ(crc32c::Unmask(crc32c::Mask(0x12345678u)), 0x12345678u);
}

TEST(SSTable, ReadsPrefixCompressedKeysAndRejectsCorruption) {
  std::string t = MakeTable({{"", "h"}, {"layer/bias", "1"}, {"layer/kernel", "22"}});
  std::map<std::string, std::string> kv;
  ASSERT_OK(sstable::ReadTable("t.index", t, &kv));
  EXPECT_EQ(kv.size(), 3u);
  EXPECT_EQ(kv["layer/kernel"], std::string("22"));
  std::string bad = t;
  bad[3] ^= 1;
  Status s = sstable::ReadTable("t.index", bad, &kv);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(s.message().find("t.index") != std::string::npos);
  EXPECT_TRUE(s.message().find("crc32c") != std::string::npos);
  EXPECT_FALSE(sstable::ReadTable("t.index", t.substr(0, 30), &kv).ok());
}

TEST(Inline, NestedCallsAndArgNames) {
  // outer(x) = inner(x) + x, inner(a) = Relu(a); the body names outputs node:arg:index.
  GraphDef g;
  FunctionDef inner;
  inner.name = "inner";
  inner.input_arg.push_back({"a", DataType::kFloat, "", "", ""});
  inner.output_arg.push_back({"r", DataType::kFloat, "", "", ""});
  NodeDef relu;
  relu.name = "relu";
  relu.op = "Relu";
  relu.input = {"a"};
  relu.attr["T"].kind = AttrValue::Kind::kType;
  relu.attr["T"].type = DataType::kFloat;
  inner.node_def.push_back(relu);
  inner.ret["r"] = "relu:activations:0";
  FunctionDef outer;
  outer.name = "outer";
  outer.input_arg.push_back({"x", DataType::kFloat, "", "", ""});
  outer.output_arg.push_back({"y", DataType::kFloat, "", "", ""});
  NodeDef call;
  call.name = "call";
  call.op = "PartitionedCall";
  call.input = {"x"};
  call.attr["f"].kind = AttrValue::Kind::kFunc;
  call.attr["f"].s = "inner";
  NodeDef add;
  add.name = "add";
  add.op = "AddV2";
  add.input = {"call:output:0", "x"};
  add.attr["T"] = relu.attr["T"];
  outer.node_def = {call, add};
  outer.ret["y"] = "add:z:0";
  g.library.function = {inner, outer};
  NodeDef x;
  x.name = "x";
  x.op = "Placeholder";
  x.attr["dtype"] = relu.attr["T"];
  NodeDef top = call;
  top.name = "top";
  top.attr["f"].s = "outer";
  g.node = {x, top};
  GraphDef flat;
  std::vector<std::string> roots;
  ASSERT_OK(InlineFunctionCalls(g, {"top:0"}, InlineOptions(), &flat, &roots));
  EXPECT_EQ(roots[0], std::string("top/add:0"));
  std::unique_ptr<Session> session = NewSession(SessionOptions());
  ASSERT_OK(session->Create(flat));
  Tensor in(DataType::kFloat, TensorShape({2}));
  in.data<float>()[0] = -1;
  in.data<float>()[1] = 2;
  std::vector<Tensor> out;
  ASSERT_OK(session->Run({{"x", in}}, roots, {}, &out));
  EXPECT_NEAR(out[0].data<float>()[0], -1.0f, 1e-6);
  EXPECT_NEAR(out[0].data<float>()[1], 4.0f, 1e-6);
  // An op ember lacks, inside a function: the error names the function and the node.
  g.library.function[0].node_def[0].op = "NoSuchOp";
  Status s = InlineFunctionCalls(g, {"top:0"}, InlineOptions(), &flat, &roots);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(s.message().find("function 'inner' node 'relu'") != std::string::npos);
  EXPECT_TRUE(s.message().find("NoSuchOp") != std::string::npos);
}

TEST(SavedModel, TwoSignaturesShareVariables) {
  SavedModelBundle bundle;
  ASSERT_OK(
      LoadSavedModel(SessionOptions(), FixtureDir("module_two_signatures"), {"serve"}, &bundle));
  EXPECT_EQ(bundle.signatures.size(), 2u);
  Tensor x(DataType::kFloat, TensorShape({1, 4}));
  for (int i = 0; i < 4; ++i) x.data<float>()[i] = 0.25f * static_cast<float>(i);
  std::vector<std::string> keys;
  std::vector<Tensor> out;
  ASSERT_OK(bundle.Run("scores", {{"x", x}}, &keys, &out));
  EXPECT_EQ(keys.size(), 2u);
  float sum = 0;
  for (int i = 0; i < 3; ++i) sum += out[0].data<float>()[i];
  EXPECT_NEAR(sum, 1.0f, 1e-5);  // probs
  Status s = bundle.Run("nope", {{"x", x}}, &keys, &out);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(s.message().find("serving_default") != std::string::npos);
}

TEST(SavedModel, MissingDirectoryNamesTheFile) {
  SavedModelBundle bundle;
  Status s = LoadSavedModel(SessionOptions(), "/nonexistent/dir", {"serve"}, &bundle);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(s.message().find("/nonexistent/dir/saved_model.pb") != std::string::npos);
}

EMBER_TEST_MAIN
