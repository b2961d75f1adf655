// Typed options of the layer kinds that more than one file builds: the
// fully connected MFG and MCD layers (mfg.cpp, mcd.cpp), whose keys the
// convolution filters (conv_mfg.cpp, conv_mcd.cpp) read too, and the
// convolutions' own (models/conv.cpp). Each declares its
// keys once (common/options.h); layers never see the config.
#pragma once

#include <cstdint>
#include <string>

#include "common/options.h"
#include "nn/conv_filter.h"
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
    v.num("model.mcd.dropout", dropout, 0, 0.99, "dropout rate after each hidden linear layer, active at test time (chosen on validation data, docs/modelling.md; the paper used 0.005)");
    v.num("model.mcd.length_scale", length_scale, 0, options::kInf, "prior length-scale l: KL term (1-p) l^2/2 |W|^2 + l^2/2 |b|^2 (Gal & Ghahramani; chosen on validation data, docs/modelling.md; the paper's code used 0.01)");
  }
};

// A convolutional trunk's options: the filter kind (model.conv), whose maker is
// built from that kind's own options, and batch normalisation.
struct ConvOptions {
  std::string kind = "mcd";  // a registered filter kind (nn/conv_filter.h)
  std::string batch_norm = "auto";
  FilterMaker filter;        // built from the kind's own options when read
  void finish(const options::Nested& read) {
    const auto& k = find_filter(kind);
    filter = k.make(read(k.resolve));
  }
  template <class V>
  void visit(V& v) {
    static const std::string help = filter_kinds_help();
    v.pick("model.conv", kind, filter_names(), help.c_str());
    v.idle_when("model.architecture", {"mlp"});
    v.pick("model.batch_norm", batch_norm, {"auto", "on", "off"}, "batch normalisation after every convolution (batch statistics in training steps, running averages at test time): auto = on for resnet18 only");
    v.late();
    v.idle_when("model.architecture", {"mlp"});
  }
};

}  // namespace whvi::models
