// The likelihood registry: likelihood.kind -> its factory and its options. A
// new likelihood is its own file and one X(<name>) line here.
#include "common/errors.h"
#include "likelihoods/kind.h"

namespace whvi::likelihoods {

// The registered likelihoods, in registration order: a new one is its own file
// (defining `LikelihoodKind <name>_likelihood_kind()`, kind.h) and one X(<name>) line here.
#define WHVI_LIKELIHOOD_KINDS(X) \
  X(gaussian)                    \
  X(hetero_gaussian)             \
  X(student_t)                   \
  X(mixture)                     \
  X(softmax)

#define WHVI_DECLARE(name) LikelihoodKind name##_likelihood_kind();
WHVI_LIKELIHOOD_KINDS(WHVI_DECLARE)
#undef WHVI_DECLARE

namespace {

const std::vector<LikelihoodKind>& registry() {
#define WHVI_ENTRY(name) name##_likelihood_kind(),
  static const std::vector<LikelihoodKind> r = {WHVI_LIKELIHOOD_KINDS(WHVI_ENTRY)};
#undef WHVI_ENTRY
  return r;
}

}  // namespace

void LikelihoodPlan::finish(const options::Nested& read) {
  options = read(options::find_kind(registry(), kind, "likelihood.kind").resolve);
  origin = read.origin();
}

std::shared_ptr<Likelihood> make_likelihood(const LikelihoodPlan& plan, double y_mean, double y_std,
                                            int64_t num_classes) {
  const std::string& kind = plan.kind;
  const std::string& ds = plan.dataset;
  const auto& e = options::find_kind(registry(), kind, "likelihood.kind");
  if (e.classification)
    WHVI_CHECK(num_classes >= 2, plan.origin, ": likelihood.kind ", kind, " needs a classification data set "
               "(class labels), but '", ds, "' has real-valued targets; set likelihood.kind: gaussian");
  else
    WHVI_CHECK(num_classes == 0, plan.origin, ": data set '", ds, "' is a classification data set (",
               num_classes, " classes), but likelihood.kind is ", kind, "; set likelihood.kind: softmax");
  return e.make(plan.options, y_mean, y_std, num_classes);
}

std::vector<std::string> registered_likelihoods() { return options::kind_names(registry()); }

bool likelihood_can(const std::string& kind, Capability c) {
  const auto& e = options::find_kind(registry(), kind, "likelihood.kind");
  switch (c) {
    case Capability::kClassification: return e.classification;
    case Capability::kFusedStep: return e.fused;
    case Capability::kBatchedSplits: return e.batched;
  }
  return false;
}

std::string likelihoods_that(Capability c) {
  std::string out;
  for (const auto& e : registry())
    if (likelihood_can(e.name, c)) out += (out.empty() ? "" : ", ") + std::string(e.name);
  return out;
}

std::string likelihood_kinds_help() {
  std::string out;
  for (const auto& e : registry()) out += (out.empty() ? "" : ", ") + std::string(e.name) + " (" + e.help + ")";
  return out;
}

std::vector<options::Spec> likelihood_option_specs() {
  auto specs = options::declare<LikelihoodPlan>();
  for (const auto& e : registry()) options::append(specs, e.declare());
  return specs;
}

}  // namespace whvi::likelihoods
