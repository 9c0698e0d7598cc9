// Conv2D (NHWC, SAME/VALID, strides, dilations) via im2col + the packed GEMM, and
// DepthwiseConv2dNative as a direct NHWC loop. Also the fused forms the graph optimizer emits
// (core/graph_optimizer.h): `_EmberFusedConv2D`, `_EmberFusedDepthwiseConv2dNative` and
// `_EmberFusedMatMul` take only the input; their filter (batch-norm scales folded in), bias and
// activation ("", "Relu", "Relu6") are attrs, applied to each block of rows as it leaves the
// GEMM while it is still in cache.
#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/op_kernel.h"
#include "core/thread_pool.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/kernel_util.h"
#include "lite/depthwise.h"
#include "lite/gemm_f32.h"
#include "lite/window.h"

#if defined(__x86_64__) || defined(__i386__)
#include "common/cpu_features.h"
#define EMBER_CONV_X86 1
#endif

namespace ember {
namespace kernels {
namespace {

// Geometry shared by both convolutions, checked once per Compute.
struct ConvGeometry {
  int64_t n, h, w, c;      // input
  int64_t kh, kw;          // filter window
  int64_t oh, ow;          // output spatial size
  int64_t ph, pw;          // padding before
  int64_t sh, sw, dh, dw;  // strides, dilations
};

struct DepthwiseArgs {
  const float* x;
  const float* w;
  float* y;
  const float* bias;  // null: no fused bias or activation
  float lo, hi;
  ConvGeometry g;
  int64_t mult;
};

// A depthwise convolution (filter [KH,KW,C,mult]) into y [N,OH,OW,C*mult], split over the
// context's pool.
void RunDepthwise(OpKernelContext* ctx, const DepthwiseArgs& args);

// The bias and activation of a fused op (attrs "bias", "activation"), applied to output rows.
struct Epilogue {
  bool fused = false;
  Tensor bias;  // [channels] float
  float lo = -std::numeric_limits<float>::infinity();
  float hi = std::numeric_limits<float>::infinity();

  Status Read(OpKernelConstruction* c, int64_t channels) {
    fused = true;
    std::string act;
    EMBER_RETURN_IF_ERROR(c->GetAttr("bias", &bias));
    EMBER_RETURN_IF_ERROR(c->GetAttr("activation", &act));
    if (bias.dtype() != DataType::kFloat || bias.NumElements() != channels) {
      return InvalidArg(c->node(), "bias must be float with one value per output channel");
    }
    if (act == "Relu") {
      lo = 0.f;
    } else if (act == "Relu6") {
      lo = 0.f;
      hi = 6.f;
    } else if (!act.empty()) {
      return InvalidArg(c->node(), "unknown fused activation '" + act + "'");
    }
    return Status::OK();
  }

  // y[r, c] = clamp(y[r, c] + bias[c], lo, hi) for r < rows, c < channels.
  void Apply(float* y, int64_t rows, int64_t channels) const;
};

// The epilogue's loop (exact: an add and a clamp), vectorised by the compiler per ISA target.
inline __attribute__((always_inline)) void EpilogueImpl(float* y, const float* b, int64_t rows,
                                                        int64_t channels, float lo, float hi) {
  for (int64_t r = 0; r < rows; ++r) {
    float* __restrict row = y + r * channels;
    for (int64_t c = 0; c < channels; ++c) row[c] = std::min(std::max(row[c] + b[c], lo), hi);
  }
}
void EpilogueGeneric(float* y, const float* b, int64_t rows, int64_t channels, float lo, float hi) {
  EpilogueImpl(y, b, rows, channels, lo, hi);
}
#if defined(EMBER_CONV_X86)
__attribute__((target("avx2,fma"))) void EpilogueAvx2(float* y, const float* b, int64_t rows,
                                                      int64_t channels, float lo, float hi) {
  EpilogueImpl(y, b, rows, channels, lo, hi);
}
#endif

void Epilogue::Apply(float* y, int64_t rows, int64_t channels) const {
  if (!fused) return;
#if defined(EMBER_CONV_X86)
  static const bool avx2 = cpu::HasAvx2Fma();  // once: CPUID traps in a VM
  if (avx2) {
    EpilogueAvx2(y, bias.data<float>(), rows, channels, lo, hi);
    return;
  }
#endif
  EpilogueGeneric(y, bias.data<float>(), rows, channels, lo, hi);
}

class ConvBase : public OpKernel {
 public:
  // `fused`: the filter, bias and activation are attrs and the only input is the image.
  ConvBase(OpKernelConstruction* c, bool fused) : OpKernel(c) {
    DataType dt = c->input_types().empty() ? DataType::kInvalid : c->input_types()[0];
    CheckTypeAllowed(c, "T", dt, dt == DataType::kFloat, "float");
    Status s = RequireNHWC(c);
    if (s.ok()) s = ReadSpatialAttr(c, "strides", 1, &sh_, &sw_);
    if (s.ok()) s = ReadSpatialAttr(c, "dilations", 1, &dh_, &dw_);
    if (s.ok()) s = ParseConvPadding(c->node(), &padding_);
    if (s.ok() && fused && c->attrs().Has("space_to_batch")) {
      s = c->GetAttr("space_to_batch", &space_to_batch_);
      if (s.ok() &&
          (space_to_batch_.size() != 4 || space_to_batch_[0] < 1 || space_to_batch_[1] < 1)) {
        s = InvalidArg(c->node(), "space_to_batch must be [block_h, block_w, padded_h, padded_w]");
      }
    }
    if (s.ok() && fused) s = c->GetAttr("filter", &filter_);
    if (s.ok() && fused && (filter_.dims() != 4 || filter_.dtype() != DataType::kFloat)) {
      s = InvalidArg(c->node(), "fused filter must be a float [KH,KW,C,M] tensor");
    }
    if (s.ok() && fused) {
      const bool depthwise = c->node().op == "_EmberFusedDepthwiseConv2dNative";
      s = epilogue_.Read(
          c, depthwise ? filter_.dim_size(2) * filter_.dim_size(3) : filter_.dim_size(3));
    }
    if (!s.ok()) c->SetStatus(s);
  }

 protected:
  const Tensor& Filter(OpKernelContext* ctx) const {
    return epilogue_.fused ? filter_ : ctx->input(1);
  }

  // Validates input [N,H,W,C] and filter [KH,KW,C',M]; fills `g`. A Conv2D (`grouped`) may
  // have C' a divisor of C: C / C' groups, each of M / groups output channels reading its own
  // C' input channels, as TensorFlow's CPU kernel does (Keras's Conv2D(groups=...)).
  bool Geometry(OpKernelContext* ctx, ConvGeometry* g, bool grouped = false) {
    const Tensor& in = ctx->input(0);
    const Tensor& f = Filter(ctx);
    if (in.dims() != 4) {
      ctx->SetStatus(
          InvalidArg(ctx->node(), "input must be 4-dimensional" + in.shape().DebugString()));
      return false;
    }
    if (f.dims() != 4) {
      ctx->SetStatus(
          InvalidArg(ctx->node(), "filter must be 4-dimensional: " + f.shape().DebugString()));
      return false;
    }
    if (in.dtype() != DataType::kFloat || f.dtype() != DataType::kFloat) {
      ctx->SetStatus(InvalidArg(ctx->node(), "input and filter must be float"));
      return false;
    }
    if (grouped) {
      // TensorFlow's checks and messages, in its order.
      const int64_t groups = f.dim_size(2) > 0 ? in.dim_size(3) / f.dim_size(2) : 0;
      if (f.NumElements() == 0) {
        ctx->SetStatus(InvalidArg(ctx->node(),
                                  "filter must not have zero elements (i.e. all dimensions must be "
                                  "non-zero): " +
                                      f.shape().DebugString()));
        return false;
      }
      if (in.dim_size(3) % f.dim_size(2) != 0 || groups == 0) {
        ctx->SetStatus(InvalidArg(ctx->node(),
                                  "input depth must be evenly divisible by filter "
                                  "depth: " +
                                      std::to_string(in.dim_size(3)) + " vs " +
                                      std::to_string(f.dim_size(2))));
        return false;
      }
      if (f.dim_size(3) % groups != 0) {
        ctx->SetStatus(InvalidArg(
            ctx->node(), "output depth must be evenly divisible by number of groups: " +
                             std::to_string(f.dim_size(3)) + " vs " + std::to_string(groups)));
        return false;
      }
    } else if (in.dim_size(3) != f.dim_size(2)) {
      ctx->SetStatus(InvalidArg(
          ctx->node(), "input depth must equal filter depth: " + std::to_string(in.dim_size(3)) +
                           " vs " + std::to_string(f.dim_size(2))));
      return false;
    }
    for (size_t d = 0; d < 2 && !space_to_batch_.empty(); ++d) {
      // A SpaceToBatchND folded in by the graph optimizer: its check and message.
      const int64_t padded = in.dim_size(static_cast<int>(d) + 1) + space_to_batch_[d + 2];
      if (padded % space_to_batch_[d] != 0) {
        ctx->SetStatus(InvalidArg(
            ctx->node(), "padded_shape[" + std::to_string(d) + "]=" + std::to_string(padded) +
                             " is not divisible by block_shape[" + std::to_string(d) +
                             "]=" + std::to_string(space_to_batch_[d])));
        return false;
      }
    }
    *g = ConvGeometry{in.dim_size(0),
                      in.dim_size(1),
                      in.dim_size(2),
                      in.dim_size(3),
                      f.dim_size(0),
                      f.dim_size(1),
                      0,
                      0,
                      0,
                      0,
                      sh_,
                      sw_,
                      dh_,
                      dw_};
    Status s = WindowedOutputSize(ctx->node(), g->h, g->kh, dh_, sh_, padding_.kind, &g->oh, &g->ph,
                                  padding_.top, padding_.bottom);
    if (s.ok()) {
      s = WindowedOutputSize(ctx->node(), g->w, g->kw, dw_, sw_, padding_.kind, &g->ow, &g->pw,
                             padding_.left, padding_.right);
    }
    if (!s.ok()) ctx->SetStatus(s);
    return s.ok();
  }

  int64_t sh_ = 1, sw_ = 1, dh_ = 1, dw_ = 1;
  // Fused ops the graph optimizer folded a SpaceToBatchND into (block h, w; paddings' sums h,
  // w); empty otherwise.
  std::vector<int64_t> space_to_batch_;
  ConvPadding padding_;
  Tensor filter_;  // fused ops only
  Epilogue epilogue_;
};

// Writes the patch rows [r0, r1) of image `b` (each KH*KW*cg floats, zeros for padding) from
// the input channels [c0, c0 + cg): all of them (c0 = 0, cg = C) but for a grouped convolution.
void Im2Col(const float* in, const ConvGeometry& g, int64_t b, int64_t r0, int64_t r1, float* out,
            int64_t c0 = 0, int64_t cg = -1) {
  if (cg < 0) cg = g.c;
  const int64_t cols = g.kh * g.kw * cg;
  const size_t pixel = static_cast<size_t>(cg) * sizeof(float);
  in += c0;
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t y = r / g.ow, x = r % g.ow;
    float* dst = out + (r - r0) * cols;
    for (int64_t ky = 0; ky < g.kh; ++ky) {
      const int64_t iy = y * g.sh - g.ph + ky * g.dh;
      const int64_t ix0 = x * g.sw - g.pw;
      if (cg == g.c && g.dw == 1 && iy >= 0 && iy < g.h && ix0 >= 0 && ix0 + g.kw <= g.w) {
        // The window's row lies inside the image: its KW pixels are adjacent there, one copy.
        std::memcpy(dst, in + ((b * g.h + iy) * g.w + ix0) * g.c, pixel * g.kw);
        dst += g.kw * g.c;
        continue;
      }
      for (int64_t kx = 0; kx < g.kw; ++kx) {
        const int64_t ix = x * g.sw - g.pw + kx * g.dw;
        if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) {
          std::memset(dst, 0, pixel);
        } else {
          std::memcpy(dst, in + ((b * g.h + iy) * g.w + ix) * g.c, pixel);
        }
        dst += cg;
      }
    }
  }
}

// Packs a constant GEMM operand for lite's float GEMM (lite/gemm_f32.h), when that is the
// AVX-512 kernel: one micro-kernel for both engines, bias and activation in its store, and the
// faster kernel at every MobileNetV2, ResNet50 and classifier shape measured (1.0-1.7x in
// cache; a late layer's 1-16 rows against weights streamed from memory 1.1-1.3x). Its AVX2
// and portable forms are slower than the framework's GEMM: false there, and for sizes past
// its int fields. `w` is [k, n], or [n, k] when `transposed`.
bool PackForLiteGemm(const float* w, int64_t k, int64_t n, bool transposed, const float* bias,
                     lite::PackedF32* out) {
  if (std::strcmp(lite::GemmF32KernelName(), "avx512f") != 0 || k <= 0 || n <= 0 ||
      k >= (int64_t{1} << 30) || n >= (int64_t{1} << 30) || k * n >= (int64_t{1} << 31)) {
    return false;
  }
  if (transposed) {
    lite::PackWeightsF32(w, bias, static_cast<int>(n), static_cast<int>(k), out);
  } else {
    lite::PackWeightsF32KN(w, bias, static_cast<int>(n), static_cast<int>(k), out);
  }
  return true;
}

// The most filter bytes a convolution reading its filter rows in place may have (FilterRowsInPlace
// says why).
constexpr int64_t kMaxInPlaceWeightBytes = 1 << 20;

// Whether lite's GEMM runs convolutions that read their filter rows in place (ConvInPlace): on
// AVX-512 CPUs (where it runs every fused conv, PackForLiteGemm) and on AVX2 ones, where its
// 6x16 FMA block reading the padded image took the 1x56x56x64 -> 64 3x3 conv from 3186 to
// about 2600 us against im2col and the framework's GEMM (lite's CONV_2D of that shape on the
// same machine). Its portable form is slower.
bool LiteGemmReadsFilterRows() {
  const char* name = lite::GemmF32KernelName();
  return std::strcmp(name, "avx512f") == 0 || std::strcmp(name, "avx2-fma") == 0;
}

// y[m, n] = clamp(a[m, k] (rows `stride` floats apart) * W + bias, lo, hi) by lite's GEMM;
// with a pool, the panels of 16 output channels split over it (each output the same sum).
void LiteGemm(const lite::PackedF32& w, const float* a, int64_t m, int64_t stride, float lo,
              float hi, float* y, ThreadPool* pool) {
  const int rows = static_cast<int>(m), ld = static_cast<int>(stride);
  if (pool == nullptr || pool->NumThreads() <= 1 || w.panels < 2) {
    lite::GemmF32(a, rows, ld, w, lo, hi, y);
    return;
  }
  ParallelFor(pool, w.panels, m * w.k * 16 * 2, [&](int64_t j0, int64_t j1) {
    lite::GemmF32Panels(a, rows, ld, w, static_cast<int>(j0), static_cast<int>(j1), lo, hi, y);
  });
}

class Conv2DOp : public ConvBase {
 public:
  Conv2DOp(OpKernelConstruction* c, bool fused) : ConvBase(c, fused) {
    // A fused op's filter is constant: its [KH*KW*C, M] GEMM operand is packed once, here.
    if (c->status().ok() && fused && filter_.NumElements() > 0) {
      const int64_t k = filter_.dim_size(0) * filter_.dim_size(1) * filter_.dim_size(2);
      const int64_t n = filter_.dim_size(3);
      if (!PackForLiteGemm(filter_.data<float>(), k, n, false, epilogue_.bias.data<float>(),
                           &lite_filter_)) {
        SgemmPackB(k, n, filter_.data<float>(), n, &packed_filter_);
        // AVX2: lite's GEMM for the convolutions that read their filter rows in place only
        // (RowsFilter), so only a filter they can read (the byte bound also keeps k and n far
        // inside lite's int fields).
        const int64_t kh = filter_.dim_size(0), kw = filter_.dim_size(1);
        if (FilterFitsInPlace(kh, kw, filter_.dim_size(2), n) && !KeepsFrameworkGemm(kh, kw)) {
          lite::PackWeightsF32KN(filter_.data<float>(), epilogue_.bias.data<float>(),
                                 static_cast<int>(n), static_cast<int>(k), &rows_filter_);
        }
      }
    }
  }

  void Compute(OpKernelContext* ctx) override {
    ConvGeometry g;
    if (!Geometry(ctx, &g, /*grouped=*/true)) return;
    const Tensor& in = ctx->input(0);
    const Tensor& f = Filter(ctx);
    const int64_t oc = f.dim_size(3);
    Tensor* out = nullptr;
    Status s = ctx->allocate_output_uninitialized(0, TensorShape({g.n, g.oh, g.ow, oc}), &out);
    if (!s.ok()) {
      ctx->SetStatus(s);
      return;
    }
    if (out->NumElements() == 0) return;
    const float* x = in.data<float>();
    const float* w = f.data<float>();
    float* y = out->data<float>();
    if (f.dim_size(2) != g.c) {
      ComputeGrouped(ctx, g, x, w, f.dim_size(2), oc, y);
      return;
    }
    const int64_t cols = g.kh * g.kw * g.c;
    // A 1x1 window at stride 1 without padding (EXPLICIT may pad it): the input is the patch
    // matrix.
    const bool pointwise = g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.oh == g.h &&
                           g.ow == g.w && g.ph == 0 && g.pw == 0;
    if (pointwise && !epilogue_.fused) {  // the input already is the patch matrix
      Sgemm(false, false, g.n * g.h * g.w, oc, g.c, x, g.c, w, oc, y, oc, ctx->intra_op_pool());
      return;
    }
    if (FilterRowsInPlace(g, oc)) {
      if (const lite::PackedF32* rows_w = RowsFilter(g, w, oc)) {
        if (ConvInPlace(ctx, g, x, oc, *rows_w, y)) return;
      }
    }
    // Output rows in chunks (patch rows of ~1 MiB for im2col, ~256 KiB of output for a 1x1
    // conv) so the buffer and the block the epilogue reads stay in cache, and chunks run in
    // parallel.
    const int64_t rows = g.oh * g.ow;
    const int64_t budget =
        pointwise ? (1 << 16) / std::max<int64_t>(oc, 1) : (1 << 18) / std::max<int64_t>(cols, 1);
    int64_t chunk = std::max<int64_t>(16, std::min<int64_t>(rows, budget));
    int64_t chunks_per_image = (rows + chunk - 1) / chunk;
    ThreadPool* pool = ctx->intra_op_pool();
    const int64_t threads = pool == nullptr ? 1 : pool->NumThreads();
    if (threads > 1 && g.n % threads != 0 && chunks_per_image > 1 &&
        chunks_per_image % threads != 0) {
      // Equal shares per thread (7 chunks on 2 threads would run 4 + 3): the next multiple of
      // the thread count, in rows rounded to the GEMM's 12-row panels.
      const int64_t want = (chunks_per_image + threads - 1) / threads * threads;
      const int64_t even = ((rows + want - 1) / want + 11) / 12 * 12;
      if (even >= 16 && (rows + even - 1) / even == want) {
        chunk = even;
        chunks_per_image = want;
      }
    }
    const int64_t tasks = g.n * chunks_per_image;
    // Fewer chunks than threads (a late layer's few rows against megabytes of weights): the
    // chunks run one after another and each GEMM splits its columns over the pool instead.
    const bool split_gemm = pool != nullptr && tasks < pool->NumThreads();
    auto run_chunks = [&](int64_t t0, int64_t t1) {
      // Per-thread patch buffer, reused across calls (no page faults or zeroing per call).
      thread_local std::vector<float> patches;
      if (!pointwise && patches.size() < static_cast<size_t>(chunk * cols)) {
        patches.resize(static_cast<size_t>(chunk * cols));
      }
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t b = t / chunks_per_image;
        const int64_t r0 = (t % chunks_per_image) * chunk;
        const int64_t r1 = std::min(rows, r0 + chunk);
        const float* a = x + (b * rows + r0) * cols;
        if (!pointwise) {
          Im2Col(x, g, b, r0, r1, patches.data());
          a = patches.data();
        }
        float* dst = y + (b * rows + r0) * oc;
        if (!lite_filter_.data.empty()) {
          LiteGemm(lite_filter_, a, r1 - r0, cols, epilogue_.lo, epilogue_.hi, dst,
                   split_gemm ? pool : nullptr);
          continue;
        }
        if (packed_filter_.data.empty() || !SgemmPrepacked(r1 - r0, a, cols, packed_filter_, dst,
                                                           oc, split_gemm ? pool : nullptr)) {
          Sgemm(false, false, r1 - r0, oc, cols, a, cols, w, oc, dst, oc,
                split_gemm ? pool : nullptr);
        }
        epilogue_.Apply(dst, r1 - r0, oc);
      }
    };
    if (split_gemm) {
      run_chunks(0, tasks);
    } else {
      ParallelFor(pool, tasks, chunk * cols * oc * 2, run_chunks);
    }
  }

 private:
  // A grouped convolution (filter depth cg, a divisor of C; Geometry checked it): each group
  // of cg input channels convolved with its oc / groups filters, one GEMM per group over
  // im2col patches of its channels. A filter depth of 1 is a depthwise convolution: the filter
  // [KH,KW,1,oc] is the depthwise filter [KH,KW,C,oc/C] in memory, the same sums.
  void ComputeGrouped(OpKernelContext* ctx, const ConvGeometry& g, const float* x, const float* w,
                      int64_t cg, int64_t oc, float* y) const {
    const int64_t groups = g.c / cg, og = oc / groups;
    if (cg == 1) {
      RunDepthwise(ctx,
                   DepthwiseArgs{x, w, y, epilogue_.fused ? epilogue_.bias.data<float>() : nullptr,
                                 epilogue_.lo, epilogue_.hi, g, og});
      return;
    }
    const int64_t rows = g.oh * g.ow, cols = g.kh * g.kw * cg;
    ThreadPool* pool = ctx->intra_op_pool();
    const int64_t threads = pool == nullptr ? 1 : pool->NumThreads();
    // Chunks of output rows whose patches (of one group) fit in ~1 MiB, enough of them for
    // every thread; the groups of a chunk run one after another on its thread.
    const int64_t per_thread = (g.n * rows + threads - 1) / threads;
    const int64_t chunk =
        std::max<int64_t>(1, std::min({rows, (1 << 18) / std::max<int64_t>(cols, 1),
                                       std::max<int64_t>(per_thread, 16)}));
    const int64_t chunks_per_image = (rows + chunk - 1) / chunk;
    ParallelFor(pool, g.n * chunks_per_image, chunk * cols * oc * 2, [&](int64_t t0, int64_t t1) {
      thread_local std::vector<float> patches;
      if (patches.size() < static_cast<size_t>(chunk * cols)) {
        patches.resize(static_cast<size_t>(chunk * cols));
      }
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t b = t / chunks_per_image;
        const int64_t r0 = (t % chunks_per_image) * chunk;
        const int64_t r1 = std::min(rows, r0 + chunk);
        float* dst = y + (b * rows + r0) * oc;
        for (int64_t k = 0; k < groups; ++k) {
          Im2Col(x, g, b, r0, r1, patches.data(), k * cg, cg);
          Sgemm(false, false, r1 - r0, og, cols, patches.data(), cols, w + k * og, oc, dst + k * og,
                oc, nullptr);
        }
        epilogue_.Apply(dst, r1 - r0, oc);
      }
    });
  }

  // Whether lite's GEMM reads the filter rows in place (ConvInPlace) instead of from im2col
  // patches, as lite's CONV_2D does: at most lite::kMaxInPlaceRuns runs (lite/window.h), rows of
  // at least 8 pixels, and weights that stay in L2 over the output rows (each output row is one
  // GEMM of ow rows: a late layer's megabytes of weights would stream from memory once per
  // output row). Measured on a Zen 5 (1 MiB L2), one thread, per node: MobileNetV2's first conv
  // (3x3/2, 3 -> 16) 32.7 -> 16.6 us, ResNet50's conv1 (7x7/2) 178 -> 100 us, its 3x3 64-channel
  // convs 118 -> 92 us; its 128-channel ones (590 KiB of weights) 103 -> 96 us with this limit
  // at 1 MiB, and the 256-channel ones (2.3 MiB) slower in place (125 -> 127 us).
  bool FilterRowsInPlace(const ConvGeometry& g, int64_t oc) const {
    return FilterFitsInPlace(g.kh, g.kw, g.c, oc) && g.ow >= 8 && g.sw * g.c < (int64_t{1} << 30) &&
           g.ow < (int64_t{1} << 30);
  }
  // FilterRowsInPlace's conditions that the filter and the op's attributes decide (all of them
  // known when a fused op packs its filter): at most lite::kMaxInPlaceRuns runs, at most
  // kMaxInPlaceWeightBytes.
  bool FilterFitsInPlace(int64_t kh, int64_t kw, int64_t c, int64_t oc) const {
    return LiteGemmReadsFilterRows() &&
           lite::InPlaceRunCount(kh, kw, dw_) <= lite::kMaxInPlaceRuns &&
           kh * kw * c * oc * static_cast<int64_t>(sizeof(float)) <= kMaxInPlaceWeightBytes;
  }
  // On AVX2 a 1x1 conv keeps the framework's GEMM over its input as it lies (only windows of
  // several pixels were measured faster in place there): lite_filter_ (AVX-512) only.
  static bool KeepsFrameworkGemm(int64_t kh, int64_t kw) { return kh * kw == 1; }

  // The filter as lite's GEMM reads it: packed once for a fused op (lite_filter_ on AVX-512,
  // rows_filter_ on AVX2), or, for a Conv2D whose filter is an input, packed on each run into
  // the thread's buffer (16 adjacent floats per copy: ~1% of the conv). Null where there is none.
  const lite::PackedF32* RowsFilter(const ConvGeometry& g, const float* w, int64_t oc) const {
    if (!lite_filter_.data.empty()) return &lite_filter_;
    if (KeepsFrameworkGemm(g.kh, g.kw)) return nullptr;
    if (!rows_filter_.data.empty()) return &rows_filter_;
    if (epilogue_.fused) return nullptr;
    thread_local lite::PackedF32 per_run;
    lite::PackWeightsF32KN(w, nullptr, static_cast<int>(oc), static_cast<int>(g.kh * g.kw * g.c),
                           &per_run);
    return &per_run;
  }

  // The input is copied into a zero-bordered image (the padding written as zeros, and past the
  // bottom and right edge as far as the dilated windows reach); each output row is then one GEMM
  // whose row r reads the window's runs (lite::InPlaceRuns) in (ky, kx, c) order, rows sw * c
  // floats apart. Same sums in the same order as lite's GEMM over im2col patches (the AVX-512
  // im2col path): the same values; on AVX2 the im2col path's framework GEMM sums in depth blocks,
  // within float tolerance of it. False (nothing written) when the image cannot be allocated: the
  // im2col path, whose buffer is bounded, runs instead.
  bool ConvInPlace(OpKernelContext* ctx, const ConvGeometry& g, const float* x, int64_t oc,
                   const lite::PackedF32& filter, float* y) const {
    const int64_t padded_h = lite::InPlaceExtent(g.h, g.ph, g.oh, g.sh, g.kh, g.dh);
    const int64_t padded_w = lite::InPlaceExtent(g.w, g.pw, g.ow, g.sw, g.kw, g.dw);
    const int64_t prow = padded_w * g.c;  // floats per padded row
    Tensor img = Tensor::Uninitialized(DataType::kFloat, TensorShape({g.n, padded_h, prow}));
    float* p = img.data<float>();
    if (p == nullptr) return false;
    const int64_t row = g.w * g.c, left = g.pw * g.c, right = prow - left - row;
    for (int64_t b = 0; b < g.n; ++b) {
      for (int64_t iy = 0; iy < padded_h; ++iy) {
        float* dst = p + (b * padded_h + iy) * prow;
        const int64_t sy = iy - g.ph;
        if (sy < 0 || sy >= g.h) {
          std::fill(dst, dst + prow, 0.f);
          continue;
        }
        std::fill(dst, dst + left, 0.f);
        std::memcpy(dst + left, x + (b * g.h + sy) * row, sizeof(float) * static_cast<size_t>(row));
        std::fill(dst + left + row, dst + left + row + right, 0.f);
      }
    }
    ptrdiff_t seg[lite::kMaxInPlaceRuns];
    const int nseg = lite::InPlaceRuns(static_cast<int>(g.kh), static_cast<int>(g.kw),
                                       static_cast<int>(g.dh), static_cast<int>(g.dw),
                                       static_cast<size_t>(prow), static_cast<size_t>(g.c), seg);
    const int ow = static_cast<int>(g.ow);
    const int x_stride = static_cast<int>(g.sw * g.c);
    ParallelFor(ctx->intra_op_pool(), g.n * g.oh, g.ow * g.kh * g.kw * g.c * oc * 2,
                [&](int64_t r0, int64_t r1) {
                  for (int64_t r = r0; r < r1; ++r) {
                    const int64_t b = r / g.oh, oy = r % g.oh;
                    lite::GemmF32Segments(p + (b * padded_h + oy * g.sh) * prow, ow, x_stride, seg,
                                          nseg, filter, epilogue_.lo, epilogue_.hi,
                                          y + r * g.ow * oc);
                  }
                });
    return true;
  }

  SgemmPackedB packed_filter_;   // fused ops only, without lite's AVX-512 GEMM
  lite::PackedF32 lite_filter_;  // fused ops only, with it
  lite::PackedF32 rows_filter_;  // fused ops on AVX2: for ConvInPlace only
};

// Output rows [r0, r1) (of N*OH) of a depthwise convolution, pixel by pixel across channels.
// Plain loops, vectorised by the compiler for each ISA target below.
inline __attribute__((always_inline)) void DepthwiseRowsImpl(const DepthwiseArgs& a, int64_t r0,
                                                             int64_t r1) {
  const ConvGeometry& g = a.g;
  const int64_t oc = g.c * a.mult;
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t b = r / g.oh, oy = r % g.oh;
    for (int64_t ox = 0; ox < g.ow; ++ox) {
      float* __restrict dst = a.y + ((b * g.oh + oy) * g.ow + ox) * oc;
      if (a.bias != nullptr) {
        std::copy(a.bias, a.bias + oc, dst);
      } else {
        std::fill(dst, dst + oc, 0.f);
      }
      for (int64_t ky = 0; ky < g.kh; ++ky) {
        const int64_t iy = oy * g.sh - g.ph + ky * g.dh;
        if (iy < 0 || iy >= g.h) continue;
        for (int64_t kx = 0; kx < g.kw; ++kx) {
          const int64_t ix = ox * g.sw - g.pw + kx * g.dw;
          if (ix < 0 || ix >= g.w) continue;
          const float* __restrict src = a.x + ((b * g.h + iy) * g.w + ix) * g.c;
          const float* __restrict wk = a.w + (ky * g.kw + kx) * oc;
          if (a.mult == 1) {
            for (int64_t c = 0; c < g.c; ++c) dst[c] += src[c] * wk[c];
          } else {
            for (int64_t c = 0; c < g.c; ++c) {
              for (int64_t m = 0; m < a.mult; ++m) {
                dst[c * a.mult + m] += src[c] * wk[c * a.mult + m];
              }
            }
          }
        }
      }
      if (a.bias != nullptr) {
        for (int64_t c = 0; c < oc; ++c) dst[c] = std::min(std::max(dst[c], a.lo), a.hi);
      }
    }
  }
}

void DepthwiseRowsGeneric(const DepthwiseArgs& a, int64_t r0, int64_t r1) {
  DepthwiseRowsImpl(a, r0, r1);
}
#if defined(EMBER_CONV_X86)
__attribute__((target("avx2,fma"))) void DepthwiseRowsAvx2(const DepthwiseArgs& a, int64_t r0,
                                                           int64_t r1) {
  DepthwiseRowsImpl(a, r0, r1);
}
#endif

// The geometry in lite's terms; c = 0 when a size does not fit its int fields.
lite::WindowGeometry LiteGeometry(const ConvGeometry& g) {
  const int64_t v[] = {g.h, g.w, g.c, g.oh, g.ow, g.kh, g.kw, g.sh, g.sw, g.dh, g.dw, g.ph, g.pw};
  for (int64_t x : v) {
    if (x < 0 || x > (int64_t{1} << 30)) return {};
  }
  if (g.h * g.w * g.c > (int64_t{1} << 30) || g.oh * g.ow * g.c > (int64_t{1} << 30)) return {};
  auto i = [](int64_t v) { return static_cast<int>(v); };
  // lite's field order: ih, iw, c, oh, ow, kh, kw, strides, dilations, padding (h then w).
  return lite::WindowGeometry{i(g.h),  i(g.w),  i(g.c),  i(g.oh), i(g.ow), i(g.kh), i(g.kw),
                              i(g.sh), i(g.sw), i(g.dh), i(g.dw), i(g.ph), i(g.pw)};
}

class DepthwiseConvOp : public ConvBase {
 public:
  DepthwiseConvOp(OpKernelConstruction* c, bool fused) : ConvBase(c, fused) {}

  void Compute(OpKernelContext* ctx) override {
    ConvGeometry g;
    if (!Geometry(ctx, &g)) return;
    const Tensor& f = Filter(ctx);
    const int64_t mult = f.dim_size(3);
    const int64_t oc = g.c * mult;
    Tensor* out = nullptr;
    Status s = ctx->allocate_output_uninitialized(0, TensorShape({g.n, g.oh, g.ow, oc}), &out);
    if (!s.ok()) {
      ctx->SetStatus(s);
      return;
    }
    RunDepthwise(
        ctx, DepthwiseArgs{ctx->input(0).data<float>(), f.data<float>(), out->data<float>(),
                           epilogue_.fused ? epilogue_.bias.data<float>() : nullptr, epilogue_.lo,
                           epilogue_.hi, g, mult});
  }
};

void RunDepthwise(OpKernelContext* ctx, const DepthwiseArgs& args) {
  const ConvGeometry& g = args.g;
  const int64_t oc = g.c * args.mult;
#if defined(EMBER_CONV_X86)
  // Once per process: each check runs CPUID, which traps to the hypervisor in a VM (a
  // MobileNet's depthwise layers spent a fifth of their time there).
  static const bool avx2 = cpu::HasAvx2Fma();
  static const bool avx512 = cpu::HasAvx512Vnni();
#else
  const bool avx2 = false;
  const bool avx512 = false;
#endif
  // Depth multiplier 1 on AVX-512 CPUs: lite's rows (register-blocked across output pixels,
  // fused multiply-adds; lite/depthwise.h), one micro-kernel for both engines. MobileNetV2's
  // 17 depthwise layers: 186 -> 50 us a run.
  const lite::WindowGeometry lg =
      avx512 && args.mult == 1 ? LiteGeometry(g) : lite::WindowGeometry{};
  if (lg.c > 0 && lite::DepthwiseAvx512Usable(lg)) {
    const float* x = args.x;
    const size_t in_image = static_cast<size_t>(g.h * g.w * g.c);
    const size_t out_row = static_cast<size_t>(g.ow * g.c);
    ParallelFor(
        ctx->intra_op_pool(), g.n * g.oh, g.ow * g.kh * g.kw * oc * 2, [&](int64_t r0, int64_t r1) {
          for (int64_t r = r0; r < r1; ++r) {
            lite::DepthwiseRowF32Avx512(lg, x + (r / g.oh) * in_image, args.w, args.bias, args.lo,
                                        args.hi, static_cast<int>(r % g.oh), args.y + r * out_row);
          }
        });
    return;
  }
  ParallelFor(ctx->intra_op_pool(), g.n * g.oh, g.ow * g.kh * g.kw * oc * 2,
              [&](int64_t r0, int64_t r1) {
#if defined(EMBER_CONV_X86)
                if (avx2) {
                  DepthwiseRowsAvx2(args, r0, r1);
                  return;
                }
#endif
                (void)avx2;
                DepthwiseRowsGeneric(args, r0, r1);
              });
}

// MatMul with a constant right-hand side, bias and activation (input [M,K], no transpose_a).
class FusedMatMulOp : public OpKernel {
 public:
  explicit FusedMatMulOp(OpKernelConstruction* c) : OpKernel(c) {
    Status s = c->GetAttr("filter", &w_);
    bool ta = false;
    if (s.ok()) s = c->attrs().GetOr("transpose_a", &ta, false);
    if (s.ok()) s = c->attrs().GetOr("transpose_b", &transpose_b_, false);
    if (s.ok() && (ta || w_.dims() != 2 || w_.dtype() != DataType::kFloat)) {
      s = InvalidArg(c->node(), "fused MatMul needs a float [K,N] filter and no transpose_a");
    }
    if (s.ok()) s = epilogue_.Read(c, w_.dim_size(transpose_b_ ? 0 : 1));
    if (!s.ok()) c->SetStatus(s);
    // The constant [K,N] weights are packed once, here (a classifier's megabytes of weights
    // times one or a few rows: read in the packed order, they stream about twice as fast).
    if (s.ok() && w_.NumElements() > 0 &&
        !PackForLiteGemm(w_.data<float>(), w_.dim_size(transpose_b_ ? 1 : 0),
                         w_.dim_size(transpose_b_ ? 0 : 1), transpose_b_,
                         epilogue_.bias.data<float>(), &lite_w_) &&
        !transpose_b_) {
      SgemmPackB(w_.dim_size(0), w_.dim_size(1), w_.data<float>(), w_.dim_size(1), &packed_w_);
    }
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const int64_t k = w_.dim_size(transpose_b_ ? 1 : 0), n = w_.dim_size(transpose_b_ ? 0 : 1);
    if (a.dims() != 2 || a.dim_size(1) != k || a.dtype() != DataType::kFloat) {
      ctx->SetStatus(
          InvalidArg(ctx->node(), "Matrix size-incompatible: In[0]: " + a.shape().DebugString() +
                                      ", In[1]: " + w_.shape().DebugString()));
      return;
    }
    const int64_t m = a.dim_size(0);
    Tensor* out = nullptr;
    Status s = ctx->allocate_output_uninitialized(0, TensorShape({m, n}), &out);
    if (!s.ok()) {
      ctx->SetStatus(s);
      return;
    }
    if (out->NumElements() == 0) return;
    if (!lite_w_.data.empty() && m < (int64_t{1} << 30) && m * k < (int64_t{1} << 40)) {
      // Split over the pool as SgemmPrepacked would: products of 2 MFLOP and more.
      ThreadPool* pool =
          2.0 * static_cast<double>(m * k * n) >= 4e6 ? ctx->intra_op_pool() : nullptr;
      LiteGemm(lite_w_, a.data<float>(), m, k, epilogue_.lo, epilogue_.hi, out->data<float>(),
               pool);
      return;
    }
    if (packed_w_.data.empty() || !SgemmPrepacked(m, a.data<float>(), k, packed_w_,
                                                  out->data<float>(), n, ctx->intra_op_pool())) {
      Sgemm(false, transpose_b_, m, n, k, a.data<float>(), k, w_.data<float>(),
            transpose_b_ ? k : n, out->data<float>(), n, ctx->intra_op_pool());
    }
    epilogue_.Apply(out->data<float>(), m, n);
  }

 private:
  Tensor w_;
  SgemmPackedB packed_w_;   // w_ packed (not with transpose_b), without lite's AVX-512 GEMM
  lite::PackedF32 lite_w_;  // w_ packed for lite's GEMM, with it
  bool transpose_b_ = false;
  Epilogue epilogue_;
};

// Output shape [N, OH, OW, OC] where known; OC = filter[3] (Conv2D) or filter[2]*filter[3].
ShapeFn ConvShape(bool depthwise) {
  return [depthwise](ShapeContext* c) {
    c->output_shapes.assign(1, UnknownShape());
    if (c->input_shapes.size() < 2) return Status::OK();
    const PartialShape& in = c->input_shapes[0];
    const PartialShape& f = c->input_shapes[1];
    if (in.unknown_rank || f.unknown_rank) return Status::OK();
    if (in.dims.size() != 4 || f.dims.size() != 4) {
      return InvalidArg(*c->node, "input and filter must be rank 4, got " + DimsString(in.dims) +
                                      " and " + DimsString(f.dims));
    }
    AttrReader r(*c->node);
    std::vector<int64_t> strides, dil;
    ConvPadding pad;
    EMBER_RETURN_IF_ERROR(r.Get("strides", &strides));
    EMBER_RETURN_IF_ERROR(ParseConvPadding(*c->node, &pad));
    EMBER_RETURN_IF_ERROR(r.GetOr("dilations", &dil, std::vector<int64_t>{1, 1, 1, 1}));
    if (strides.size() != 4 || dil.size() != 4) return Status::OK();
    std::vector<int64_t> out = {in.dims[0], -1, -1, -1};
    for (int d = 1; d <= 2; ++d) {
      if (in.dims[d] < 0 || f.dims[d - 1] < 0) continue;
      int64_t o = 0, p = 0;
      EMBER_RETURN_IF_ERROR(
          WindowedOutputSize(*c->node, in.dims[d], f.dims[d - 1], dil[d], strides[d], pad.kind, &o,
                             &p, d == 1 ? pad.top : pad.left, d == 1 ? pad.bottom : pad.right));
      out[d] = o;
    }
    if (!depthwise && in.dims[3] >= 0 && f.dims[2] >= 0) {
      // TensorFlow's shape function: a grouped Conv2D's depths must divide (nn_ops.cc).
      if (f.dims[2] == 0) return InvalidArg(*c->node, "Depth of filter must not be 0");
      if (in.dims[3] % f.dims[2] != 0) {
        return InvalidArg(*c->node, "Depth of input (" + std::to_string(in.dims[3]) +
                                        ") is not a multiple of input depth of filter (" +
                                        std::to_string(f.dims[2]) + ")");
      }
      const int64_t groups = in.dims[3] / f.dims[2];
      if (groups > 1 && f.dims[3] >= 0 && f.dims[3] % groups != 0) {
        return InvalidArg(*c->node, "Depth of output (" + std::to_string(f.dims[3]) +
                                        ") is not a multiple of the number of groups (" +
                                        std::to_string(groups) + ")");
      }
    }
    if (!depthwise) {
      out[3] = f.dims[3];
    } else if (f.dims[2] >= 0 && f.dims[3] >= 0) {
      out[3] = f.dims[2] * f.dims[3];
    }
    c->output_shapes[0] = KnownShape(out);
    return Status::OK();
  };
}

// The fused ops: the filter is the "filter" attr, so the shape is the plain op's with it.
ShapeFn FusedShape(const ShapeFn& plain) {
  return [plain](ShapeContext* c) {
    AttrReader r(*c->node);
    Tensor filter;
    EMBER_RETURN_IF_ERROR(r.Get("filter", &filter));
    ShapeContext inner = *c;
    inner.input_shapes.resize(1);
    inner.input_values.resize(1);
    inner.input_shapes.push_back(KnownShape(filter.shape().dim_sizes()));
    inner.input_values.push_back(nullptr);
    EMBER_RETURN_IF_ERROR(plain(&inner));
    c->output_shapes = inner.output_shapes;
    return Status::OK();
  };
}

Status FusedMatMulShape(ShapeContext* c) {
  c->output_shapes.assign(1, UnknownShape());
  AttrReader r(*c->node);
  Tensor filter;
  bool tb = false;
  EMBER_RETURN_IF_ERROR(r.Get("filter", &filter));
  EMBER_RETURN_IF_ERROR(r.GetOr("transpose_b", &tb, false));
  if (filter.dims() != 2 || c->input_shapes.empty() || c->input_shapes[0].unknown_rank) {
    return Status::OK();
  }
  const PartialShape& a = c->input_shapes[0];
  if (a.dims.size() != 2) return InvalidArg(*c->node, "input must be a matrix");
  c->output_shapes[0] = KnownShape({a.dims[0], filter.dim_size(tb ? 0 : 1)});
  return Status::OK();
}

ArgDef TArg(const char* name) {
  ArgDef a;
  a.name = name;
  a.type_attr = "T";
  return a;
}

[[maybe_unused]] const bool kRegistered = [] {
  OpDef conv;
  conv.name = "Conv2D";
  conv.inputs = {TArg("input"), TArg("filter")};
  conv.outputs = {TArg("output")};
  conv.shape_fn = ConvShape(false);
  OpRegistry::Global()->Register(std::move(conv));
  KernelRegistry::Global()->Register("Conv2D", "CPU", [](OpKernelConstruction* c) {
    return std::unique_ptr<OpKernel>(new Conv2DOp(c, false));
  });
  OpDef dw;
  dw.name = "DepthwiseConv2dNative";
  dw.inputs = {TArg("input"), TArg("filter")};
  dw.outputs = {TArg("output")};
  dw.shape_fn = ConvShape(true);
  OpRegistry::Global()->Register(std::move(dw));
  KernelRegistry::Global()->Register("DepthwiseConv2dNative", "CPU", [](OpKernelConstruction* c) {
    return std::unique_ptr<OpKernel>(new DepthwiseConvOp(c, false));
  });
  OpDef fconv;
  fconv.name = "_EmberFusedConv2D";
  fconv.inputs = {TArg("input")};
  fconv.outputs = {TArg("output")};
  fconv.shape_fn = FusedShape(ConvShape(false));
  OpRegistry::Global()->Register(std::move(fconv));
  KernelRegistry::Global()->Register("_EmberFusedConv2D", "CPU", [](OpKernelConstruction* c) {
    return std::unique_ptr<OpKernel>(new Conv2DOp(c, true));
  });
  OpDef fdw;
  fdw.name = "_EmberFusedDepthwiseConv2dNative";
  fdw.inputs = {TArg("input")};
  fdw.outputs = {TArg("output")};
  fdw.shape_fn = FusedShape(ConvShape(true));
  OpRegistry::Global()->Register(std::move(fdw));
  KernelRegistry::Global()->Register(
      "_EmberFusedDepthwiseConv2dNative", "CPU", [](OpKernelConstruction* c) {
        return std::unique_ptr<OpKernel>(new DepthwiseConvOp(c, true));
      });
  OpDef fmm;
  fmm.name = "_EmberFusedMatMul";
  fmm.inputs = {TArg("a")};
  fmm.outputs = {TArg("product")};
  fmm.shape_fn = FusedMatMulShape;
  OpRegistry::Global()->Register(std::move(fmm));
  KernelRegistry::Global()->Register("_EmberFusedMatMul", "CPU", [](OpKernelConstruction* c) {
    return std::unique_ptr<OpKernel>(new FusedMatMulOp(c));
  });
  return true;
}();

}  // namespace
}  // namespace kernels
}  // namespace ember
