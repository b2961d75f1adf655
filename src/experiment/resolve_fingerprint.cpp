// The run fingerprint: the configuration that determines a split's numbers,
// resolved with the plan. It is the config minus what does not act, each
// relation declared beside its key (options::Spec: late, idle_when,
// outside_split, enters_as), and minus the options of the components the run
// does not use (the layers', method's, trunk's and filter's own groups, from
// the keys each registration reads), so a new default for MCD does not orphan
// finished WHVI runs. No key rule is written here.
#include "experiment/internal.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "data/source.h"
#include "experiment/resolve.h"
#include "infer/inference.h"
#include "models/trunk.h"
#include "nn/conv_filter.h"
#include "nn/layer.h"

namespace whvi::experiment {

using json = nlohmann::json;

namespace {

// Erases the dotted `key` from j where present, and the groups it leaves empty.
void erase_key(json& j, const std::string& key) {
  const auto dot = key.find('.');
  if (!j.is_object() || !j.contains(key.substr(0, dot))) return;
  if (dot == std::string::npos) {
    j.erase(key);
    return;
  }
  auto& sub = j[key.substr(0, dot)];
  erase_key(sub, key.substr(dot + 1));
  if (sub.is_object() && sub.empty()) j.erase(key.substr(0, dot));
}

// The plan's resolved facts a key's declared relations may name.
std::map<std::string, std::string> plan_facts(const config::Config& cfg, const infer::MethodPlan& m) {
  return {{"plan.method", m.method},                           // the method that trains the run
          {"plan.engine", infer::engine_for(m)},               // autograd or fused, auto resolved
          {"plan.stopping", stopping_on(cfg) ? "on" : "off"},  // training.stopping resolved
          {"plan.user_table", data::data_source_for(cfg.get_string("data.dataset")).user_table ? "true" : "false"}};
}

// Whether `spec`'s key does not act: one of its declared clauses holds.
bool idle(const config::Config& cfg, const options::Spec& spec, const std::map<std::string, std::string>& facts) {
  const auto value_of = [&](const std::string& subject) -> std::string {
    if (const auto f = facts.find(subject); f != facts.end()) return f->second;
    for (const auto& s : cfg.declared())
      if (s.key == subject) return options::value_text(cfg, s);
    throw Error("the fingerprint: '" + subject + "' is neither a declared key nor a plan fact");
  };
  for (const auto& clause : spec.idle_when) {
    bool all = true;
    for (const auto& c : clause) {
      const auto v = value_of(c.subject);
      all = all && (std::find(c.values.begin(), c.values.end(), v) != c.values.end()) == c.in;
    }
    if (all) return true;
  }
  return false;
}

// The groups (model.<group>.*) of `keys`.
void groups_of(const std::vector<std::string>& keys, std::set<std::string>& out) {
  for (const auto& k : keys) {
    const auto a = k.find('.'), b = k.find('.', a + 1);
    if (k.rfind("model.", 0) == 0 && b != std::string::npos) out.insert(k.substr(a + 1, b - a - 1));
  }
}

// Leaves out the model.<group> sections of registered components this run
// does not use: its hidden and output layers', its method's, its trunk's and,
// where the trunk reads model.conv, that filter's (NF-WHVI reads WHVI's too).
void erase_unused_groups(json& j, const infer::MethodPlan& m) {
  std::set<std::string> groups, used;
  for (const auto& l : models::layer_kinds()) {
    groups_of(l.reads(), groups);
    if (l.name == m.network.hidden || l.name == m.network.output) groups_of(l.reads(), used);
  }
  for (const auto& k : infer::method_kinds()) {
    groups_of(k.reads(), groups);
    if (k.name == m.method) groups_of(k.reads(), used);
  }
  for (const auto& t : models::trunk_kinds()) {
    const auto reads = t.reads();
    groups_of(reads, groups);
    if (t.name != m.arch) continue;
    groups_of(reads, used);
    if (std::find(reads.begin(), reads.end(), "model.conv") != reads.end())
      for (const auto& f : models::filter_kinds())
        if (f.name == m.conv) groups_of(f.reads(), used);
  }
  for (const auto& f : models::filter_kinds()) groups_of(f.reads(), groups);
  for (const auto& g : groups)
    if (!used.count(g)) j["model"].erase(g);
}

}  // namespace

std::string fingerprint_of(const config::Config& cfg) {
  auto j = cfg.to_json();
  const auto m = method_plan(cfg);
  erase_unused_groups(j, m);
  const auto facts = plan_facts(cfg, m);
  for (const auto& spec : cfg.declared()) {
    if (spec.outside_split || idle(cfg, spec, facts) ||
        (spec.enters_as.empty() && spec.late && options::at_default(cfg, spec))) {
      erase_key(j, spec.key);
    } else if (!spec.enters_as.empty()) {
      json::json_pointer at("/" + [&] {
        std::string s = spec.key;
        std::replace(s.begin(), s.end(), '.', '/');
        return s;
      }());
      if (j.contains(at)) j[at] = spec.enters_as;
    }
  }
  return j.dump();
}

std::string config_fingerprint(const std::string& config_path, const std::vector<std::string>& overrides) {
  const auto cfg = load_config(config_path, overrides);
  if (cfg.get_string("model.kind") != "auto") return fingerprint_of(cfg);
  // auto: its candidates', each as the run after the choice would be configured
  return detail::auto_fingerprint(config_path, overrides, options::read<AutoOptions>(cfg), cfg.source());
}

}  // namespace whvi::experiment
