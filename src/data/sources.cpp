// The data-source registry (data/source.h): one X(<name>) line per source.
#include <algorithm>
#include <map>

#include "common/errors.h"
#include "data/source.h"

namespace whvi::data {

// Matched in this order: the UCI-layout folder, which takes any name, last.
#define WHVI_DATA_SOURCES(X) \
  X(toy)                     \
  X(synthetic)               \
  X(uci_classification)      \
  X(mnist)                   \
  X(cifar)                   \
  X(csv)                     \
  X(npy)                     \
  X(uci_folder)

#define WHVI_DECLARE(name) DataSourceKind name##_data_source();
WHVI_DATA_SOURCES(WHVI_DECLARE)
#undef WHVI_DECLARE

const std::vector<DataSourceKind>& data_sources() {
#define WHVI_ENTRY(name) name##_data_source(),
  static const std::vector<DataSourceKind> r = {WHVI_DATA_SOURCES(WHVI_ENTRY)};
#undef WHVI_ENTRY
  return r;
}

const DataSourceKind& data_source_for(const std::string& dataset) {
  for (const auto& s : data_sources())
    if (s.matches(dataset)) return s;
  return data_sources().back();
}

bool is_benchmark(const std::string& dataset) { return data_source_for(dataset).benchmark(dataset); }

std::vector<options::Spec> data_source_option_specs() {
  std::vector<options::Spec> out;
  for (const auto& s : data_sources())
    for (auto& spec : s.declare())
      if (std::none_of(out.begin(), out.end(), [&](const options::Spec& o) { return o.key == spec.key; }))
        out.push_back(std::move(spec));
  return out;
}

std::string dataset_help() {
  std::string h = "what to train on: ";
  for (const auto& s : data_sources()) h += std::string(s.help) + (&s == &data_sources().back() ? "" : "; ");
  return h + ". The papers' benchmarks keep their papers' fixed schedules; any other data get validation "
             "stopping (training.stopping: auto)";
}

namespace {

// The default of every key some source declares, and which sources read it.
struct KeyUse {
  std::string def;
  options::Type type = options::Type::kString;
  std::vector<std::string> readers;
};

std::map<std::string, KeyUse> key_uses() {
  std::map<std::string, KeyUse> out;
  for (const auto& s : data_sources())
    for (const auto& spec : s.declare()) {
      out[spec.key].def = spec.def;
      out[spec.key].type = spec.type;
    }
  for (const auto& s : data_sources())
    for (const auto& k : s.keys())
      if (out.count(k)) out[k].readers.push_back(s.name);
  return out;
}

bool at_default(const options::Source& src, const std::string& key, const KeyUse& u) {
  switch (u.type) {
    case options::Type::kInt: return std::to_string(src.get_int(key)) == u.def;
    case options::Type::kFloat: return options::format_double(src.get_float(key)) == u.def;
    case options::Type::kBool: return (src.get_bool(key) ? "true" : "false") == u.def;
    case options::Type::kString: return src.get_string(key) == u.def;
  }
  return true;
}

}  // namespace

RegressionData load_data(const options::Source& src, const DataRequest& r) {
  WHVI_CHECK(!r.dataset.empty(), src.source(), ": data.dataset is not set; set it to ", dataset_help());
  const auto& s = data_source_for(r.dataset);
  const auto reads = s.keys();
  for (const auto& [key, use] : key_uses()) {
    if (std::find(reads.begin(), reads.end(), key) != reads.end() || at_default(src, key, use)) continue;
    std::string who;
    for (const auto& w : use.readers) who += (who.empty() ? "" : ", ") + w;
    throw Error(src.source() + ": " + key + " is read by " + who + " data, but data.dataset '" + r.dataset +
                "' is read as " + s.name + " data, which does not use it; remove " + key);
  }
  return s.load(src, r);
}

}  // namespace whvi::data
