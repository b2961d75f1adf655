// The likelihood registry: likelihood.kind -> its factory. A new likelihood
// is its own file and one line here.
#include "common/errors.h"
#include "likelihoods/likelihood.h"

namespace whvi::likelihoods {

std::shared_ptr<Likelihood> make_student_t(const config::Config& cfg, double y_mean, double y_std);

namespace {

struct Entry {
  const char* kind;
  bool classification;  // for class labels (softmax) or real-valued targets
  std::shared_ptr<Likelihood> (*make)(const config::Config& cfg, double y_mean, double y_std, int64_t classes);
};

const std::vector<Entry>& registry() {
  static const std::vector<Entry> r = {
      {"gaussian", false,
       [](const config::Config& c, double m, double s, int64_t) -> std::shared_ptr<Likelihood> {
         return std::make_shared<GaussianLikelihood>(GaussianOptions::from(c), m, s);
       }},
      {"hetero-gaussian", false,
       [](const config::Config&, double m, double s, int64_t) -> std::shared_ptr<Likelihood> {
         return std::make_shared<HeteroGaussianLikelihood>(m, s);
       }},
      {"student-t", false,
       [](const config::Config& c, double m, double s, int64_t) { return make_student_t(c, m, s); }},
      {"softmax", true,
       [](const config::Config&, double, double, int64_t k) -> std::shared_ptr<Likelihood> {
         return std::make_shared<SoftmaxLikelihood>(k);
       }},
  };
  return r;
}

}  // namespace

std::shared_ptr<Likelihood> make_likelihood(const config::Config& cfg, double y_mean, double y_std,
                                            int64_t num_classes) {
  const std::string kind = cfg.get_string("likelihood.kind");
  const std::string ds = cfg.get_string("data.dataset");
  for (const auto& e : registry()) {
    if (kind != e.kind) continue;
    if (e.classification)
      WHVI_CHECK(num_classes >= 2, cfg.source(), ": likelihood.kind ", kind, " needs a classification data set "
                 "(eeg, magic, letter), but '", ds, "' has real-valued targets; set likelihood.kind: gaussian");
    else
      WHVI_CHECK(num_classes == 0, cfg.source(), ": data set '", ds, "' is a classification data set (",
                 num_classes, " classes), but likelihood.kind is ", kind, "; set likelihood.kind: softmax");
    return e.make(cfg, y_mean, y_std, num_classes);
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

}  // namespace whvi::likelihoods
