// whvi eval: a trained split's checkpoint scored again on its held-out rows (experiment.h).
#include "experiment/experiment.h"
#include "experiment/internal.h"

#include <filesystem>
#include <string>

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "calibration/calibration.h"
#include "common/errors.h"
#include "common/io.h"
#include "common/rng.h"
#include "config/config.h"
#include "data/dataset.h"
#include "experiment/checkpoint.h"
#include "infer/inference.h"
#include "likelihoods/likelihood.h"
#include "likelihoods/metrics.h"

namespace whvi::experiment {
using nlohmann::json;
using namespace detail;

namespace {

// The checkpoint's data, read again; a data file named by a relative path is
// found from the current folder, so from another folder the error says where
// it is looked for and how to point at it.
data::RegressionData load_eval_data(const RunPlan& plan, const std::string& checkpoint) {
  try {
    return detail::load_data(plan);
  } catch (const Error& e) {
    const std::string& ds = plan.data.dataset;
    const std::string msg = e.what();
    const bool a_file = ds.find_first_of("./") != std::string::npos && ds.rfind("synthetic:", 0) != 0;
    if (msg.find("not found") == std::string::npos || !a_file || ds[0] == '/')
      throw;
    throw Error(msg + "; " + checkpoint + " names its data as '" + printable(ds, 200) +
                "', a path relative to the folder it was trained from: run whvi eval from that folder (it is read "
                "from " + printable(std::filesystem::current_path().string(), 200) + " now)");
  }
}

}  // namespace

json run_eval(const EvalOptions& o) {
  auto loaded = load_checkpoint(o.checkpoint);
  const auto& meta = loaded.meta;
  const auto plan = resolve_run(loaded.cfg);
  auto& inf = loaded.inf;
  const auto split = static_cast<size_t>(meta.split);
  const uint64_t seed = static_cast<uint64_t>(plan.run.seed);

  const auto d = load_eval_data(plan, o.checkpoint);
  const auto splits = load_splits(plan, d);
  WHVI_CHECK(split < splits.size() && d.x.size(1) == meta.d_in && d.num_classes == meta.num_classes, o.checkpoint,
             ": its split or input size no longer matches the data (", d.source, ")");
  const auto prep = data::prepare_split(d, splits[split]);
  WHVI_CHECK(data_fingerprint(prep) == meta.data_fp, "the data of split ", split, " (", d.source,
             ") changed since ", o.checkpoint,
             " was trained, so its metrics would not be comparable; retrain on the current data, or "
             "restore the data the model was trained on");
  WHVI_CHECK(prep.x_test.size(0) > 0, o.checkpoint, " has no held-out rows to evaluate on: ",
             plan.data.protocol == "all"
                 ? "it is a final model (data.protocol: all), trained on every row"
                 : "its split holds none",
             "; predict with it instead (whvi predict --checkpoint ", o.checkpoint,
             " --input FILE), or train with held-out rows (data.protocol: random) to evaluate");
  const int64_t S = o.mc_samples > 0 ? o.mc_samples : plan.run.mc_samples;
  const auto gen = make_generator(seed, split, Stream::kEval);
  const auto y = prep.y_test.squeeze(1).to(torch::kFloat64);
  announce_prediction(plan, *inf, prep.x_test, y, S, gen, "eval: the held-out", "--mc-samples");
  const auto f = inf->predict(prep.x_test, S, gen);
  const auto m = evaluate_predictions(plan, inf->likelihood(), f, y);
  json r = environment_json();
  r["checkpoint"] = o.checkpoint;
  r["data_source"] = d.source;  // read too: --json must not be it
  r["command"] = o.command_line;
  r["split"] = split;
  r["mc_samples"] = S;
  r["predictive_samples"] = f.size(0);  // SGHMC: its whole bank, whatever S
  r["n_test"] = prep.x_test.size(0);
  r["evaluated_on"] = plan.data.validation_fraction > 0 ? "validation" : "test";
  r.update(metrics_json(m));
  if (!m.reliability.empty()) r["reliability"] = reliability_json(m.reliability);
  // the split record's calibration numbers, recomputed from the stored fit
  if (const auto cal = stored_calibration(meta, o.checkpoint); cal.on())
    r["calibration"] = calibration::evaluate(cal, inf->likelihood(), f, prep.y_test.squeeze(1).to(torch::kFloat64));
  return r;
}

}  // namespace whvi::experiment
