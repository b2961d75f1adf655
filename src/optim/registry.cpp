// The optimiser registry: training.optimizer -> its update rule and options.
// A new rule is its own file and one line here.
#include "optim/rule.h"

#include "common/errors.h"

namespace whvi::optim {

// The registered update rules, in registration order: a new one is its own file (defining
// `RuleKind <name>_rule()`) and one X(<name>) line here.
#define WHVI_RULE_KINDS(X)    \
  X(adam)                     \
  X(sgd)                      \
  X(rmsprop)

#define WHVI_DECLARE(name) RuleKind name##_rule();
WHVI_RULE_KINDS(WHVI_DECLARE)
#undef WHVI_DECLARE

const std::vector<RuleKind>& rule_kinds() {
#define WHVI_ENTRY(name) name##_rule(),
  static const std::vector<RuleKind> r = {WHVI_RULE_KINDS(WHVI_ENTRY)};
#undef WHVI_ENTRY
  return r;
}

std::vector<std::string> rule_names() { return options::kind_names(rule_kinds()); }

const RuleKind& find_rule(const std::string& name) { return options::find_kind(rule_kinds(), name, "training.optimizer"); }

std::vector<options::Spec> rule_option_specs() {
  auto out = options::declare<OptimiserOptions>();
  for (const auto& k : rule_kinds()) {
    const auto s = k.declare();
    out.insert(out.end(), s.begin(), s.end());
  }
  return out;
}

}  // namespace whvi::optim
