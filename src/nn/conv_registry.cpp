// The convolution-filter registry: model.conv -> its filters and options. A new
// filter kind is its own file and one line here.
#include "common/errors.h"
#include "nn/conv_filter.h"

namespace whvi::models {

// The registered convolution filter kinds, in registration order: a new one is its own file (defining
// `FilterKind <name>_filter()`) and one X(<name>) line here.
#define WHVI_FILTER_KINDS(X)  \
  X(mcd)                      \
  X(mfg)                      \
  X(whvi)                     \
  X(lowrank_mcd)              \
  X(nng)

#define WHVI_DECLARE(name) FilterKind name##_filter();
WHVI_FILTER_KINDS(WHVI_DECLARE)
#undef WHVI_DECLARE

const std::vector<FilterKind>& filter_kinds() {
#define WHVI_ENTRY(name) name##_filter(),
  static const std::vector<FilterKind> r = {WHVI_FILTER_KINDS(WHVI_ENTRY)};
#undef WHVI_ENTRY
  return r;
}

std::vector<std::string> filter_names() { return options::kind_names(filter_kinds()); }

std::string filter_kinds_help() {
  return "kind of the convolutional filters (the paper: MCD; src/nn/conv_*.cpp): " + options::kinds_help(filter_kinds());
}

const FilterKind& find_filter(const std::string& name) { return options::find_kind(filter_kinds(), name, "model.conv"); }

std::vector<options::Spec> filter_option_specs() {
  std::vector<options::Spec> out;
  for (const auto& k : filter_kinds()) {
    const auto s = k.declare();
    out.insert(out.end(), s.begin(), s.end());
  }
  return out;
}

}  // namespace whvi::models
