// Debug aid for Tensor::Uninitialized (ember/tensor.h), not part of the public API.
#ifndef EMBER_CORE_TENSOR_DEBUG_H_
#define EMBER_CORE_TENSOR_DEBUG_H_

namespace ember {

// When on, Tensor::Uninitialized fills its buffer with 0xFF bytes (NaN as float and double, -1
// as an integer), so a kernel that allocates its output uninitialized but leaves some of it
// unwritten shows up in tests. Off by default; EMBER_POISON_UNINITIALIZED=1 in the environment
// turns it on at start-up.
void SetPoisonUninitializedTensors(bool poison);
bool PoisonUninitializedTensors();

}  // namespace ember

#endif  // EMBER_CORE_TENSOR_DEBUG_H_
