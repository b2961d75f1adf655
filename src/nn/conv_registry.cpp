// The convolution-filter registry: model.conv -> its filters and options. A new
// filter kind is its own file and one line here.
#include "common/errors.h"
#include "nn/conv_filter.h"

namespace whvi::models {

const std::vector<FilterKind>& filter_kinds() {
  static const std::vector<FilterKind> r = {
      mcd_filter(),
      mfg_filter(),
      whvi_filter(),
      lowrank_mcd_filter(),
      nng_filter(),
  };
  return r;
}

std::vector<std::string> filter_names() {
  std::vector<std::string> out;
  for (const auto& k : filter_kinds()) out.push_back(k.name);
  return out;
}

FilterMaker make_filter_maker(const std::string& name, const options::Source& src) {
  for (const auto& k : filter_kinds())
    if (k.name == name) return k.make(src);
  std::string known;
  for (const auto& k : filter_kinds()) known += (known.empty() ? "" : ", ") + k.name;
  throw Error("model.conv '" + name + "' is not a registered filter kind; registered: " + known);
}

std::vector<options::Spec> filter_option_specs() {
  std::vector<options::Spec> out;
  for (const auto& k : filter_kinds()) {
    const auto s = k.declare();
    out.insert(out.end(), s.begin(), s.end());
  }
  return out;
}

}  // namespace whvi::models
