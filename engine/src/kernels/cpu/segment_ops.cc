// Segment reductions with TensorFlow's semantics and messages (segment_reduction_ops_impl.h):
//   SegmentSum/Mean/Prod/Max/Min over sorted ids: output rows ids.back() + 1, rows of ids that
//     do not occur are 0 (1 for Prod); ids are checked by TF's walk, in TF's order;
//   UnsortedSegmentSum/Prod/Max/Min with a num_segments input (keras.ops.segment_sum/max with
//     sorted=False): ids of any shape that data's shape starts with, negative ids dropped, empty
//     segments hold the reduction's identity (0, 1, lowest, highest).
// Mean of integers divides in the integer type, as TensorFlow's does.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/op_kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/op_util.h"

namespace ember {
namespace kernels {
namespace {

using oputil::RegisterCpu;
using oputil::RegisterOp;
using oputil::TypedArg;

enum class Reduce { kSum, kMean, kProd, kMax, kMin };

Reduce ReduceOf(const std::string& op) {
  if (op.find("Mean") != std::string::npos) return Reduce::kMean;
  if (op.find("Prod") != std::string::npos) return Reduce::kProd;
  if (op.find("Max") != std::string::npos) return Reduce::kMax;
  if (op.find("Min") != std::string::npos) return Reduce::kMin;
  return Reduce::kSum;
}

// What an output row starts as: the sorted ops' value for an empty segment, and the unsorted
// ops' identity.
template <typename T>
T Initial(Reduce r, bool sorted) {
  switch (r) {
    case Reduce::kProd:
      return T(1);
    case Reduce::kMax:
      return sorted ? T(0) : std::numeric_limits<T>::lowest();
    case Reduce::kMin:
      return sorted ? T(0) : std::numeric_limits<T>::max();
    default:
      return T(0);
  }
}

template <typename T>
T Combine(Reduce r, T acc, T v) {
  switch (r) {
    case Reduce::kProd:
      return static_cast<T>(acc * v);
    case Reduce::kMax:
      return v > acc ? v : acc;
    case Reduce::kMin:
      return v < acc ? v : acc;
    default:
      return static_cast<T>(acc + v);
  }
}

// One run of equal sorted ids: rows [start, end) of data go to output row `id`.
struct Segment {
  int64_t start, end, id;
};

// SegmentReductionValidationHelper and TensorFlow's walk over sorted ids: each new id is checked
// against the last, then the finished segment's id against the output's range.
Status SortedSegments(const NodeDef& node, const Tensor& data, const Tensor& ids_t,
                      int64_t* rows_out, std::vector<Segment>* segments) {
  if (ids_t.dims() != 1) return InvalidArg(node, "segment_ids should be a vector.");
  if (data.dims() < 1 || ids_t.dim_size(0) != data.dim_size(0)) {
    return InvalidArg(node, "segment_ids should be the same size as dimension 0 of input.");
  }
  std::vector<int64_t> ids;
  EMBER_RETURN_IF_ERROR(ReadIndexVector(node, ids_t, "segment_ids", &ids));
  const int64_t num = static_cast<int64_t>(ids.size());
  *rows_out = num > 0 ? ids.back() + 1 : 0;
  if (*rows_out < 0) return InvalidArg(node, "segment ids must be >= 0");
  if (num == 0) return Status::OK();
  int64_t start = 0, end = 1, id = ids[0];
  while (end <= num) {
    int64_t next = 0;
    if (end < num) {
      next = ids[static_cast<size_t>(end)];
      if (next == id) {
        ++end;
        continue;
      }
      if (next < id) return InvalidArg(node, "segment ids are not increasing");
    }
    if (id < 0 || id >= *rows_out) {
      return InvalidArg(node, "Segment id " + std::to_string(id) + " out of range [0, " +
                                  std::to_string(*rows_out) +
                                  "), possibly because 'segment_ids' input is not sorted.");
    }
    segments->push_back({start, end, id});
    start = end;
    ++end;
    id = next;
  }
  return Status::OK();
}

const char* const kNumericNames = "float, double, int32, int64, int8, uint8, int16";

DataType FirstInputType(OpKernelConstruction* c) {
  return c->input_types().empty() ? DataType::kInvalid : c->input_types()[0];
}

class SegmentOp : public OpKernel {
 public:
  explicit SegmentOp(OpKernelConstruction* c) : OpKernel(c), reduce_(ReduceOf(c->node().op)) {
    const DataType dt = FirstInputType(c);
    CheckTypeAllowed(c, "T", dt, DispatchNumeric(dt, [](auto) {}), kNumericNames);
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& data = ctx->input(0);
    int64_t rows_out = 0;
    std::vector<Segment> segments;
    EMBER_OP_REQUIRES_OK(ctx,
                         SortedSegments(ctx->node(), data, ctx->input(1), &rows_out, &segments));
    std::vector<int64_t> od = data.shape().dim_sizes();
    od[0] = rows_out;
    Tensor* out = nullptr;
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output_uninitialized(0, TensorShape(od), &out));
    const int64_t inner = data.dim_size(0) > 0 ? data.NumElements() / data.dim_size(0) : 0;
    DispatchNumeric(data.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* src = data.data<T>();
      T* dst = out->data<T>();
      std::fill(dst, dst + out->NumElements(), Initial<T>(reduce_, true));
      for (const Segment& s : segments) {
        T* row = dst + s.id * inner;
        std::copy(src + s.start * inner, src + (s.start + 1) * inner, row);
        const Reduce r = reduce_ == Reduce::kMean ? Reduce::kSum : reduce_;
        for (int64_t i = s.start + 1; i < s.end; ++i) {
          for (int64_t j = 0; j < inner; ++j) row[j] = Combine(r, row[j], src[i * inner + j]);
        }
        if (reduce_ == Reduce::kMean) {
          const T n = static_cast<T>(s.end - s.start);
          for (int64_t j = 0; j < inner; ++j) row[j] = static_cast<T>(row[j] / n);
        }
      }
    });
  }

 private:
  Reduce reduce_;
};

// TensorShape::DebugString of index `flat` in a tensor of `dims`: "[1,0]".
std::string SliceString(const std::vector<int64_t>& dims, int64_t flat) {
  std::vector<int64_t> idx(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    idx[d] = flat % dims[d];
    flat /= dims[d];
  }
  return DimsString(idx);
}

class UnsortedSegmentOp : public OpKernel {
 public:
  explicit UnsortedSegmentOp(OpKernelConstruction* c)
      : OpKernel(c), reduce_(ReduceOf(c->node().op)) {
    const DataType dt = FirstInputType(c);
    CheckTypeAllowed(c, "T", dt, DispatchNumeric(dt, [](auto) {}), kNumericNames);
  }

  void Compute(OpKernelContext* ctx) override {
    const NodeDef& node = ctx->node();
    const Tensor& data = ctx->input(0);
    const Tensor& ids_t = ctx->input(1);
    const Tensor& num_t = ctx->input(2);
    if (num_t.dims() != 0) {
      ctx->SetStatus(InvalidArg(
          node, "num_segments should be a scalar, not shape " + num_t.shape().DebugString()));
      return;
    }
    const std::vector<int64_t>& dd = data.shape().dim_sizes();
    const std::vector<int64_t>& id = ids_t.shape().dim_sizes();
    if (id.size() > dd.size() || !std::equal(id.begin(), id.end(), dd.begin())) {
      ctx->SetStatus(InvalidArg(
          node, "data.shape = " + data.shape().DebugString() +
                    " does not start with segment_ids.shape = " + ids_t.shape().DebugString()));
      return;
    }
    int64_t num = 0;
    EMBER_OP_REQUIRES_OK(ctx, oputil::ReadScalarIndex(node, num_t, "num_segments", &num));
    if (num < 0) {
      ctx->SetStatus(InvalidArg(
          node, "Input num_segments == " + std::to_string(num) + " must not be negative."));
      return;
    }
    std::vector<int64_t> ids(static_cast<size_t>(ids_t.NumElements()));
    const bool int_ids = DispatchIndex(ids_t.dtype(), [&](auto tag) {
      using I = decltype(tag);
      std::copy(ids_t.data<I>(), ids_t.data<I>() + ids.size(), ids.begin());
    });
    if (!int_ids) {
      ctx->SetStatus(InvalidArg(
          node, "segment_ids must be int32 or int64, got " + DataTypeString(ids_t.dtype())));
      return;
    }
    std::vector<int64_t> od = {num};
    od.insert(od.end(), dd.begin() + static_cast<std::ptrdiff_t>(id.size()), dd.end());
    Tensor* out = nullptr;
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output_uninitialized(0, TensorShape(od), &out));
    const int64_t inner = oputil::Product(od) / std::max<int64_t>(num, 1);
    DispatchNumeric(data.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* src = data.data<T>();
      T* dst = out->data<T>();
      std::fill(dst, dst + out->NumElements(), Initial<T>(reduce_, false));
      for (size_t i = 0; i < ids.size(); ++i) {
        const int64_t j = ids[i];
        if (j < 0) continue;
        if (j >= num) {
          ctx->SetStatus(InvalidArg(node, "segment_ids" + SliceString(id, static_cast<int64_t>(i)) +
                                              " = " + std::to_string(j) + " is out of range [0, " +
                                              std::to_string(num) + ")"));
          return;
        }
        T* row = dst + j * inner;
        const T* in = src + static_cast<int64_t>(i) * inner;
        for (int64_t k = 0; k < inner; ++k) row[k] = Combine(reduce_, row[k], in[k]);
      }
    });
  }

 private:
  Reduce reduce_;
};

// [-1] + data.shape[1:] (the row count is ids.back() + 1).
Status SegmentShape(ShapeContext* c) {
  c->output_shapes.assign(1, UnknownShape());
  if (!oputil::KnownRank(c, 0) || c->input_shapes[0].dims.empty()) return Status::OK();
  std::vector<int64_t> d = c->input_shapes[0].dims;
  d[0] = -1;
  c->output_shapes[0] = KnownShape(d);
  return Status::OK();
}

// [num_segments] + data.shape[ids.rank:].
Status UnsortedSegmentShape(ShapeContext* c) {
  c->output_shapes.assign(1, UnknownShape());
  if (!oputil::KnownRank(c, 0) || !oputil::KnownRank(c, 1)) return Status::OK();
  const std::vector<int64_t>& dd = c->input_shapes[0].dims;
  const size_t ids_rank = c->input_shapes[1].dims.size();
  if (ids_rank > dd.size()) return Status::OK();
  std::vector<int64_t> d = {-1};
  std::vector<int64_t> num;
  if (oputil::ConstVector(c, 2, &num) && num.size() == 1 && num[0] >= 0) d[0] = num[0];
  d.insert(d.end(), dd.begin() + static_cast<std::ptrdiff_t>(ids_rank), dd.end());
  c->output_shapes[0] = KnownShape(d);
  return Status::OK();
}

[[maybe_unused]] const bool kRegistered = [] {
  for (const char* op : {"SegmentSum", "SegmentMean", "SegmentProd", "SegmentMax", "SegmentMin"}) {
    RegisterOp(op, {TypedArg("data", "T"), TypedArg("segment_ids", "Tindices")},
               {TypedArg("output", "T")}, SegmentShape);
    RegisterCpu<SegmentOp>(op);
  }
  for (const char* op :
       {"UnsortedSegmentSum", "UnsortedSegmentProd", "UnsortedSegmentMax", "UnsortedSegmentMin"}) {
    RegisterOp(op,
               {TypedArg("data", "T"), TypedArg("segment_ids", "Tindices"),
                TypedArg("num_segments", "Tnumsegments")},
               {TypedArg("output", "T")}, UnsortedSegmentShape);
    RegisterCpu<UnsortedSegmentOp>(op);
  }
  return true;
}();

}  // namespace
}  // namespace kernels
}  // namespace ember
