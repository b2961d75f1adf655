// WHVI with the reshape trick (the WHVI paper's GP experiments, Fig. 13;
// shared/notes/whvi-reference.md §7.2): the whole weight matrix W [out, in]
// of a layer is read row-major from the first in·out entries of ONE d x d
// WHVI matrix M = S1 H diag(g) H S2, d = 2^ceil(log2(in·out) / 2), so a
// weight vector of 2 N_RF entries costs O(sqrt(N_RF)) variational
// parameters. model.output_layer: whvi-reshape (model.whvi.* options; only
// WHVI's own structure).
//
// Entry p = o·in + q of vec(M) sits at (i, j) = divmod(p, d), so
//   W[o, q] = Σ_k K[p, k] g_k,   K[p, k] = s1_i s2_j H_ik H_jk,
// linear in g: y_o = Σ_q W[o, q] x_q = Σ_k c[o, k] g_k with c = K x. The
// forward builds K (O(in·out·d), from the explicit Hadamard matrix, d is
// small here) and samples g once per row (data point x MC sample), which is
// exact for each row's joint output distribution.
#include <cmath>

#include "common/draws.h"
#include "nn/layer.h"
#include "nn/whvi_params.h"
#include "ops/fwht_op.h"

namespace whvi::models {
namespace {

int64_t reshape_side(int64_t entries) {
  int64_t e = 0;
  while ((int64_t{1} << (2 * e)) < entries) ++e;
  return int64_t{1} << e;
}

WhviOptions without_bias(WhviOptions o) {
  o.bias = "none";
  return o;
}

class WhviReshapeLayer : public BayesianLayer {
 public:
  WhviReshapeLayer(int64_t in, int64_t out, const WhviOptions& o, const at::Generator& gen)
      : BayesianLayer("whvi-reshape", in, out),
        p_(*this, reshape_side(in * out), reshape_side(in * out), without_bias(o), gen) {
    const int64_t d = p_.d;
    const auto pos = torch::arange(in * out, torch::kInt64);
    const auto rows = pos.div(d, "floor"), cols = pos.remainder(d);
    const auto H = ops::hadamard_matrix(d);
    hh_ = H.index_select(0, rows) * H.index_select(0, cols);  // [in·out, d]: H_ik H_jk
    rows_ = rows;
    cols_ = cols;
    bias_ = register_parameter("b_mu", torch::zeros({out}));
  }

 protected:
  torch::Tensor forward_impl(const torch::Tensor& x, ForwardCtx& ctx) override {
    const int64_t n = x.size(0), in = in_features(), out = out_features(), d = p_.d;
    // constants, not parameters: they follow the input's dtype and device
    if (hh_.scalar_type() != x.scalar_type() || hh_.device() != x.device()) hh_ = hh_.to(x.device(), x.scalar_type());
    if (rows_.device() != x.device()) {
      rows_ = rows_.to(x.device());
      cols_ = cols_.to(x.device());
    }
    // K [out, in, d]
    const auto K = (p_.s1[0].index_select(0, rows_) * p_.s2[0].index_select(0, cols_)).unsqueeze(1) * hh_;
    const auto c = torch::einsum("nq,oqk->nok", {x, K.view({out, in, d})});  // [n, out, d]
    torch::Tensor g = p_.g_mu;                                              // [1, d]
    if (ctx.mode == Mode::kSample)
      g = p_.g_mu + (0.5 * p_.g_logvar).exp() * whvi::randn({n, d}, ctx.gen, x.options());
    return (c * g.unsqueeze(1)).sum(2) + bias_;
  }

  torch::Tensor kl_impl() override { return p_.closed_form_kl(); }

 private:
  WhviParams p_;
  torch::Tensor rows_, cols_, hh_, bias_;
};

}  // namespace

// model.whvi.* (declared by the whvi layer kind)
struct WhviReshapeOptions {
  WhviOptions whvi;
  template <class V>
  void visit(V& v) {
    v.part(whvi);
  }
};

LayerPtr make_whvi_reshape_layer(int64_t in, int64_t out, const WhviReshapeOptions& ro, const LayerContext& ctx) {
  const WhviOptions& o = ro.whvi;
  WHVI_CHECK(o.is_default_structure(), "whvi-reshape supports only WHVI's own structure (S1 H G H S2 with "
             "optimised S); remove model.whvi.structure and model.whvi.s_posterior");
  return std::make_shared<WhviReshapeLayer>(in, out, o, ctx.gen);
}

LayerKind whvi_reshape_layer_kind() { return layer_kind("whvi-reshape", make_whvi_reshape_layer); }

}  // namespace whvi::models
