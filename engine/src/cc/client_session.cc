#include "ember/cc/client_session.h"

namespace ember {

ClientSession::ClientSession(const Scope& scope, const SessionOptions& options)
    : scope_(scope), session_(NewSession(options)) {}

ClientSession::~ClientSession() {
  if (session_) session_->Close();
}

Status ClientSession::MaybeExtendGraph() const {
  std::lock_guard<std::mutex> lock(mu_);
  EMBER_RETURN_IF_ERROR(scope_.status());
  size_t n = scope_.num_nodes();
  if (n == last_num_nodes_) return Status::OK();
  GraphDef g;
  g.node = scope_.NodesFrom(last_num_nodes_);
  Status s = last_num_nodes_ == 0 ? session_->Create(g) : session_->Extend(g);
  if (s.ok()) last_num_nodes_ = n;
  return s;
}

Status ClientSession::Run(const std::vector<Output>& fetch_outputs,
                          std::vector<Tensor>* outputs) const {
  return Run(FeedType{}, fetch_outputs, {}, outputs);
}

Status ClientSession::Run(const FeedType& inputs, const std::vector<Output>& fetch_outputs,
                          std::vector<Tensor>* outputs) const {
  return Run(inputs, fetch_outputs, {}, outputs);
}

Status ClientSession::Run(const FeedType& inputs, const std::vector<Output>& fetch_outputs,
                          const std::vector<Operation>& run_outputs,
                          std::vector<Tensor>* outputs) const {
  return Run(RunOptions(), inputs, fetch_outputs, run_outputs, outputs, nullptr);
}

Status ClientSession::Run(const RunOptions& run_options, const FeedType& inputs,
                          const std::vector<Output>& fetch_outputs,
                          const std::vector<Operation>& run_outputs, std::vector<Tensor>* outputs,
                          RunMetadata* run_metadata) const {
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const auto& kv : inputs) {
    EMBER_RETURN_IF_ERROR(kv.second.status);
    feeds.emplace_back(kv.first.name(), kv.second.tensor);
  }
  std::vector<std::string> fetches;
  for (const Output& o : fetch_outputs) fetches.push_back(o.name());
  std::vector<std::string> targets;
  for (const Operation& op : run_outputs) targets.push_back(op.name());
  EMBER_RETURN_IF_ERROR(MaybeExtendGraph());
  return session_->Run(run_options, feeds, fetches, targets, outputs, run_metadata);
}

Status ClientSession::MakeCallable(const CallableOptions& options, CallableHandle* handle) {
  EMBER_RETURN_IF_ERROR(MaybeExtendGraph());
  return session_->MakeCallable(options, handle);
}

Status ClientSession::RunCallable(CallableHandle handle, const std::vector<Tensor>& feed_tensors,
                                  std::vector<Tensor>* fetch_tensors, RunMetadata* run_metadata) {
  return session_->RunCallable(handle, feed_tensors, fetch_tensors, run_metadata);
}

Status ClientSession::RunCallable(CallableHandle handle, const std::vector<Tensor>& feed_tensors,
                                  std::vector<Tensor>* fetch_tensors, RunMetadata* run_metadata,
                                  const ThreadPoolOptions& pools) {
  return session_->RunCallable(handle, feed_tensors, fetch_tensors, run_metadata, pools);
}

Status ClientSession::ReleaseCallable(CallableHandle handle) {
  return session_->ReleaseCallable(handle);
}

}  // namespace ember
