// The data-source registry (data/source.h): one X(<name>) line per source.
#include <algorithm>

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

RegressionData load_data(const DataPlan& plan, const DataRequest& r) {
  WHVI_ASSERT(plan.source != nullptr && plan.source == &data_source_for(r.dataset));
  return plan.source->load(plan.options, r);
}

}  // namespace whvi::data
