// External buffers: Tensor::FromExternal in C++ and EMBER_NewTensorFromBuffer in C, a
// caller's memory used in place and released exactly once by the last tensor holding it.
#include <cstdint>
#include <cstring>
#include <string>

#include "ember/c_api.h"
#include "ember/tensor.h"
#include "ember_test.h"

namespace {
int released = 0;
void* released_data = nullptr;
size_t released_length = 0;
void Release(void* data, size_t length, void* arg) {
  ++*static_cast<int*>(arg);
  released_data = data;
  released_length = length;
}
}  // namespace

TEST(TensorExternal, SharedUntilTheLastCopyAndRefCounts) {
  alignas(16) int32_t data[3] = {7, 8, 9};
  int calls = 0;
  {
    ember::Tensor a = ember::Tensor::FromExternal(
        ember::DataType::kInt32, ember::TensorShape({3}), data,
        [](void*, void* arg) { ++*static_cast<int*>(arg); }, &calls);
    EXPECT_TRUE(a.HasExternalBuffer());
    EXPECT_TRUE(a.RefCountIsOne());
    EXPECT_TRUE(a.data<int32_t>() == data);
    ember::Tensor b = a;
    EXPECT_FALSE(a.RefCountIsOne());
    ember::Tensor c = a.Clone();
    EXPECT_FALSE(c.HasExternalBuffer());
    EXPECT_EQ(c.data<int32_t>()[2], 9);
    a = ember::Tensor();
    EXPECT_EQ(calls, 0);
    EXPECT_TRUE(b.RefCountIsOne());
  }
  EXPECT_EQ(calls, 1);
  ember::Tensor owned(ember::DataType::kFloat, ember::TensorShape({2}));
  EXPECT_FALSE(owned.HasExternalBuffer());
}

TEST(CApiExternal, SessionReadsTheBufferInPlaceAndReleasesItOnce) {
  const std::string json =
      R"({"node":[{"name":"x","op":"Placeholder","attr":{"dtype":{"type":"DT_FLOAT"}}},)"
      R"({"name":"y","op":"Neg","input":["x"],"attr":{"T":{"type":"DT_FLOAT"}}}]})";
  EMBER_Status* st = EMBER_NewStatus();
  EMBER_Graph* graph = EMBER_LoadGraphFromBuffer(json.data(), json.size(), st);
  ASSERT_TRUE(graph != nullptr);
  EMBER_Session* session = EMBER_NewSession(graph, nullptr, st);
  ASSERT_TRUE(session != nullptr);

  alignas(64) float values[4] = {1, -2, 3, -4};
  const int64_t dims[1] = {4};
  EMBER_Tensor* x = EMBER_NewTensorFromBuffer(EMBER_FLOAT, dims, 1, values, sizeof(values), Release,
                                              &released, st);
  ASSERT_TRUE(x != nullptr);
  EXPECT_TRUE(EMBER_TensorData(x) == values);  // not copied
  const char* feed = "x:0";
  const char* fetch = "y:0";
  EMBER_Tensor* y = nullptr;
  EMBER_SessionRun(session, &feed, &x, 1, &fetch, &y, 1, nullptr, 0, st);
  ASSERT_TRUE(EMBER_GetCode(st) == EMBER_OK);
  const float* out = static_cast<const float*>(EMBER_TensorData(y));
  EXPECT_EQ(out[0], -1.0f);
  EXPECT_EQ(out[3], 4.0f);
  EXPECT_EQ(released, 0);
  EMBER_DeleteTensor(x);
  EMBER_DeleteTensor(y);
  EMBER_CloseSession(session, st);
  EMBER_DeleteSession(session);
  EXPECT_EQ(released, 1);
  EXPECT_TRUE(released_data == values);
  EXPECT_EQ(released_length, sizeof(values));
  EMBER_DeleteGraph(graph);
  EMBER_DeleteStatus(st);
}

TEST(CApiExternal, BadBuffersAreRejectedAndStayTheCallers) {
  EMBER_Status* st = EMBER_NewStatus();
  alignas(64) unsigned char bytes[64] = {};
  const int64_t dims[1] = {4};
  int count = 0;
  EXPECT_TRUE(EMBER_NewTensorFromBuffer(EMBER_FLOAT, dims, 1, bytes, 12, Release, &count, st) ==
              nullptr);
  EXPECT_TRUE(EMBER_GetCode(st) == EMBER_INVALID_ARGUMENT);
  EXPECT_TRUE(EMBER_NewTensorFromBuffer(EMBER_FLOAT, dims, 1, bytes + 4, 16, Release, &count, st) ==
              nullptr);
  EXPECT_TRUE(std::string(EMBER_Message(st)).find("aligned") != std::string::npos);
  EXPECT_EQ(count, 0);
  EMBER_Tensor* t =
      EMBER_NewTensorFromBuffer(EMBER_INT32, dims, 1, bytes, 16, nullptr, nullptr, st);
  ASSERT_TRUE(t != nullptr);  // no deallocator is fine
  EMBER_DeleteTensor(t);
  EMBER_DeleteStatus(st);
}

EMBER_TEST_MAIN
