// Einsum for one or two operands, as TensorFlow's EinsumOp: explicit ("ab,bc->ac") and
// implicit ("ab,bc") outputs, ellipses ("...ij,...jk->...ik") with broadcasting, labels summed
// out of one operand only. Two operands become one batched GEMM: each operand is gathered into
// [batch, free, contracted] order (labels missing from an operand have stride 0), multiplied,
// and the [batch, free_a, free_b] result permuted into the output's label order.
#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "core/op_kernel.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/op_util.h"

namespace ember {
namespace kernels {
namespace {

struct Equation {
  std::vector<std::string> inputs;  // labels per operand, "..." replaced by '\1'
  std::string output;
  bool implicit = false;
};

Status ParseEquation(const NodeDef& node, const std::string& eq, size_t n, Equation* out) {
  std::string lhs = eq, rhs;
  const size_t arrow = eq.find("->");
  out->implicit = arrow == std::string::npos;
  if (!out->implicit) {
    lhs = eq.substr(0, arrow);
    rhs = eq.substr(arrow + 2);
  }
  auto clean = [&](std::string s, std::string* res) {
    std::string r;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s.compare(i, 3, "...") == 0) {
        r += '\1';
        i += 2;
      } else if (std::isalpha(static_cast<unsigned char>(s[i]))) {
        r += s[i];
      } else if (s[i] != ' ') {
        return InvalidArg(
            node, "Invalid character '" + std::string(1, s[i]) + "' in einsum equation " + eq);
      }
    }
    *res = r;
    return Status::OK();
  };
  size_t start = 0;
  while (true) {
    const size_t comma = lhs.find(',', start);
    std::string part;
    EMBER_RETURN_IF_ERROR(clean(lhs.substr(start, comma - start), &part));
    out->inputs.push_back(part);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (out->inputs.size() != n) {
    return InvalidArg(node, "Expecting " + std::to_string(out->inputs.size()) +
                                " inputs for equation " + eq + ", got " + std::to_string(n));
  }
  return clean(rhs, &out->output);
}

// Expands each '\1' (an ellipsis) into `rank - explicit labels` generated labels, aligned to the
// right over the widest ellipsis (labels '\x02'..).
Status ExpandEllipsis(const NodeDef& node, const std::vector<const Tensor*>& in, Equation* eq) {
  int64_t widest = 0;
  std::vector<int64_t> covered(in.size(), 0);
  for (size_t i = 0; i < in.size(); ++i) {
    const std::string& s = eq->inputs[i];
    const bool has = s.find('\1') != std::string::npos;
    const int64_t explicit_labels = static_cast<int64_t>(s.size()) - (has ? 1 : 0);
    if ((!has && explicit_labels != in[i]->dims()) || (has && explicit_labels > in[i]->dims())) {
      return InvalidArg(node, "Expected input " + std::to_string(i) + " to have rank " +
                                  std::to_string(explicit_labels) +
                                  " but got: " + std::to_string(in[i]->dims()));
    }
    covered[i] = has ? in[i]->dims() - explicit_labels : 0;
    widest = std::max(widest, covered[i]);
  }
  auto labels = [](int64_t first, int64_t count) {
    std::string r;
    for (int64_t k = 0; k < count; ++k) r += static_cast<char>(2 + first + k);
    return r;
  };
  for (size_t i = 0; i < in.size(); ++i) {
    std::string& s = eq->inputs[i];
    const size_t at = s.find('\1');
    if (at != std::string::npos) s.replace(at, 1, labels(widest - covered[i], covered[i]));
  }
  if (eq->implicit) {
    std::map<char, int> count;
    for (const std::string& s : eq->inputs) {
      for (char ch : s) ++count[ch];
    }
    std::string out = labels(0, widest);
    for (const auto& kv : count) {
      if (kv.second == 1 && kv.first > 32) out += kv.first;
    }
    eq->output = out;
  } else {
    const size_t at = eq->output.find('\1');
    if (at != std::string::npos) eq->output.replace(at, 1, labels(0, widest));
  }
  return Status::OK();
}

// Copies `src` (with per-label sizes and strides, 0 for broadcast) into `dst` in `order`.
template <typename T>
void Gather(const T* src, const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
            T* dst) {
  const int64_t total = oputil::Product(sizes);
  const size_t r = sizes.size();
  std::vector<int64_t> idx(r, 0);
  int64_t s = 0;
  for (int64_t i = 0; i < total; ++i) {
    dst[i] = src[s];
    for (size_t d = r; d-- > 0;) {
      s += strides[d];
      if (++idx[d] < sizes[d]) break;
      s -= strides[d] * sizes[d];
      idx[d] = 0;
    }
  }
}

class EinsumOp : public OpKernel {
 public:
  explicit EinsumOp(OpKernelConstruction* c) : OpKernel(c) {
    Status s = c->GetAttr("equation", &equation_);
    if (s.ok() && c->input_types().size() > 2) {
      s = NodeError(c->node(), Code::kUnimplemented, "Einsum supports one or two operands");
    }
    if (s.ok() &&
        !DispatchFloat(c->input_types().empty() ? DataType::kInvalid : c->input_types()[0],
                       [](auto) {}) &&
        c->input_types()[0] != DataType::kInt32 && c->input_types()[0] != DataType::kInt64) {
      s = InvalidArg(c->node(), "Einsum supports float, double, int32 and int64");
    }
    if (!s.ok()) c->SetStatus(s);
  }

  void Compute(OpKernelContext* ctx) override {
    std::vector<const Tensor*> in;
    for (int i = 0; i < ctx->num_inputs(); ++i) in.push_back(&ctx->input(i));
    Equation eq;
    EMBER_OP_REQUIRES_OK(ctx, ParseEquation(ctx->node(), equation_, in.size(), &eq));
    EMBER_OP_REQUIRES_OK(ctx, ExpandEllipsis(ctx->node(), in, &eq));
    // Label sizes (size-1 dims broadcast) and per-operand strides.
    std::map<char, int64_t> size;
    std::vector<std::map<char, int64_t>> stride(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      const std::string& s = eq.inputs[i];
      const std::vector<int64_t> st = oputil::Strides(in[i]->shape().dim_sizes());
      for (size_t d = 0; d < s.size(); ++d) {
        const char l = s[d];
        const int64_t n = in[i]->dim_size(static_cast<int>(d));
        if (stride[i].count(l)) {
          ctx->SetStatus(NodeError(ctx->node(), Code::kUnimplemented,
                                   "repeated labels within one operand (diagonals) are not "
                                   "supported: " +
                                       equation_));
          return;
        }
        stride[i][l] = n == 1 ? 0 : st[d];
        auto it = size.find(l);
        if (it == size.end() || it->second == 1) {
          size[l] = n;
        } else if (n != 1 && n != it->second) {
          ctx->SetStatus(
              InvalidArg(ctx->node(), "Expected dimension " + std::to_string(it->second) +
                                          " at axis " + std::to_string(d) + " of input " +
                                          std::to_string(i) + " but got " + std::to_string(n)));
          return;
        }
      }
    }
    std::string batch, free_a, free_b, contract;
    const std::string& a = eq.inputs[0];
    const std::string b = in.size() > 1 ? eq.inputs[1] : "";
    for (const char l : eq.output) {
      if (!size.count(l)) {
        ctx->SetStatus(InvalidArg(ctx->node(),
                                  "Output subscript contains a label not present in "
                                  "the inputs: " +
                                      equation_));
        return;
      }
      const bool in_a = a.find(l) != std::string::npos, in_b = b.find(l) != std::string::npos;
      (in_a && in_b ? batch : in_a ? free_a : free_b) += l;
    }
    for (const auto& kv : size) {
      if (eq.output.find(kv.first) == std::string::npos) contract += kv.first;
    }
    std::vector<int64_t> out_dims;
    for (const char l : eq.output) out_dims.push_back(size[l]);
    Tensor* out = nullptr;
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(out_dims), &out));
    auto dims_of = [&](const std::string& labels) {
      std::vector<int64_t> d;
      for (char l : labels) d.push_back(size[l]);
      return d;
    };
    auto strides_of = [&](size_t op, const std::string& labels) {
      std::vector<int64_t> s;
      for (char l : labels) s.push_back(stride[op].count(l) ? stride[op].at(l) : 0);
      return s;
    };
    const int64_t nb = oputil::Product(dims_of(batch)), m = oputil::Product(dims_of(free_a)),
                  n = oputil::Product(dims_of(free_b)), k = oputil::Product(dims_of(contract));
    DispatchNumeric(in[0]->dtype(), [&](auto tag) {
      using T = decltype(tag);
      std::vector<T> pa(static_cast<size_t>(nb * m * k)), pb, pc(static_cast<size_t>(nb * m * n));
      Gather(in[0]->data<T>(), dims_of(batch + free_a + contract),
             strides_of(0, batch + free_a + contract), pa.data());
      if (in.size() > 1) {
        pb.resize(static_cast<size_t>(nb * k * n));
        Gather(in[1]->data<T>(), dims_of(batch + contract + free_b),
               strides_of(1, batch + contract + free_b), pb.data());
      } else {
        pb.assign(static_cast<size_t>(k), T(1));  // one operand: sum out the contracted labels
      }
      const size_t bstride = in.size() > 1 ? static_cast<size_t>(k * n) : 0;
      for (int64_t bi = 0; bi < nb; ++bi) {
        const T* A = pa.data() + bi * m * k;
        const T* B = pb.data() + bi * bstride;
        T* C = pc.data() + bi * m * n;
        if constexpr (std::is_same<T, float>::value) {
          if (m * n * k > 0) {
            Sgemm(false, false, m, n, k, A, k, B, n, C, n, ctx->intra_op_pool());
            continue;
          }
        }
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            T acc = T(0);
            for (int64_t q = 0; q < k; ++q) acc = static_cast<T>(acc + A[i * k + q] * B[q * n + j]);
            C[i * n + j] = acc;
          }
        }
      }
      // pc is [batch, free_a, free_b]; permute into the output's order.
      const std::string have = batch + free_a + free_b;
      const std::vector<int64_t> hs = oputil::Strides(dims_of(have));
      std::vector<int64_t> st;
      for (char l : eq.output) st.push_back(hs[have.find(l)]);
      Gather(pc.data(), out_dims, st, out->data<T>());
    });
  }

 private:
  std::string equation_;
};

[[maybe_unused]] const bool kRegistered = [] {
  oputil::RegisterOp("Einsum", {oputil::TypedArg("inputs", "T", "N")},
                     {oputil::TypedArg("output", "T")}, oputil::UnknownOutputs(1));
  oputil::RegisterCpu<EinsumOp>("Einsum");
  return true;
}();

}  // namespace
}  // namespace kernels
}  // namespace ember
