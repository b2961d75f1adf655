// The data-source registry: what data.dataset names and how it is read.
//
// A data source is one registration: its name, the data.dataset values it
// takes (matches), its own options declared beside it (common/options.h),
// its properties, and its loader. A new data format is its own file defining
// `DataSourceKind <name>_data_source()` with data_source<O>(...) and one
// X(<name>) line in data/sources.cpp.
//
// Properties the rest of the run reads from the registration, never from the
// spelling of a file name:
//   benchmark(dataset)  one of the papers' benchmarks: it keeps its paper's
//                       fixed schedule; any other data set (the user's CSV,
//                       .npy or UCI-layout folder, a synthetic problem) gets
//                       a schedule that adapts to it (validation stopping)
//   user_table          a table of the user's without stored splits or a
//                       paper protocol: protocol paper means random there
//                       (data.test_fraction held out, stratified for classes)
//   all_rows_train      every row trains the model (the toy): one split, no
//                       test rows
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/options.h"
#include "data/dataset.h"

namespace whvi::data {

// What every source is given besides its own options.
struct DataRequest {
  std::string dataset;          // data.dataset
  std::string data_dir;         // data.dir resolved (resolve_data_dir)
  uint64_t seed = 0;            // data.split_seed (the toy's and the synthetic problems' draws)
  bool classification = false;  // the likelihood is for class labels
};

struct DataSourceKind {
  const char* name;
  const char* help;  // the data.dataset values it takes, for data.dataset's help
  std::function<bool(const std::string&)> matches;
  std::function<bool(const std::string&)> benchmark;
  bool user_table = false;
  bool all_rows_train = false;
  std::vector<options::Spec> (*declare)();    // its own keys
  std::vector<std::string> (*keys)();         // every key its options read (own and used)
  options::Resolve resolve;                   // reads its options struct (the experiment calls it)
  std::function<RegressionData(const options::Resolved&, const DataRequest&)> load;
  // Why data.dataset cannot be this source's data after all (a synthetic name
  // no problem has, a path that is a file or device where a folder is read),
  // or "": said before anything else about the data keys. Optional.
  std::function<std::string(const std::string& dataset, const std::string& data_dir)> not_this;
};

// A source without options of its own.
struct NoDataOptions {
  template <class V>
  void visit(V&) {}
};

// The entry of a source whose options O are read from the config and given
// to load(const O&, const DataRequest&).
template <class O, class Load>
DataSourceKind data_source(const char* name, const char* help, std::function<bool(const std::string&)> matches,
                           std::function<bool(const std::string&)> benchmark, Load load) {
  DataSourceKind k;
  k.name = name;
  k.help = help;
  k.matches = std::move(matches);
  k.benchmark = std::move(benchmark);
  k.declare = &options::declare<O>;
  k.keys = &options::keys_read<O>;
  k.resolve = &options::resolve<O>;
  k.load = [load](const options::Resolved& o, const DataRequest& r) { return load(o.template as<O>(), r); };
  return k;
}

// The registered sources, in the order data.dataset is matched against them
// (the UCI-layout folder, which takes any other name, last).
const std::vector<DataSourceKind>& data_sources();
// The source that reads `dataset` (never fails: the last one takes any name).
const DataSourceKind& data_source_for(const std::string& dataset);
// Whether `dataset` keeps its paper's fixed schedule (see benchmark above).
bool is_benchmark(const std::string& dataset);
// The schema entries of every source's options, and data.dataset's help line
// listing what each source takes.
std::vector<options::Spec> data_source_option_specs();
std::string dataset_help();
// The source of data.dataset and its options, read once into the run's plan
// (experiment/resolve.h, which first refuses a data.* option that this source
// does not read but another does, set away from its default, naming the
// sources that read it, so a key never silently does nothing).
struct DataPlan {
  const DataSourceKind* source = nullptr;
  options::Resolved options;
};
// Loads `r.dataset` with the plan's source.
RegressionData load_data(const DataPlan& plan, const DataRequest& r);

}  // namespace whvi::data
