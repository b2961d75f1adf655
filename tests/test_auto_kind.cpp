// model.kind auto (experiment/auto_kind.cpp): each candidate is exactly a run
// of its own kind on validation rows carved from the training rows (checked
// against such a run made by hand, bit for bit), the kind with the lowest
// mean validation NLL is chosen, and the run that follows is exactly a run of
// the chosen kind (checked the same way); a candidate that cannot fit is
// skipped with its reason; what it cannot choose on is refused. A run on
// validation rows nests: its candidates are scored on rows carved from the
// rows it trains on, never on the rows it is scored on.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "common/io.h"
#include "common/runtime.h"
#include "experiment/experiment.h"
#include "helpers.h"
#include "models/regression_model.h"

using whvi::testing::error_of;
using json = nlohmann::json;
namespace fs = std::filesystem;
using namespace whvi;

namespace {

struct AutoRun {
  fs::path dir;
  std::string cfg;
  explicit AutoRun(const std::string& name) : dir(fs::temp_directory_path() / name) {
    whvi::remove_tree(dir.string());
    fs::create_directories(dir);
    cfg = (dir / "exp.yaml").string();
    std::ofstream(cfg) << "data: {dataset: 'synthetic:linear', synthetic_rows: 150, splits: 2}\n"
                       << "model: {kind: auto, width: 16, depth: 1, auto: {candidates: 'blr, mcd, gp'}, "
                       << "gp: {max_rows: 50}}\n"
                       << "training: {steps: 150, steps_fixed_noise: 0, log_every: 100000}\n"
                       << "evaluation: {mc_samples: 8}\noutput: {dir: '" << dir.string() << "', checkpoints: false}\n";
  }
  json train(std::vector<std::string> sets) const {
    experiment::TrainOptions o;
    o.config_path = cfg;
    o.overrides = std::move(sets);
    return experiment::run_train(o);
  }
  json record(const std::string& file) const {
    std::ifstream in(dir / file);
    return json::parse(in);
  }
};

double mnll_of(const json& doc) { return doc["summary"]["mnll"]["mean"].get<double>(); }

// A run of `kind` made by hand, as auto makes a candidate's (blr without hidden layers), with `sets`.
std::vector<std::string> as_kind(const std::string& kind, std::vector<std::string> sets) {
  sets.insert(sets.begin(), "model.kind=" + kind);
  if (kind == "blr") sets.push_back("model.depth=0");
  return sets;
}

}  // namespace

TEST(AutoKind, ChoosesTheLowestValidationNllAndTrainsIt) {
  set_threads(1);
  const AutoRun run("whvi_auto_kind");
  const json doc = run.train({});
  const auto& a = doc["auto"];
  ASSERT_EQ(a["candidates"].size(), 3u);
  // gp is skipped with its reason: 150 rows, 135 to train, over max_rows 50
  EXPECT_NE(a["candidates"][2]["skipped"].get<std::string>().find("model.gp.max_rows"), std::string::npos);
  std::string best;
  double best_nll = 1e300;
  for (int i = 0; i < 2; ++i) {
    const auto& c = a["candidates"][i];
    const std::string kind = c["kind"];
    // the candidate's record: validation rows only, its score the record's mean NLL
    const json rec = run.record(c["record"].get<std::string>());
    EXPECT_EQ(rec["protocol"]["evaluated_on"], "validation") << kind;
    EXPECT_EQ(c["validation_mnll"].get<double>(), mnll_of(rec)) << kind;
    // ... and a run of that kind on validation rows made by hand gives the same numbers
    EXPECT_EQ(mnll_of(run.train(as_kind(kind, {"data.validation_fraction=0.2", "output.name=hand-" + kind}))),
              mnll_of(rec))
        << kind;
    if (mnll_of(rec) < best_nll) best_nll = mnll_of(rec), best = kind;
  }
  EXPECT_EQ(a["chosen"], best);
  EXPECT_EQ(doc["config"]["model"]["kind"], best);
  // the run after the choice is a run of the chosen kind on the test rows
  const json plain = run.train(as_kind(best, {"output.name=plain"}));
  ASSERT_EQ(doc["splits"].size(), 2u);
  EXPECT_EQ(doc["protocol"]["evaluated_on"], "test");
  for (int k = 0; k < 2; ++k) {
    EXPECT_EQ(doc["splits"][k]["mnll"], plain["splits"][k]["mnll"]) << k;
    EXPECT_EQ(doc["splits"][k]["n_test"], plain["splits"][k]["n_test"]) << k;
  }
}

TEST(AutoKind, RefusesWhatItCannotChooseOn) {
  set_threads(1);
  const AutoRun run("whvi_auto_kind_refusals");
  EXPECT_NE(error_of([&] {
              run.train({"data.validation_fraction=0.2", "data.inner_validation_fraction=0.2"});
            }).find("remove data.inner_validation_fraction"),
            std::string::npos);
  // an inner carve needs an outer one
  EXPECT_NE(error_of([&] { run.train({"model.kind=blr", "model.depth=0", "data.inner_validation_fraction=0.2"}); })
                .find("data.validation_fraction is 0"),
            std::string::npos);
  EXPECT_NE(error_of([&] { run.train({"data.protocol=all", "data.splits=1"}); }).find("then set model.kind"),
            std::string::npos);
  EXPECT_NE(error_of([&] { run.train({"model.auto.candidates=blr,auto"}); }).find("names auto"), std::string::npos);
  const auto unknown = error_of([&] { run.train({"model.auto.candidates=blr,nonesuch"}); });
  EXPECT_NE(unknown.find("'nonesuch', which is not a model kind"), std::string::npos) << unknown;
  EXPECT_NE(error_of([&] { run.train({"model.auto.candidates=blr,blr"}); }).find("twice"), std::string::npos);
  // every candidate skipped: the first one's reason, and the fix
  const auto none = error_of([&] { run.train({"model.auto.candidates=gp"}); });
  EXPECT_NE(none.find("none of model.auto.candidates"), std::string::npos) << none;
  EXPECT_NE(none.find("model.gp.max_rows"), std::string::npos) << none;
  // a problem with the data is the data's own error, before any candidate trains
  const auto data = error_of([&] { run.train({"data.dataset=/nonexistent/table.csv"}); });
  EXPECT_NE(data.find("/nonexistent/table.csv"), std::string::npos) << data;
  EXPECT_EQ(data.find("model.auto.candidates"), std::string::npos) << data;
  // a kind that is not a recipe, named where only recipes go
  EXPECT_NE(error_of([&] { models::recipe("auto"); }).find("whvi train"), std::string::npos);
}

// A selection stage judging auto on validation rows: each candidate is exactly
// a run of its kind on rows carved inside the run's own training rows (by hand,
// bit for bit), and the run after the choice is exactly a run of the chosen
// kind on the outer validation rows.
TEST(AutoKind, NestsItsChoiceInsideARunOnValidationRows) {
  set_threads(1);
  const AutoRun run("whvi_auto_kind_nested");
  // no stopping rows, so n_train counts every row a run trains on
  const json doc = run.train({"data.validation_fraction=0.3", "training.stopping=off"});
  EXPECT_EQ(doc["protocol"]["evaluated_on"], "validation");
  const auto& a = doc["auto"];
  std::string best;
  double best_nll = 1e300;
  for (int i = 0; i < 2; ++i) {
    const auto& c = a["candidates"][i];
    const std::string kind = c["kind"];
    const json rec = run.record(c["record"].get<std::string>());
    EXPECT_EQ(mnll_of(run.train(as_kind(kind, {"data.validation_fraction=0.3", "data.inner_validation_fraction=0.2",
                                               "output.name=nested-" + kind, "training.stopping=off"}))),
              mnll_of(rec))
        << kind;
    // the inner rows are 20% of the 70% the outer carve leaves to train
    for (int k = 0; k < 2; ++k) {
      const int64_t outer_train = doc["splits"][k]["n_train"];
      EXPECT_EQ(rec["splits"][k]["n_train"].get<int64_t>() + rec["splits"][k]["n_test"].get<int64_t>(), outer_train);
      EXPECT_EQ(rec["splits"][k]["n_test"].get<int64_t>(), std::llround(0.2 * static_cast<double>(outer_train)));
    }
    // ... and they are not the outer carve's own validation rows at another share
    EXPECT_NE(mnll_of(run.train(as_kind(
                  kind, {"data.validation_fraction=0.2", "output.name=flat-" + kind, "training.stopping=off"}))),
              mnll_of(rec))
        << kind;
    if (mnll_of(rec) < best_nll) best_nll = mnll_of(rec), best = kind;
  }
  EXPECT_EQ(a["chosen"], best);
  const json plain =
      run.train(as_kind(best, {"data.validation_fraction=0.3", "output.name=plain-val", "training.stopping=off"}));
  for (int k = 0; k < 2; ++k) EXPECT_EQ(doc["splits"][k]["mnll"], plain["splits"][k]["mnll"]) << k;
}

// A config that stops on held-out rows (training.stopping: validation) still
// scores the closed-form kinds, which have no steps to stop, and a chosen one
// trains without the rule.
TEST(AutoKind, ClosedFormCandidatesRunUnderAStoppingRule) {
  set_threads(1);
  const AutoRun run("whvi_auto_kind_stopping");
  const json doc = run.train({"training.stopping=validation", "model.auto.candidates=blr,mcd"});
  const auto& blr = doc["auto"]["candidates"][0];
  EXPECT_FALSE(blr.contains("skipped")) << blr.dump();
  EXPECT_TRUE(blr.contains("validation_mnll")) << blr.dump();
  if (doc["auto"]["chosen"] == "blr") EXPECT_EQ(doc["config"]["training"]["stopping"], "off");
  EXPECT_EQ(run.train({"training.stopping=validation", "model.auto.candidates=blr"})["config"]["training"]["stopping"],
            "off");
}

// A config of model.kind auto has a fingerprint (the shipped examples' are
// guarded by Fingerprint.ShippedConfigsKeepTheirFingerprints): its inner
// validation share, then each candidate's, as the run of that kind would be
// configured, made here by hand; a change to any candidate's options shows.
TEST(AutoKind, FingerprintIsItsCandidatesUnderTheirSettings) {
  const AutoRun a("whvi_auto_fingerprint");
  const json fp = json::parse(experiment::config_fingerprint(a.cfg));
  ASSERT_TRUE(fp.contains("auto")) << fp.dump();
  EXPECT_EQ(fp["auto"]["validation_fraction"], 0.2);
  const auto& cands = fp["auto"]["candidates"];
  ASSERT_EQ(cands.size(), 3u);
  const std::vector<std::vector<std::string>> by_hand = {
      {"model.kind=blr", "model.depth=0", "training.stopping=off"},
      {"model.kind=mcd"},
      {"model.kind=gp", "model.depth=0", "training.stopping=off"}};
  const char* kinds[] = {"blr", "mcd", "gp"};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(cands[i]["kind"], kinds[i]);
    EXPECT_EQ(cands[i]["config"], json::parse(experiment::config_fingerprint(a.cfg, by_hand[i]))) << kinds[i];
  }
  const auto fp_of = [&](const std::string& kv) { return experiment::config_fingerprint(a.cfg, {kv}); };
  EXPECT_NE(fp_of("model.width=32"), fp.dump());
  EXPECT_NE(fp_of("model.auto.validation_fraction=0.3"), fp.dump());
  EXPECT_NE(fp_of("model.auto.candidates=mcd,blr,gp"), fp.dump());
  EXPECT_EQ(fp_of("output.name=other"), fp.dump());
}

// model.auto.folds: each candidate runs on the disjoint blocks 0..K-1 of its
// carve, each run exactly a hand-made run on that block (bit for bit), and its
// score is their mean; nested, the blocks are the inner carve's; more folds
// than the share allows are refused.
TEST(AutoKind, FoldsScoreEachCandidateOnDisjointBlocks) {
  set_threads(1);
  const AutoRun run("whvi_auto_kind_folds");
  const json doc = run.train({"model.auto.folds=3", "model.auto.candidates=blr,mcd"});
  const auto& a = doc["auto"];
  EXPECT_EQ(a["folds"], 3);
  std::string best;
  double best_nll = 1e300;
  for (const auto& c : a["candidates"]) {
    const std::string kind = c["kind"];
    ASSERT_EQ(c["fold_mnll"].size(), 3u) << c.dump();
    double sum = 0;
    for (int b = 0; b < 3; ++b) {
      const std::string block = "data.validation_block=" + std::to_string(b);
      const json hand = run.train(as_kind(kind, {"data.validation_fraction=0.2", block, "output.name=hand-" + kind + std::to_string(b)}));
      EXPECT_EQ(mnll_of(hand), c["fold_mnll"][b].get<double>()) << kind << " block " << b;
      EXPECT_EQ(mnll_of(run.record(c["records"][b].get<std::string>())), mnll_of(hand)) << kind << " block " << b;
      sum += mnll_of(hand);
    }
    EXPECT_NE(c["fold_mnll"][0], c["fold_mnll"][1]) << kind;  // other rows
    EXPECT_EQ(c["validation_mnll"].get<double>(), sum / 3) << kind;
    if (sum < best_nll) best_nll = sum, best = kind;
  }
  EXPECT_EQ(a["chosen"], best);
  // nested: the blocks of the inner carve, inside the outer training rows
  const json nested = run.train({"model.auto.folds=2", "model.auto.candidates=blr", "data.validation_fraction=0.3",
                                 "output.name=nested"});
  const json inner1 = run.train(as_kind("blr", {"data.validation_fraction=0.3", "data.inner_validation_fraction=0.2",
                                                "data.inner_validation_block=1", "output.name=inner1"}));
  EXPECT_EQ(nested["auto"]["candidates"][0]["fold_mnll"][1].get<double>(), mnll_of(inner1));
  const auto many = error_of([&] { run.train({"model.auto.folds=3", "model.auto.validation_fraction=0.4"}); });
  EXPECT_NE(many.find("model.auto.folds = 3"), std::string::npos) << many;
}

// model.auto.schedule halving (the default): every candidate is scored on the
// first model.auto.splits splits; the networks race by successive halving
// (3 at a quarter of their steps, the worse one dropped, 2 at half, the worse
// dropped), each rung's run exactly a hand-made run with that budget on those
// splits (bit for bit); the survivor, at the last budget it reached, and the
// closed form are compared, and the chosen kind trains every split. A mistake
// that dropped the better half, scored a rung on other rows or another budget,
// or compared a dropped network fails here; schedule full trains every
// candidate's whole budget on every split.
TEST(AutoKind, SuccessiveHalvingRacesTheNetworksOnTheFirstSplits) {
  set_threads(1);
  const AutoRun run("whvi_auto_kind_halving");
  const std::vector<std::string> sets = {"data.splits=3", "training.steps=160", "model.auto.first_budget=0.25",
                                         "model.auto.candidates=blr,mcd,mfg,whvi"};
  const json doc = run.train(sets);
  const auto& a = doc["auto"];
  EXPECT_EQ(a["schedule"], "halving");
  EXPECT_EQ(a["scored_splits"], 2);
  ASSERT_EQ(a["candidates"].size(), 4u);
  EXPECT_EQ(a["candidates"][0]["splits"], 2);  // blr, once, on the first two splits
  std::vector<std::pair<double, std::string>> rung0, rung1;
  std::string survivor;
  for (int i = 1; i < 4; ++i) {
    const auto& c = a["candidates"][i];
    const std::string kind = c["kind"];
    ASSERT_TRUE(c.contains("rungs")) << c.dump();
    EXPECT_EQ(c["rungs"][0]["steps"], 40) << kind;
    EXPECT_EQ(c["rungs"][0]["splits"], 2) << kind;
    rung0.emplace_back(c["rungs"][0]["validation_mnll"].get<double>(), kind);
    if (c["rungs"].size() > 1) {
      EXPECT_EQ(c["rungs"][1]["steps"], 80) << kind;
      rung1.emplace_back(c["rungs"][1]["validation_mnll"].get<double>(), kind);
    }
    if (!c.contains("dropped_at_rung")) survivor = kind;
  }
  std::sort(rung0.begin(), rung0.end());
  std::sort(rung1.begin(), rung1.end());
  ASSERT_EQ(rung1.size(), 2u);
  // the better two of rung 0 go on to rung 1
  EXPECT_TRUE((rung1[0].second == rung0[0].second && rung1[1].second == rung0[1].second) ||
              (rung1[0].second == rung0[1].second && rung1[1].second == rung0[0].second));
  EXPECT_EQ(survivor, rung1[0].second);
  // the survivor's last rung is a run of its kind at 80 steps on the first two splits' validation rows
  const json hand = run.train(as_kind(survivor, {"data.validation_fraction=0.2", "data.splits=2", "training.steps=80",
                                                 "output.name=hand-" + survivor}));
  EXPECT_EQ(mnll_of(hand), rung1[0].first);
  const double blr = a["candidates"][0]["validation_mnll"].get<double>();
  EXPECT_EQ(a["chosen"], blr <= rung1[0].first ? "blr" : survivor);
  EXPECT_EQ(doc["splits"].size(), 3u);  // the chosen kind trains every split
  // schedule full: every candidate's whole budget on every split
  auto full_sets = sets;
  full_sets.insert(full_sets.end(), {"model.auto.schedule=full", "output.name=full"});
  const json full = run.train(full_sets);
  for (const auto& c : full["auto"]["candidates"]) {
    EXPECT_FALSE(c.contains("rungs")) << c.dump();
    EXPECT_EQ(c["splits"], 3) << c.dump();
  }
}

// Candidates that cannot apply to the task (from the methods' declared
// capabilities: blr and gp are written for the gaussian likelihood) are never
// started on a classification table: their record entry says why, none is
// "skipped" after failing, and the rest are scored and chosen from as usual.
// A mistake that tried them (and recorded a failure) or dropped an applicable
// kind fails here.
TEST(AutoKind, CandidatesThatCannotApplyAreNeverStarted) {
  set_threads(1);
  const AutoRun run("whvi_auto_kind_classes");
  const json doc = run.train({"data.dataset=synthetic:friedman", "data.synthetic_classes=3", "likelihood.kind=softmax",
                              "model.auto.candidates=blr,gp,mcd", "output.name=cls"});
  const auto& a = doc["auto"];
  ASSERT_EQ(a["candidates"].size(), 3u);
  for (int i : {0, 1}) {
    const auto& c = a["candidates"][i];
    EXPECT_FALSE(c.contains("skipped")) << c.dump();
    EXPECT_FALSE(c.contains("validation_mnll")) << c.dump();
    EXPECT_NE(c["does_not_apply"].get<std::string>().find("likelihood.kind gaussian only"), std::string::npos)
        << c.dump();
    EXPECT_FALSE(fs::exists(run.dir / ("cls-auto-" + c["kind"].get<std::string>() + ".json"))) << c.dump();
  }
  EXPECT_TRUE(a["candidates"][2].contains("validation_mnll")) << a.dump();
  EXPECT_EQ(a["chosen"], "mcd");
  // only inapplicable candidates: refused before anything trains, naming the likelihood
  const auto none = error_of([&] {
    run.train({"data.dataset=synthetic:friedman", "data.synthetic_classes=3", "likelihood.kind=softmax",
               "model.auto.candidates=blr,gp", "output.name=cls2"});
  });
  EXPECT_NE(none.find("is written for likelihood.kind softmax"), std::string::npos) << none;
}

// A data set of the user's own gets the best model by default: a file and its
// target are a complete config (model.kind auto, the CSV examples' sizes and
// budgets per task); the papers' benchmarks, the toy and a final model
// (data.protocol: all, where auto has nothing to choose on) keep the schema's
// defaults, and a key the config sets is never replaced.
TEST(AutoKind, OwnDataDefaultsToAutoWithTheExamplesSchedule) {
  const AutoRun run("whvi_auto_defaults");
  const std::string bare = (run.dir / "bare.yaml").string();
  std::ofstream(bare) << "data: {dataset: my.csv, target: y}\n";
  const auto reg = experiment::load_config(bare);
  EXPECT_EQ(reg.get_string("model.kind"), "auto");
  EXPECT_EQ(reg.get_int("model.width"), 64);
  EXPECT_EQ(reg.get_int("training.steps"), 20000);
  EXPECT_EQ(reg.get_int("training.steps_fixed_noise"), 500);
  const auto cls = experiment::load_config(bare, {"likelihood.kind=softmax"});
  EXPECT_EQ(cls.get_string("model.kind"), "auto");
  EXPECT_EQ(cls.get_int("model.width"), 128);
  EXPECT_EQ(cls.get_int("training.steps"), 80000);
  EXPECT_EQ(cls.get_int("training.steps_fixed_noise"), 0);
  // what the config sets stays; a named kind keeps the data set's sizes
  const auto named = experiment::load_config(bare, {"model.kind=whvi", "model.width=32"});
  EXPECT_EQ(named.get_string("model.kind"), "whvi");
  EXPECT_EQ(named.get_int("model.width"), 32);
  EXPECT_EQ(experiment::load_config(bare, {"model.kind=mcd"}).get_int("model.width"), 64);
  EXPECT_EQ(experiment::load_config(bare, {"data.dataset=synthetic:friedman"}).get_string("model.kind"), "auto");
  // a final model, a benchmark and the toy: the schema's defaults
  const auto all = experiment::load_config(bare, {"data.protocol=all"});
  EXPECT_EQ(all.get_string("model.kind"), "whvi");
  for (const char* ds : {"yacht", "toy"}) {
    const auto b = experiment::load_config(bare, {std::string("data.dataset=") + ds});
    EXPECT_EQ(b.get_string("model.kind"), "whvi") << ds;
    EXPECT_EQ(b.get_int("model.width"), 128) << ds;
    EXPECT_EQ(b.get_int("training.steps"), 50000) << ds;
  }
}

// A closed form named on the command line over a network's config (the
// README's `--set model.kind=gp` on the regression example, whose model.depth
// is 2): the depth does not apply to it and is set aside, not refused; a
// network keeps it.
TEST(AutoKind, AClosedFormNamedOverANetworksConfigSetsItsDepthAside) {
  const fs::path example = fs::path(WHVI_SOURCE_DIR) / "configs" / "examples" / "csv-regression.yaml";
  for (const char* kind : {"gp", "blr"})
    EXPECT_EQ(experiment::load_config(example.string(), {std::string("model.kind=") + kind}).get_int("model.depth"), 0)
        << kind;
  EXPECT_EQ(experiment::load_config(example.string(), {"model.kind=whvi"}).get_int("model.depth"), 2);
}

// ...and its records go to out/, as the examples', not into the project's results/.
TEST(AutoKind, OwnDataWritesItsRecordsToOut) {
  const AutoRun run("whvi_auto_out");
  const std::string bare = (run.dir / "bare.yaml").string();
  std::ofstream(bare) << "data: {dataset: my.csv, target: y}\n";
  EXPECT_EQ(experiment::load_config(bare).get_string("output.dir"), "out");
  EXPECT_EQ(experiment::load_config(bare, {"output.dir=elsewhere"}).get_string("output.dir"), "elsewhere");
  EXPECT_EQ(experiment::load_config(bare, {"data.dataset=yacht"}).get_string("output.dir"), "results/uci");
}

// A positive, skewed regression target: the closed forms are also scored on
// its log (`<kind>-log`, data.target_transform: log), each exactly a hand-made
// log run on the same validation rows, its NLL in the target's units; on
// log-normal data a log candidate wins and the run takes the log. Off, or a
// target with a value <= 0: no log candidates.
TEST(AutoKind, APositiveTargetAlsoTriesTheClosedFormsOnItsLog) {
  set_threads(1);
  AutoRun run("whvi_auto_log");
  const std::string csv = (run.dir / "skewed.csv").string();
  {
    std::ofstream out(csv);
    out << "a,b,y\n";
    uint64_t s = 12345;
    auto u = [&] {  // a fixed uniform sequence (a 64-bit LCG), no library's generator
      s = s * 6364136223846793005ULL + 1442695040888963407ULL;
      return static_cast<double>(s >> 11) / 9007199254740992.0;
    };
    for (int i = 0; i < 160; ++i) {
      const double a = u(), b = u();
      const double e = std::sqrt(-2 * std::log(u() + 1e-12)) * std::cos(6.283185307179586 * u());
      out << a << "," << b << "," << std::exp(3 * a - b + 0.4 * e) << "\n";
    }
  }
  run.cfg = (run.dir / "log.yaml").string();
  std::ofstream(run.cfg) << "data: {splits: 2}\nmodel: {kind: auto}\nevaluation: {mc_samples: 8}\n"
                         << "output: {dir: '" << run.dir.string() << "', checkpoints: false}\n";
  const std::vector<std::string> data = {"data.dataset=" + csv, "data.target=y", "data.protocol=random"};
  auto with = [&](std::vector<std::string> sets) {
    sets.insert(sets.begin(), data.begin(), data.end());
    return sets;
  };
  const auto base = with({"model.auto.candidates=blr,gp", "output.name=skewed"});
  const json doc = run.train(base);
  const auto& a = doc["auto"];
  ASSERT_EQ(a["candidates"].size(), 4u) << a.dump();
  const char* order[] = {"blr", "blr", "gp", "gp"};
  double best = 1e300;
  std::string best_tt;
  for (int i = 0; i < 4; ++i) {
    const auto& c = a["candidates"][i];
    EXPECT_EQ(c["kind"], order[i]) << c.dump();
    const bool log = i % 2 == 1;
    EXPECT_EQ(c.value("target_transform", std::string("none")), log ? "log" : "none") << c.dump();
    const json rec = run.record(c["record"].get<std::string>());
    EXPECT_EQ(rec["config"]["data"]["target_transform"], log ? "log" : "none") << c.dump();
    auto hand = with(as_kind(order[i], {"model.depth=0", "data.validation_fraction=0.2", "training.stopping=off",
                                        "output.name=hand-" + std::to_string(i)}));
    if (log) hand.push_back("data.target_transform=log");
    EXPECT_EQ(mnll_of(run.train(hand)), c["validation_mnll"].get<double>()) << c.dump();
    if (c["validation_mnll"].get<double>() < best) best = c["validation_mnll"], best_tt = log ? "log" : "none";
  }
  EXPECT_EQ(best_tt, "log") << a.dump();  // log-normal noise: the log's predictive is the better one
  EXPECT_EQ(a["target_transform"], "log");
  EXPECT_EQ(doc["config"]["data"]["target_transform"], "log");
  // off, and a target with a value <= 0: the closed forms on the target as it is only
  EXPECT_EQ(run.train(with({"model.auto.candidates=blr,gp", "model.auto.log_target=off", "output.name=off"}))["auto"]
                ["candidates"].size(), 2u);
  {
    std::ofstream out(csv, std::ios::app);
    out << "0.5,0.5,0\n";
  }
  EXPECT_EQ(run.train(with({"model.auto.candidates=blr,gp", "output.name=zero"}))["auto"]["candidates"].size(), 2u);
}
