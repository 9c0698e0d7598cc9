#include "core/device.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <mutex>

#include "ember/session.h"

namespace ember {

namespace {

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

class CpuDevice : public Device {
 public:
  CpuDevice() : Device("CPU", 0) {}
  bool host_memory() const override { return true; }
  Status Allocate(DataType dtype, const TensorShape& shape, Tensor* out) override {
    Tensor t(dtype, shape);
    if (t.raw_data() == nullptr) {
      return errors::ResourceExhausted("OOM allocating a host tensor of shape " +
                                       shape.DebugString());
    }
    *out = std::move(t);
    return Status::OK();
  }
  Status CopyToDevice(const Tensor& host, Tensor* out) override {
    *out = host;
    return Status::OK();
  }
  Status CopyToHost(const Tensor& t, Tensor* out) override {
    *out = t;
    return Status::OK();
  }
};

struct TypeEntry {
  DeviceEnumerator enumerate;
  bool enumerated = false;
  std::vector<std::unique_ptr<Device>> devices;
  std::string why_none;
};

struct Registry {
  std::mutex mu;
  std::map<std::string, TypeEntry> types;  // upper-case type -> entry
};

Registry& GetRegistry() {
  static Registry* r = new Registry();
  return *r;
}

// Runs the enumerator of `e` once; the caller holds the registry's lock.
void EnsureEnumerated(const std::string& type, TypeEntry* e) {
  if (e->enumerated) return;
  e->enumerated = true;
  Status s = e->enumerate(&e->devices);
  if (!s.ok()) {
    e->devices.clear();
    e->why_none = s.message();
  } else if (e->devices.empty()) {
    e->why_none = "no " + type + " device found";
  }
}

bool AllDigits(const std::string& s) {
  return !s.empty() && s.size() < 6 &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

Device::Device(std::string type, int index)
    : type_(std::move(type)),
      index_(index),
      name_("/job:localhost/replica:0/task:0/device:" + type_ + ":" + std::to_string(index)) {}

Device* HostDevice() {
  static Device* cpu = new CpuDevice();
  return cpu;
}

void RegisterDeviceType(const std::string& type, DeviceEnumerator enumerate) {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  TypeEntry& e = r.types[Upper(type)];
  if (e.enumerated) return;
  e.enumerate = std::move(enumerate);
}

Device* FindDevice(const std::string& type_in, int index, std::string* why) {
  std::string type = Upper(type_in);
  if (type == "CPU") return index == 0 || index == -1 ? HostDevice() : nullptr;
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.types.find(type);
  if (it == r.types.end()) {
    if (why != nullptr) {
      *why = type == "GPU" ? "this ember was built without CUDA (configure with -DEMBER_CUDA=ON)"
                           : "no device type " + type + " is registered";
    }
    return nullptr;
  }
  EnsureEnumerated(type, &it->second);
  for (const auto& d : it->second.devices) {
    if (d->index() == (index < 0 ? 0 : index)) return d.get();
  }
  if (why != nullptr) {
    *why = it->second.devices.empty()
               ? it->second.why_none
               : type + ":" + std::to_string(index) + " does not exist (" +
                     std::to_string(it->second.devices.size()) + " " + type + " device(s))";
  }
  return nullptr;
}

std::vector<std::string> ListDeviceNames(int num_cpu_devices) {
  std::vector<std::string> names;
  for (int i = 0; i < num_cpu_devices; ++i) {
    names.push_back("/job:localhost/replica:0/task:0/device:CPU:" + std::to_string(i));
  }
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  for (auto& kv : r.types) {
    EnsureEnumerated(kv.first, &kv.second);
    for (const auto& d : kv.second.devices) names.push_back(d->name());
  }
  return names;
}

bool ParseDeviceSpec(const std::string& name, DeviceSpec* out) {
  DeviceSpec spec;
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find('/', start);
    if (end == std::string::npos) end = name.size();
    std::string part = name.substr(start, end - start);
    start = end + 1;
    if (part.empty()) continue;
    std::string lower = part;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower.rfind("job:", 0) == 0 || lower.rfind("replica:", 0) == 0 ||
        lower.rfind("task:", 0) == 0) {
      continue;
    }
    std::string rest = lower.rfind("device:", 0) == 0 ? part.substr(7) : part;
    size_t colon = rest.find(':');
    std::string type = Upper(rest.substr(0, colon));
    if (type.empty() || !std::all_of(type.begin(), type.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
        })) {
      return false;
    }
    // The legacy short forms are only "/cpu:N" and "/gpu:N"; other types need "device:".
    if (rest.size() == part.size() && type != "CPU" && type != "GPU") return false;
    spec.type = type;
    spec.index = -1;
    if (colon != std::string::npos) {
      std::string idx = rest.substr(colon + 1);
      if (idx == "*") {
        spec.index = -1;
      } else if (AllDigits(idx)) {
        spec.index = std::stoi(idx);
      } else {
        return false;
      }
    }
  }
  *out = spec;
  return true;
}

std::vector<std::string> ListDevices() { return ListDeviceNames(1); }

std::string DeviceUnavailableReason(const std::string& type) {
  std::string why;
  return FindDevice(type, 0, &why) != nullptr ? "" : why;
}

}  // namespace ember
