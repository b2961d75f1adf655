// Every inference method, in one place: model.kind -> method. A new method is
// its file, one line here and its tests.
#include <utility>

#include "common/errors.h"
#include "infer/inference.h"
#include "infer/variational.h"

namespace whvi::infer {

std::unique_ptr<Inference> make_sghmc(std::shared_ptr<models::RegressionModel>, const config::Config&);
std::unique_ptr<Inference> make_nng(std::shared_ptr<models::RegressionModel>, const config::Config&);

namespace {

using Factory = std::unique_ptr<Inference> (*)(std::shared_ptr<models::RegressionModel>, const config::Config&);

std::unique_ptr<Inference> make_variational(std::shared_ptr<models::RegressionModel> m, const config::Config& cfg) {
  return std::make_unique<VariationalInference>(std::move(m), VariationalOptions::from(cfg));
}

const std::vector<std::pair<std::string, Factory>>& registry() {
  static const std::vector<std::pair<std::string, Factory>> r = {
      {"variational", make_variational},
      {"sghmc", make_sghmc},
      {"nng", make_nng},
  };
  return r;
}

}  // namespace

std::string method_of(const std::string& model_kind) {
  if (model_kind == "sghmc" || model_kind == "nng") return model_kind;
  return "variational";
}

std::unique_ptr<Inference> make_inference(int64_t d_in, const config::Config& cfg, double y_mean, double y_std,
                                          const at::Generator& init, int64_t num_classes) {
  const auto method = method_of(cfg.get_string("model.kind"));
  // SGHMC's noise prior assumes the Gaussian; its classification path is not
  // written yet.
  WHVI_CHECK(num_classes == 0 || method != "sghmc", cfg.source(), ": model.kind ",
             cfg.get_string("model.kind"), " supports regression only for now; for classification use "
             "whvi, nf-whvi, mfg, mcd, vsd or nng");
  const std::string arch = cfg.get_string("model.architecture");
  const bool conv = arch != "mlp" && arch != "rff";
  WHVI_CHECK(arch == "mlp" || method == "variational" || (conv && method == "nng"), cfg.source(), ": model.kind ",
             cfg.get_string("model.kind"), " has no ", arch == "rff" ? "random-feature" : "convolutional",
             " layers yet; use model.architecture: mlp, or whvi, nf-whvi, mfg, mcd, vsd", arch == "rff" ? "" : " or nng",
             " for this architecture");
  WHVI_CHECK(!conv || method != "nng" || cfg.get_string("model.conv") == "nng", cfg.source(),
             ": model.kind nng trains only noisy K-FAC layers, but model.conv is '", cfg.get_string("model.conv"),
             "'; set model.conv: nng");
  WHVI_CHECK(cfg.get_string("model.conv") != "nng" || method == "nng" || !conv, cfg.source(),
             ": model.conv nng filters are trained only by model.kind nng (its optimiser), but model.kind is '",
             cfg.get_string("model.kind"), "'; set model.kind: nng or choose another model.conv");
  auto model = std::make_shared<models::RegressionModel>(d_in, cfg, y_mean, y_std, init, num_classes);
  for (const auto& [name, factory] : registry())
    if (name == method) return factory(std::move(model), cfg);
  throw Error("inference method '" + method + "' is not registered");
}

std::vector<std::string> registered_methods() {
  std::vector<std::string> out;
  for (const auto& [name, f] : registry()) out.push_back(name);
  return out;
}

}  // namespace whvi::infer
