// Typed options of the layer kinds that more than one file builds: the
// fully connected MFG and MCD layers (mfg.cpp, mcd.cpp) and the convolutions
// (conv.cpp), whose MFG and MCD filters take the same keys. Each declares its
// keys once (common/options.h); layers never see the config.
#pragma once

#include <cstdint>
#include <string>

#include "common/options.h"
#include "nn/whvi_params.h"

namespace whvi::models {

struct MfgOptions {
  double prior_var = 0;  // <= 0: 1 / fan_in
  double bias_prior_var = 1;
  double init_logvar = -9.2103403719761836;
  double init_mean_scale = 1;
  template <class V>
  void visit(V& v) {
    v.num("model.mfg.prior_var", prior_var, 0, options::kInf, "prior variance of the weights; 0 = 1/fan_in (vardl)");
    v.num("model.mfg.bias_prior_var", bias_prior_var, 1e-12, options::kInf, "prior variance of the biases");
    v.num("model.mfg.init_logvar", init_logvar, -50, 10, "initial log variance of weights and biases (default log(1e-4))");
    v.num("model.mfg.init_mean_scale", init_mean_scale, 0, 1e6, "weight means initialised U(-s/sqrt(fan_in), s/sqrt(fan_in))");
  }
};

struct McdOptions {
  double dropout = 0.1;  // fully connected layers
  double length_scale = 1;
  template <class V>
  void visit(V& v) {
    v.num("model.mcd.dropout", dropout, 0, 0.99, "dropout rate after each hidden linear layer, active at test time (chosen on validation data, docs/reference.md; the paper used 0.005)");
    v.num("model.mcd.length_scale", length_scale, 0, options::kInf, "prior length-scale l: KL term (1-p) l^2/2 |W|^2 + l^2/2 |b|^2 (Gal & Ghahramani; chosen on validation data, docs/reference.md; the paper's code used 0.01)");
  }
};

// One convolution's options: its kind (model.conv) and what that kind reads.
struct ConvOptions {
  std::string kind = "mcd";  // mcd, mfg, whvi, lowrank-mcd or nng
  double dropout = 0.005;    // mcd, lowrank-mcd
  double length_scale = 1;   // model.mcd.length_scale (mcd, lowrank-mcd)
  int64_t rank = 0;          // lowrank-mcd; 0: as many parameters as WHVI
  std::string batch_norm = "auto";
  MfgOptions mfg;            // mfg
  WhviOptions whvi;          // whvi
  double nng_prior_var = 1;  // model.nng.prior_var (nng)
  template <class V>
  void visit(V& v) {
    v.pick("model.conv", kind, {"mcd", "mfg", "whvi", "lowrank-mcd", "nng"}, "kind of the convolutional filters (the paper: MCD): mcd, mfg, whvi (WHVI filter matrices over im2col patches, one g draw per image; options model.whvi.*), lowrank-mcd (MCD with a rank-r filter matrix, Fig. 7), nng (noisy K-FAC filters; only with model.kind nng)");
    v.pick("model.batch_norm", batch_norm, {"auto", "on", "off"}, "batch normalisation after every convolution (batch statistics in training steps, running averages at test time): auto = on for resnet18 only");
    v.num("model.conv_rank", rank, 0, 1 << 20, "rank of lowrank-mcd filter matrices; 0 = as many parameters as WHVI filters of the same shape");
    v.num("model.conv_dropout", dropout, 0, 0.99, "dropout rate of mcd convolutions (the paper's MCD rate, supplement D.1)");
    v.use("model.mcd.length_scale", length_scale);
    v.use("model.nng.prior_var", nng_prior_var);
    v.part(mfg);
    v.part(whvi);
  }
};

}  // namespace whvi::models
