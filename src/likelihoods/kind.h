// A registered likelihood (likelihoods/registry.cpp): its likelihood.kind, its
// options' declarations and its factory. Each likelihood's file defines
// `LikelihoodKind <name>_likelihood_kind()` with likelihood_kind<O>(...).
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "likelihoods/likelihood.h"

namespace whvi::likelihoods {

struct LikelihoodKind {
  const char* name;     // likelihood.kind
  bool classification;  // for class labels (softmax) or real-valued targets
  std::vector<options::Spec> (*declare)();
  options::Resolve resolve;  // reads its options struct (the experiment calls it)
  std::function<std::shared_ptr<Likelihood>(const options::Resolved&, double y_mean, double y_std, int64_t classes)>
      make;
  // likelihood.kind's help for it, and its capabilities (Capability in likelihood.h)
  const char* help = "";
  bool fused = false;    // the fused training step has its gradient (infer/fused_step.cpp)
  bool batched = false;  // nll_sum_group: batched splits
  LikelihoodKind described(const char* h) const {
    LikelihoodKind k = *this;
    k.help = h;
    return k;
  }
  LikelihoodKind with_fused_step() const {
    LikelihoodKind k = *this;
    k.fused = true;
    return k;
  }
  LikelihoodKind with_batched_splits() const {
    LikelihoodKind k = *this;
    k.batched = true;
    return k;
  }
};

// The entry of a likelihood built from its options O by
// make(const O&, y_mean, y_std, classes).
template <class O, class Make>
LikelihoodKind likelihood_kind(const char* kind, bool classification, Make make) {
  return {kind, classification, &options::declare<O>, &options::resolve<O>,
          [make](const options::Resolved& o, double m, double s, int64_t k) -> std::shared_ptr<Likelihood> {
            return make(o.template as<O>(), m, s, k);
          }};
}

}  // namespace whvi::likelihoods
