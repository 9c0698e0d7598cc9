// Conv3D and Conv3DBackpropInputV2 (NDHWC, float), what Keras's Conv3D and Conv3DTranspose
// emit. Conv3D is im2col over chunks of output voxels, each chunk one GEMM against the filter
// [KD*KH*KW*C, M] as stored (a 1x1x1 stride-1 convolution is one GEMM over the input itself).
// The backprop is the transpose: each output-gradient voxel's GEMM row dy[voxel, M] * filter^T
// scattered back into the volume (col2im). Checks and messages follow TensorFlow's CPU kernels
// (conv_ops_3d.cc, conv_grad_ops_3d.cc), in their order; like them, dilations must be 1.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/op_kernel.h"
#include "core/thread_pool.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/op_util.h"

namespace ember {
namespace kernels {
namespace {

// A 5-element NDHWC list attr ("strides", "dilations") into its three spatial entries, with
// TensorFlow's Conv3D messages; `what` is "strides" or "dilation rates".
Status ReadVolumeAttr(OpKernelConstruction* c, const char* attr, const char* what,
                      const char* field, int64_t out[3]) {
  std::vector<int64_t> v;
  EMBER_RETURN_IF_ERROR(c->attrs().GetOr(attr, &v, std::vector<int64_t>{1, 1, 1, 1, 1}));
  if (v.size() != 5) {
    return InvalidArg(c->node(), std::string(field) + " field must specify 5 dimensions");
  }
  if (v[0] != 1 || v[4] != 1) {
    return InvalidArg(c->node(), std::string("Current implementation does not yet support ") +
                                     what + " in the batch and depth dimensions.");
  }
  for (int i = 0; i < 3; ++i) {
    if (v[1 + i] <= 0) {
      return InvalidArg(
          c->node(),
          std::string(std::strcmp(attr, "strides") == 0 ? "Spatial strides" : "Dilated rates") +
              " should be larger than 0.");
    }
    out[i] = v[1 + i];
  }
  return Status::OK();
}

Status RequireNDHWC(OpKernelConstruction* c) {
  std::string fmt;
  EMBER_RETURN_IF_ERROR(c->attrs().GetOr<std::string>("data_format", &fmt, "NDHWC"));
  if (fmt != "NDHWC") {
    return NodeError(c->node(), Code::kUnimplemented,
                     "data_format " + fmt + " is not supported on CPU; use NDHWC");
  }
  return Status::OK();
}

// One convolution's geometry: the volume x [N, D, H, W, C], the filter [KD, KH, KW, C, M] and
// the output y [N, OD, OH, OW, M]; pad[] is the padding before each spatial dimension.
struct Volume {
  int64_t n, c, m;
  int64_t in[3], k[3], out[3], stride[3], pad[3];
  int64_t InVoxels() const { return in[0] * in[1] * in[2]; }
  int64_t OutVoxels() const { return out[0] * out[1] * out[2]; }
  int64_t PatchSize() const { return k[0] * k[1] * k[2] * c; }
  bool Pointwise() const {
    return k[0] == 1 && k[1] == 1 && k[2] == 1 && stride[0] == 1 && stride[1] == 1 &&
           stride[2] == 1;
  }
};

// Rows per chunk so that a chunk's patches take about 1 MiB.
int64_t ChunkRows(const Volume& g) {
  return std::max<int64_t>(1, std::min<int64_t>(g.OutVoxels(), (1 << 18) / g.PatchSize()));
}

// Visits each filter tap of output voxel `r` that lands inside the volume: fn(tap, voxel), with
// tap the patch offset (in units of C) and voxel the input voxel index.
template <typename F>
void ForEachTap(const Volume& g, int64_t r, F&& fn) {
  const int64_t ox = r % g.out[2], oy = (r / g.out[2]) % g.out[1], oz = r / (g.out[2] * g.out[1]);
  const int64_t z0 = oz * g.stride[0] - g.pad[0], y0 = oy * g.stride[1] - g.pad[1],
                x0 = ox * g.stride[2] - g.pad[2];
  int64_t tap = 0;
  for (int64_t kz = 0; kz < g.k[0]; ++kz) {
    const int64_t iz = z0 + kz;
    if (iz < 0 || iz >= g.in[0]) {
      tap += g.k[1] * g.k[2];
      continue;
    }
    for (int64_t ky = 0; ky < g.k[1]; ++ky) {
      const int64_t iy = y0 + ky;
      if (iy < 0 || iy >= g.in[1]) {
        tap += g.k[2];
        continue;
      }
      for (int64_t kx = 0; kx < g.k[2]; ++kx, ++tap) {
        const int64_t ix = x0 + kx;
        if (ix < 0 || ix >= g.in[2]) continue;
        fn(tap, (iz * g.in[1] + iy) * g.in[2] + ix);
      }
    }
  }
}

class Conv3DOp : public OpKernel {
 public:
  explicit Conv3DOp(OpKernelConstruction* c) : OpKernel(c) {
    DataType dt = c->input_types().empty() ? DataType::kInvalid : c->input_types()[0];
    if (!CheckTypeAllowed(c, "T", dt, dt == DataType::kFloat, "float")) return;
    int64_t dil[3] = {1, 1, 1};
    Status s = RequireNDHWC(c);
    if (s.ok()) s = ReadVolumeAttr(c, "strides", "strides", "Sliding window strides", stride_);
    if (s.ok()) {
      s = ReadVolumeAttr(c, "dilations", "dilation rates", "Dilation rates", dil);
    }
    if (s.ok() && (dil[0] != 1 || dil[1] != 1 || dil[2] != 1)) {
      s = InvalidArg(c->node(),
                     "CPU implementation of Conv3D currently only supports dilated rates of 1.");
    }
    if (s.ok()) s = ParsePadding(c, &padding_);
    if (!s.ok()) c->SetStatus(s);
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& filter = ctx->input(1);
    Volume g;
    EMBER_OP_REQUIRES_OK(ctx, Validate(ctx->node(), x, filter, &g));
    Tensor* out = nullptr;
    EMBER_OP_REQUIRES_OK(
        ctx, ctx->allocate_output(0, TensorShape({g.n, g.out[0], g.out[1], g.out[2], g.m}), &out));
    if (out->NumElements() == 0) return;
    const float* src = x.data<float>();
    const float* w = filter.data<float>();
    float* y = out->data<float>();
    ThreadPool* pool = ctx->intra_op_pool();
    if (g.Pointwise()) {
      Sgemm(false, false, g.n * g.OutVoxels(), g.m, g.c, src, g.c, w, g.m, y, g.m, pool);
      return;
    }
    for (int64_t b = 0; b < g.n; ++b) {
      Volume1(g, src + b * g.InVoxels() * g.c, w, y + b * g.OutVoxels() * g.m, pool);
    }
  }

 private:
  Status Validate(const NodeDef& node, const Tensor& x, const Tensor& filter, Volume* g) const {
    if (x.dims() != 5) return InvalidArg(node, "input must be 5-dimensional");
    if (filter.dims() != 5) return InvalidArg(node, "filter must be 5-dimensional");
    const int64_t in_depth = x.dim_size(4), filter_depth = filter.dim_size(3);
    if (filter_depth == 0 || in_depth % filter_depth != 0) {
      return InvalidArg(node, "Input depth must be evenly divisible by filter depth: " +
                                  std::to_string(in_depth) + " vs " + std::to_string(filter_depth));
    }
    if (filter.NumElements() == 0) {
      return InvalidArg(
          node, "filter must not have zero elements (i.e. all dimensions must be non-zero)");
    }
    if (in_depth != filter_depth) {
      // TensorFlow's CPU kernel has no grouped form.
      return InvalidArg(node, "Number of channels in filter (" + std::to_string(filter_depth) +
                                  ") must match last dimension of input (" +
                                  std::to_string(in_depth) + ")");
    }
    g->n = x.dim_size(0);
    g->c = in_depth;
    g->m = filter.dim_size(4);
    for (int i = 0; i < 3; ++i) {
      g->in[i] = x.dim_size(1 + i);
      g->k[i] = filter.dim_size(i);
      g->stride[i] = stride_[i];
      EMBER_RETURN_IF_ERROR(WindowedOutputSize(node, g->in[i], g->k[i], 1, stride_[i], padding_,
                                               &g->out[i], &g->pad[i]));
    }
    return Status::OK();
  }

  // One volume: output voxels in chunks, each chunk's patches gathered then one GEMM.
  static void Volume1(const Volume& g, const float* x, const float* w, float* y, ThreadPool* pool) {
    const int64_t rows = g.OutVoxels(), cols = g.PatchSize(), chunk = ChunkRows(g);
    thread_local std::vector<float> patches;
    if (patches.size() < static_cast<size_t>(chunk * cols)) {
      patches.resize(static_cast<size_t>(chunk * cols));
    }
    for (int64_t r0 = 0; r0 < rows; r0 += chunk) {
      const int64_t r1 = std::min(rows, r0 + chunk);
      float* col = patches.data();
      std::memset(col, 0, static_cast<size_t>((r1 - r0) * cols) * sizeof(float));
      for (int64_t r = r0; r < r1; ++r, col += cols) {
        ForEachTap(g, r, [&](int64_t tap, int64_t voxel) {
          std::memcpy(col + tap * g.c, x + voxel * g.c, static_cast<size_t>(g.c) * sizeof(float));
        });
      }
      Sgemm(false, false, r1 - r0, g.m, cols, patches.data(), cols, w, g.m, y + r0 * g.m, g.m,
            pool);
    }
  }

  int64_t stride_[3] = {1, 1, 1};
  Padding padding_ = Padding::kValid;
};

constexpr char kBackpropLabel[] = "Conv3DBackpropInputOp: ";

class Conv3DBackpropInputOp : public OpKernel {
 public:
  explicit Conv3DBackpropInputOp(OpKernelConstruction* c) : OpKernel(c) {
    DataType dt = c->input_types().size() < 2 ? DataType::kInvalid : c->input_types()[1];
    if (!CheckTypeAllowed(c, "T", dt, dt == DataType::kFloat, "float")) return;
    int64_t dil[3] = {1, 1, 1};
    Status s = RequireNDHWC(c);
    if (s.ok()) s = ReadVolumeAttr(c, "strides", "strides", "Sliding window strides", stride_);
    if (s.ok()) {
      s = ReadVolumeAttr(c, "dilations", "dilation rates", "Dilation rates", dil);
    }
    if (s.ok() && (dil[0] != 1 || dil[1] != 1 || dil[2] != 1)) {
      s = InvalidArg(c->node(),
                     "Current CPU implementation does not yet support dilation rates larger "
                     "than 1.");
    }
    if (s.ok()) s = ParsePadding(c, &padding_);
    if (!s.ok()) c->SetStatus(s);
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& sizes = ctx->input(0);
    const Tensor& filter = ctx->input(1);
    const Tensor& dy = ctx->input(2);
    std::vector<int64_t> dims;
    if (sizes.dims() != 1) {
      ctx->SetStatus(InvalidArg(ctx->node(), "shape must be a vector of {int32,int64}, got shape " +
                                                 sizes.shape().DebugString()));
      return;
    }
    EMBER_OP_REQUIRES_OK(ctx, ReadIndexVector(ctx->node(), sizes, "input_sizes", &dims));
    for (int64_t d : dims) {
      if (d < 0) {
        ctx->SetStatus(InvalidArg(ctx->node(), "Dimension " + std::to_string(d) + " must be >= 0"));
        return;
      }
    }
    Volume g;
    EMBER_OP_REQUIRES_OK(ctx, Validate(ctx->node(), dims, filter, dy, &g));
    Tensor* out = nullptr;
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(dims), &out));
    if (out->NumElements() == 0) return;
    float* dx = out->data<float>();
    std::memset(dx, 0, static_cast<size_t>(out->NumElements()) * sizeof(float));
    if (dy.NumElements() == 0 || filter.NumElements() == 0) return;
    ThreadPool* pool = ctx->intra_op_pool();
    const float* w = filter.data<float>();
    const float* src = dy.data<float>();
    if (g.Pointwise()) {
      Sgemm(false, true, g.n * g.OutVoxels(), g.c, g.m, src, g.m, w, g.m, dx, g.c, pool);
      return;
    }
    for (int64_t b = 0; b < g.n; ++b) {
      Volume1(g, src + b * g.OutVoxels() * g.m, w, dx + b * g.InVoxels() * g.c, pool);
    }
  }

 private:
  // Conv3DCustomBackpropInputOp's checks, then ConvBackpropComputeDimensionsV2's.
  Status Validate(const NodeDef& node, const std::vector<int64_t>& in, const Tensor& filter,
                  const Tensor& dy, Volume* g) const {
    if (in.size() != 5) return InvalidArg(node, "input tensor must have 5 dimensions");
    if (filter.dims() != 5) return InvalidArg(node, "filter_sizes tensor must have 5 dimensions");
    if (dy.dims() != 5) return InvalidArg(node, "out_backprop tensor must have 5 dimensions");
    if (in[4] != filter.dim_size(3)) {
      return InvalidArg(node, "input and filter_sizes must have the same number of channels. Got " +
                                  std::to_string(in[4]) + " for input and " +
                                  std::to_string(filter.dim_size(3)) + " for filter_sizes");
    }
    if (dy.dim_size(4) != filter.dim_size(4)) {
      return InvalidArg(node,
                        "out_backprop and filter_sizes must have the same number of channels. "
                        "Got " +
                            std::to_string(dy.dim_size(4)) + " for out_backprop and " +
                            std::to_string(filter.dim_size(4)) + " for filter_sizes");
    }
    const std::string label = kBackpropLabel;
    if (in[0] != dy.dim_size(0)) {
      return InvalidArg(node, label +
                                  "input and out_backprop must have the same batch size. Input "
                                  "batch: " +
                                  std::to_string(in[0]) + ", outbackprop batch: " +
                                  std::to_string(dy.dim_size(0)) + ", batch_dim: 0");
    }
    if (filter.dim_size(3) <= 0) {
      return InvalidArg(node, label + "filter depth must be strictly greated than zero");
    }
    g->n = in[0];
    g->c = in[4];
    g->m = filter.dim_size(4);
    for (int i = 0; i < 3; ++i) {
      g->in[i] = in[1 + i];
      g->k[i] = filter.dim_size(i);
      g->stride[i] = stride_[i];
      EMBER_RETURN_IF_ERROR(WindowedOutputSize(node, g->in[i], g->k[i], 1, stride_[i], padding_,
                                               &g->out[i], &g->pad[i]));
      if (dy.dim_size(1 + i) != g->out[i]) {
        return InvalidArg(node, label + "Size of out_backprop doesn't match computed: actual = " +
                                    std::to_string(dy.dim_size(1 + i)) +
                                    ", computed = " + std::to_string(g->out[i]) + " spatial_dim: " +
                                    std::to_string(1 + i) + " input: " + std::to_string(g->in[i]) +
                                    " filter: " + std::to_string(g->k[i]) +
                                    " output: " + std::to_string(dy.dim_size(1 + i)) +
                                    " stride: " + std::to_string(stride_[i]) + " dilation: 1");
      }
    }
    return Status::OK();
  }

  // One volume: out_backprop rows in chunks, each chunk's patch gradients one GEMM, then added
  // into dx at the windows they came from, in row order.
  static void Volume1(const Volume& g, const float* dy, const float* w, float* dx,
                      ThreadPool* pool) {
    const int64_t rows = g.OutVoxels(), cols = g.PatchSize(), chunk = ChunkRows(g);
    thread_local std::vector<float> patches;
    if (patches.size() < static_cast<size_t>(chunk * cols)) {
      patches.resize(static_cast<size_t>(chunk * cols));
    }
    for (int64_t r0 = 0; r0 < rows; r0 += chunk) {
      const int64_t r1 = std::min(rows, r0 + chunk);
      Sgemm(false, true, r1 - r0, cols, g.m, dy + r0 * g.m, g.m, w, g.m, patches.data(), cols,
            pool);
      const float* col = patches.data();
      for (int64_t r = r0; r < r1; ++r, col += cols) {
        ForEachTap(g, r, [&](int64_t tap, int64_t voxel) {
          const float* __restrict s = col + tap * g.c;
          float* __restrict d = dx + voxel * g.c;
          for (int64_t ch = 0; ch < g.c; ++ch) d[ch] += s[ch];
        });
      }
    }
  }

  int64_t stride_[3] = {1, 1, 1};
  Padding padding_ = Padding::kValid;
};

// Reads the 5-element "strides" attr of a shape function; false when absent or malformed (the
// kernel reports those).
bool VolumeStrides(const NodeDef& node, const char* attr, std::vector<int64_t>* v) {
  AttrReader r(node);
  return r.Get(attr, v).ok() && v->size() == 5;
}

Status Padding3D(const NodeDef& node, Padding* p) {
  std::string pad;
  EMBER_RETURN_IF_ERROR(AttrReader(node).Get("padding", &pad));
  *p = pad == "SAME" ? Padding::kSame : Padding::kValid;
  return Status::OK();
}

Status RequireRank5(const ShapeContext* c, size_t i) {
  if (!oputil::KnownRank(c, i) || c->input_shapes[i].dims.size() == 5) return Status::OK();
  return InvalidArg(*c->node, "Shape must be rank 5 but is rank " +
                                  std::to_string(c->input_shapes[i].dims.size()));
}

Status Conv3DShape(ShapeContext* c) {
  c->output_shapes.assign(1, KnownShape({-1, -1, -1, -1, -1}));
  if (c->input_shapes.size() < 2) return Status::OK();
  EMBER_RETURN_IF_ERROR(RequireRank5(c, 0));
  EMBER_RETURN_IF_ERROR(RequireRank5(c, 1));
  std::vector<int64_t> strides;
  Padding pad = Padding::kValid;
  EMBER_RETURN_IF_ERROR(Padding3D(*c->node, &pad));
  const bool x_known = oputil::KnownRank(c, 0), f_known = oputil::KnownRank(c, 1);
  std::vector<int64_t>& out = c->output_shapes[0].dims;
  if (x_known) out[0] = c->input_shapes[0].dims[0];
  if (f_known) out[4] = c->input_shapes[1].dims[4];
  if (!x_known || !f_known || !VolumeStrides(*c->node, "strides", &strides)) return Status::OK();
  const std::vector<int64_t>& in = c->input_shapes[0].dims;
  const std::vector<int64_t>& f = c->input_shapes[1].dims;
  for (int d = 1; d <= 3; ++d) {
    if (in[d] < 0 || f[d - 1] < 0 || strides[d] <= 0) continue;
    int64_t o = 0, p = 0;
    EMBER_RETURN_IF_ERROR(
        WindowedOutputSize(*c->node, in[d], f[d - 1], 1, strides[d], pad, &o, &p));
    out[d] = o;
  }
  return Status::OK();
}

// The output's shape is input_sizes' value when it is a known constant.
Status BackpropInputShape(ShapeContext* c) {
  c->output_shapes.assign(1, KnownShape({-1, -1, -1, -1, -1}));
  std::vector<int64_t> v;
  if (!oputil::ConstVector(c, 0, &v)) return Status::OK();
  if (v.size() != 5) {
    return InvalidArg(*c->node, "Shape must be rank 5 but is rank " + std::to_string(v.size()));
  }
  c->output_shapes[0] = KnownShape(v);
  return Status::OK();
}

[[maybe_unused]] const bool kRegistered = [] {
  using oputil::TypedArg;
  oputil::RegisterOp("Conv3D", {TypedArg("input", "T"), TypedArg("filter", "T")},
                     {TypedArg("output", "T")}, Conv3DShape);
  oputil::RegisterCpu<Conv3DOp>("Conv3D");
  oputil::RegisterOp(
      "Conv3DBackpropInputV2",
      {TypedArg("input_sizes", "Tshape"), TypedArg("filter", "T"), TypedArg("out_backprop", "T")},
      {TypedArg("output", "T")}, BackpropInputShape);
  oputil::RegisterCpu<Conv3DBackpropInputOp>("Conv3DBackpropInputV2");
  return true;
}();

}  // namespace
}  // namespace kernels
}  // namespace ember
