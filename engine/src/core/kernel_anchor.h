// Force-included into every src/kernels/cpu/*.cc by cmake/EmberKernelAnchors.cmake: defines
// the file's anchor symbol, which the registry references so that static linking keeps every
// self-registering kernel object.
#ifndef EMBER_CORE_KERNEL_ANCHOR_H_
#define EMBER_CORE_KERNEL_ANCHOR_H_
#ifdef EMBER_KERNEL_ANCHOR
extern "C" {
int EMBER_KERNEL_ANCHOR = 0;
}
#endif
#endif  // EMBER_CORE_KERNEL_ANCHOR_H_
