// A validated, read-only .tflite model. Loading checks the whole FlatBuffer (offsets,
// vtables, vector lengths, shapes, buffer sizes, operator and tensor indices, supported
// opcodes and versions) before anything uses it. Weights are not copied: tensors point
// into the file's memory map or the caller's buffer.
#ifndef EMBER_LITE_MODEL_H_
#define EMBER_LITE_MODEL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ember/lite/schema.h"
#include "ember/status.h"

namespace ember {
namespace lite {

class Model {
 public:
  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  // Memory-maps `path` (read-only) and validates it.
  static StatusOr<std::shared_ptr<const Model>> FromFile(const std::string& path);
  // Uses `data` in place; the caller keeps it alive and unchanged while the model lives.
  // A buffer not aligned to 16 bytes is copied once so weights are aligned.
  static StatusOr<std::shared_ptr<const Model>> FromBuffer(const void* data, size_t size);
  // Takes ownership of `bytes`.
  static StatusOr<std::shared_ptr<const Model>> FromBytes(std::vector<uint8_t> bytes);

  uint32_t version() const { return version_; }
  const std::string& description() const { return description_; }
  // The main subgraph (index 0), which Interpreter runs.
  const SubGraphDef& graph() const { return graphs_[0]; }
  // Every subgraph, the main one first; the others are run by WHILE and IF operators (their
  // subgraph indices, input/output counts and types are checked at load, and no subgraph runs
  // itself, directly or through others).
  const std::vector<SubGraphDef>& subgraphs() const { return graphs_; }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  Model() = default;
  Status Parse();

  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  void* mapping_ = nullptr;  // munmap'ed on destruction
  size_t mapping_size_ = 0;
  std::vector<uint8_t> owned_;
  std::vector<std::vector<uint64_t>> aligned_consts_;  // copies of misaligned constant data
  uint32_t version_ = 0;
  std::string description_;
  std::vector<SubGraphDef> graphs_;  // at least one once loaded
};

}  // namespace lite
}  // namespace ember

#endif  // EMBER_LITE_MODEL_H_
