// The optimiser axis: one update rule per file (adam.cpp, sgd.cpp, rmsprop.cpp),
// each with its options beside it, registered in registry.cpp; the variational
// methods and deep ensembles pick one with training.optimizer, and
// FlatOptimizer (flat_optimizer.h) applies it to each segment of its flat
// parameter buffer. NNG and SGHMC bring their own update (infer/).
//
// A new rule is its own file (a class with the three update() overloads and a
// `<name>_rule()` registration), one X(<name>) line in registry.cpp, and its
// test against a reference (tests/test_training.cpp checks the
// shipped ones against LibTorch's optimisers).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>  // the tensor type alone: a rule file compiles in seconds, not half a minute

#include "common/options.h"

namespace whvi::optim {

class UpdateRule {
 public:
  virtual ~UpdateRule() = default;
  // One update of the n parameters p from their gradients g: the segment's
  // t-th update (from 1), learning rate lr (the schedule's times the
  // segment's factor); m and v are the rule's two state arrays, zero before
  // the first update. Loops over raw memory (flat_optimizer.cpp's note on
  // -fno-math-errno applies to the files that define them).
  virtual void update(float* p, const float* g, float* m, float* v, int64_t n, int64_t t, double lr) const = 0;
  virtual void update(double* p, const double* g, double* m, double* v, int64_t n, int64_t t, double lr) const = 0;
  // The same rule as tensor operations, for parameters on another device
  // (training.device: cuda): the same numbers as the loops to float rounding.
  virtual void update(at::Tensor p, const at::Tensor& g, at::Tensor m, at::Tensor v, int64_t t,
                      double lr) const = 0;
};

// The two raw-memory update()s of a rule whose loop is one member template,
// `template <class T> void loop(T* p, const T* g, T* m, T* v, int64_t n,
// int64_t t, double lr) const` of Derived (instantiated in Derived's file).
template <class Derived>
class LoopRule : public UpdateRule {
 public:
  using UpdateRule::update;
  void update(float* p, const float* g, float* m, float* v, int64_t n, int64_t t, double lr) const final {
    static_cast<const Derived*>(this)->loop(p, g, m, v, n, t, lr);
  }
  void update(double* p, const double* g, double* m, double* v, int64_t n, int64_t t, double lr) const final {
    static_cast<const Derived*>(this)->loop(p, g, m, v, n, t, lr);
  }
};

// A registered rule: its name (training.optimizer), its options'
// declarations and its factory from them.
struct RuleKind {
  std::string name;
  std::vector<options::Spec> (*declare)();
  std::vector<std::string> (*reads)();
  options::Resolve resolve;  // reads its options struct (the experiment calls it)
  std::function<std::shared_ptr<const UpdateRule>(const options::Resolved&)> make;
  const char* help = "";     // training.optimizer's help for it
};

// The registration of a rule built from its options O.
template <class O>
RuleKind rule_kind(std::string name, std::shared_ptr<const UpdateRule> (*make)(const O&)) {
  return {std::move(name), &options::declare<O>, &options::keys_read<O>, &options::resolve<O>,
          [make](const options::Resolved& o) { return make(o.template as<O>()); }};
}

// The registered rules (each defines its `<name>_rule()`, listed in
// registry.cpp), in registration order.
const std::vector<RuleKind>& rule_kinds();
std::vector<std::string> rule_names();
// The registered rule `name` (an unknown one is an error listing the others).
const RuleKind& find_rule(const std::string& name);
// Adam with its defaults: the rule of options built in code rather than read.
std::shared_ptr<const UpdateRule> default_rule();
// training.optimizer and every registered rule's options, declared.
std::vector<options::Spec> rule_option_specs();

// What a method's options embed (v.part): the chosen rule, built from its
// own options when the struct is read.
struct OptimiserOptions {
  std::string kind = "adam";
  std::shared_ptr<const UpdateRule> rule = default_rule();
  void finish(const options::Nested& read) {
    const auto& k = find_rule(kind);
    rule = k.make(read(k.resolve));
  }
  template <class V>
  void visit(V& v) {
    static const std::string help =
        "optimiser of the variational models and deep ensembles (the paper's GP experiments use SGD and RMSprop; "
        "src/optim/): " + options::kinds_help(rule_kinds()) + "; the methods with an update of their own ignore it";
    v.pick("training.optimizer", kind, rule_names(), help.c_str());
    v.late();
  }
};

}  // namespace whvi::optim
