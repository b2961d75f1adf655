// Every inference method, in one place: inference.kind (or model.kind's own
// method) -> a factory. A new method is its file, one line here and its tests.
#include <utility>

#include "common/errors.h"
#include "infer/inference.h"
#include "infer/variational.h"

namespace whvi::infer {

// The registered inference methods, in registration order: a new one is its own file (defining
// `MethodKind <name>_method()`) and one X(<name>) line here.
#define WHVI_METHOD_KINDS(X)  \
  X(variational)              \
  X(ensemble)                 \
  X(sghmc)                    \
  X(nng)                      \
  X(blr)                      \
  X(gp)

#define WHVI_DECLARE(name) MethodKind name##_method();
WHVI_METHOD_KINDS(WHVI_DECLARE)
#undef WHVI_DECLARE

const std::vector<MethodKind>& method_kinds() {
#define WHVI_ENTRY(name) name##_method(),
  static const std::vector<MethodKind> r = {WHVI_METHOD_KINDS(WHVI_ENTRY)};
#undef WHVI_ENTRY
  return r;
}

namespace {

// inference.kind, and what make_inference checks it against
struct Choice {
  std::string asked = "auto";
  std::string kind, arch, conv, likelihood;  // model.kind, model.architecture, model.conv, likelihood.kind
  template <class V>
  void visit(V& v) {
    static const std::string help =
        "how the network's parameters are learned: auto = model.kind's own (variational for " +
        kinds_trained_by("variational") + "; the others by their own method); ensemble with a variational "
        "model.kind trains ensemble.members independent variational networks of that kind and predicts with their "
        "mixture";
    v.pick("inference.kind", asked, choices(), help.c_str());
    v.use("model.kind", kind);
    v.use("model.architecture", arch);
    v.use("model.conv", conv);
    v.use("likelihood.kind", likelihood);
  }
  static std::vector<std::string> choices() {
    std::vector<std::string> c = {"auto"};
    for (const auto& m : registered_methods()) c.push_back(m);
    return c;
  }
};

}  // namespace

std::string method_of(const std::string& model_kind) { return models::recipe(model_kind).method; }

std::string kinds_trained_by(const std::string& method) {
  std::string out;
  for (const auto& k : models::model_kinds())
    if (method_of(k) == method) out += (out.empty() ? "" : ", ") + k;
  return out;
}

std::string method_of(const options::Source& cfg) {
  const auto c = options::read<Choice>(cfg);
  const std::string& kind = c.kind;
  const std::string own = method_of(kind);
  const std::string& asked = c.asked;
  if (asked == "auto" || asked == own) return own;
  // a variational network can also be trained as a deep ensemble of itself
  WHVI_CHECK(asked == "ensemble" && own == "variational", cfg.source(), ": inference.kind ", asked,
             " cannot train model.kind ", kind, " (its method is ", own,
             "); set inference.kind: auto, or ensemble with a variational model.kind (",
             kinds_trained_by("variational"), ")");
  return asked;
}

std::string model_label(const options::Source& cfg) {
  const std::string kind = options::read<Choice>(cfg).kind;
  const std::string method = method_of(cfg);
  return method == method_of(kind) ? kind : method + "-" + kind;
}

std::unique_ptr<Inference> make_inference(int64_t d_in, const options::Source& cfg, double y_mean, double y_std,
                                          const at::Generator& init, int64_t num_classes) {
  const auto method = method_of(cfg);
  const auto c = options::read<Choice>(cfg);
  const std::string& kind = c.kind;
  // SGHMC's noise prior assumes the Gaussian; its classification path is not
  // written yet.
  WHVI_CHECK(num_classes == 0 || method != "sghmc", cfg.source(), ": model.kind ", kind,
             " supports regression only for now; for classification use ", kinds_trained_by("variational"), ", ",
             kinds_trained_by("nng"), " or ", kinds_trained_by("ensemble"));
  WHVI_CHECK(method != "sghmc" || c.likelihood == "gaussian", cfg.source(),
             ": model.kind sghmc samples the gaussian likelihood's noise variance; likelihood.kind ",
             c.likelihood, " is not written for it yet; set likelihood.kind: gaussian");
  WHVI_CHECK(method == "variational" || method == "ensemble" ||
                 options::read<VariationalOptions>(cfg).plain_elbo(),
             cfg.source(), ": training.kl_warmup and training.kl_weight weight the KL term of variational methods "
             "and ensembles; model.kind ", kind, " has none", method == "nng" ? " (its own is model.nng.kl_weight)" : "",
             "; remove them");
  const std::string& arch = c.arch;
  const bool conv = arch != "mlp" && arch != "rff";
  const bool trunk_ok = method == "variational" || (method == "ensemble" && kind != "ensemble");
  WHVI_CHECK(arch == "mlp" || trunk_ok || (conv && method == "nng"), cfg.source(), ": model.kind ", kind,
             " has no ", arch == "rff" ? "random-feature" : "convolutional",
             " layers yet; use model.architecture: mlp, or ", kinds_trained_by("variational"),
             arch == "rff" ? "" : " or " + kinds_trained_by("nng"),
             " for this architecture");
  WHVI_CHECK(!conv || method != "nng" || c.conv == "nng", cfg.source(),
             ": model.kind nng trains only noisy K-FAC layers, but model.conv is '", c.conv,
             "'; set model.conv: nng");
  WHVI_CHECK(c.conv != "nng" || method == "nng" || !conv, cfg.source(),
             ": model.conv nng filters are trained only by model.kind nng (its optimiser), but model.kind is '", kind,
             "'; set model.kind: nng or choose another model.conv");
  const NetworkMaker make_network = [=, &cfg]() {
    return std::make_shared<models::RegressionModel>(d_in, cfg, y_mean, y_std, init, num_classes);
  };
  for (const auto& m : method_kinds())
    if (m.name == method) return m.make(make_network, cfg);
  throw Error("inference method '" + method + "' is not registered");
}

bool fits_in_closed_form(const options::Source& cfg) { return fits_in_closed_form(method_of(cfg)); }

bool fits_in_closed_form(const std::string& method) {
  for (const auto& m : method_kinds())
    if (m.name == method) return m.closed_form;
  return false;
}

std::vector<std::string> registered_methods() {
  std::vector<std::string> out;
  for (const auto& m : method_kinds()) out.push_back(m.name);
  return out;
}

std::vector<options::Spec> method_option_specs() {
  auto specs = options::declare<Choice>();
  for (const auto& m : method_kinds()) options::append(specs, m.declare());
  return specs;
}

}  // namespace whvi::infer
