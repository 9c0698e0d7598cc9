// ClientSession: runs the graph of a Scope, extending its session lazily with the nodes
// added since the last call (tensorflow/cc/client/client_session.h).
#ifndef EMBER_CC_CLIENT_SESSION_H_
#define EMBER_CC_CLIENT_SESSION_H_

#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "ember/cc/ops.h"
#include "ember/cc/scope.h"
#include "ember/session.h"

namespace ember {

class ClientSession {
 public:
  using FeedType = std::unordered_map<Output, Input::Initializer, OutputHash>;
  using CallableHandle = Session::CallableHandle;

  explicit ClientSession(const Scope& scope, const SessionOptions& options = SessionOptions());
  ~ClientSession();
  ClientSession(const ClientSession&) = delete;
  ClientSession& operator=(const ClientSession&) = delete;

  Status Run(const std::vector<Output>& fetch_outputs, std::vector<Tensor>* outputs) const;
  Status Run(const FeedType& inputs, const std::vector<Output>& fetch_outputs,
             std::vector<Tensor>* outputs) const;
  Status Run(const FeedType& inputs, const std::vector<Output>& fetch_outputs,
             const std::vector<Operation>& run_outputs, std::vector<Tensor>* outputs) const;
  Status Run(const RunOptions& run_options, const FeedType& inputs,
             const std::vector<Output>& fetch_outputs, const std::vector<Operation>& run_outputs,
             std::vector<Tensor>* outputs, RunMetadata* run_metadata) const;

  Status MakeCallable(const CallableOptions& options, CallableHandle* handle);
  Status RunCallable(CallableHandle handle, const std::vector<Tensor>& feed_tensors,
                     std::vector<Tensor>* fetch_tensors, RunMetadata* run_metadata);
  Status RunCallable(CallableHandle handle, const std::vector<Tensor>& feed_tensors,
                     std::vector<Tensor>* fetch_tensors, RunMetadata* run_metadata,
                     const ThreadPoolOptions& pools);
  Status ReleaseCallable(CallableHandle handle);

  Session* session() const { return session_.get(); }

 private:
  Status MaybeExtendGraph() const;

  Scope scope_;
  std::unique_ptr<Session> session_;
  mutable std::mutex mu_;
  mutable size_t last_num_nodes_ = 0;
};

}  // namespace ember

#endif  // EMBER_CC_CLIENT_SESSION_H_
