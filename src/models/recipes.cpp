// Every model.kind, in one place: a named recipe over the layer and
// inference registries.
#include "models/regression_model.h"

namespace whvi::models {

const std::vector<Recipe>& recipes() {
  static const std::vector<Recipe> r = {
      // kind        hidden layers  output layer  method; in this order in tables (`whvi table`)
      {"mcd",        "mcd",         "mcd",        "variational"},  // its output layer applies no dropout
      {"mfg",        "mfg",         "mfg",        "variational"},
      {"nng",        "nng",         "nng",        "nng"},
      {"whvi",       "whvi",        "mfg",        "variational"},
      {"nf-whvi",    "nf-whvi",     "mfg",        "variational"},
      {"vsd",        "vsd",         "vsd",        "variational"},
      {"tt",         "tt",          "mfg",        "variational"},
      {"sghmc",      "linear",      "linear",     "sghmc"},
      {"ensemble",   "linear",      "linear",     "ensemble"},
      {"laplace",    "linear",      "linear",     "laplace"},      // last-layer Laplace on a MAP network
      {"swag",       "linear",      "linear",     "swag"},         // SWAG on a MAP network
      {"map",        "linear",      "linear",     "map"},          // the MAP network alone
      {"blr",        "linear",      "linear",     "blr"},          // model.depth: 0
      {"gp",         "linear",      "linear",     "gp"},           // model.depth: 0 (a recipe default)
  };
  return r;
}

// Chosen on validation rows only (results/selection/README.md, "Wide
// re-selection"): for WHVI and MCD a larger initial noise variance ranked best on
// validation MNLL and calibration together over the 8 UCI sets and the 5
// synthetic problems; MFG kept the likelihood's default. Last-layer Laplace's
// MAP prior likewise (results/selection/laplace-prior/CRITERION.md).
const std::vector<RecipeDefault>& recipe_defaults() {
  static const std::vector<RecipeDefault> d = {
      {"whvi", "likelihood.init_log_noise_var", "0", "likelihood.kind", "gaussian",
       "results/selection/wide: validation MNLL and calibration"},
      {"mcd", "likelihood.init_log_noise_var", "0", "likelihood.kind", "gaussian",
       "results/selection/wide: validation MNLL and calibration"},
      {"gp", "model.depth", "0", "model.kind", "gp", "a Gaussian process has no hidden layers"},
      // last-layer Laplace's MAP network: a prior N(0, 1) on every weight ranked best on
      // validation MNLL and calibration over 16 sets (against 1/fan_in, 0.1 and none)
      {"laplace", "model.sghmc.prior_var", "1", "model.kind", "laplace",
       "results/selection/laplace-prior: validation MNLL and calibration"},
      {"swag", "model.sghmc.prior_var", "1", "model.kind", "swag",
       "laplace's (results/selection/laplace-prior): the same MAP network, not selected for swag"},
  };
  return d;
}

const Recipe& recipe(const std::string& model_kind) {
  for (const auto& r : recipes())
    if (r.kind == model_kind) return r;
  if (model_kind == "auto")
    throw Error("model.kind auto is chosen by `whvi train` before a model is built (it trains model.auto.candidates on "
                "validation rows and keeps the best); name one kind here, e.g. the `chosen` of a train record's `auto`");
  std::string known;
  for (const auto& k : model_kinds()) known += (known.empty() ? "" : ", ") + k;
  throw Error("model.kind '" + model_kind + "' is not a registered recipe; registered: " + known);
}

std::vector<std::string> model_kind_choices() {
  auto out = model_kinds();
  out.push_back("auto");
  return out;
}

std::vector<std::string> model_kinds() {
  std::vector<std::string> out;
  for (const auto& r : recipes()) out.push_back(r.kind);
  return out;
}

}  // namespace whvi::models
