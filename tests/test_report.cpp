// Tests of the Markdown comparison table (src/report/table.h) against the real paper file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "report/table.h"

using nlohmann::json;
using whvi::report::format_mean_std;
using whvi::report::load_json_file;
using whvi::report::render_from_files;
using whvi::report::render_markdown_table;

namespace {

const std::string kPaperPath = std::string(WHVI_SOURCE_DIR) + "/results/paper/whvi-neurips2020-table3.json";

// A complete 8-split yacht-whvi result, in the shape `whvi train` writes.
json yacht_whvi() {
  return json::parse(R"({
    "experiment": "yacht-whvi", "dataset": "yacht", "model": "whvi",
    "whvi_version": "0.1.0", "whvi_commit": "abc1234", "torch_version": "1.13.0",
    "command": "whvi train --config configs/uci/yacht-whvi.yaml",
    "config": {"training": {"steps": 50000, "steps_fixed_noise": 500, "engine": "autograd"}, "data": {"protocol": "paper", "splits": 8}},
    "protocol": {"name": "paper", "splits_planned": 8, "splits_done": 8, "steps": 50500, "shortened": false,
                 "note": "as in the paper"},
    "splits": [{"split": 0, "rmse": 0.71, "mnll": 1.2, "mnll_paper": 1.4, "n_train": 277, "n_test": 31,
                "train_seconds": 30.1, "steps_per_second": 1677.0, "params": {"variational": 2000, "total": 2100}}],
    "summary": {"rmse": {"mean": 0.7123, "std": 0.1049, "sem": 0.0371, "n": 8},
                "mnll": {"mean": 1.2345, "std": 0.3333, "sem": 0.1178, "n": 8},
                "mnll_paper": {"mean": 1.4567, "std": 0.4321, "sem": 0.1528, "n": 8},
                "steps_per_second": {"mean": 1677.0, "std": 12.0, "sem": 4.2, "n": 8}},
    "complete": true
  })");
}

// An incomplete, shortened naval-mcd result (3 of 8 splits) with no summary: the table must
// compute the statistics from the splits.
json naval_mcd_partial() {
  return json::parse(R"({
    "experiment": "naval-mcd", "dataset": "naval", "model": "mcd",
    "whvi_commit": "def5678",
    "command": "whvi train --config configs/uci/naval-mcd.yaml --resume",
    "protocol": {"name": "quick", "splits_planned": 8, "splits_done": 3, "steps": 2000, "shortened": true,
                 "note": "2,000 steps instead of 50,500"},
    "splits": [{"split": 0, "rmse": 0.0012, "mnll": -5.0, "mnll_paper": -4.9, "engine": "fused"},
               {"split": 1, "rmse": 0.0014, "mnll": -5.2, "mnll_paper": -5.1, "engine": "autograd"},
               {"split": 2, "rmse": 0.0013, "mnll": -5.1, "mnll_paper": -5.0, "engine": "fused"}],
    "complete": false
  })");
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("whvi_test_report_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

void write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

// The Markdown line whose first cell is `first`, in the section after `heading`.
std::string line_of(const std::string& md, const std::string& heading, const std::string& first) {
  const auto start = md.find(heading);
  if (start == std::string::npos) return {};
  const auto pos = md.find("| " + first + " |", start);
  if (pos == std::string::npos) return {};
  return md.substr(pos, md.find('\n', pos) - pos);
}

TEST(ReportFormat, MeanStdUsesThreeSignificantDigits) {
  EXPECT_EQ(format_mean_std(3.14159, 0.7071), "3.14 ± 0.71");
  EXPECT_EQ(format_mean_std(0.0012345, 0.000156), "0.00123 ± 0.00016");
  EXPECT_EQ(format_mean_std(-6.2512, 0.0123), "-6.25 ± 0.01");
  EXPECT_EQ(format_mean_std(12.345, 1.5), "12.3 ± 1.5");
  EXPECT_EQ(format_mean_std(1234.6, 10.0), "1235 ± 10");
  EXPECT_EQ(format_mean_std(-0.0001, 0.5), "0.000 ± 0.500");  // no "-0.000"
  EXPECT_EQ(format_mean_std(0.0, 0.0), "0.00 ± 0.00");
}

TEST(ReportPaperFile, HasTheTranscribedTable) {
  const json paper = load_json_file(kPaperPath);
  ASSERT_TRUE(paper.contains("citation"));
  ASSERT_TRUE(paper.contains("notes"));
  const json& r = paper.at("results");
  EXPECT_EQ(r.size(), 8u);
  for (const auto& [dataset, models] : r.items()) {
    EXPECT_EQ(models.size(), 4u) << dataset;
    for (const char* m : {"mcd", "mfg", "nng", "whvi"}) {
      ASSERT_TRUE(models.contains(m)) << dataset << " " << m;
      EXPECT_EQ(models.at(m).at("rmse").size(), 2u);
      EXPECT_EQ(models.at(m).at("mnll").size(), 2u);
    }
  }
  EXPECT_DOUBLE_EQ(r.at("yacht").at("whvi").at("rmse")[0].get<double>(), 0.69);
  EXPECT_DOUBLE_EQ(r.at("yacht").at("whvi").at("rmse")[1].get<double>(), 0.16);
  EXPECT_DOUBLE_EQ(r.at("boston").at("mcd").at("mnll")[0].get<double>(), 6.90);
  EXPECT_DOUBLE_EQ(r.at("naval").at("nng").at("mnll")[0].get<double>(), -6.52);
  EXPECT_DOUBLE_EQ(r.at("power").at("whvi").at("rmse")[0].get<double>(), 4.00);
}

TEST(ReportTable, RendersOursAndPaperSideBySide) {
  const json paper = load_json_file(kPaperPath);
  const std::string md = render_markdown_table({yacht_whvi(), naval_mcd_partial()}, paper, "UCI regression");

  EXPECT_EQ(md.rfind("# UCI regression\n", 0), 0u) << md;
  // Columns: mcd before whvi; no mfg column since no mfg result was given.
  EXPECT_TRUE(contains(md, "| dataset | MCD ours | MCD paper | WHVI ours | WHVI paper |")) << md;
  EXPECT_FALSE(contains(md, "MFG ours")) << md;
  // Rows in the paper's order: naval before yacht.
  EXPECT_LT(md.find("| naval |"), md.find("| yacht |"));

  const std::string rmse_yacht = line_of(md, "## Test RMSE", "yacht");
  EXPECT_EQ(rmse_yacht, "| yacht | – | 1.90 (0.54) | 0.712 ± 0.105 | 0.69 (0.16) |") << md;
  // naval-mcd: statistics from the splits (mean 0.0013, population std 0.0000816), marked † and ‡.
  const std::string rmse_naval = line_of(md, "## Test RMSE", "naval");
  EXPECT_EQ(rmse_naval, "| naval | 0.00130 ± 0.00008 † ‡ | 0.30 (0.30) | – | 0.01 (0.00) |") << md;

  // MNLL: ours is mnll_paper, then the paper, then our predictive mnll.
  const std::string mnll_yacht = line_of(md, "## Test MNLL", "yacht");
  EXPECT_EQ(mnll_yacht, "| yacht | – | 2.95 (1.27) | – | 1.46 ± 0.43 | 1.80 (1.01) | 1.23 ± 0.33 |") << md;
  const std::string mnll_naval = line_of(md, "## Test MNLL", "naval");
  EXPECT_EQ(mnll_naval, "| naval | -5.00 ± 0.08 † ‡ | -1.00 (2.27) | -5.10 ± 0.08 † ‡ | – | -6.25 (0.01) | – |")
      << md;

  // Footnotes for the incomplete and the shortened run; none for the complete one.
  EXPECT_TRUE(contains(md, "- † `naval-mcd`: incomplete, 3/8 splits done")) << md;
  EXPECT_TRUE(contains(md, "- ‡ `naval-mcd`: shortened protocol 'quick': 2,000 steps instead of 50,500")) << md;
  EXPECT_FALSE(contains(md, "`yacht-whvi`: incomplete")) << md;

  // The runs: experiment, commit, command.
  EXPECT_TRUE(contains(md, "| `yacht-whvi` | 8/8 | paper | autograd | 1677 | 0.1.0 | `abc1234` | "
                           "`whvi train --config configs/uci/yacht-whvi.yaml` |"))
      << md;
  EXPECT_TRUE(contains(md, "| `naval-mcd` | 3/8 † | quick ‡ | fused, autograd | – | – | `def5678` | "
                           "`whvi train --config configs/uci/naval-mcd.yaml --resume` |"))
      << md;
  // The paper's citation and its notes on the MNLL convention.
  EXPECT_TRUE(contains(md, "Walsh-Hadamard Variational Inference for Bayesian Deep Learning")) << md;
  EXPECT_TRUE(contains(md, "0.093")) << md;
}

TEST(ReportTable, IncompleteFromSplitCountsAlone) {
  json r = yacht_whvi();
  r.erase("complete");
  r["protocol"]["splits_done"] = 5;
  const std::string md = render_markdown_table({r}, json::object(), "t");
  EXPECT_TRUE(contains(md, "- † `yacht-whvi`: incomplete, 5/8 splits done")) << md;
  // No paper (the user's own data): no paper columns, the predictive MNLL alone, no Paper section.
  EXPECT_EQ(line_of(md, "## Test RMSE", "yacht"), "| yacht | 0.712 ± 0.105 † |") << md;
  const std::string mnll = line_of(md, "## Test MNLL", "yacht");
  EXPECT_TRUE(contains(mnll, "1.23") && !contains(mnll, "1.46")) << md;  // mnll (1.2345), not mnll_paper (1.4567)
  EXPECT_FALSE(contains(md, "mnll_paper`, the authors")) << md;
  EXPECT_FALSE(contains(md, "## Paper")) << md;
}

TEST(ReportTable, NamesFromExperimentAndOtherModelsLast) {
  json a = yacht_whvi();
  a.erase("dataset");
  a.erase("model");
  json b = yacht_whvi();
  b["experiment"] = "zoo-nf";
  b["dataset"] = "zoo";
  b["model"] = "nf";
  json c = yacht_whvi();
  c["experiment"] = "boston-mfg";
  c["dataset"] = "boston";
  c["model"] = "mfg";
  // models in the order given (whvi table passes the registry's), others alphabetically
  const std::string md = render_markdown_table({b, a, c}, load_json_file(kPaperPath), "t", {"mcd", "mfg", "whvi"});
  EXPECT_TRUE(contains(md, "| dataset | MFG ours | MFG paper | WHVI ours | WHVI paper | NF ours | NF paper |")) << md;
  EXPECT_LT(md.find("| boston |"), md.find("| yacht |"));
  EXPECT_LT(md.find("| yacht |"), md.find("| zoo |"));
}

TEST(ReportTable, RejectsResultWithoutNames) {
  json r = json::object({{"summary", json::object()}});
  try {
    render_markdown_table({r}, json::object(), "t");
    FAIL() << "expected whvi::Error";
  } catch (const whvi::Error& e) {
    EXPECT_TRUE(contains(e.what(), "dataset/model")) << e.what();
  }
}

TEST(ReportFiles, RendersFromFilesAndNamesMalformedOnes) {
  const std::string good = temp_path("yacht-whvi.json");
  const std::string bad = temp_path("boston-mcd.json");
  write(good, yacht_whvi().dump(2));
  write(bad, "{\"experiment\": \"boston-mcd\", \"summary\": {");  // truncated
  const std::string md = render_from_files({good}, kPaperPath, "From files");
  EXPECT_TRUE(contains(md, "0.712 ± 0.105")) << md;
  EXPECT_TRUE(contains(md, "0.69 (0.16)")) << md;

  try {
    render_from_files({good, bad}, kPaperPath, "t");
    FAIL() << "expected whvi::Error";
  } catch (const whvi::Error& e) {
    EXPECT_TRUE(contains(e.what(), bad)) << e.what();
    EXPECT_TRUE(contains(e.what(), "malformed JSON")) << e.what();
  }
  const std::string missing = temp_path("does-not-exist.json");
  try {
    load_json_file(missing);
    FAIL() << "expected whvi::Error";
  } catch (const whvi::Error& e) {
    EXPECT_TRUE(contains(e.what(), missing)) << e.what();
  }
  std::remove(good.c_str());
  std::remove(bad.c_str());
}

TEST(ReportFiles, RefusesTheSameFileTwiceAndTwoResultsForOneCell) {
  const std::string a = temp_path("yacht-whvi.json");
  const std::string b = temp_path("yacht-whvi-rerun.json");
  write(a, yacht_whvi().dump(2));
  write(b, yacht_whvi().dump(2));
  try {
    render_from_files({a, a}, "", "t");
    FAIL() << "expected whvi::Error";
  } catch (const whvi::Error& e) {
    EXPECT_TRUE(contains(e.what(), "is given twice")) << e.what();
    EXPECT_TRUE(contains(e.what(), a)) << e.what();
  }
  try {  // two results for yacht/whvi
    render_from_files({a, b}, "", "t");
    FAIL() << "expected whvi::Error";
  } catch (const whvi::Error& e) {
    EXPECT_TRUE(contains(e.what(), "two results for the same cell")) << e.what();
    EXPECT_TRUE(contains(e.what(), a)) << e.what();
    EXPECT_TRUE(contains(e.what(), b)) << e.what();
  }
  std::remove(a.c_str());
  std::remove(b.c_str());
}

}  // namespace

// Table 6 transcribed: spot values against the paper's printed table.
TEST(ReportPaperFile, HasTable6) {
  const json paper = load_json_file(std::string(WHVI_SOURCE_DIR) + "/results/paper/whvi-neurips2020-table6.json");
  const json& r = paper.at("results");
  EXPECT_EQ(r.size(), 8u);
  EXPECT_DOUBLE_EQ(r.at("boston").at("nng").at("rmse")[0].get<double>(), 2.74);
  EXPECT_DOUBLE_EQ(r.at("yacht").at("whvi").at("mnll")[0].get<double>(), 1.28);
  EXPECT_DOUBLE_EQ(r.at("naval").at("mcd").at("mnll")[0].get<double>(), -9.93);
  EXPECT_DOUBLE_EQ(r.at("protein").at("mfg").at("rmse")[1].get<double>(), 0.05);
}

// `whvi table --csv`: one row per file with the width, parameter count and
// the summary's means and stds (the numbers behind Fig. 5).
TEST(ReportFiles, CsvHasOneRowPerFileWithWidthParamsAndStats) {
  json r = yacht_whvi();
  r["config"]["model"] = {{"depth", 2}, {"width", 64}};
  const std::string f = temp_path("yacht-whvi-w64.json");
  write(f, r.dump());
  const std::string csv = whvi::report::render_csv_from_files({f});
  const auto nl = csv.find('\n');
  EXPECT_EQ(csv.substr(0, nl),
            "file,dataset,model,depth,width,params,splits,rmse_mean,rmse_std,mnll_mean,mnll_std,"
            "mnll_paper_mean,mnll_paper_std,error_mean,error_std,ece_mean,ece_std");
  // counts as the integers they are (2, not 2.000000000000)
  EXPECT_TRUE(contains(csv, ",yacht,whvi,2,64,2100,8,0.712300000000,"
                            "0.104900000000,1.234500000000,0.333300000000,1.456700000000,0.432100000000,,,,\n"))
      << csv;
  std::filesystem::remove(f);
}

// `whvi table --csv` writes valid CSV (RFC 4180): a field with a comma, a
// quote or a line break is quoted with its quotes doubled, others are plain.
TEST(ReportFiles, CsvQuotesFieldsThatNeedIt) {
  json r = yacht_whvi();
  r["dataset"] = "my \"big\", data";
  r["model"] = "whvi";
  const std::string f = temp_path("odd,name.json");
  write(f, r.dump());
  const std::string csv = whvi::report::render_csv_from_files({f});
  const std::string row = csv.substr(csv.find('\n') + 1);
  EXPECT_EQ(row.rfind("\"" + f + "\",\"my \"\"big\"\", data\",whvi,", 0), 0u) << row;
  std::filesystem::remove(f);
}

// A classifier's records with out-of-distribution scores get their own table,
// naming the out-of-distribution set; records without them do not.
TEST(ReportTable, OutOfDistributionSection) {
  json r = {{"experiment", "fashion-mnist-mcd"}, {"dataset", "fashion-mnist"}, {"model", "mcd"},
            {"task", "classification"},
            {"splits", json::array({{{"error", 0.1}, {"ood", {{"dataset", "mnist-mini"}}},
                                     {"ood_auroc_entropy", 0.875}, {"ood_aupr_entropy", 0.5},
                                     {"ood_auroc_mi", 0.625}, {"ood_aupr_mi", 0.25}}})}};
  const std::string md = render_markdown_table({r}, json::object(), "t");
  EXPECT_NE(md.find("## Out-of-distribution detection"), std::string::npos) << md;
  EXPECT_NE(md.find("stored test rows of mnist-mini"), std::string::npos);
  EXPECT_NE(md.find("0.875"), std::string::npos) << md;
  EXPECT_NE(md.find("0.625"), std::string::npos) << md;
  r["splits"][0].erase("ood");
  EXPECT_EQ(render_markdown_table({r}, json::object(), "t").find("Out-of-distribution"), std::string::npos);
}

// A record's names reach the Markdown and the CSV with no control byte (an
// escape sequence, a bell, a NUL, a C1 CSI, a bidirectional override) and no
// line break (a forged table row or heading); '|' is escaped in cells.
TEST(ReportTable, RecordNamesCannotDriveTheTerminalOrForgeRows) {
  EXPECT_EQ(whvi::report::plain_text("a\x1b[2Jb\nc\td\r"), "a\xEF\xBF\xBD[2Jb c d ");
  EXPECT_EQ(whvi::report::plain_text(std::string("x\0y", 3)), "x\xEF\xBF\xBDy");
  EXPECT_EQ(whvi::report::plain_text("\xC2\x9B" "1m \xE2\x80\xAE" "abc \xFF"), "\xEF\xBF\xBD" "1m \xEF\xBF\xBD" "abc \xEF\xBF\xBD");
  EXPECT_EQ(whvi::report::plain_text("donn\xC3\xA9" "es \xE2\x80\x93 \xF0\x9F\x99\x82"), "donn\xC3\xA9" "es \xE2\x80\x93 \xF0\x9F\x99\x82");
  EXPECT_EQ(whvi::report::markdown_cell("a|b\nc"), "a\\|b c");
  json r = yacht_whvi();
  r["dataset"] = "ya\x1b[31mcht\n| forged | row |" + std::string(1, '\0');
  r["model"] = "w|h\x07vi";
  r["experiment"] = "x\ny";
  r["command"] = "a\x1b]0;title\x07";
  r["protocol"]["shortened"] = true;
  r["protocol"]["note"] = "n\nq";
  auto clean = [](const std::string& out) {
    for (unsigned char c : out)
      if ((c < 0x20 && c != '\n') || c == 0x7f) return false;
    return out.find("\n| forged") == std::string::npos;
  };
  const std::string md = render_markdown_table({r}, json::object(), "");
  EXPECT_TRUE(clean(md)) << md;
  EXPECT_TRUE(contains(md, "W\\|H\xEF\xBF\xBDVI ours")) << md;
  const std::string titled = whvi::report::render_from_files({[&] {
                                                               const std::string f = temp_path("ctl.json");
                                                               write(f, r.dump());
                                                               return f;
                                                             }()},
                                                             "", "");
  EXPECT_TRUE(clean(titled)) << titled;
  const std::string csv = whvi::report::render_csv_from_files({temp_path("ctl.json")});
  EXPECT_TRUE(clean(csv)) << csv;
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 2) << csv;
  std::filesystem::remove(temp_path("ctl.json"));
}
