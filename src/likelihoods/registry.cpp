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

// likelihood.kind itself
struct Choice {
  std::string kind = "gaussian";
  std::string dataset;  // data.dataset, for errors
  template <class V>
  void visit(V& v) {
    v.pick("likelihood.kind", kind, registered_likelihoods(), "gaussian (regression, one learned noise variance), hetero-gaussian (regression: the network outputs a mean and a log variance per input, so the noise depends on the input; the predictive is the mixture over samples), student-t (regression: Student's t noise with a learned scale and learned degrees of freedom, robust to outlying targets) or softmax (classification: a categorical likelihood over the network's C outputs)");
    v.use("data.dataset", dataset);
  }
};

}  // namespace

std::shared_ptr<Likelihood> make_likelihood(const options::Source& src, double y_mean, double y_std,
                                            int64_t num_classes) {
  const auto c = options::read<Choice>(src);
  const std::string& kind = c.kind;
  const std::string& ds = c.dataset;
  for (const auto& e : registry()) {
    if (kind != e.kind) continue;
    if (e.classification)
      WHVI_CHECK(num_classes >= 2, src.source(), ": likelihood.kind ", kind, " needs a classification data set "
                 "(class labels), but '", ds, "' has real-valued targets; set likelihood.kind: gaussian");
    else
      WHVI_CHECK(num_classes == 0, src.source(), ": data set '", ds, "' is a classification data set (",
                 num_classes, " classes), but likelihood.kind is ", kind, "; set likelihood.kind: softmax");
    return e.make(src, y_mean, y_std, num_classes);
  }
  std::string known;
  for (const auto& e : registry()) known += (known.empty() ? "" : ", ") + std::string(e.kind);
  throw Error("likelihood.kind '" + kind + "' is not registered; registered: " + known);
}

std::vector<std::string> registered_likelihoods() {
  std::vector<std::string> out;
  for (const auto& e : registry()) out.push_back(e.kind);
  return out;
}

std::vector<options::Spec> likelihood_option_specs() {
  auto specs = options::declare<Choice>();
  for (const auto& e : registry()) options::append(specs, e.declare());
  return specs;
}

}  // namespace whvi::likelihoods
