// Tensor-train (TT) variational linear layer, the WHVI paper's §2.4 / Fig. 3
// comparison (Novikov et al. 2015, "Tensorizing neural networks", the
// paper's [45]): issue 12, item 2.
//
// The input is zero-padded to n = 2^a and the output computed at m = 2^b
// (then truncated), both factorised over K cores: n = n_1 ⋯ n_K and
// m = m_1 ⋯ m_K with n_k = 2^{a_k} (a split as evenly as possible, the first
// cores taking the remainder; likewise b). Core k is G_k [r_{k-1}, m_k, n_k,
// r_k] with r_0 = r_K = 1 and r_k = R (model.tt.rank) inside, and
//   W[(i_1..i_K), (j_1..j_K)] = G_1[:, i_1, j_1, :] G_2[:, i_2, j_2, :] ⋯ G_K[:, i_K, j_K, :]
// (row-major multi-indices). The forward never forms W: it contracts x with
// one core at a time (last first), O(rows · Σ_k r² m_k n_k ...) work.
//
// Posterior, as the paper states it: the internal cores (k = 2 ... K-1) are
// mean-field Gaussian, the first and last are optimised
// (model.tt.variational: internal); `all` makes every core mean-field. Prior
// N(0, model.tt.prior_var) on every variational core entry.
//
// Sampling: a core sample is drawn once per Monte Carlo draw (ForwardCtx::
// draws) and shared by that draw's mini-batch: the plain reparameterisation
// (W is not linear in the core entries, so the local trick does not apply).
//
// Initialisation: every core entry N(0, σ²) with σ^{2K} R^{K-1} = 2 / n, so
// the weights start with He variance 2 / n like the other layers; initial
// variance of a variational entry 1e-4 σ²; bias deterministic, 0.
#include <algorithm>
#include <cmath>

#include "common/draws.h"
#include "nn/layer.h"

namespace whvi::models {

// The modes of a size 2^e over K cores, as even as possible (first cores larger).
std::vector<int64_t> tt_modes(int64_t e, int64_t cores) {
  std::vector<int64_t> m;
  for (int64_t k = 0; k < cores; ++k) m.push_back(int64_t{1} << (e / cores + (k < e % cores ? 1 : 0)));
  return m;
}

namespace {

struct TtOptions {
  int64_t rank = 4, cores = 3;
  double prior_var = 1;
  std::string variational = "internal";
  template <class V>
  void visit(V& v) {
    v.num("model.tt.rank", rank, 1, 4096, "R: the TT-rank between cores (tensor-train layer, the paper's Fig. 3)");
    v.num("model.tt.cores", cores, 1, 30, "K: number of TT cores; input and output sizes are padded to powers of two and split over them");
    v.pick("model.tt.variational", variational, {"internal", "all"}, "which cores are mean-field Gaussian: internal (cores 2 ... K-1, the others optimised, as the paper) or all");
    v.num("model.tt.prior_var", prior_var, 1e-12, options::kInf, "prior N(0, v) on the entries of variational TT cores");
  }
};

int64_t ceil_log2(int64_t v) {
  int64_t e = 0;
  while ((int64_t{1} << e) < v) ++e;
  return e;
}

class TtLayer : public BayesianLayer {
 public:
  TtLayer(int64_t in, int64_t out, const TtOptions& o, const at::Generator& gen) : BayesianLayer("tt", in, out), o_(o) {
    const int64_t a = ceil_log2(in), b = ceil_log2(out), K = o.cores;
    n_ = int64_t{1} << a;
    m_ = int64_t{1} << b;
    in_modes_ = tt_modes(a, K);
    out_modes_ = tt_modes(b, K);
    ranks_.assign(static_cast<size_t>(K + 1), o.rank);
    ranks_.front() = ranks_.back() = 1;
    const double paths = std::pow(static_cast<double>(o.rank), static_cast<double>(K - 1));
    const double var = std::pow(2.0 / static_cast<double>(n_) / paths, 1.0 / static_cast<double>(K));
    torch::NoGradGuard ng;
    for (int64_t k = 0; k < K; ++k) {
      const std::vector<int64_t> shape = {ranks_[k], out_modes_[k], in_modes_[k], ranks_[k + 1]};
      mu_.push_back(register_parameter("core" + std::to_string(k) + "_mu", whvi::randn(shape, gen) * std::sqrt(var)));
      const bool variational = o.variational == "all" || (k > 0 && k + 1 < K);
      logvar_.push_back(variational ? register_parameter("core" + std::to_string(k) + "_logvar",
                                                         torch::full(shape, std::log(1e-4 * var)))
                                    : torch::Tensor());
    }
    bias_ = register_parameter("bias", torch::zeros({out}));
  }

  // The cores' tensors (mean), for tests.
  const std::vector<torch::Tensor>& cores() const { return mu_; }

 protected:
  torch::Tensor forward_impl(const torch::Tensor& x, ForwardCtx& ctx) override {
    const bool sample = ctx.mode == Mode::kSample;
    const int64_t S = sample ? ctx.draws : 1, rows = x.size(0), B = rows / S, K = o_.cores;
    auto t = n_ == in_features() ? x : torch::constant_pad_nd(x, {0, n_ - in_features()});
    t = t.reshape({S, B, n_, 1, 1});  // [S, B, N, r_K, M]
    int64_t np = n_, mm = 1;
    for (int64_t k = K - 1; k >= 0; --k) {
      const int64_t nk = in_modes_[k], mk = out_modes_[k], r0 = ranks_[k], r1 = ranks_[k + 1];
      auto core = mu_[k].unsqueeze(0);  // [1, r0, mk, nk, r1]
      if (sample && logvar_[k].defined())
        core = core + (0.5 * logvar_[k]).exp() * whvi::randn({S, r0, mk, nk, r1}, ctx.gen, x.options());
      core = core.expand({S, r0, mk, nk, r1});
      np /= nk;
      t = t.reshape({S, B, np, nk, r1, mm});
      t = torch::einsum("sbpjrq,satjr->sbpatq", {t, core});  // [S, B, np, r0, mk, mm]
      mm *= mk;
      t = t.reshape({S, B, np, r0, mm});
    }
    auto y = t.reshape({rows, m_});
    if (m_ != out_features()) y = y.narrow(1, 0, out_features());
    return y + bias_;
  }

  torch::Tensor kl_impl() override {
    torch::Tensor kl = torch::zeros({}, bias_.options());
    for (size_t k = 0; k < mu_.size(); ++k)
      if (logvar_[k].defined()) kl = kl + kl_diag_gaussian(mu_[k], logvar_[k], o_.prior_var);
    return kl;
  }

 private:
  TtOptions o_;
  int64_t n_ = 1, m_ = 1;
  std::vector<int64_t> in_modes_, out_modes_, ranks_;
  std::vector<torch::Tensor> mu_, logvar_;
  torch::Tensor bias_;
};

}  // namespace

LayerPtr make_tt_layer(int64_t in, int64_t out, const TtOptions& o, const LayerContext& ctx) {
  WHVI_CHECK(o.variational == "all" || o.cores >= 3, "model.tt.cores = ", o.cores,
             " leaves no internal core to be variational (model.tt.variational: internal); use at least 3 cores "
             "or model.tt.variational: all");
  return std::make_shared<TtLayer>(in, out, o, ctx.gen);
}

// Its cores' entries, twice where a core is mean-field: from the rank, not the width alone.
double tt_param_count(int64_t in, int64_t out, const TtOptions& o) {
  const int64_t K = o.cores;
  const auto in_modes = tt_modes(ceil_log2(in), K), out_modes = tt_modes(ceil_log2(out), K);
  double n = 0;
  for (int64_t k = 0; k < K; ++k) {
    const double r0 = k == 0 ? 1.0 : static_cast<double>(o.rank), r1 = k + 1 == K ? 1.0 : static_cast<double>(o.rank);
    const bool variational = o.variational == "all" || (k > 0 && k + 1 < K);
    n += (variational ? 2.0 : 1.0) * r0 * r1 * static_cast<double>(in_modes[static_cast<size_t>(k)]) *
         static_cast<double>(out_modes[static_cast<size_t>(k)]);
  }
  return n + static_cast<double>(out);
}

LayerKind tt_layer_kind() {
  return layer_kind("tt", make_tt_layer).counting([](int64_t in, int64_t out, const options::Resolved& o) {
    return tt_param_count(in, out, o.as<TtOptions>());
  });
}

}  // namespace whvi::models
