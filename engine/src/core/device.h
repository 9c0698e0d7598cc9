// Device: where a kernel runs and where its outputs live (TensorFlow's Device, reduced).
//
// The CPU device is the host: its tensors are ordinary host Tensors. Any other device (CUDA's
// "GPU", or a test's fake accelerator) owns memory the host must not read: it allocates
// Tensor::OnDevice tensors and copies them to and from the host. The executor places each node
// on a device (src/core/placement.h) and inserts copy nodes on edges that cross memory spaces,
// so a kernel only ever sees inputs in the memory it asked for.
//
// Device types other than CPU register an enumerator; it runs once, the first time a session
// asks for that type, so a CPU-only program never initialises a GPU runtime.
#ifndef EMBER_CORE_DEVICE_H_
#define EMBER_CORE_DEVICE_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ember/status.h"
#include "ember/tensor.h"

namespace ember {

class Device {
 public:
  Device(std::string type, int index);
  virtual ~Device() = default;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const std::string& type() const { return type_; }  // "CPU", "GPU"
  int index() const { return index_; }
  // "/job:localhost/replica:0/task:0/device:GPU:0", as TensorFlow names devices.
  const std::string& name() const { return name_; }
  // True for the host: its kernels read and write host Tensors, and no copies are needed.
  virtual bool host_memory() const { return false; }
  // The queue kernels on this device launch work on (a cudaStream_t for CUDA); may be null.
  virtual void* stream() { return nullptr; }

  // Output storage on this device. Never zero-filled: kernels write every element.
  virtual Status Allocate(DataType dtype, const TensorShape& shape, Tensor* out) = 0;
  // Host tensor -> a tensor in this device's memory, and back. When either returns OK, the
  // result may be read: by later kernels on this device, or by host code.
  virtual Status CopyToDevice(const Tensor& host, Tensor* out) = 0;
  virtual Status CopyToHost(const Tensor& on_device, Tensor* out) = 0;
  // Waits for all work queued on the device and reports an error it raised asynchronously.
  virtual Status Sync() { return Status::OK(); }

 private:
  std::string type_;
  int index_;
  std::string name_;
};

// The host. Always present; one instance serves every CPU index a graph names.
Device* HostDevice();

// Enumerates the devices of one type; an error means "none usable" and is kept as the reason.
using DeviceEnumerator = std::function<Status(std::vector<std::unique_ptr<Device>>* out)>;
// Registers a device type ("GPU"; tests register fakes). Registering a type twice replaces the
// enumerator if it has not run yet.
void RegisterDeviceType(const std::string& type, DeviceEnumerator enumerate);

// The device `type`:`index` (type is case-insensitive), or null when absent. For a type with
// no usable device, *why (if given) says why: not compiled in, no device found, driver error.
Device* FindDevice(const std::string& type, int index, std::string* why = nullptr);
// Names of every usable device (CPUs first), for error messages.
std::vector<std::string> ListDeviceNames(int num_cpu_devices);

// A parsed device request: "/device:GPU:0", "/gpu:0", "/job:localhost/replica:0/task:0/cpu:1",
// "cpu:*". An empty type means "any device"; index -1 means "any index".
struct DeviceSpec {
  std::string type;  // upper case
  int index = -1;
};
// False when `name` is not a device name.
bool ParseDeviceSpec(const std::string& name, DeviceSpec* out);

}  // namespace ember

#endif  // EMBER_CORE_DEVICE_H_
