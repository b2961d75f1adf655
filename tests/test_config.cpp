// The experiment config: schema validation, the bad-config corpus, base
// inheritance, --set overrides, and the dump/parse round trip.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <initializer_list>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/io.h"
#include "config/config.h"

namespace fs = std::filesystem;
using whvi::config::Config;
using whvi::config::ConfigError;

namespace {

std::string expect_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ConfigError";
  return "";
}

// tests/bad_configs/*.yaml: each file's first line is "# expect: <substring>".
TEST(BadConfigs, EveryFileFailsWithItsMessage) {
  const fs::path dir = fs::path(WHVI_SOURCE_DIR) / "tests" / "bad_configs";
  int n = 0;
  for (const auto& name : whvi::list_dir(dir.string())) {
    const fs::path entry(name);
    if (entry.extension() != ".yaml") continue;
    std::ifstream in(entry);
    std::string first;
    std::getline(in, first);
    ASSERT_EQ(first.rfind("# expect: ", 0), 0u) << entry << " lacks its '# expect:' line";
    const std::string want = first.substr(10);
    const std::string msg = expect_error([&] { Config::load(entry.string()); });
    EXPECT_NE(msg.find(want), std::string::npos) << entry.filename() << ": got '" << msg
                                                 << "', want '" << want << "'";
    EXPECT_NE(msg.find(entry.filename().string()), std::string::npos)
        << "message should name the file: " << msg;
    ++n;
  }
  EXPECT_GE(n, 20);
}

TEST(Config, DefaultsAreThePaperProtocol) {
  const auto c = Config::defaults();
  EXPECT_EQ(c.get_int("training.steps_fixed_noise"), 500);
  EXPECT_EQ(c.get_int("training.steps"), 50000);
  EXPECT_EQ(c.get_int("training.batch_size"), 64);
  EXPECT_DOUBLE_EQ(c.get_float("training.lr"), 1e-3);
  EXPECT_DOUBLE_EQ(c.get_float("training.lr_gamma"), 5e-4);
  EXPECT_DOUBLE_EQ(c.get_float("training.lr_power"), 0.3);
  EXPECT_EQ(c.get_int("evaluation.mc_samples"), 64);
  EXPECT_EQ(c.get_int("data.splits"), 8);
  // MCD departs from the paper: chosen on validation data (README, results/selection/)
  EXPECT_DOUBLE_EQ(c.get_float("model.mcd.dropout"), 0.1);
  EXPECT_DOUBLE_EQ(c.get_float("model.mcd.length_scale"), 1.0);
}

TEST(Config, ParseAndOverride) {
  const auto c = Config::parse("data: {dataset: yacht}\nmodel:\n  width: 64\n", "inline",
                               {"model.width=256", "model.activation=tanh"});
  EXPECT_EQ(c.get_string("data.dataset"), "yacht");
  EXPECT_EQ(c.get_int("model.width"), 256);
  EXPECT_EQ(c.get_string("model.activation"), "tanh");
  const auto msg = expect_error([] { Config::parse("", "inline", {"model.widht=3"}); });
  EXPECT_NE(msg.find("--set model.widht=3"), std::string::npos) << msg;
  EXPECT_NE(msg.find("did you mean 'model.width'"), std::string::npos) << msg;
  const auto msg2 = expect_error([] { Config::parse("", "inline", {"model.width"}); });
  EXPECT_NE(msg2.find("section.key=value"), std::string::npos) << msg2;
  const auto msg3 = expect_error([] { Config::parse("", "inline", {"training.steps=abc"}); });
  EXPECT_NE(msg3.find("expected an integer, got 'abc'"), std::string::npos) << msg3;
}

TEST(Config, BaseInheritanceAndFileStemAsName) {
  const fs::path dir = fs::temp_directory_path() / "whvi_cfg_test";
  fs::create_directories(dir / "sub");
  std::ofstream(dir / "base.yaml") << "model: {width: 32, depth: 3}\ntraining: {lr: 0.01}\n";
  std::ofstream(dir / "sub" / "child-x.yaml") << "base: ../base.yaml\nmodel: {width: 16}\n";
  const auto c = Config::load((dir / "sub" / "child-x.yaml").string());
  EXPECT_EQ(c.get_int("model.width"), 16);  // child overrides
  EXPECT_EQ(c.get_int("model.depth"), 3);   // inherited
  EXPECT_DOUBLE_EQ(c.get_float("training.lr"), 0.01);
  EXPECT_EQ(c.get_string("output.name"), "child-x");
  // An error inside the base names the base file and its line.
  std::ofstream(dir / "base.yaml") << "model:\n  width: -1\n";
  const auto msg = expect_error([&] { Config::load((dir / "sub" / "child-x.yaml").string()); });
  EXPECT_NE(msg.find("base.yaml:2"), std::string::npos) << msg;
}

TEST(Config, DumpParseDumpRoundTrip) {
  const auto c = Config::parse("data: {dataset: 'a path/with: colon'}\nmodel: {width: 7}\n", "inline",
                               {"training.lr=2.5e-4"});
  const std::string once = c.dump_yaml();
  const auto again = Config::parse(once, "dump");
  EXPECT_EQ(again.dump_yaml(), once);
  EXPECT_EQ(again.get_string("data.dataset"), "a path/with: colon");
  EXPECT_DOUBLE_EQ(again.get_float("training.lr"), 2.5e-4);
  EXPECT_EQ(again.to_json(), c.to_json());
}

TEST(Config, ShippedConfigsAllParse) {
  int n = 0;
  for (const auto& name : whvi::list_dir((fs::path(WHVI_SOURCE_DIR) / "configs").string(), true)) {
    const fs::path e(name);
    if (e.extension() != ".yaml" || e.filename() == "base.yaml") continue;
    const auto c = Config::load(e.string());
    // protocol fragments (configs/selection/) name no data set: they are merged into the UCI configs
    if (e.parent_path().filename() != "selection")
      EXPECT_FALSE(c.get_string("data.dataset").empty()) << e;
    ++n;
  }
  EXPECT_GE(n, 25);  // 8 data sets x 3 models + toy
}

TEST(Config, DescribeListsEveryKey) {
  const std::string md = Config::describe_markdown();
  for (const auto& p : whvi::config::schema()) EXPECT_NE(md.find("`" + p.key + "`"), std::string::npos);
}

}  // namespace

// ---- input hardening (issue 7) --------------------------------------------------
namespace {

std::string parse_error(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  return expect_error([&] { Config::parse(yaml, "hostile.yaml", overrides); });
}

void expect_has(const std::string& msg, std::initializer_list<const char*> parts) {
  for (const char* p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "lacks '" << p << "': " << msg;
}

TEST(ConfigHardening, YamlWeakCasesAreErrorsWithFileAndLine) {
  expect_has(parse_error("model:\n\twidth: 5\n"), {"hostile.yaml:2", "tabs for indentation", "spaces"});
  expect_has(parse_error("model:\n  width: 5\n  width: 6\n"),
             {"hostile.yaml:3", "duplicate key", "line 2", "line 3"});
  expect_has(parse_error("model: {width: 5}\ntraining: {lr: 0.1}\nmodel: {depth: 3}\n"),
             {"hostile.yaml:3", "duplicate section", "line 1"});
  expect_has(parse_error("model.width: 5\nmodel: {width: 6}\n"), {"duplicate key", "line 1"});
  expect_has(parse_error("model: {width: 5}\n---\nmodel: {depth: 3}\n"),
             {"hostile.yaml:2", "second YAML document"});
  expect_has(parse_error("training: {lr: 1e400}\n"), {"hostile.yaml:1", "overflows", "out of range of a double"});
  expect_has(parse_error("training: {lr: 1e-400}\n"), {"underflows", "out of range of a double"});
  expect_has(parse_error("training: {steps: 99999999999999999999}\n"), {"out of range for a 64-bit integer"});
  expect_has(parse_error("base: \"\"\n"), {"hostile.yaml:1", "'base'", "is empty"});
  expect_has(parse_error("? [a, b]\n: 1\n"), {"hostile.yaml:1", "complex key"});
  expect_has(parse_error(": 5\n"), {"hostile.yaml:1", "empty key"});
  expect_has(parse_error("model:\n  width: " + std::string(2000, '[') + "\n"), {"hostile.yaml:", "too deep"});
  expect_has(parse_error("data: {dataset: " + std::string(5000, 'a') + "}\n"),
             {"hostile.yaml:1", "5000 characters", "4096"});
  expect_has(parse_error("", {"training=5"}), {"'training' is a section", "steps_fixed_noise"});
}

TEST(ConfigHardening, InfinityRefusedEverywhere) {
  // an infinite prior variance was accepted and ended the run as a divergence at step 60
  expect_has(parse_error("model: {whvi: {prior_var: .inf}}\n"), {"prior_var", "infinite", "at least 1e-12", "1e6"});
  expect_has(parse_error("model: {nng: {kl_weight: +.Inf}}\n"), {"kl_weight", "infinite"});
  expect_has(parse_error("training: {lr: .inf}\n"), {"infinite", "at most 10"});
  expect_has(parse_error("model: {mfg: {init_mean_scale: .inf}}\n"), {"init_mean_scale", "infinite"});
  expect_has(parse_error("output: {grid_lo: -.inf}\n"), {"grid_lo", "infinite"});
  expect_has(parse_error("", {"model.whvi.prior_var=.inf"}), {"prior_var", "infinite"});
  // a large finite value still is a value
  EXPECT_EQ(Config::parse("model: {whvi: {prior_var: 1e300}}\n", "inline").get_float("model.whvi.prior_var"), 1e300);
}

TEST(ConfigHardening, QuotedStringsKeepTheirText) {
  const auto c = Config::parse("data: {dataset: \"it's \\\"x\\\"\\ty\"}\n", "inline");
  EXPECT_EQ(c.get_string("data.dataset"), "it's \"x\"\ty");
}

TEST(ConfigHardening, OutputNameIsAPlainFileName) {
  for (const char* bad : {"../../x", "/abs", ".", "..", ".hidden", "a/b", "a b", "a\\x01b"}) {
    SCOPED_TRACE(bad);
    expect_has(parse_error(std::string("output: {name: \"") + bad + "\"}\n"),
               {"hostile.yaml:1", "output.name", "plain file name"});
  }
  EXPECT_EQ(Config::parse("output: {name: yacht-whvi_2.b+c}\n", "inline").get_string("output.name"),
            "yacht-whvi_2.b+c");
  expect_has(parse_error("", {"output.name=../x"}), {"--set output.name=../x", "plain file name"});
}

TEST(ConfigHardening, DirectoriesAreNotConfigs) {
  const fs::path dir = fs::temp_directory_path() / "whvi_cfg_hardening";
  fs::create_directories(dir / "sub");
  expect_has(expect_error([&] { Config::load(dir.string()); }), {"is a directory, not a YAML file"});
  std::ofstream(dir / "dot.yaml") << "base: .\n";
  expect_has(expect_error([&] { Config::load((dir / "dot.yaml").string()); }),
             {"dot.yaml:1", "'base'", "is a directory, not a YAML file"});
  std::ofstream(dir / ".yaml") << "model: {width: 3}\n";
  expect_has(expect_error([&] { Config::load((dir / ".yaml").string()); }), {"output.name", "not usable"});
  whvi::remove_tree(fs::path(dir).string());
}

// ---- issue 69: --set lists, boolean spellings, exact integer bounds ---------------

// data.features, data.categorical and model.auto.candidates take a YAML list in
// --set as in a file; other keys still refuse a list.
TEST(ConfigHardening, SetTakesAListForTheNameListKeys) {
  const auto c = Config::parse("", "inline", {"data.features=[a, b]", "data.categorical=[x, \"y z\"]"});
  EXPECT_EQ(c.get_string("data.features"), "a,b");
  EXPECT_EQ(c.get_string("data.categorical"), "x,y z");
  EXPECT_EQ(Config::parse("data: {features: [a, b]}\n", "inline").get_string("data.features"), "a,b");
  EXPECT_EQ(Config::parse("", "inline", {"data.features=a,b"}).get_string("data.features"), "a,b");
  // an empty list is refused: read as "every column" it silently undid what it seemed to ask
  expect_has(parse_error("", {"data.features=[]"}), {"an empty list", "leave the key out"});
  expect_has(parse_error("", {"data.features=[a, [b]]"}), {"--set data.features=", "list of column names"});
  expect_has(parse_error("", {"data.features=[\"a,b\", c]"}), {"with a comma cannot be listed"});
  expect_has(parse_error("data: {features: [a, {b: 1}]}\n"), {"hostile.yaml:1", "list of column names"});
  expect_has(parse_error("", {"model.width=[1, 2]"}), {"expected an integer"});
  expect_has(parse_error("", {"data.target=[a, b]"}), {"expected a string"});
}

// true/false, yes/no and on/off in any case, the same in a file and in --set.
TEST(ConfigHardening, BooleansAcceptTheSameSpellingsInAnyCase) {
  for (const char* t : {"true", "True", "TRUE", "tRuE", "yes", "Yes", "YES", "on", "On", "ON"}) {
    SCOPED_TRACE(t);
    EXPECT_TRUE(Config::parse("", "inline", {std::string("output.checkpoints=") + t}).get_bool("output.checkpoints"));
    EXPECT_TRUE(Config::parse(std::string("output: {checkpoints: ") + t + "}\n", "inline")
                    .get_bool("output.checkpoints"));
  }
  for (const char* f : {"false", "False", "FALSE", "fAlSe", "no", "No", "NO", "off", "Off", "OFF"}) {
    SCOPED_TRACE(f);
    EXPECT_FALSE(Config::parse("", "inline", {std::string("output.checkpoints=") + f}).get_bool("output.checkpoints"));
    EXPECT_FALSE(Config::parse(std::string("output: {checkpoints: \"") + f + "\"}\n", "inline")
                     .get_bool("output.checkpoints"));
  }
  for (const char* bad : {"maybe", "1", "0", "y", "n", "truee", ""}) {
    SCOPED_TRACE(bad);
    expect_has(parse_error("", {std::string("output.checkpoints=") + bad}),
               {"output.checkpoints", "expected true or false", "yes/no, on/off"});
  }
}

// Integer bounds are printed in full (1048576, not 1.04858e+06), in the docs
// table and in messages, and the documented maximum is accepted.
TEST(ConfigHardening, IntegerBoundsArePrintedExactly) {
  const std::string md = Config::describe_markdown();
  EXPECT_NE(md.find("| `model.width` | int | `128` | [1, 1048576] |"), std::string::npos);
  for (const auto& p : whvi::config::schema()) {
    if (p.type != whvi::config::Type::kInt) continue;
    const auto row = md.find("| `" + p.key + "` | int |");
    ASSERT_NE(row, std::string::npos) << p.key;
    const std::string line = md.substr(row, md.find('\n', row) - row);
    const auto lo = line.find("| ["), comma = line.find(", ", lo), hi = line.find("] |", comma);
    ASSERT_NE(hi, std::string::npos) << line;
    const std::string min = line.substr(lo + 3, comma - lo - 3), max = line.substr(comma + 2, hi - comma - 2);
    EXPECT_EQ(min.find_first_not_of("-0123456789"), std::string::npos) << line;
    EXPECT_EQ(max.find_first_not_of("-0123456789"), std::string::npos) << line;
    // the documented bounds are accepted; one past them is refused
    EXPECT_EQ(Config::parse("", "inline", {p.key + "=" + max}).get_int(p.key), std::stoll(max)) << p.key;
    EXPECT_EQ(Config::parse("", "inline", {p.key + "=" + min}).get_int(p.key), std::stoll(min)) << p.key;
  }
  expect_has(parse_error("", {"model.width=1048577"}), {"out of range [1, 1048576]"});
}

}  // namespace
