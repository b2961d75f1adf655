// Every inference method, in one place: inference.kind (or model.kind's own
// method) -> a factory. A new method is its file, one line here and its tests.
#include <utility>

#include "common/errors.h"
#include "infer/inference.h"
#include "infer/variational.h"

namespace whvi::infer {

std::unique_ptr<Inference> make_sghmc(const NetworkMaker&, const config::Config&);
std::unique_ptr<Inference> make_nng(const NetworkMaker&, const config::Config&);
std::unique_ptr<Inference> make_ensemble(const NetworkMaker&, const config::Config&);

namespace {

using Factory = std::unique_ptr<Inference> (*)(const NetworkMaker&, const config::Config&);

std::unique_ptr<Inference> make_variational(const NetworkMaker& make_network, const config::Config& cfg) {
  return std::make_unique<VariationalInference>(make_network(), VariationalOptions::from(cfg));
}

const std::vector<std::pair<std::string, Factory>>& registry() {
  static const std::vector<std::pair<std::string, Factory>> r = {
      {"variational", make_variational},
      {"sghmc", make_sghmc},
      {"nng", make_nng},
      {"ensemble", make_ensemble},
  };
  return r;
}

}  // namespace

std::string method_of(const std::string& model_kind) {
  if (model_kind == "sghmc" || model_kind == "nng" || model_kind == "ensemble") return model_kind;
  return "variational";
}

std::string method_of(const config::Config& cfg) {
  const std::string kind = cfg.get_string("model.kind");
  const std::string own = method_of(kind);
  const std::string asked = cfg.get_string("inference.kind");
  if (asked == "auto" || asked == own) return own;
  // a variational network can also be trained as a deep ensemble of itself
  WHVI_CHECK(asked == "ensemble" && own == "variational", cfg.source(), ": inference.kind ", asked,
             " cannot train model.kind ", kind, " (its method is ", own,
             "); set inference.kind: auto, or ensemble with a variational model.kind (whvi, mfg, mcd, nf-whvi, "
             "vsd, tt)");
  return asked;
}

std::string model_label(const config::Config& cfg) {
  const std::string kind = cfg.get_string("model.kind");
  const std::string method = method_of(cfg);
  return method == method_of(kind) ? kind : method + "-" + kind;
}

std::unique_ptr<Inference> make_inference(int64_t d_in, const config::Config& cfg, double y_mean, double y_std,
                                          const at::Generator& init, int64_t num_classes) {
  const auto method = method_of(cfg);
  const std::string kind = cfg.get_string("model.kind");
  // SGHMC's noise prior assumes the Gaussian; its classification path is not
  // written yet.
  WHVI_CHECK(num_classes == 0 || method != "sghmc", cfg.source(), ": model.kind ", kind,
             " supports regression only for now; for classification use "
             "whvi, nf-whvi, mfg, mcd, vsd, nng or ensemble");
  WHVI_CHECK(method != "sghmc" || cfg.get_string("likelihood.kind") == "gaussian", cfg.source(),
             ": model.kind sghmc samples the gaussian likelihood's noise variance; likelihood.kind ",
             cfg.get_string("likelihood.kind"), " is not written for it yet; set likelihood.kind: gaussian");
  WHVI_CHECK(method == "variational" || method == "ensemble" ||
                 VariationalOptions::from(cfg).plain_elbo(),
             cfg.source(), ": training.kl_warmup and training.kl_weight weight the KL term of variational methods "
             "and ensembles; model.kind ", kind, " has none", method == "nng" ? " (its own is model.nng.kl_weight)" : "",
             "; remove them");
  const std::string arch = cfg.get_string("model.architecture");
  const bool conv = arch != "mlp" && arch != "rff";
  const bool trunk_ok = method == "variational" || (method == "ensemble" && kind != "ensemble");
  WHVI_CHECK(arch == "mlp" || trunk_ok || (conv && method == "nng"), cfg.source(), ": model.kind ", kind,
             " has no ", arch == "rff" ? "random-feature" : "convolutional",
             " layers yet; use model.architecture: mlp, or whvi, nf-whvi, mfg, mcd, vsd", arch == "rff" ? "" : " or nng",
             " for this architecture");
  WHVI_CHECK(!conv || method != "nng" || cfg.get_string("model.conv") == "nng", cfg.source(),
             ": model.kind nng trains only noisy K-FAC layers, but model.conv is '", cfg.get_string("model.conv"),
             "'; set model.conv: nng");
  WHVI_CHECK(cfg.get_string("model.conv") != "nng" || method == "nng" || !conv, cfg.source(),
             ": model.conv nng filters are trained only by model.kind nng (its optimiser), but model.kind is '", kind,
             "'; set model.kind: nng or choose another model.conv");
  const NetworkMaker make_network = [=, &cfg]() {
    return std::make_shared<models::RegressionModel>(d_in, cfg, y_mean, y_std, init, num_classes);
  };
  for (const auto& [name, factory] : registry())
    if (name == method) return factory(make_network, cfg);
  throw Error("inference method '" + method + "' is not registered");
}

std::vector<std::string> registered_methods() {
  std::vector<std::string> out;
  for (const auto& [name, f] : registry()) out.push_back(name);
  return out;
}

}  // namespace whvi::infer
