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
  // SGHMC's noise prior and NNG's noise optimiser assume the Gaussian; their
  // classification path is not written yet.
  WHVI_CHECK(num_classes == 0 || method == "variational", cfg.source(), ": model.kind ",
             cfg.get_string("model.kind"), " supports regression only for now; for classification use "
             "whvi, nf-whvi, mfg or mcd");
  WHVI_CHECK(cfg.get_string("model.architecture") == "mlp" || method == "variational", cfg.source(),
             ": model.kind ", cfg.get_string("model.kind"), " has no convolutional layers yet; use model.architecture: "
             "mlp, or whvi, nf-whvi, mfg, mcd or vsd for the fully connected head");
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
