// Run-time choice for lite's plain loops that the compiler vectorises (depthwise rows in
// depthwise.cc, same-shape float ADD/MUL in kernels_elementwise.cc, int8 dot products in
// kernels_conv.cc). Each loop is written once as an always-inline body and compiled into
// wrappers for AVX-512 (F, BW, DQ, VL + FMA; not for depthwise.cc's rows, which run their AVX2
// build there, see why in depthwise.cc), AVX2 and the build's baseline. One wrapper is
// chosen per call from a cached choice made by common/cpu_features.h, so EMBER_CPU_ISA caps it
// as it caps the GEMMs. GCC's target_clones (ifunc) did this before: it ignored EMBER_CPU_ISA,
// and GNU ld 2.35 mis-linked its resolvers when stripping (-Wl,-s).
#ifndef EMBER_SRC_LITE_LOOP_ISA_H_
#define EMBER_SRC_LITE_LOOP_ISA_H_

// The guards the target_clones had: x86-64 Linux, no ASan/TSan; elsewhere only the baseline.
#if defined(__x86_64__) && defined(__linux__) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(__SANITIZE_THREAD__) && (defined(__GNUC__) || defined(__clang__))
#include "common/cpu_features.h"
#define EMBER_LOOP_X86 1
// "evex512": clang 18-21 only (see lite/requant_avx512.h). GCC: 256-bit vectors (AVX-512VL
// forms), as measured faster here: with 512-bit ones the int8 dot rows of 27-144 bytes ran up to
// twice as slow as the AVX2 build (a 64-byte vector step leaves short rows to the scalar tail).
#if defined(__clang__) && __clang_major__ >= 18 && __clang_major__ < 22
#define EMBER_LOOP_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,fma,evex512")))
#elif defined(__clang__)
#define EMBER_LOOP_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,fma")))
#else
#define EMBER_LOOP_AVX512 \
  __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,fma,prefer-vector-width=256")))
#endif
// EMBER_LOOP_FUNCTION_WIDE's AVX-512 wrapper: 512-bit vectors for GCC too, for long float loops
// of many operations per element (e^x, tanh, erf): measured on Zen 4, one thread, LOGISTIC over
// 75264 floats 2.00 -> 1.51 cycles a value, TANH 2.33 -> 1.81 (fewer instructions to issue).
#if defined(__clang__)
#define EMBER_LOOP_AVX512_WIDE EMBER_LOOP_AVX512
#else
#define EMBER_LOOP_AVX512_WIDE \
  __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,fma,prefer-vector-width=512")))
#endif
// No "fma", as in the target_clones "avx2" clone: a float loop whose sums must round as they did
// (no contracted multiply-adds) runs this wrapper on AVX-512 CPUs too (see depthwise.cc).
#define EMBER_LOOP_AVX2 __attribute__((target("avx2")))
#endif

#if defined(__GNUC__) || defined(__clang__)
// A body is inlined into each wrapper and compiled for that wrapper's target (a callee without
// a target attribute may be inlined into any caller).
#define EMBER_LOOP_BODY inline __attribute__((always_inline))
#else
#define EMBER_LOOP_BODY inline
#endif

// Defines `RET NAME PARAMS`, which runs the always-inline BODY ARGS compiled for the active
// LoopIsa: two wrappers with internal linkage (NAME##Avx512, NAME##Avx2) and the dispatcher. Use
// inside namespace ember::lite. For example:
//   EMBER_LOOP_FUNCTION(void, ExpRow, (const float* x, int64_t n, float* y), (x, n, y), ExpRowBody)
// EMBER_LOOP_FUNCTION_WIDE is the same with 512-bit vectors in the AVX-512 wrapper (see
// EMBER_LOOP_AVX512_WIDE).
#ifdef EMBER_LOOP_X86
#define EMBER_LOOP_FUNCTION_WITH(AVX512_TARGET, RET, NAME, PARAMS, ARGS, BODY) \
  static AVX512_TARGET RET NAME##Avx512 PARAMS { return BODY ARGS; }           \
  static EMBER_LOOP_AVX2 RET NAME##Avx2 PARAMS { return BODY ARGS; }           \
  RET NAME PARAMS {                                                            \
    switch (ActiveLoopIsa()) {                                                 \
      case LoopIsa::kAvx512:                                                   \
        return NAME##Avx512 ARGS;                                              \
      case LoopIsa::kAvx2:                                                     \
        return NAME##Avx2 ARGS;                                                \
      default:                                                                 \
        return BODY ARGS;                                                      \
    }                                                                          \
  }
#define EMBER_LOOP_FUNCTION(RET, NAME, PARAMS, ARGS, BODY) \
  EMBER_LOOP_FUNCTION_WITH(EMBER_LOOP_AVX512, RET, NAME, PARAMS, ARGS, BODY)
#define EMBER_LOOP_FUNCTION_WIDE(RET, NAME, PARAMS, ARGS, BODY) \
  EMBER_LOOP_FUNCTION_WITH(EMBER_LOOP_AVX512_WIDE, RET, NAME, PARAMS, ARGS, BODY)
#else
#define EMBER_LOOP_FUNCTION(RET, NAME, PARAMS, ARGS, BODY) \
  RET NAME PARAMS { return BODY ARGS; }
#define EMBER_LOOP_FUNCTION_WIDE(RET, NAME, PARAMS, ARGS, BODY) \
  EMBER_LOOP_FUNCTION(RET, NAME, PARAMS, ARGS, BODY)
#endif

namespace ember {
namespace lite {

enum class LoopIsa { kGeneric, kAvx2, kAvx512 };

inline LoopIsa ActiveLoopIsa() {
#ifdef EMBER_LOOP_X86
  static const LoopIsa isa = [] {
    switch (cpu::BestIsaTier(cpu::Avx512Need::kSkx)) {
      case cpu::IsaTier::kAvx512:
        return LoopIsa::kAvx512;
      case cpu::IsaTier::kAvx2:
        return LoopIsa::kAvx2;
      default:
        return LoopIsa::kGeneric;
    }
  }();
  return isa;
#else
  return LoopIsa::kGeneric;
#endif
}

// The loops' path, named as GemmF32KernelName names the float GEMM's.
inline const char* LoopKernelName() {
  switch (ActiveLoopIsa()) {
    case LoopIsa::kAvx512:
      return "avx512";
    case LoopIsa::kAvx2:
      return "avx2";
    default:
      return "generic";
  }
}

}  // namespace lite
}  // namespace ember

#endif  // EMBER_SRC_LITE_LOOP_ISA_H_
