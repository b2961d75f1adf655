// The likelihood registry: likelihood.kind -> its factory and its options. A
// new likelihood is its own file and one line here.
#include "common/errors.h"
#include "likelihoods/likelihood.h"

namespace whvi::likelihoods {

namespace {

struct Entry {
  const char* kind;
  bool classification;  // for class labels (softmax) or real-valued targets
  std::vector<options::Spec> (*declare)();
  std::function<std::shared_ptr<Likelihood>(const options::Source&, double y_mean, double y_std, int64_t classes)> make;
};

// The entry of a likelihood built from its options O.
template <class O, class Make>
Entry entry(const char* kind, bool classification, Make make) {
  return {kind, classification, &options::declare<O>,
          [make](const options::Source& src, double m, double s, int64_t k) -> std::shared_ptr<Likelihood> {
            return make(options::read<O>(src), m, s, k);
          }};
}

const std::vector<Entry>& registry() {
  static const std::vector<Entry> r = {
      entry<GaussianOptions>("gaussian", false, [](const GaussianOptions& o, double m, double s, int64_t) {
        return std::make_shared<GaussianLikelihood>(o, m, s);
      }),
      entry<options::None>("hetero-gaussian", false, [](const options::None&, double m, double s, int64_t) {
        return std::make_shared<HeteroGaussianLikelihood>(m, s);
      }),
      entry<StudentTOptions>("student-t", false, [](const StudentTOptions& o, double m, double s, int64_t) {
        return std::make_shared<StudentTLikelihood>(o, m, s);
      }),
      entry<options::None>("softmax", true, [](const options::None&, double, double, int64_t k) {
        return std::make_shared<SoftmaxLikelihood>(k);
      }),
  };
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
                 "(eeg, magic, letter), but '", ds, "' has real-valued targets; set likelihood.kind: gaussian");
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
