// Typed options of the layer kinds that more than one file builds: the
// fully connected MFG and MCD layers (mfg.cpp, mcd.cpp) and the convolutions
// (conv.cpp), whose MFG and MCD filters take the same keys. Each is read from
// the config once, by a factory or a trunk builder; layers never see the
// config.
#pragma once

#include <cstdint>
#include <string>

#include "config/config.h"
#include "models/whvi_params.h"

namespace whvi::models {

struct MfgOptions {
  double prior_var = 0;  // model.mfg.prior_var (<= 0: 1 / fan_in)
  double bias_prior_var = 1;  // model.mfg.bias_prior_var
  double init_logvar = 0;     // model.mfg.init_logvar
  double init_mean_scale = 1;  // model.mfg.init_mean_scale
  static MfgOptions from(const config::Config& cfg) {
    MfgOptions o;
    o.prior_var = cfg.get_float("model.mfg.prior_var");
    o.bias_prior_var = cfg.get_float("model.mfg.bias_prior_var");
    o.init_logvar = cfg.get_float("model.mfg.init_logvar");
    o.init_mean_scale = cfg.get_float("model.mfg.init_mean_scale");
    return o;
  }
};

struct McdOptions {
  double dropout = 0.1;      // model.mcd.dropout (fully connected layers)
  double length_scale = 1;   // model.mcd.length_scale
  static McdOptions from(const config::Config& cfg) {
    McdOptions o;
    o.dropout = cfg.get_float("model.mcd.dropout");
    o.length_scale = cfg.get_float("model.mcd.length_scale");
    return o;
  }
};

// One convolution's options: its kind (model.conv) and what that kind reads.
struct ConvOptions {
  std::string kind = "mcd";  // model.conv: mcd, mfg, whvi, lowrank-mcd or nng
  double dropout = 0.005;    // model.conv_dropout (mcd, lowrank-mcd)
  double length_scale = 1;   // model.mcd.length_scale (mcd, lowrank-mcd)
  int64_t rank = 0;          // model.conv_rank (lowrank-mcd; 0: as many parameters as WHVI)
  MfgOptions mfg;            // mfg
  WhviOptions whvi;          // whvi
  double nng_prior_var = 1;  // model.nng.prior_var (nng)
  static ConvOptions from(const config::Config& cfg) {
    ConvOptions o;
    o.kind = cfg.get_string("model.conv");
    o.dropout = cfg.get_float("model.conv_dropout");
    o.length_scale = cfg.get_float("model.mcd.length_scale");
    o.rank = cfg.get_int("model.conv_rank");
    o.mfg = MfgOptions::from(cfg);
    o.whvi = WhviOptions::from(cfg);
    o.nng_prior_var = cfg.get_float("model.nng.prior_var");
    return o;
  }
};

}  // namespace whvi::models
