// The experiment config: schema validation, the bad-config corpus, base
// inheritance, --set overrides, and the dump/parse round trip.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

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
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    std::ifstream in(entry.path());
    std::string first;
    std::getline(in, first);
    ASSERT_EQ(first.rfind("# expect: ", 0), 0u) << entry.path() << " lacks its '# expect:' line";
    const std::string want = first.substr(10);
    const std::string msg = expect_error([&] { Config::load(entry.path().string()); });
    EXPECT_NE(msg.find(want), std::string::npos) << entry.path().filename() << ": got '" << msg
                                                 << "', want '" << want << "'";
    EXPECT_NE(msg.find(entry.path().filename().string()), std::string::npos)
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
  EXPECT_DOUBLE_EQ(c.get_float("model.mcd.dropout"), 0.005);
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
  for (const auto& e : fs::recursive_directory_iterator(fs::path(WHVI_SOURCE_DIR) / "configs")) {
    if (e.path().extension() != ".yaml" || e.path().filename() == "base.yaml") continue;
    const auto c = Config::load(e.path().string());
    // protocol fragments (configs/selection/) name no data set: they are merged into the UCI configs
    if (e.path().parent_path().filename() != "selection")
      EXPECT_FALSE(c.get_string("data.dataset").empty()) << e.path();
    ++n;
  }
  EXPECT_GE(n, 25);  // 8 data sets x 3 models + toy
}

TEST(Config, DescribeListsEveryKey) {
  const std::string md = Config::describe_markdown();
  for (const auto& p : whvi::config::schema()) EXPECT_NE(md.find("`" + p.key + "`"), std::string::npos);
}

}  // namespace
