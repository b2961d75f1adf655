// The schema: the experiment's own keys (data, seed, evaluation, output;
// declared in experiment/run_plan.h) and every component's, gathered from their declarations beside their code
// (common/options.h) through the registries. Defaults reproduce the WHVI
// paper's UCI protocol (supplement D.1).
#include <algorithm>
#include <map>

#include "calibration/calibration.h"
#include "config/config.h"
#include "data/source.h"
#include "experiment/run_plan.h"
#include "infer/inference.h"
#include "likelihoods/likelihood.h"
#include "nn/conv_filter.h"
#include "nn/layer.h"
#include "models/regression_model.h"
#include "models/trunk.h"
#include "optim/rule.h"
#include "train/batched.h"
#include "train/loop.h"
#include "train/stopping.h"

namespace whvi::config {
namespace {

bool same(const Param& a, const Param& b) {
  return a.type == b.type && a.def == b.def && a.min == b.min && a.max == b.max && a.choices == b.choices &&
         a.help == b.help;
}

// The path component of `key` at `depth` ("model.whvi.bias", 1 -> "whvi").
std::string component(const std::string& key, size_t depth) {
  size_t start = 0;
  for (size_t d = 0; d < depth; ++d) start = key.find('.', start) + 1;
  return key.substr(start, key.find('.', start) - start);
}

// Keys grouped so that every section's keys are contiguous at every level
// (a dump writes each section once), in the order the sections first appear.
std::vector<Param> grouped(std::vector<Param> ps, size_t depth) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<Param>> by;
  for (auto& p : ps) {
    const bool leaf = std::count(p.key.begin(), p.key.end(), '.') == static_cast<long>(depth);
    const std::string name = (leaf ? "=" : "") + component(p.key, depth);
    if (!by.count(name)) order.push_back(name);
    by[name].push_back(std::move(p));
  }
  std::vector<Param> out;
  for (const auto& name : order) {
    auto g = name[0] == '=' ? std::move(by[name]) : grouped(std::move(by[name]), depth + 1);
    for (auto& p : g) out.push_back(std::move(p));
  }
  return out;
}

std::vector<Param> gather() {
  std::vector<Param> all = options::declare<experiment::DataOptions>();
  options::append(all, data::data_source_option_specs());
  options::append(all, options::declare<models::NetworkOptions>());
  for (const auto& k : models::trunk_kinds()) options::append(all, k.declare());
  for (const auto& k : models::layer_kinds()) options::append(all, k.declare());
  options::append(all, models::filter_option_specs());
  options::append(all, infer::method_option_specs());
  options::append(all, likelihoods::likelihood_option_specs());
  options::append(all, optim::rule_option_specs());
  options::append(all, options::declare<train::LoopOptions>());
  options::append(all, options::declare<train::BatchedOptions>());
  options::append(all, options::declare<train::StoppingOptions>());
  options::append(all, calibration::option_specs());
  options::append(all, options::declare<experiment::RunOptions>());
  // a key declared by two registrations of one component (the convolutional
  // architectures share model.conv*) appears once; two different
  // declarations of one key are a programming error
  std::vector<Param> out;
  std::map<std::string, size_t> at;
  for (auto& p : all) {
    const auto it = at.find(p.key);
    if (it == at.end()) {
      at[p.key] = out.size();
      out.push_back(std::move(p));
    } else if (!same(out[it->second], p)) {
      throw std::logic_error("configuration key '" + p.key + "' is declared twice, differently");
    }
  }
  return grouped(std::move(out), 0);
}
}  // namespace

const std::vector<Param>& schema() {
  static const std::vector<Param> params = gather();
  return params;
}

}  // namespace whvi::config
