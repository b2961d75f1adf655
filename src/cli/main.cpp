// The `whvi` command line: global options, then one subcommand.
#include <cstdio>
#include <iostream>
#include <sstream>
#include <thread>

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "bench/bench_fwht.h"
#include "config/config.h"
#include "experiment/experiment.h"
#include "report/selection.h"
#include "report/table.h"
#include "common/errors.h"
#include "common/io.h"
#include "common/runtime.h"
#include "fwht.h"

namespace {

std::vector<int64_t> parse_sizes(const std::string& s) {
  std::vector<int64_t> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    size_t pos = 0;
    long long v = 0;
    try {
      v = std::stoll(item, &pos);
    } catch (const std::exception&) {
      pos = 0;
    }
    WHVI_CHECK(pos == item.size() && v > 0, "--sizes: '", item,
               "' is not a positive integer (expected e.g. --sizes 64,256,1024)");
    out.push_back(v);
  }
  WHVI_CHECK(!out.empty(), "--sizes: no sizes given");
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"whvi: Walsh-Hadamard Variational Inference experiment runner"};
  app.require_subcommand(1);
  int n_threads = 0;
  std::string log_level = "info";
  std::string simd;
  // Bounded before any thread exists: an absurd count would spawn thousands of threads.
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const int max_threads = static_cast<int>(std::min(1024u, 4 * hw));
  app.add_option("--threads", n_threads,
                 "Threads for LibTorch, OpenBLAS and the whvi kernels (0: all cores; at most 4x the cores, " +
                     std::to_string(max_threads) + " here)")
      ->each([max_threads](const std::string& v) {
        if (v.find_first_not_of("0123456789") != std::string::npos || v.size() > 9 || std::stoi(v) > max_threads)
          throw CLI::ValidationError("'" + v + "' is not a thread count from 0 to " +
                                                      std::to_string(max_threads) + " (4x this machine's " +
                                                      std::to_string(max_threads / 4) + " cores)");
      });
  app.add_option("--log-level", log_level, "trace|debug|info|warn|error|off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
  app.add_option("--simd", simd, "Force the CPU kernels' SIMD level (scalar|avx2|avx512); default: best available")
      ->check(CLI::IsMember({"scalar", "avx2", "avx512"}));
  bool show_version = false;
  app.add_flag("--version", show_version, "Print version, git commit, LibTorch, BLAS and CUDA facts");
  app.require_subcommand(0, 1);

  auto* train = app.add_subcommand("train", "Train the models of a YAML experiment (every split)");
  whvi::experiment::TrainOptions to;
  train->add_option("--config", to.config_path, "Experiment YAML file")->required();
  train->add_option("--set", to.overrides, "Override a config key: section.key=value (repeatable)");
  train->add_flag("--resume", to.resume, "Skip splits whose results already exist");
  auto* eval = app.add_subcommand("eval", "Re-evaluate a saved checkpoint on its test split");
  whvi::experiment::EvalOptions eo;
  std::string eval_json;
  eval->add_option("--checkpoint", eo.checkpoint, "Checkpoint file (output.dir/NAME/split-KK.ckpt)")->required();
  eval->add_option("--mc-samples", eo.mc_samples, "Test-time MC samples (default: the config's)")
      ->check(CLI::NonNegativeNumber);
  eval->add_option("--json", eval_json, "Also write the metrics to this file");

  auto* table = app.add_subcommand("table", "Render result files as Markdown tables beside the paper's");
  std::vector<std::string> table_files;
  std::string paper_file = "results/paper/whvi-neurips2020-table3.json", table_out, table_title = "UCI regression";
  table->add_option("files", table_files, "Experiment JSON files")->required();
  table->add_option("--paper", paper_file, "The paper's numbers (JSON); '' for none")->capture_default_str();
  table->add_option("--out", table_out, "Write the Markdown here (default: stdout)");
  table->add_option("--title", table_title, "Title")->capture_default_str();

  auto* select = app.add_subcommand("select", "Rank hyper-parameter candidates by validation MNLL (selection runs only)");
  std::vector<std::string> select_files;
  std::string select_out;
  select->add_option("files", select_files, "Experiment JSON files of runs with data.validation_fraction > 0")->required();
  select->add_option("--out", select_out, "Write SUMMARY.md and summary.json into this folder (default: Markdown to stdout)");

  auto* cfgcmd = app.add_subcommand("config", "Show the configuration schema or a resolved config");
  bool describe = false;
  std::string dump_path;
  std::vector<std::string> dump_overrides;
  cfgcmd->add_flag("--describe", describe, "Every key with its type, default, bounds and meaning (Markdown)");
  cfgcmd->add_option("--dump", dump_path, "Print the fully resolved config of this file");
  cfgcmd->add_option("--set", dump_overrides, "Overrides for --dump");

  auto* bench = app.add_subcommand("bench", "Benchmarks");
  bench->require_subcommand(1);
  auto* bfwht = bench->add_subcommand("fwht", "FWHT against the dense Hadamard product");
  whvi::bench::FwhtBenchOptions bo;
  std::string sizes = "64,256,1024,4096,16384";
  std::string json_path;
  bool no_backward = false;
  bfwht->add_option("--device", bo.device, "cpu | cuda")->check(CLI::IsMember({"cpu", "cuda"}));
  bfwht->add_option("--sizes", sizes, "Comma-separated powers of two")->capture_default_str();
  bfwht->add_option("--batch", bo.batch, "Rows per transform")->capture_default_str()->check(CLI::PositiveNumber);
  bfwht->add_option("--dtype", bo.dtype, "float32 | float64 (CPU); float32 | float16 | bfloat16 (CUDA)")
      ->check(CLI::IsMember({"float32", "float64", "float16", "bfloat16"}))->capture_default_str();
  bfwht->add_option("--repeats", bo.repeats, "Timed repetitions (max)")->capture_default_str()->check(CLI::PositiveNumber);
  bfwht->add_option("--warmup", bo.warmup, "Untimed warm-up calls")->capture_default_str()->check(CLI::NonNegativeNumber);
  bfwht->add_option("--max-seconds", bo.max_seconds, "Time budget per measured quantity (caps repeats, >= 3 kept)")
      ->capture_default_str();
  bfwht->add_option("--max-dense-d", bo.max_dense_d, "Skip the dense product above this D")->capture_default_str();
  bfwht->add_option("--seed", bo.seed, "Seed of the random inputs")->capture_default_str();
  bfwht->add_flag("--no-backward", no_backward, "Time the forward pass only");
  bfwht->add_option("--json", json_path, "Also write the results as JSON to this file");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  auto logger = spdlog::stderr_color_mt("whvi");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::from_str(log_level));

  try {
    if (!simd.empty()) whvi::kernels::set_simd_level(whvi::kernels::parse_simd_level(simd));
    whvi::set_threads(n_threads);
    if (show_version) {
      std::cout << whvi::version_string() << std::endl;
      return 0;
    }
    const std::string command_line = whvi::join_command_line(argc, argv);
    if (app.got_subcommand(train)) {
      to.command_line = command_line;
      whvi::experiment::run_train(to);
      return 0;
    }
    if (app.got_subcommand(eval)) {
      eo.command_line = command_line;
      const auto r = whvi::experiment::run_eval(eo);
      std::cout << r.dump(2) << std::endl;
      if (!eval_json.empty()) whvi::write_file_atomic(eval_json, r.dump(2) + "\n");
      return 0;
    }
    if (app.got_subcommand(table)) {
      const auto md = whvi::report::render_from_files(table_files, paper_file, table_title) +
                      "\nRendered by: `" + command_line + "`\n";
      if (table_out.empty()) std::cout << md;
      else whvi::write_file_atomic(table_out, md), spdlog::info("wrote {}", table_out);
      return 0;
    }
    if (app.got_subcommand(select)) {
      const auto r = whvi::report::select_defaults(select_files);
      const std::string md = r.markdown + "\nRendered by: `" + command_line + "`\n";
      if (select_out.empty()) {
        std::cout << md;
      } else {
        whvi::write_file_atomic(select_out + "/SUMMARY.md", md);
        whvi::write_file_atomic(select_out + "/summary.json", r.summary.dump(2) + "\n");
        spdlog::info("wrote {}/SUMMARY.md and summary.json", select_out);
      }
      return 0;
    }
    if (app.got_subcommand(cfgcmd)) {
      if (!dump_path.empty())
        std::cout << whvi::config::Config::load(dump_path, dump_overrides).dump_yaml();
      else if (describe)
        std::cout << whvi::config::Config::describe_markdown();
      else
        std::cout << cfgcmd->help();
      return 0;
    }
    if (bench->got_subcommand(bfwht)) {
      bo.sizes = parse_sizes(sizes);
      bo.backward = !no_backward;
      bo.command_line = command_line;
      spdlog::info("bench fwht: device {}, dtype {}, batch {}, threads {}, SIMD {}", bo.device,
                   bo.dtype, bo.batch, whvi::threads(),
                   whvi::kernels::simd_level_name(whvi::kernels::active_simd_level()));
      const auto doc = whvi::bench::run_fwht_bench(bo);
      if (!json_path.empty()) {
        whvi::write_file_atomic(json_path, doc.dump(2) + "\n");
        spdlog::info("wrote {}", json_path);
      }
      return 0;
    }
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
  return 0;
}
