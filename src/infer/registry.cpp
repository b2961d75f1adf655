// Every inference method, in one place: inference.kind (or model.kind's own
// method) -> a factory. A new method is its file, one line here and its tests.
#include <algorithm>
#include <utility>

#include "common/errors.h"
#include "infer/inference.h"
#include "infer/plan.h"

namespace whvi::infer {

// The registered inference methods, in registration order: a new one is its own file (defining
// `MethodKind <name>_method()`) and one X(<name>) line here.
#define WHVI_METHOD_KINDS(X)  \
  X(variational)              \
  X(ensemble)                 \
  X(laplace)                  \
  X(swag)                     \
  X(sghmc)                    \
  X(nng)                      \
  X(blr)                      \
  X(gp)                       \
  X(map)

#define WHVI_DECLARE(name) MethodKind name##_method();
WHVI_METHOD_KINDS(WHVI_DECLARE)
#undef WHVI_DECLARE

const std::vector<MethodKind>& method_kinds() {
#define WHVI_ENTRY(name) name##_method(),
  static const std::vector<MethodKind> r = {WHVI_METHOD_KINDS(WHVI_ENTRY)};
#undef WHVI_ENTRY
  return r;
}

std::vector<std::string> MethodPlan::choices() {
  std::vector<std::string> c = {"auto"};
  for (const auto& m : registered_methods()) c.push_back(m);
  return c;
}

std::string method_of(const std::string& model_kind) { return models::recipe(model_kind).method; }

namespace {
// Whether model_kind's method is limited to likelihoods that exclude likelihood_kind.
bool cannot_train_quietly(const std::string& model_kind, const std::string& likelihood_kind) {
  const auto& can = options::find_kind(method_kinds(), method_of(model_kind), "inference method").can;
  return !can.likelihoods.empty() &&
         std::find(can.likelihoods.begin(), can.likelihoods.end(), likelihood_kind) == can.likelihoods.end();
}
}  // namespace

std::string kinds_where(const std::function<bool(const Capabilities&)>& has) {
  std::string out;
  for (const auto& k : models::model_kinds())
    if (has(capabilities_of(method_of(k)))) out += (out.empty() ? "" : ", ") + k;
  return out;
}

std::string kinds_trained_by(const std::string& method) {
  std::string out;
  for (const auto& k : models::model_kinds())
    if (method_of(k) == method) out += (out.empty() ? "" : ", ") + k;
  return out;
}

void MethodPlan::finish(const options::Nested& read) {
  origin = read.origin();
  const std::string own = method_of(kind);
  method = asked == "auto" ? own : asked;
  // a method that trains members (an ensemble) can train the networks of a kind whose method makes members
  WHVI_CHECK(method == own || (capabilities_of(method).trains_members && capabilities_of(own).can_be_member), origin,
             ": inference.kind ", asked, " cannot train model.kind ", kind, " (its method is ", own,
             "); set inference.kind: auto, or ", asked, " with a model.kind whose networks can be members (",
             kinds_where([](const Capabilities& c) { return c.can_be_member; }), ")");
  label = method == own ? kind : method + "-" + kind;
  options = read(options::find_kind(method_kinds(), method, "inference method").resolve);
}

std::shared_ptr<models::RegressionModel> make_network(int64_t d_in, const MethodPlan& plan, double y_mean,
                                                      double y_std, const at::Generator& init, int64_t num_classes) {
  return std::make_shared<models::RegressionModel>(
      d_in, plan.network, likelihoods::make_likelihood(plan.likelihood, y_mean, y_std, num_classes), init);
}

std::unique_ptr<Inference> make_inference(int64_t d_in, const MethodPlan& p, double y_mean, double y_std,
                                          const at::Generator& init, int64_t num_classes) {
  const std::string& method = p.method;
  const std::string& kind = p.kind;
  // what the method is written for, from its registration (Capabilities)
  if (method == method_of(kind))
    if (const auto why = cannot_train(kind, p.likelihood_kind); !why.empty()) throw Error(p.origin + ": " + why);
  const auto& can = capabilities_of(method);
  WHVI_CHECK(can.weighs_kl || p.variational.plain_elbo(),
             p.origin, ": training.kl_warmup and training.kl_weight weight the KL term of variational methods "
             "and ensembles; model.kind ", kind, " has none",
             can.own_kl_key.empty() ? "" : " (its own is " + can.own_kl_key + ")", "; remove them");
  using Trunks = Capabilities::Trunks;
  const std::string& arch = p.arch;
  const bool conv = arch != "mlp" && arch != "rff";
  // an ensemble trains the trunks its members' own method trains
  const Trunks trunks = can.trunks != Trunks::kAsMembers ? can.trunks
                        : method_of(kind) != method  ? capabilities_of(method_of(kind)).trunks
                                                     : Trunks::kNone;
  const auto trains_trunk = [&](Trunks t) { return t == Trunks::kAll || (conv && t == Trunks::kConvolutional); };
  WHVI_CHECK(arch == "mlp" || trains_trunk(trunks), p.origin, ": model.kind ", kind,
             " has no ", arch == "rff" ? "random-feature" : "convolutional",
             " layers yet; use model.architecture: mlp, or ",
             kinds_where([&](const Capabilities& c) { return trains_trunk(c.trunks); }), " for this architecture");
  WHVI_CHECK(!conv || can.own_filter.empty() || p.conv == can.own_filter, p.origin, ": model.kind ", kind,
             " trains only its own ", can.own_filter, " filters, but model.conv is '", p.conv, "'; set model.conv: ",
             can.own_filter);
  for (const auto& m : method_kinds())  // a filter kind a method trains as its own is trained by it alone
    WHVI_CHECK(!conv || m.can.own_filter != p.conv || m.name == method, p.origin, ": model.conv ", p.conv,
               " filters are trained only by model.kind ", kinds_trained_by(m.name), ", but model.kind is '", kind,
               "'; set model.kind: ", kinds_trained_by(m.name), " or choose another model.conv");
  const NetworkMaker net = [=, &p]() { return make_network(d_in, p, y_mean, y_std, init, num_classes); };
  return options::find_kind(method_kinds(), method, "inference method").make(net, p.options);
}

const Capabilities& capabilities_of(const std::string& method) {
  return options::find_kind(method_kinds(), method, "inference method").can;
}

bool fits_in_closed_form(const std::string& method) {
  for (const auto& m : method_kinds())
    if (m.name == method) return m.can.closed_form;
  return false;
}

std::string cannot_train(const std::string& model_kind, const std::string& likelihood_kind) {
  const std::string method = method_of(model_kind);
  const auto& can = options::find_kind(method_kinds(), method, "inference method").can;
  if (can.likelihoods.empty() ||
      std::find(can.likelihoods.begin(), can.likelihoods.end(), likelihood_kind) != can.likelihoods.end())
    return "";
  std::string kinds, others;
  for (const auto& l : can.likelihoods) kinds += (kinds.empty() ? "" : " or ") + l;
  for (const auto& k : models::model_kinds())
    if (cannot_train_quietly(k, likelihood_kind) == false && k != model_kind) others += (others.empty() ? "" : ", ") + k;
  const bool classifies = std::find(can.likelihoods.begin(), can.likelihoods.end(), "softmax") != can.likelihoods.end();
  return "model.kind " + model_kind + " is written for likelihood.kind " + kinds + " only (" + can.why +
         "), not " + likelihood_kind + (likelihood_kind == "softmax" && !classifies ? ": it supports regression only" : "") +
         "; set likelihood.kind: " + kinds +
         (others.empty() ? std::string() : ", or use one of " + others + " with " + likelihood_kind);
}

std::vector<std::string> registered_methods() {
  return options::kind_names(method_kinds());
}

std::vector<options::Spec> method_option_specs() {
  auto specs = options::declare<MethodPlan>();
  for (const auto& m : method_kinds()) options::append(specs, m.declare());
  return specs;
}

}  // namespace whvi::infer
