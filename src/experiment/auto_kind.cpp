// model.kind auto: before the run, every kind of model.auto.candidates trains
// as a run of its own, `<output.name>-auto-<kind>`, on each split's training
// rows less a random model.auto.validation_fraction of them (carved as
// data.validation_fraction carves them, from (split_seed, k); the test rows
// are never read), and is scored by its mean validation NLL over the splits.
// A run that is itself on validation rows (data.validation_fraction > 0, a
// selection stage judging auto) nests: the candidates' rows are carved from
// the rows that carve leaves to train (data.inner_validation_fraction), so
// the choice never reads the rows the run is scored on. With model.auto.folds
// K > 1 each candidate runs K times, on the disjoint blocks 0..K-1 of that
// carve's shuffle (data.validation_block or data.inner_validation_block;
// `<name>-auto-<kind>-fold<b>`), and is scored by the mean of the K.
// The kind with the lowest wins and the run goes on as if the config named it,
// its record holding every candidate's score, or why it was skipped, under
// `auto`. The log score is the criterion here, not the wide selection's ranks
// of NLL and calibration error: those rank candidates across many data sets,
// while on one table a rank can hide any gap in NLL, and the NLL is a proper
// scoring rule that already charges for miscalibration.
//
// model.auto.schedule halving (the default) makes the choice cost little more
// than the chosen model: every candidate runs on the first model.auto.splits
// splits only (the same validation rows for all, so the comparison is paired);
// the closed forms (blr, gp) are fitted once; the networks race by successive
// halving: all of them train model.auto.first_budget of their training.steps
// (and training.steps_fixed_noise), the worse half (rounded down) is dropped,
// the budget doubles for the rest, until one network is left or the budget is
// full (a lone network is scored at its full budget); model.auto.eta 3 keeps
// the best third instead and triples the budget. That network, at the
// last budget it was scored at, and the closed forms are compared by their
// mean validation NLL. A network scored below its
// full budget is judged pessimistically against a closed form, never
// optimistically. model.auto.schedule full trains every candidate's full
// budget on every split.
//
// On a regression target positive in every row (model.auto.log_target auto),
// the closed forms are also scored on the log of the target: candidates
// `blr-log` and `gp-log` (data.target_transform: log), their validation NLL in
// the target's units (metrics::in_target_units), so the comparison with the
// others is fair; when one of them wins, the run takes the log too.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <sstream>

#include <spdlog/spdlog.h>

#include "common/errors.h"
#include "common/io.h"
#include "experiment/internal.h"
#include "infer/inference.h"
#include "models/regression_model.h"

namespace whvi::experiment::detail {
namespace {

std::vector<std::string> candidate_kinds(const AutoOptions& a, const std::string& origin) {
  std::vector<std::string> out;
  std::stringstream in(a.candidates);
  for (std::string k; std::getline(in, k, ',');) {
    k.erase(0, k.find_first_not_of(' '));
    k.erase(k.find_last_not_of(' ') + 1);
    if (k.empty()) continue;
    WHVI_CHECK(k != "auto", origin, ": model.auto.candidates names auto; list the kinds to try, e.g. ",
               "blr,gp,laplace,mcd,whvi");
    const auto all = models::model_kinds();
    if (std::find(all.begin(), all.end(), k) == all.end()) {
      std::string known;
      for (const auto& m : all) known += (known.empty() ? "" : ", ") + m;
      throw Error(origin + ": model.auto.candidates names '" + printable(k, 40) + "', which is not a model kind; " +
                  "the kinds: " + known);
    }
    WHVI_CHECK(std::find(out.begin(), out.end(), k) == out.end(), origin, ": model.auto.candidates names ", k,
               " twice; list each kind once");
    out.push_back(k);
  }
  WHVI_CHECK(!out.empty(), origin, ": model.auto.candidates is empty; list the kinds to try, e.g. ",
             "blr,gp,laplace,mcd,whvi");
  return out;
}

// A candidate's name: its kind, or `<kind>-log` for a closed form on the log of the target.
const std::string kLogSuffix = "-log";
bool on_log(const std::string& candidate) {
  return candidate.size() > kLogSuffix.size() &&
         candidate.compare(candidate.size() - kLogSuffix.size(), kLogSuffix.size(), kLogSuffix) == 0;
}
std::string kind_of(const std::string& candidate) {
  return on_log(candidate) ? candidate.substr(0, candidate.size() - kLogSuffix.size()) : candidate;
}

// What a candidate overrides: its kind, and for a closed-form method (blr, gp) no hidden
// layers and no stopping rule (it has no steps to stop: a config that stops on held-out rows
// would otherwise refuse it); `<kind>-log` also the log of the target.
std::vector<std::string> kind_settings(const std::string& candidate) {
  const std::string kind = kind_of(candidate);
  std::vector<std::string> out = {"model.kind=" + kind};
  if (on_log(candidate)) out.push_back("data.target_transform=log");
  if (infer::fits_in_closed_form(infer::method_of(kind))) {
    out.push_back("model.depth=0");
    out.push_back("training.stopping=off");
  }
  return out;
}

// One scoring of candidates: the settings every candidate run of it gets (its
// splits and budget) and the suffix of its records' names.
struct Rung {
  std::vector<std::string> settings;
  std::string suffix;
};

// The record of a candidate's run on validation set `fold` (one of model.auto.folds).
std::string candidate_name(const RunPlan& plan, const std::string& kind, const Rung& rung, int64_t fold) {
  return plan.run.name + "-auto-" + kind + rung.suffix +
         (plan.run.autos.folds > 1 ? "-fold" + std::to_string(fold) : "");
}

// A candidate's run: the config as given, with its kind, the rung's settings,
// the validation rows (block `fold` of them) and no checkpoints or figures.
TrainOptions candidate_run(const TrainOptions& o, const RunPlan& plan, const std::string& kind, const Rung& rung,
                           int64_t fold) {
  TrainOptions c = o;
  c.auto_choice = json();
  c.held_lock.clear();  // a candidate is a run of its own name: it takes its own lock
  const auto set = [&](const std::string& kv) { c.overrides.push_back(kv); };
  for (const auto& kv : kind_settings(kind)) set(kv);
  for (const auto& kv : rung.settings) set(kv);
  std::ostringstream f;
  f.precision(17);
  f << plan.run.autos.validation_fraction;
  const bool nested = plan.data.validation_fraction > 0;
  const std::string carve = nested ? "data.inner_validation_" : "data.validation_";
  set(carve + "fraction=" + f.str());
  if (fold > 0) set(carve + "block=" + std::to_string(fold));
  set("output.name=" + candidate_name(plan, kind, rung, fold));
  set("output.checkpoints=false");
  set("output.plot=false");
  set("output.grid_points=0");
  set("evaluation.ood_dataset=");
  return c;
}

// This choice's reasons for skipping a candidate, each with the kind it was first
// said for: a reason every candidate shares is said once.
std::map<std::string, std::string>& said_reasons() {
  static std::map<std::string, std::string> said;
  return said;
}

// Scores `kind` in `rung`: its mean validation NLL over the splits (and the
// folds) into c["validation_mnll"], with the records it wrote; NaN (and
// c["skipped"] saying why) when it cannot be trained here.
double score(const TrainOptions& o, const RunPlan& plan, const std::string& kind, const Rung& rung, json& c) {
  const int64_t folds = plan.run.autos.folds;
  try {
    json per_fold = json::array(), records = json::array();
    double sum = 0;
    for (int64_t fold = 0; fold < folds; ++fold) {
      const json doc = run_train(candidate_run(o, plan, kind, rung, fold));
      const auto& s = doc.at("summary").at("mnll");
      const double nll = s.at("mean").is_number() ? s.at("mean").get<double>() : NAN;
      WHVI_CHECK(std::isfinite(nll), "its validation NLL is not finite");
      per_fold.push_back(nll);
      records.push_back(candidate_name(plan, kind, rung, fold) + ".json");
      sum += nll;
      c["splits"] = s.value("n", 0);
    }
    const double nll = sum / static_cast<double>(folds);
    if (folds == 1) {
      c["record"] = records[0];
    } else {
      c["records"] = records;
      c["fold_mnll"] = per_fold;
    }
    c["validation_mnll"] = nll;
    return nll;
  } catch (const Error& e) {
    c["skipped"] = printable(e.what(), 500);
    const auto said = said_reasons().emplace(e.what(), kind);
    if (said.second) spdlog::info("model.kind auto: {} skipped: {}", kind, e.what());
    else spdlog::info("model.kind auto: {} skipped, for the same reason as {}", kind, said.first->second);
    return NAN;
  }
}

// A network's training budget (training.steps, training.steps_fixed_noise) as
// its own run would read it (its kind's defaults included).
std::pair<int64_t, int64_t> budget_of(const TrainOptions& o, const std::string& kind) {
  auto ov = o.overrides;
  for (const auto& kv : kind_settings(kind)) ov.push_back(kv);
  const auto c = load_config(o.config_path, ov);
  const auto& loop = resolve_run(c).loop.options;
  return {loop.steps, loop.steps_fixed_noise};
}

// The candidates that can apply to this task, from the methods' declared
// capabilities (infer::cannot_train); the others are never started: one info
// line names them, and their record entry says why.
std::vector<std::string> applicable(const RunPlan& plan, const std::vector<std::string>& listed,
                                    std::map<std::string, json>& entry) {
  std::vector<std::string> kinds;
  std::string unfit;
  for (const auto& kind : listed) {
    const auto why = infer::cannot_train(kind, plan.method.likelihood_kind);
    if (why.empty()) {
      kinds.push_back(kind);
      continue;
    }
    entry[kind] = {{"kind", kind}, {"does_not_apply", why}};
    unfit += (unfit.empty() ? "" : ", ") + kind;
  }
  if (!unfit.empty())
    spdlog::info("model.kind auto: {} not tried: written for other likelihoods than {}", unfit,
                 plan.method.likelihood_kind);
  WHVI_CHECK(!kinds.empty(), plan.origin, ": model.kind auto: none of model.auto.candidates (", unfit,
             ") is written for likelihood.kind ", plan.method.likelihood_kind,
             "; list other kinds in model.auto.candidates, e.g. laplace,mcd,whvi");
  return kinds;
}

// model.auto.log_target auto: the closed forms of `kinds` again on the log of
// the target (`<kind>-log`, after their kind) when this is regression with a
// target positive in every row and no transform named; one info line says so.
std::vector<std::string> with_log_targets(const RunPlan& plan, const data::RegressionData& d,
                                          const std::vector<std::string>& kinds) {
  if (plan.run.autos.log_target != "auto" || d.is_classification() ||
      plan.data.target_transform != "none" || d.y.numel() == 0 || !(d.y > 0).all().item<bool>())
    return kinds;
  std::vector<std::string> out;
  std::string added;
  for (const auto& kind : kinds) {
    out.push_back(kind);
    if (!infer::fits_in_closed_form(infer::method_of(kind))) continue;
    out.push_back(kind + kLogSuffix);
    added += (added.empty() ? "" : ", ") + kind + kLogSuffix;
  }
  if (!added.empty())
    spdlog::info("model.kind auto: every target is positive, so the closed forms are also scored on its log: {} "
                 "(model.auto.log_target)", added);
  return out;
}

// The networks' race (model.auto.schedule halving): successive halving of
// `alive` from model.auto.first_budget of each one's training budget, on the
// rungs' `common` settings; each network's rungs go into its record entry.
// Returns the last network left and its last score ("" when none trained).
std::pair<std::string, double> race(const TrainOptions& o, const RunPlan& plan, std::vector<std::string> alive,
                                    const std::vector<std::string>& common, std::map<std::string, json>& entry) {
  // a race needs two: a lone network is scored at its full budget
  double f = alive.size() > 1 ? plan.run.autos.first_budget : 1.0;
  const auto eta = static_cast<size_t>(plan.run.autos.eta);
  std::map<std::string, std::pair<int64_t, int64_t>> budget;  // each network's, read once
  for (const auto& kind : alive) budget[kind] = budget_of(o, kind);
  for (int r = 0;; ++r) {
    const bool full = f >= 1 - 1e-12;
    spdlog::info("model.kind auto: successive halving, rung {}: {} network(s) at {} of their training steps", r,
                 alive.size(), full ? std::string("all") : std::to_string(static_cast<int>(std::lround(100 * f))) + "%");
    std::vector<std::pair<double, std::string>> ranked;
    for (const auto& kind : alive) {
      Rung rung{common, r > 0 ? "-rung" + std::to_string(r) : std::string()};
      const auto [steps, fixed] = budget.at(kind);
      const int64_t s = full ? steps : std::max<int64_t>(1, std::llround(f * static_cast<double>(steps)));
      if (!full) {
        rung.settings.push_back("training.steps=" + std::to_string(s));
        rung.settings.push_back("training.steps_fixed_noise=" +
                                std::to_string(std::llround(f * static_cast<double>(fixed))));
      }
      json c = {{"budget", f}, {"steps", s}};
      const double nll = score(o, plan, kind, rung, c);
      // the entry: its last rung's score, records and budget, and every rung
      auto& e = entry[kind];
      e["kind"] = kind;
      for (const auto& [key, value] : c.items()) e[key] = value;
      e["rungs"].push_back(c);
      if (std::isfinite(nll)) ranked.emplace_back(nll, kind);
    }
    if (ranked.empty()) return {"", NAN};
    std::sort(ranked.begin(), ranked.end());
    const size_t keep = full ? 1 : (ranked.size() + eta - 1) / eta;
    for (size_t i = keep; i < ranked.size(); ++i) entry[ranked[i].second]["dropped_at_rung"] = r;
    ranked.resize(keep);
    if (ranked.size() == 1) return {ranked[0].second, ranked[0].first};
    alive.clear();
    for (const auto& [nll, kind] : ranked) alive.push_back(kind);
    f = std::min(1.0, static_cast<double>(eta) * f);
  }
}

// The settings every candidate run gets under model.auto.schedule halving: the
// first model.auto.splits splits (where data.splits chooses them: not kfold).
std::vector<std::string> common_settings(const RunPlan& plan, size_t splits, size_t& scored) {
  scored = splits;
  const int64_t n = plan.run.autos.splits;
  if (plan.run.autos.schedule != "halving" || n <= 0 || static_cast<size_t>(n) >= splits ||
      plan.data.protocol == "kfold")
    return {};
  scored = static_cast<size_t>(n);
  return {"data.splits=" + std::to_string(n)};
}

}  // namespace

json choose_model_kind(const TrainOptions& o, const RunPlan& plan) {
  said_reasons().clear();
  WHVI_CHECK(plan.data.inner_validation_fraction == 0, plan.origin,
             ": model.kind auto carves its candidates' validation rows itself (model.auto.validation_fraction); "
             "remove data.inner_validation_fraction");
  WHVI_CHECK(plan.data.protocol != "all" && plan.data.dataset != "toy", plan.origin,
             ": model.kind auto needs held-out rows to choose on, but ",
             plan.data.protocol == "all" ? "data.protocol: all trains on every row"
                                                      : "the toy problem trains on every point",
             "; choose the kind with a split protocol first (its record's `auto` names it), then set model.kind to it");
  const auto t0 = std::chrono::steady_clock::now();
  const auto listed = candidate_kinds(plan.run.autos, plan.origin);
  std::map<std::string, json> entry;  // each candidate's part of the record, put in the listed order at the end
  const auto kinds = applicable(plan, listed, entry);
  const double fraction = plan.run.autos.validation_fraction;
  const int64_t folds = plan.run.autos.folds;
  WHVI_CHECK(static_cast<double>(folds) * fraction <= 1 + 1e-9, plan.origin, ": model.auto.folds = ", folds,
             " disjoint validation sets of model.auto.validation_fraction = ", fraction,
             " would need more than all of a split's training rows; lower either (5 folds of 0.2 is a 5-fold ",
             "cross-validation)");
  // the data and their splits, once: a problem there is the data's, not every candidate's
  const auto data = load_data(plan);
  const size_t n_splits = load_splits(plan, data).size();
  const auto tried = with_log_targets(plan, data, kinds);
  const bool halving = plan.run.autos.schedule == "halving";
  size_t scored = n_splits;
  const auto common = common_settings(plan, n_splits, scored);
  spdlog::info("model.kind auto: scoring {} candidate(s) on {:.0f}% of the training rows of {} of the {} split(s){}",
               tried.size(), 100 * fraction, scored, n_splits,
               folds > 1 ? ", " + std::to_string(folds) + " disjoint times" : std::string());
  std::string best;
  double best_nll = INFINITY;
  std::vector<std::string> nets;  // raced by successive halving (schedule halving)
  for (const auto& kind : tried) {
    if (halving && !infer::fits_in_closed_form(infer::method_of(kind_of(kind)))) {
      nets.push_back(kind);
      continue;
    }
    json c = {{"kind", kind_of(kind)}};
    if (on_log(kind)) c["target_transform"] = "log";
    const double nll = score(o, plan, kind, Rung{common, ""}, c);
    entry[kind] = c;
    if (nll < best_nll) best_nll = nll, best = kind;
  }
  if (!nets.empty()) {
    const auto [net, nll] = race(o, plan, nets, common, entry);
    if (!net.empty() && nll < best_nll) best_nll = nll, best = net;
  }
  WHVI_CHECK(!best.empty(), plan.origin, ": model.kind auto: none of model.auto.candidates could be trained here (",
             kinds.front(), ": ", entry[kinds.front()].value("skipped", std::string("no score")),
             "); fix that, or list other kinds in model.auto.candidates");
  spdlog::info("model.kind auto: {} has the lowest validation NLL ({:.4g}); training it on all of each split's "
               "training rows",
               best, best_nll);
  json out = {{"criterion", folds > 1 ? "lowest mean validation NLL over the scored splits and the folds"
                                       : "lowest mean validation NLL over the scored splits"},
              {"validation_fraction", fraction},
              {"schedule", halving ? "halving" : "full"},
              {"scored_splits", scored}};
  if (halving) out["first_budget"] = plan.run.autos.first_budget, out["eta"] = plan.run.autos.eta;
  // the choice's own cost, beside the chosen run's wall_seconds in the record
  out["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (folds > 1) out["folds"] = folds;
  json cands = json::array();
  for (const auto& kind : listed) {
    cands.push_back(entry[kind]);
    if (entry.count(kind + kLogSuffix)) cands.push_back(entry[kind + kLogSuffix]);
  }
  out["candidates"] = cands;
  out["chosen"] = kind_of(best);
  if (on_log(best)) out["target_transform"] = "log";
  out["settings"] = kind_settings(best);
  return out;
}

std::string auto_fingerprint(const std::string& config_path, const std::vector<std::string>& overrides,
                             const AutoOptions& a, const std::string& origin) {
  json out = json::array();
  for (const auto& kind : candidate_kinds(a, origin)) {
    auto o = overrides;
    for (const auto& kv : kind_settings(kind)) o.push_back(kv);
    out.push_back({{"kind", kind}, {"config", json::parse(fingerprint_of(load_config(config_path, o)))}});
  }
  return json{{"auto",
               {{"validation_fraction", a.validation_fraction},
                {"folds", a.folds},
                {"schedule", a.schedule},
                {"splits", a.splits},
                {"first_budget", a.first_budget},
                {"eta", a.eta},
                {"log_target", a.log_target},
                {"candidates", out}}}}
      .dump();
}

}  // namespace whvi::experiment::detail
