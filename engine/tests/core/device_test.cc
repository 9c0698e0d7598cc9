// Placement and host<->device copies, proved without a GPU: a fake accelerator ("FAKE") whose
// memory is host memory the host must not read (Tensor::OnDevice), with a few kernels.
// The numbers are checked against the same graph on the CPU kernels.
#include "core/device.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "core/op_kernel.h"
#include "ember/cc/ops.h"
#include "ember/session.h"
#include "ember_test.h"

using namespace ember;
using namespace ember::ops;

namespace {

std::atomic<int> g_to_device{0}, g_to_host{0}, g_kernel_runs{0};
std::atomic<bool> g_fail_to_host{false}, g_fail_sync{false};

class FakeDevice : public Device {
 public:
  FakeDevice() : Device("FAKE", 0) {}
  Status Allocate(DataType dtype, const TensorShape& shape, Tensor* out) override {
    size_t bytes = static_cast<size_t>(shape.num_elements()) * DataTypeSize(dtype);
    void* p = std::malloc(bytes == 0 ? 1 : bytes);
    if (p == nullptr) return errors::ResourceExhausted("fake device out of memory");
    std::memset(p, 0xFF, bytes);  // poison: a kernel that skips an element gives a NaN
    *out = Tensor::OnDevice(dtype, shape, std::shared_ptr<void>(p, [](void* q) { std::free(q); }));
    return Status::OK();
  }
  Status CopyToDevice(const Tensor& host, Tensor* out) override {
    if (host.on_device()) return errors::Internal("CopyToDevice got a device tensor");
    EMBER_RETURN_IF_ERROR(Allocate(host.dtype(), host.shape(), out));
    if (host.TotalBytes() > 0) std::memcpy(out->device_data(), host.raw_data(), host.TotalBytes());
    ++g_to_device;
    return Status::OK();
  }
  Status CopyToHost(const Tensor& t, Tensor* out) override {
    if (!t.on_device()) return errors::Internal("CopyToHost got a host tensor");
    if (g_fail_to_host.load()) return errors::Internal("fake DMA fault");
    Tensor host(t.dtype(), t.shape());
    if (t.TotalBytes() > 0) std::memcpy(host.raw_data(), t.device_data(), t.TotalBytes());
    *out = std::move(host);
    ++g_to_host;
    return Status::OK();
  }
  Status Sync() override {
    if (g_fail_sync.load()) return errors::Internal("fake asynchronous fault");
    return Status::OK();
  }
};

// Elementwise kernels that read and write device memory only (same-shape inputs).
template <int kOp>  // 0: Add, 1: Relu, 2: Neg that fails
class FakeCwise : public OpKernel {
 public:
  explicit FakeCwise(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    ++g_kernel_runs;
    if (kOp == 2) {
      ctx->SetStatus(errors::Internal("fake launch failure"));
      return;
    }
    const Tensor& x = ctx->input(0);
    if (!x.on_device() || x.raw_data() != nullptr) {
      ctx->SetStatus(errors::Internal("fake kernel got host memory"));
      return;
    }
    Tensor* out;
    Status s = ctx->allocate_output(0, x.shape(), &out);
    if (!s.ok()) return ctx->SetStatus(s);
    const float* a = static_cast<const float*>(x.device_data());
    float* o = static_cast<float*>(out->device_data());
    for (int64_t i = 0; i < x.NumElements(); ++i) {
      if (kOp == 0) {
        o[i] = a[i] + static_cast<const float*>(ctx->input(1).device_data())[i];
      } else {
        o[i] = a[i] > 0 ? a[i] : 0;
      }
    }
  }
};

// Reshape whose shape input (1) is read from host memory, as a GPU Reshape would.
class FakeReshape : public OpKernel {
 public:
  explicit FakeReshape(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    ++g_kernel_runs;
    const Tensor& shape = ctx->input(1);
    if (shape.on_device() || !ctx->input(0).on_device()) {
      ctx->SetStatus(errors::Internal("FakeReshape got its inputs in the wrong memory"));
      return;
    }
    std::vector<int64_t> dims;
    for (int64_t i = 0; i < shape.NumElements(); ++i) dims.push_back(shape.data<int32_t>()[i]);
    Tensor t;
    t.CopyFrom(ctx->input(0), TensorShape(dims));
    ctx->set_output(0, t);
  }
};

struct FakeRegistration {
  FakeRegistration() {
    RegisterDeviceType("FAKE", [](std::vector<std::unique_ptr<Device>>* out) {
      out->push_back(std::make_unique<FakeDevice>());
      return Status::OK();
    });
    auto f = std::vector<std::pair<std::string, DataType>>{{"T", DataType::kFloat}};
    KernelRegistry::Global()->Register(
        "Add", "FAKE", [](OpKernelConstruction* c) { return std::make_unique<FakeCwise<0>>(c); },
        f);
    KernelRegistry::Global()->Register(
        "Relu", "FAKE", [](OpKernelConstruction* c) { return std::make_unique<FakeCwise<1>>(c); },
        f);
    KernelRegistry::Global()->Register(
        "Neg", "FAKE", [](OpKernelConstruction* c) { return std::make_unique<FakeCwise<2>>(c); },
        f);
    KernelRegistry::Global()->Register(
        "Reshape", "FAKE", [](OpKernelConstruction* c) { return std::make_unique<FakeReshape>(c); },
        f, {1});
  }
} g_fake_registration;

void ResetCounters() {
  g_to_device = 0;
  g_to_host = 0;
  g_kernel_runs = 0;
  g_fail_to_host = false;
  g_fail_sync = false;
}

bool Has(const Status& s, const std::string& text) {
  return !s.ok() && s.message().find(text) != std::string::npos;
}

// x (fed) + y (const) -> Relu -> Softmax, with `device` on Add and Relu and Softmax pinned too.
GraphDef AddReluSoftmax(const std::string& device, bool pin_softmax) {
  Scope root = Scope::NewRootScope();
  Scope dev = device.empty() ? root : root.WithDevice(device);
  auto x = Placeholder(root.WithOpName("x"), DT_FLOAT);
  auto y = Const(root.WithOpName("y"), {{1.0f, -2.0f, 3.0f}, {-4.0f, 5.0f, -6.0f}});
  auto a = Add(dev.WithOpName("a"), x, y);
  auto r = Relu(dev.WithOpName("r"), a);
  Softmax((pin_softmax ? dev : root).WithOpName("s"), r);
  GraphDef g;
  (void)root.ToGraphDef(&g);
  return g;
}

Tensor XValue() {
  return Tensor::From<float>(TensorShape({2, 3}), {0.5f, 1.0f, -1.0f, 2.0f, -0.5f, 7.0f});
}

Status RunGraph(const SessionOptions& o, const GraphDef& g, std::vector<Tensor>* out) {
  auto session = NewSession(o);
  EMBER_RETURN_IF_ERROR(session->Create(g));
  return session->Run({{"x:0", XValue()}}, {"r:0", "s:0"}, {}, out);
}

void ExpectSameAsCpu(const std::vector<Tensor>& got) {
  std::vector<Tensor> want;
  Status s = RunGraph(SessionOptions(), AddReluSoftmax("", false), &want);
  EXPECT_OK(s);
  if (!s.ok() || got.size() != 2) return;
  for (size_t k = 0; k < 2; ++k) {
    EXPECT_FALSE(got[k].on_device());
    EXPECT_EQ(got[k].shape(), want[k].shape());
    for (int64_t i = 0; i < want[k].NumElements(); ++i) {
      EXPECT_NEAR(got[k].data<float>()[i], want[k].data<float>()[i], 1e-6);
    }
  }
}

}  // namespace

TEST(Device, DeviceTensorIsNotReadableFromTheHost) {
  Tensor t;
  ASSERT_TRUE(FindDevice("fake", 0) != nullptr);
  ASSERT_OK(FindDevice("FAKE", 0)->Allocate(DataType::kFloat, TensorShape({4}), &t));
  EXPECT_TRUE(t.on_device());
  EXPECT_TRUE(t.raw_data() == nullptr);
  EXPECT_TRUE(t.data<float>() == nullptr);
  EXPECT_TRUE(t.device_data() != nullptr);
  EXPECT_TRUE(t.DebugString().find("<device memory>") != std::string::npos);
  EXPECT_FALSE(t.Clone().IsInitialized());
  Tensor host = Tensor::From<float>(TensorShape({1}), {1});
  EXPECT_TRUE(host.device_data() == nullptr);
}

TEST(Device, ParseDeviceSpec) {
  DeviceSpec s;
  ASSERT_TRUE(ParseDeviceSpec("/job:localhost/replica:0/task:0/device:GPU:1", &s));
  EXPECT_EQ(s.type, std::string("GPU"));
  EXPECT_EQ(s.index, 1);
  ASSERT_TRUE(ParseDeviceSpec("/gpu:0", &s));
  EXPECT_EQ(s.type, std::string("GPU"));
  ASSERT_TRUE(ParseDeviceSpec("cpu:*", &s));
  EXPECT_EQ(s.type, std::string("CPU"));
  EXPECT_EQ(s.index, -1);
  ASSERT_TRUE(ParseDeviceSpec("/job:localhost", &s));
  EXPECT_EQ(s.type, std::string(""));
  EXPECT_FALSE(ParseDeviceSpec("/device:GPU:x", &s));
  EXPECT_FALSE(ParseDeviceSpec("/tpu:0", &s));
  std::string why;
  EXPECT_TRUE(FindDevice("FAKE", 3, &why) == nullptr);
  EXPECT_TRUE(why.find("does not exist") != std::string::npos);
}

TEST(Device, PinnedNodesRunThereWithCopiesAndSoftPlacementFallsBack) {
  ResetCounters();
  SessionOptions o;
  o.allow_soft_placement = true;  // Softmax has no FAKE kernel: it runs on the CPU
  std::vector<Tensor> out;
  ASSERT_OK(RunGraph(o, AddReluSoftmax("/device:FAKE:0", true), &out));
  ExpectSameAsCpu(out);
  EXPECT_EQ(g_kernel_runs.load(), 2);  // Add and Relu on the fake device
  EXPECT_EQ(g_to_device.load(), 2);    // x (a feed) and y (a CPU Const)
  EXPECT_EQ(g_to_host.load(), 1);      // r, once for both Softmax and the fetch
}

TEST(Device, ExplicitDeviceWithoutKernelFailsWithoutSoftPlacement) {
  ResetCounters();
  std::vector<Tensor> out;
  Status s = RunGraph(SessionOptions(), AddReluSoftmax("/device:FAKE:0", true), &out);
  EXPECT_TRUE(Has(s, "Could not satisfy explicit device specification"));
  EXPECT_TRUE(Has(s, "{{node s}}"));
}

TEST(Device, AbsentDeviceFailsCreateOrFallsBackWhenSoft) {
  ResetCounters();
  std::vector<Tensor> out;
  Status s = RunGraph(SessionOptions(), AddReluSoftmax("/device:FAKE:3", false), &out);
  EXPECT_TRUE(Has(s, "Cannot assign a device for operation a"));
  EXPECT_TRUE(Has(s, "device:FAKE:0"));  // the available devices are listed
  SessionOptions o;
  o.allow_soft_placement = true;
  ASSERT_OK(RunGraph(o, AddReluSoftmax("/device:FAKE:3", false), &out));
  ExpectSameAsCpu(out);
  EXPECT_EQ(g_kernel_runs.load(), 0);
  EXPECT_EQ(g_to_device.load() + g_to_host.load(), 0);
}

TEST(Device, DefaultDevicePlacesEverySupportedOp) {
  ResetCounters();
  SessionOptions o;
  o.default_device = "/device:FAKE:0";
  std::vector<Tensor> out;
  ASSERT_OK(RunGraph(o, AddReluSoftmax("", false), &out));
  ExpectSameAsCpu(out);
  EXPECT_EQ(g_kernel_runs.load(), 2);
  EXPECT_EQ(g_to_device.load(), 2);
  EXPECT_EQ(g_to_host.load(), 1);
  o.default_device = "not a device";
  Session* bad = nullptr;
  EXPECT_TRUE(Has(NewSession(o, &bad), "default_device"));
  EXPECT_TRUE(bad == nullptr);
}

TEST(Device, CpuGraphMakesNoCopies) {
  ResetCounters();
  std::vector<Tensor> out;
  ASSERT_OK(RunGraph(SessionOptions(), AddReluSoftmax("", false), &out));
  EXPECT_EQ(g_kernel_runs.load() + g_to_device.load() + g_to_host.load(), 0);
}

TEST(Device, HostMemoryInputsStayOnTheHost) {
  ResetCounters();
  Scope root = Scope::NewRootScope();
  auto x = Placeholder(root.WithOpName("x"), DT_FLOAT);
  auto shape = Const(root.WithOpName("shape"), {3, 2});
  auto r = Reshape(root.WithOpName("reshape").WithDevice("/device:FAKE:0"), x, shape);
  Relu(root.WithOpName("relu").WithDevice("/device:FAKE:0"), r);
  GraphDef g;
  ASSERT_OK(root.ToGraphDef(&g));
  auto session = NewSession(SessionOptions());
  ASSERT_OK(session->Create(g));
  std::vector<Tensor> out;
  ASSERT_OK(session->Run({{"x:0", XValue()}}, {"relu:0"}, {}, &out));
  EXPECT_EQ(out[0].shape(), TensorShape({3, 2}));
  EXPECT_EQ(out[0].data<float>()[2], 0.0f);  // relu(-1)
  EXPECT_EQ(out[0].data<float>()[5], 7.0f);
  EXPECT_EQ(g_kernel_runs.load(), 2);
  EXPECT_EQ(g_to_device.load(), 1);  // x only: the shape is read from host memory
  EXPECT_EQ(g_to_host.load(), 1);
}

TEST(Device, DeviceErrorsNameTheNode) {
  ResetCounters();
  Scope root = Scope::NewRootScope();
  auto x = Placeholder(root.WithOpName("x"), DT_FLOAT);
  Neg(root.WithOpName("broken_neg").WithDevice("/device:FAKE:0"), x);
  Relu(root.WithOpName("relu").WithDevice("/device:FAKE:0"), x);
  GraphDef g;
  ASSERT_OK(root.ToGraphDef(&g));
  auto session = NewSession(SessionOptions());
  ASSERT_OK(session->Create(g));
  std::vector<Tensor> out;
  Status s = session->Run({{"x:0", XValue()}}, {"broken_neg:0"}, {}, &out);
  EXPECT_TRUE(Has(s, "fake launch failure"));
  EXPECT_TRUE(Has(s, "broken_neg"));
  g_fail_to_host = true;
  s = session->Run({{"x:0", XValue()}}, {"relu:0"}, {}, &out);
  EXPECT_TRUE(Has(s, "fake DMA fault"));
  EXPECT_TRUE(Has(s, "{{node _DeviceToHost/relu:0/FAKE:0}}"));
  g_fail_to_host = false;
  g_fail_sync = true;
  s = session->Run({{"x:0", XValue()}}, {}, {"relu"}, &out);
  EXPECT_TRUE(Has(s, "fake asynchronous fault"));
  EXPECT_TRUE(Has(s, "device:FAKE:0"));
  g_fail_sync = false;
  ASSERT_OK(session->Run({{"x:0", XValue()}}, {"relu:0"}, {}, &out));
  EXPECT_EQ(out[0].data<float>()[5], 7.0f);
}

TEST(Device, PublicDeviceList) {
  std::vector<std::string> names = ListDevices();
  ASSERT_TRUE(!names.empty());
  EXPECT_EQ(names[0], std::string("/job:localhost/replica:0/task:0/device:CPU:0"));
  bool fake = false;
  for (const std::string& n : names) fake = fake || n.find("device:FAKE:0") != std::string::npos;
  EXPECT_TRUE(fake);
  EXPECT_EQ(DeviceUnavailableReason("FAKE"), std::string(""));
  EXPECT_TRUE(DeviceUnavailableReason("TPU").find("TPU") != std::string::npos);
}

EMBER_TEST_MAIN
