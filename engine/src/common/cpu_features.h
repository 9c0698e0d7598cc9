// x86 CPU feature checks for choosing kernels at run time, shared by the framework's float GEMM
// (kernels/cpu/gemm.cc), lite's GEMMs (lite/gemm_int8.cc, lite/gemm_f32.cc) and lite's
// vectorised loops (lite/loop_isa.h). Header-only:
// libember_lite does not link the framework. CPUID and XGETBV are read directly (not
// __builtin_cpu_supports), so no compiler runtime support library is needed: the checks link the
// same under gcc, clang and zig's clang for macOS.
#ifndef EMBER_SRC_COMMON_CPU_FEATURES_H_
#define EMBER_SRC_COMMON_CPU_FEATURES_H_

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

#include <cstdlib>
#include <cstring>

namespace ember {
namespace cpu {

// EMBER_CPU_ISA=generic|avx2|avx512|amx (read once per process) caps what the checks below
// report, so tests and benchmarks can run every kernel path on one machine (avx512: AVX-512 and
// VNNI, but not AMX's tiles). Unset: no cap.
inline int IsaCap() {
  static const int cap = [] {
    const char* v = std::getenv("EMBER_CPU_ISA");
    if (v == nullptr || *v == '\0') return 3;
    if (std::strcmp(v, "generic") == 0) return 0;
    if (std::strcmp(v, "avx2") == 0) return 1;
    if (std::strcmp(v, "avx512") == 0) return 2;
    return 3;
  }();
  return cap;
}

// The CPUID and XCR0 words the checks read; zero where the CPU or the OS does not report them.
struct X86Words {
  unsigned leaf1_ecx = 0;
  unsigned leaf7_ebx = 0;
  unsigned leaf7_ecx = 0;
  unsigned leaf7_edx = 0;
  unsigned xcr0 = 0;  // which register state the OS saves (XGETBV), when OSXSAVE is set
};

inline X86Words ReadX86WordsUncached() {
  X86Words w;
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(1, &a, &b, &c, &d) == 0) return w;
  w.leaf1_ecx = c;
  if ((c & (1u << 27)) != 0) {  // OSXSAVE: XGETBV may be executed
    unsigned lo = 0, hi = 0;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    w.xcr0 = lo;
  }
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d) != 0) {
    w.leaf7_ebx = b;
    w.leaf7_ecx = c;
    w.leaf7_edx = d;
  }
  return w;
}

// The words, read once per process: CPUID traps to the hypervisor in a VM, so a check made per
// kernel call would cost microseconds each time. (EMBER_CPU_ISA is applied by each check, not
// here, through IsaCap.)
inline const X86Words& ReadX86Words() {
  static const X86Words words = ReadX86WordsUncached();
  return words;
}

inline bool Bit(unsigned word, int bit) { return (word & (1u << bit)) != 0; }

// FMA, AVX and AVX2, with the OS saving XMM and YMM state.
inline bool HasAvx2Fma() {
  const X86Words& w = ReadX86Words();
  return IsaCap() >= 1 && Bit(w.leaf1_ecx, 12) && Bit(w.leaf1_ecx, 27) && Bit(w.leaf1_ecx, 28) &&
         (w.xcr0 & 0x6u) == 0x6u && Bit(w.leaf7_ebx, 5);
}

// AVX-512 F, with the OS saving XMM, YMM, opmask and both halves of the ZMM state.
inline bool HasAvx512F() {
  const X86Words& w = ReadX86Words();
  return IsaCap() >= 2 && Bit(w.leaf1_ecx, 27) && (w.xcr0 & 0xE6u) == 0xE6u && Bit(w.leaf7_ebx, 16);
}

// AVX-512 F, BW, DQ and VL (every AVX-512 CPU since Skylake-SP) and FMA, with the OS saving
// XMM, YMM, opmask and both halves of the ZMM state.
inline bool HasAvx512Skx() {
  const X86Words& w = ReadX86Words();
  return IsaCap() >= 2 && Bit(w.leaf1_ecx, 12) && Bit(w.leaf1_ecx, 27) &&
         (w.xcr0 & 0xE6u) == 0xE6u && Bit(w.leaf7_ebx, 16) && Bit(w.leaf7_ebx, 17) &&
         Bit(w.leaf7_ebx, 30) && Bit(w.leaf7_ebx, 31);
}

// AVX-512 F, BW, VL and VNNI, with the OS saving XMM, YMM, opmask and both halves of the ZMM state.
inline bool HasAvx512Vnni() {
  const X86Words& w = ReadX86Words();
  return IsaCap() >= 2 && Bit(w.leaf1_ecx, 27) && (w.xcr0 & 0xE6u) == 0xE6u &&
         Bit(w.leaf7_ebx, 16) && Bit(w.leaf7_ebx, 30) && Bit(w.leaf7_ebx, 31) &&
         Bit(w.leaf7_ecx, 11);
}

// AVX-512 F, BW and VBMI (byte permutes across a whole register: Ice Lake, Zen 4 and later),
// with the OS saving XMM, YMM, opmask and both halves of the ZMM state.
inline bool HasAvx512Vbmi() {
  const X86Words& w = ReadX86Words();
  return IsaCap() >= 2 && Bit(w.leaf1_ecx, 27) && (w.xcr0 & 0xE6u) == 0xE6u &&
         Bit(w.leaf7_ebx, 16) && Bit(w.leaf7_ebx, 30) && Bit(w.leaf7_ecx, 1);
}

// AMX-TILE and AMX-INT8 (Sapphire Rapids and later), AVX-512 VNNI beside them, and XCR0's tile
// bits (17 XTILECFG, 18 XTILEDATA). Linux also wants each process to ask for the tile state
// before its first tile instruction (arch_prctl ARCH_REQ_XCOMP_PERM): the caller does that.
inline bool HasAmxInt8() {
  const X86Words& w = ReadX86Words();
  return IsaCap() >= 3 && HasAvx512Vnni() && (w.xcr0 & 0x60000u) == 0x60000u &&
         Bit(w.leaf7_edx, 24) && Bit(w.leaf7_edx, 25);
}

// The ISA tiers that lite's kernels come in, ordered: each tier's kernels run on every CPU of a
// higher one.
enum class IsaTier { kGeneric = 0, kAvx2 = 1, kAvx512 = 2 };

// What the AVX-512 tier needs: AVX-512 F alone (lite's float GEMM) or F, BW, DQ, VL and FMA
// (lite's vectorised loops, lite/loop_isa.h).
enum class Avx512Need { kF, kSkx };

// The highest tier this CPU (capped by EMBER_CPU_ISA, see IsaCap) runs: AVX-512 when `need` is
// met, else AVX2 with FMA, else the generic kernels. The one place the tier is decided; callers
// cache it.
inline IsaTier BestIsaTier(Avx512Need need) {
  const bool avx512 = need == Avx512Need::kF ? HasAvx512F() : HasAvx512Skx();
  if (avx512) return IsaTier::kAvx512;
  return HasAvx2Fma() ? IsaTier::kAvx2 : IsaTier::kGeneric;
}

}  // namespace cpu
}  // namespace ember

#endif  // x86
#endif  // EMBER_SRC_COMMON_CPU_FEATURES_H_
