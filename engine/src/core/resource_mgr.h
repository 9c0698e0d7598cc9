// Per-session resources that survive across Run calls (variables), keyed by node name.
#ifndef EMBER_CORE_RESOURCE_MGR_H_
#define EMBER_CORE_RESOURCE_MGR_H_

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "ember/status.h"
#include "ember/tensor.h"

namespace ember {

class ResourceBase {
 public:
  virtual ~ResourceBase() = default;
};

// A variable's value. Readers and writers lock `mu`.
class Var : public ResourceBase {
 public:
  std::mutex mu;
  Tensor value;
  bool initialized = false;
};

class ResourceMgr {
 public:
  // Returns the resource named `name`, creating it with `create` on first use.
  template <typename T>
  Status LookupOrCreate(const std::string& name, T** out,
                        const std::function<std::unique_ptr<T>()>& create) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = resources_.find(name);
    if (it == resources_.end()) {
      it = resources_.emplace(name, create()).first;
    }
    T* typed = dynamic_cast<T*>(it->second.get());
    if (typed == nullptr) return errors::InvalidArgument("Resource " + name + " has another type");
    *out = typed;
    return Status::OK();
  }
  void Clear() {
    std::lock_guard<std::mutex> lock(mu_);
    resources_.clear();
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<ResourceBase>> resources_;
};

}  // namespace ember

#endif  // EMBER_CORE_RESOURCE_MGR_H_
