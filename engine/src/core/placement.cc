#include "core/placement.h"

namespace ember {

namespace {
Status CreateOnHost(const Node& node, Placement* out) {
  out->device = HostDevice();
  out->host_memory_inputs.clear();
  return KernelRegistry::Global()->CreateKernel(node.def, "CPU", &out->kernel);
}
}  // namespace

Status PlaceNode(const Node& node, const PlacementOptions& options, Placement* out) {
  const bool pinned = !node.def.device.empty();
  const std::string& request = pinned ? node.def.device : options.default_device;
  const bool soft = options.allow_soft_placement || !pinned;
  DeviceSpec spec;
  if (request.empty() || !ParseDeviceSpec(request, &spec) || spec.type.empty() ||
      spec.type == "CPU") {
    return CreateOnHost(node, out);
  }
  std::string why;
  Device* device = FindDevice(spec.type, spec.index, &why);
  if (device == nullptr) {
    if (soft) return CreateOnHost(node, out);
    return errors::InvalidArgument("Cannot assign a device for operation " + node.name() +
                                   ": {{node " + node.name() + "}} was explicitly assigned to " +
                                   request + " but it is not available (" + why + ")");
  }
  Status s = KernelRegistry::Global()->CreateKernel(node.def, device->type(), &out->kernel,
                                                    &out->host_memory_inputs);
  if (s.ok()) {
    out->device = device;
    return s;
  }
  // NotFound: no kernel there; Unimplemented: a kernel that does not do these attrs (a GPU
  // Conv2D with dilations). Any other error is the node's own (bad attrs) and is reported.
  if (s.code() != Code::kNotFound && s.code() != Code::kUnimplemented) return s;
  if (soft) return CreateOnHost(node, out);
  return errors::InvalidArgument(
      "Cannot assign a device for operation " + node.name() +
      ": Could not satisfy explicit device specification '" + request +
      "' because no supported kernel for " + device->type() + " devices is available (op " +
      node.def.op + ": " + s.message() +
      "). Set SessionOptions::allow_soft_placement to run it on the CPU. {{node " + node.name() +
      "}}");
}

}  // namespace ember
