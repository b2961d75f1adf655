// whvi::Predictor (whvi/predictor.h): run_predict's path on a checkpoint
// loaded once.
#include "whvi/predictor.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include <nlohmann/json.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "common/errors.h"
#include "common/runtime.h"
#include "experiment/checkpoint.h"
#include "experiment/experiment.h"

namespace whvi {

struct Predictor::Impl {
  std::string path;
  experiment::LoadedCheckpoint loaded;
};

namespace {
std::string line(const std::vector<std::string>& cells) {
  std::string l;
  for (size_t i = 0; i < cells.size(); ++i) l += (i ? "," : "") + experiment::csv_field(cells[i]);
  return l + "\n";
}
}  // namespace

Predictor::Predictor(const std::string& checkpoint, int threads) : impl_(new Impl{checkpoint, {}}) {
  // whvi's log lines go to standard error, never into the host program's standard output: a
  // program that set spdlog's default logger itself keeps its own
  if (spdlog::default_logger()->name().empty())
    spdlog::set_default_logger(
        std::make_shared<spdlog::logger>("whvi", std::make_shared<spdlog::sinks::stderr_color_sink_mt>()));
  set_threads(threads);
  impl_->loaded = experiment::load_checkpoint(checkpoint);
  WHVI_CHECK(!impl_->loaded.meta.inputs_json.empty(), "'", checkpoint, "' was written by an older whvi and does not "
             "store its input columns; retrain that split with this version");
}

Predictor::~Predictor() = default;
Predictor::Predictor(Predictor&&) noexcept = default;
Predictor& Predictor::operator=(Predictor&&) noexcept = default;

std::vector<std::string> Predictor::columns() const {
  std::vector<std::string> out;
  const auto enc = nlohmann::json::parse(impl_->loaded.meta.inputs_json);
  for (const auto& c : enc["columns"]) out.push_back(c["name"].get<std::string>());
  return out;
}

bool Predictor::classifier() const { return impl_->loaded.meta.num_classes > 0; }

std::string Predictor::predict_file(const std::string& input, int64_t mc_samples, double interval) const {
  experiment::PredictOptions o;
  o.checkpoint = impl_->path;
  o.input = input;
  o.mc_samples = mc_samples;
  o.interval = interval;
  std::string text;
  experiment::predict_with(impl_->loaded, o, [&](const std::string& piece) { text += piece; });
  return text;
}

std::string Predictor::predict(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                               int64_t mc_samples, double interval) const {
  for (size_t i = 0; i < rows.size(); ++i)
    WHVI_CHECK(rows[i].size() == header.size(), "row ", i + 1, " has ", rows[i].size(), " cells for ", header.size(),
               " column names; give one cell per name");
  // the rows as a CSV file of their own (created exclusively, removed after)
  const char* dir = std::getenv("TMPDIR");
  std::string path = std::string(dir && *dir ? dir : "/tmp") + "/whvi-rows-XXXXXX";
  const int fd = mkstemp(path.data());
  WHVI_CHECK(fd >= 0, "cannot create a temporary file in '", dir && *dir ? dir : "/tmp", "'; set TMPDIR to a writable folder");
  struct Remove {
    std::string p;
    ~Remove() { std::remove(p.c_str()); }
  } remove{path};
  std::string text = line(header);
  for (const auto& r : rows) text += line(r);
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  WHVI_CHECK(ok, "cannot write the rows to the temporary file '", path, "' (disk full?)");
  return predict_file(path, mc_samples, interval);
}

}  // namespace whvi
