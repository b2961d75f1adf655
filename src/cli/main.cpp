// The `whvi` command line: global options (before or after the subcommand),
// then one subcommand.
//
// Exit status: 0 success; 1 an error while running (a one-line message on
// stderr naming the bad input and the fix); 2 a usage error (bad or missing
// option, no command: the help goes to stderr). A failure to write standard
// output (disk full, closed stdout) is an error, not a silent success.
#include <fcntl.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <new>
#include <sstream>
#include <string_view>

#include <c10/util/Exception.h>

#include <CLI/CLI.hpp>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "analysis/approximation.h"
#include "bench/bench_fwht.h"
#include "bench/bench_train.h"
#include "config/config.h"
#include "data/csv.h"
#include "data/synthetic.h"
#include "experiment/experiment.h"
#include "models/regression_model.h"
#include "report/selection.h"
#include "report/table.h"
#include "common/errors.h"
#include "common/heartbeat.h"
#include "common/io.h"
#include "common/paths.h"
#include "common/runtime.h"
#include "fwht.h"

namespace {

// Messages may quote user input or LibTorch internals: escape control bytes
// and invalid UTF-8 as \xNN so the terminal shows one clean line.
std::string printable(const std::string& s, bool one_line) {
  std::string out;
  auto hex = [&](unsigned char c) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02x", c);
    out += buf;
  };
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '\n' || c == '\t') {
      out += one_line || c == '\t' ? ' ' : '\n';
      ++i;
    } else if (c < 0x20 || c == 0x7f) {
      hex(c), ++i;
    } else if (c < 0x80) {
      out += static_cast<char>(c), ++i;
    } else {  // keep valid UTF-8 sequences
      const int len = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
      bool ok = len > 0 && i + len <= s.size() && c >= 0xC2 && c <= 0xF4;
      for (int k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
      if (ok) out.append(s, i, len), i += len;
      else hex(c), ++i;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// A closed fd 0, 1 or 2 would be reused by the next file whvi opens (a result
// file, a checkpoint), so writes meant for stdout or stderr would land in it.
// Park /dev/null there instead: read-only on stdout, so writing to it still
// fails and is reported.
bool g_stdout_closed = false;

void guard_standard_fds() {
  for (int fd : {0, 1, 2}) {
    if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    if (fd == 1) g_stdout_closed = true;
    const int got = open("/dev/null", fd == 2 ? O_WRONLY : O_RDONLY);
    if (got >= 0 && got != fd) dup2(got, fd), close(got);
  }
}

// glibc serves an allocation above its mmap threshold (128 KiB, rising to at
// most 32 MiB as such blocks are freed) with a fresh mmap, and gives the pages
// back when it is freed. A prediction over 10,000 rows allocates activations
// of tens of MB per layer and Monte Carlo sample, so each one cost thousands
// of page faults: on Fashion-MNIST FC 400x2, NF-WHVI's evaluation spent 53 s
// of its 90 s in the kernel. With the threshold at 1 GiB those blocks come
// from the heap and are reused (the same numbers; the process keeps its peak
// memory instead of returning it). The trim threshold likewise: at its
// default of 128 KiB every freed block at the top of a heap was handed back
// and faulted in again by the next row, which left `whvi predict` on two
// threads no faster than on one for NF-WHVI (each thread allocates from an
// arena of its own). A MALLOC_MMAP_THRESHOLD_, MALLOC_TRIM_THRESHOLD_ or
// GLIBC_TUNABLES set by the user wins.
void keep_large_allocations() {
#ifdef __GLIBC__
  if (std::getenv("GLIBC_TUNABLES") != nullptr) return;
  if (std::getenv("MALLOC_MMAP_THRESHOLD_") == nullptr) mallopt(M_MMAP_THRESHOLD, 1 << 30);
  if (std::getenv("MALLOC_TRIM_THRESHOLD_") == nullptr) mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

// Flushes stdout; a failed write (e.g. > /dev/full, closed stdout) turns a
// success into exit status 1 with a message.
int finish(int rc) {
  std::cout.flush();
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int err = errno;
  if (flushed && std::cout.good() && !std::ferror(stdout)) return rc;
  const std::string why = g_stdout_closed ? "it is closed" : err ? std::strerror(err) : "write failed";
  std::fprintf(stderr, "whvi: error: cannot write to standard output (%s): the output is incomplete. "
                       "Check the disk, or redirect the output to a file.\n", why.c_str());
  return rc == 0 ? 1 : rc;
}

std::string shown(const std::string& s) { return printable(s.size() > 60 ? s.substr(0, 60) + "..." : s, true); }

// Validators with messages that say what is wanted; CLI11 prefixes "--option: ".
CLI::Validator integer_in(long long lo, long long hi, const std::string& what,
                          const std::string& example) {
  return CLI::Validator(
      [=](std::string& s) -> std::string {
        errno = 0;
        char* end = nullptr;
        const long long v = std::strtoll(s.c_str(), &end, 10);
        const bool is_int = !s.empty() && end != s.c_str() && *end == '\0';
        if (!is_int || errno == ERANGE || v < lo || v > hi)
          return "must be " + what + ", got '" + shown(s) + "'" + example;
        return {};
      },
      "INT in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
}

// A positive finite number at most `hi` (CLI11's PositiveNumber accepts inf and
// names a 309-digit range).
CLI::Validator positive_finite(double hi, const std::string& example) {
  return CLI::Validator(
      [=](std::string& s) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(s.c_str(), &end);
        const bool is_num = !s.empty() && end != s.c_str() && *end == '\0';
        if (!is_num || !std::isfinite(v) || v <= 0 || v > hi) {
          std::ostringstream os;
          os << "must be a positive finite number (at most " << hi << "), got '" << shown(s) << "'" << example;
          return os.str();
        }
        return {};
      },
      "NUMBER > 0");
}

// A probability mass strictly between 0 and 1 (CLI11 alone says "Could not convert").
CLI::Validator open_unit_mass(const std::string& example) {
  return CLI::Validator(
      [=](std::string& s) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(s.c_str(), &end);
        const bool is_num = !s.empty() && end != s.c_str() && *end == '\0';
        if (!is_num || !(v > 0 && v < 1)) return "must be a number strictly between 0 and 1, got '" + shown(s) + "'" + example;
        return {};
      },
      "MASS in (0, 1)");
}

CLI::Validator positive_seconds() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        errno = 0;
        char* end = nullptr;
        const double v = std::strtod(s.c_str(), &end);
        const bool is_num = !s.empty() && end != s.c_str() && *end == '\0';
        if (!is_num || !std::isfinite(v) || v <= 0 || v > 1e6)
          return "must be a positive finite number of seconds (at most 1e6), got '" + shown(s) +
                 "' (e.g. --max-seconds 3)";
        return {};
      },
      "SECONDS > 0");
}

constexpr int64_t kMaxBenchSize = int64_t{1} << 30;

// Output paths given on the command line, checked before any work: "-" is
// standard output; anything else must be absent or a regular file (no link,
// device, FIFO or folder: common/io.h).
void check_outputs(const std::vector<std::pair<std::string, const char*>>& outputs,
                   const std::vector<std::string>& inputs) {
  for (const auto& [path, flag] : outputs) {
    if (path.empty() || path == "-") continue;
    whvi::check_output_path(path, flag);
    for (const auto& in : inputs)
      WHVI_CHECK(!whvi::same_file(path, in), flag, " '", path, "' is ", in == path ? "" : "the same file as ",
                 "one of this command's inputs ('", in, "'); whvi never writes over its own input: give another path");
  }
}

// Writes `content` to `path` ("-": standard output) and logs it.
void write_output(const std::string& path, const std::string& content) {
  if (path == "-") {
    std::cout << content;
    return;
  }
  whvi::write_file_atomic(path, content);
  spdlog::info("wrote {}", path);
}

// `in` on one line: a line break, a carriage return or another control byte
// (from a path, a --set value, a config string echoed back) is written as
// \n, \r or ?, so no text can forge a second log line.
std::string one_line(const std::string& in) {
  std::string text;
  for (char c : in) {
    if (c == '\n') text += "\\n";
    else if (c == '\r') text += "\\r";
    else if (c == '\t') text += ' ';
    else text += static_cast<unsigned char>(c) < 32 || c == 127 ? '?' : c;
  }
  return text;
}

// A line at least this often, whatever a run is doing (common/heartbeat.h).
constexpr double kQuietSeconds = 15;

// The console sink, every message through one_line().
class OneLineSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  OneLineSink() : inner_(std::make_shared<spdlog::sinks::stderr_color_sink_mt>()) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    whvi::heartbeat::touch();
    const std::string_view in(msg.payload.data(), msg.payload.size());
    bool plain = true;
    for (char c : in) plain = plain && static_cast<unsigned char>(c) >= 32 && c != 127;
    if (plain) return inner_->log(msg);
    const std::string text = one_line(std::string(in));
    spdlog::details::log_msg copy(msg);
    copy.payload = spdlog::string_view_t(text.data(), text.size());
    inner_->log(copy);
  }
  void flush_() override { inner_->flush(); }

 private:
  std::shared_ptr<spdlog::sinks::stderr_color_sink_mt> inner_;
};

// An address-space limit (ulimit -v, RLIMIT_AS) below 2 GiB: LibTorch, OpenBLAS
// and their threads map far more address space than they use, and OpenBLAS's
// threaded GEMM spins forever when its buffer cannot be mapped (measured: a
// width-4096 run under 879 MiB hung at 100% CPU with 2 threads). Refused at
// once, with the fix; cgroup limits (Slurm --mem) count only what is used.
void check_address_space_limit() {
  struct rlimit lim {};
  if (::getrlimit(RLIMIT_AS, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY) return;
  constexpr rlim_t kMin = rlim_t{2} << 30;
  WHVI_CHECK(lim.rlim_cur >= kMin, "an address-space limit (ulimit -v) of ", lim.rlim_cur >> 20,
             " MiB is set: LibTorch and OpenBLAS need at least 2048 MiB of address space (they map more than they "
             "use) and could hang when it runs out. Raise it (ulimit -v 4194304), or cap memory with a cgroup "
             "limit (Slurm --mem), which counts only what is used");
}

// A stack limit (ulimit -s, RLIMIT_STACK) below 1 MiB: the main thread and every
// thread LibTorch and OpenBLAS start get stacks of that size, and their kernels
// overflow one of 128 KiB (measured: a closed-form fit crashed with SIGSEGV
// under 64 and 128 KiB, ran under 256). Refused at once, with the fix.
void check_stack_limit() {
  struct rlimit lim {};
  if (::getrlimit(RLIMIT_STACK, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY) return;
  constexpr rlim_t kMin = rlim_t{1} << 20;
  WHVI_CHECK(lim.rlim_cur >= kMin, "a stack limit (ulimit -s) of ", lim.rlim_cur >> 10,
             " KiB is set: whvi's threads (LibTorch's, OpenBLAS's) need at least 1024 KiB each and would crash. "
             "Raise it (ulimit -s 8192)");
}

// The error line is the contract at every log level, --log-level off included.
void report_error(const std::string& msg) {
  if (spdlog::get_level() <= spdlog::level::err) spdlog::error("{}", msg);
  else std::fprintf(stderr, "whvi: error: %s\n", one_line(msg).c_str());
}

// A header line of `cols`, then one line per row: strings and numbers as they
// are, an empty field where a row has no number.
std::string rows_csv(const nlohmann::json& rows, const std::vector<const char*>& cols) {
  std::ostringstream csv;
  csv.precision(9);
  for (size_t i = 0; i < cols.size(); ++i) csv << (i ? "," : "") << cols[i];
  csv << '\n';
  for (const auto& r : rows) {
    for (size_t i = 0; i < cols.size(); ++i) {
      if (i) csv << ',';
      if (!r.contains(cols[i])) continue;
      // a kind with its own settings (--kinds KIND:KEY=VALUE) is named by its spec
      const auto& v = std::string(cols[i]) == "kind" && r.contains("spec") ? r["spec"] : r[cols[i]];
      if (v.is_string()) csv << v.get<std::string>();
      else if (v.is_number_integer()) csv << v.get<int64_t>();
      else if (v.is_number()) csv << v.get<double>();
    }
    csv << '\n';
  }
  return csv.str();
}

// "a,b,c" -> items (empty items skipped); an empty list is an error naming the flag.
std::vector<std::string> split_list(const std::string& s, const char* flag) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  WHVI_CHECK(!out.empty(), flag, ": nothing given");
  return out;
}

// A comma-separated list of integers in [lo, hi] (powers of two only if
// `pow2`), for `flag`; errors name the item and an example.
std::vector<int64_t> parse_int_list(const std::string& s, const char* flag, long long lo, long long hi, bool pow2,
                                    const char* example) {
  std::vector<int64_t> out;
  for (const auto& item : split_list(s, flag)) {
    size_t pos = 0;
    long long v = 0;
    try {
      v = std::stoll(item, &pos);
    } catch (const std::exception&) {
      pos = 0;
    }
    WHVI_CHECK(pos == item.size() && v >= lo && v <= hi && (!pow2 || (v & (v - 1)) == 0), flag, ": '", shown(item),
               "' is not ", pow2 ? "a power of two" : "an integer", " from ", lo, " to ", hi, " (expected e.g. ",
               flag, " ", example, ")");
    out.push_back(v);
  }
  return out;
}

std::vector<int64_t> parse_widths(const std::string& s) {
  return parse_int_list(s, "--widths", 1, 65536, false, "64,128,256");
}

std::vector<int64_t> parse_sizes(const std::string& s) {
  std::vector<int64_t> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    size_t pos = 0;
    long long v = 0;
    bool too_large = false;
    try {
      v = std::stoll(item, &pos);
    } catch (const std::out_of_range&) {
      too_large = item.find_first_not_of("0123456789") == std::string::npos;
      pos = 0;
    } catch (const std::exception&) {
      pos = 0;
    }
    WHVI_CHECK(!too_large && !(pos == item.size() && v > kMaxBenchSize), "--sizes: size ",
               shown(item), " is larger than 2^30 = 1073741824, the largest size bench fwht "
               "supports (expected powers of two, e.g. --sizes 64,256,1024)");
    WHVI_CHECK(pos == item.size() && v > 0, "--sizes: '", shown(item),
               "' is not a positive integer (expected e.g. --sizes 64,256,1024)");
    out.push_back(v);
  }
  WHVI_CHECK(!out.empty(), "--sizes: no sizes given");
  return out;
}

// A Markdown code span around `s` (the command line a table names): a
// backtick inside needs a double-backtick delimiter with spaces.
std::string code_span(const std::string& s) {
  return s.find('`') == std::string::npos ? "`" + s + "`" : "`` " + s + " ``";
}

// ---- subcommands ------------------------------------------------------------
// Each subcommand declares its options beside the code that runs it: add()
// registers them under `parent`, outputs() names the files it will write (checked
// before any work), run() does the work after parsing and the global settings.

struct Command {
  virtual ~Command() = default;
  CLI::App* app = nullptr;
  virtual void add(CLI::App& parent) = 0;
  virtual std::vector<std::pair<std::string, const char*>> outputs() const { return {}; }
  // Files the command reads: no output may be one of them (checked with outputs()).
  virtual std::vector<std::string> inputs() const { return {}; }
  virtual void run(const std::string& command_line) = 0;
};

struct TrainCommand : Command {
  whvi::experiment::TrainOptions o;
  void add(CLI::App& parent) override {
    app = parent.add_subcommand("train", "Train the models of a YAML experiment (every split)");
    app->add_option("--config", o.config_path, "Experiment YAML file")->required();
    app->add_option("--set", o.overrides, "Override a config key: section.key=value (repeatable)");
    app->add_flag("--resume", o.resume, "Skip splits whose results already exist");
    o.parallel = 0;
    app->add_option("--parallel", o.parallel,
                    "Splits trained at once, each in its own process sharing --threads: 0 (default) = as many as "
                    "the cores and --threads allow, 1 = one after another; the numbers are those of each split "
                    "run alone with its thread count")
        ->check(integer_in(0, 1024, "an integer from 0 (as many as the cores allow) to 1024", " (e.g. --parallel 1)"));
    // internal: a worker of a parallel run trains this split only (experiment/workers.h)
    app->add_option("--worker-split", o.worker_split)->group("")->check(integer_in(0, 1000000, "a split number", ""));
    app->add_option("--worker-link", o.worker_link)->group("");  // PID:FD:TOKEN of the run that started it
  }
  void run(const std::string& command_line) override {
    o.command_line = command_line;
    whvi::experiment::run_train(o);
  }
};

struct EvalCommand : Command {
  whvi::experiment::EvalOptions o;
  std::string json;
  void add(CLI::App& parent) override {
    app = parent.add_subcommand("eval", "Re-evaluate a saved checkpoint on its test split");
    app->add_option("--checkpoint", o.checkpoint, "Checkpoint file (output.dir/NAME/split-KK.ckpt)")->required();
    app->add_option("--mc-samples", o.mc_samples, "Test-time MC samples (default: the config's)")
        ->check(integer_in(1, 1000000, "a positive integer (1 to 1000000)", " (e.g. --mc-samples 64)"));
    app->add_option("--json", json, "Also write the metrics to this file ('-': standard output only)");
  }
  std::vector<std::pair<std::string, const char*>> outputs() const override { return {{json, "--json"}}; }
  std::vector<std::string> inputs() const override { return {o.checkpoint}; }
  void run(const std::string& command_line) override {
    o.command_line = command_line;
    const auto r = whvi::experiment::run_eval(o);
    const std::string data = r.value("data_source", std::string());
    WHVI_CHECK(json.empty() || json == "-" || !whvi::same_file(json, data), "--json '", json,
               "' is the data file this evaluation read ('", data,
               "'); whvi never writes over its own input: give another path");
    std::cout << r.dump(2) << std::endl;
    if (!json.empty() && json != "-") write_output(json, r.dump(2) + "\n");
  }
};

struct PredictCommand : Command {
  whvi::experiment::PredictOptions o;
  void add(CLI::App& parent) override {
    app = parent.add_subcommand("predict", "Predict with uncertainty on new rows (CSV) from a checkpoint");
    app->add_option("--checkpoint", o.checkpoint, "Checkpoint file (output.dir/NAME/split-KK.ckpt)")->required();
    app->add_option("--input", o.input, "CSV/TSV file (gzip or plain) with a header naming the input columns; "
                    "'-': standard input")->required();
    app->add_option("--out", o.out, "Write the predictions (CSV) here; '-': standard output")->capture_default_str();
    app->add_option("--mc-samples", o.mc_samples, "Monte Carlo samples (default: the config's evaluation.mc_samples)")
        ->check(integer_in(1, 1000000, "a positive integer (1 to 1000000)", " (e.g. --mc-samples 64)"));
    app->add_option("--interval", o.interval, "Mass of the central predictive interval (regression)")
        ->capture_default_str()
        ->check(open_unit_mass(" (e.g. --interval 0.95)"));
    app->add_option("--keep", o.keep, "Input columns to copy to the output, before the predictions (e.g. --keep id,date)")
        ->delimiter(',');
  }
  std::vector<std::pair<std::string, const char*>> outputs() const override { return {{o.out, "--out"}}; }
  std::vector<std::string> inputs() const override { return {o.checkpoint, o.input}; }
  void run(const std::string&) override {
    const auto r = whvi::experiment::run_predict(o);
    if (o.out != "-") spdlog::info("wrote {} rows to {}", r["rows"].get<int64_t>(), o.out);
  }
};

struct ExportCommand : Command {
  whvi::experiment::ExportOptions o;
  void add(CLI::App& parent) override {
    app = parent.add_subcommand("export", "Export a checkpoint's model, its posterior sampling kept (ONNX)");
    app->add_option("--checkpoint", o.checkpoint, "Checkpoint file (output.dir/NAME/split-KK.ckpt)")->required();
    app->add_option("--format", o.format, "onnx: a self-contained ONNX graph (opset 17; docs/export.md)")
        ->capture_default_str();
    app->add_option("--out", o.out, "The model file to write (e.g. model.onnx)")->required();
    app->add_option("--mc-samples", o.mc_samples,
                    "Posterior samples the graph draws per call (default: the config's evaluation.mc_samples)")
        ->check(integer_in(1, 100000, "a positive integer (1 to 100000)", " (e.g. --mc-samples 64)"));
    app->add_option("--interval", o.interval, "Mass of the central predictive interval (regression)")
        ->capture_default_str()
        ->check(open_unit_mass(" (e.g. --interval 0.95)"));
  }
  std::vector<std::pair<std::string, const char*>> outputs() const override { return {{o.out, "--out"}}; }
  std::vector<std::string> inputs() const override { return {o.checkpoint}; }
  void run(const std::string&) override { whvi::experiment::run_export(o); }
};

struct DataExportCommand : Command {
  std::string name, out = "-";
  int64_t rows = 0, seed = 0, classes = 0;
  void add(CLI::App& parent) override {
    app = parent.add_subcommand("export", "Write a generated data set as CSV (an example file, no internet)");
    app->add_option("dataset", name, "toy or synthetic:<name> (friedman, hetero, gap, highdim, linear, ...)")
        ->required();
    app->add_option("--out", out, "CSV file; '-': standard output")->capture_default_str();
    app->add_option("--rows", rows, "Rows (0: the problem's default)")
        ->check(integer_in(0, 10000000, "an integer from 0 to 1e7", " (e.g. --rows 500)"));
    app->add_option("--seed", seed, "Seed")->check(integer_in(0, LLONG_MAX, "a non-negative integer", ""));
    app->add_option("--classes", classes, "K >= 2: the target as text labels q1..qK (its quantile bins), "
                    "a classification example")
        ->check(integer_in(0, 100, "0 or an integer from 2 to 100", " (e.g. --classes 3)"));
  }
  std::vector<std::pair<std::string, const char*>> outputs() const override { return {{out, "--out"}}; }
  void run(const std::string&) override {
    WHVI_CHECK(classes != 1, "--classes 1: a classification example needs 2 or more classes");
    WHVI_CHECK(out.size() < 3 || out.compare(out.size() - 3, 3, ".gz") != 0, "data export --out '", out,
               "': whvi writes plain CSV text; name the file without .gz (and compress it afterwards if you want to)");
    WHVI_CHECK(rows == 0 || rows >= 10, "--rows ", rows, " is too small: a generated data set needs at least 10 "
               "rows (e.g. --rows 500; 0: the problem's default)");
    WHVI_CHECK(name == "toy" || whvi::data::is_synthetic(name), "data export: '", name,
               "' is not a generated data set; give toy or synthetic:<name> (e.g. synthetic:friedman)");
    if (rows >= 1000000) spdlog::info("data export: generating {} rows of {}", rows, name);
    const auto d = name == "toy" ? whvi::data::make_toy(static_cast<uint64_t>(seed), rows > 0 ? static_cast<int>(rows) : 128)
                                 : whvi::data::make_synthetic(name, static_cast<uint64_t>(seed), rows);
    WHVI_CHECK(classes == 0 || d.x.size(0) >= 2 * classes, "--classes ", classes, " with ", d.x.size(0),
               " rows: every class needs at least 2 rows; lower --classes or raise --rows");
    // the text is made whole before it is written: about 13 bytes a cell, held twice at most
    const double cells = static_cast<double>(d.x.size(0)) * static_cast<double>(d.x.size(1) + 1);
    const double text = 13.0 * cells, have = static_cast<double>(whvi::usable_memory_bytes());
    WHVI_CHECK(!(have > 0) || 2 * text <= have, "data export: ", d.x.size(0), " rows of ", d.x.size(1) + 1,
               " columns would need about ", static_cast<int64_t>(2 * text / (1 << 20)) + 1, " MiB of memory, more "
               "than the ", static_cast<int64_t>(have / (1 << 20)), " MiB this process can use: lower --rows");
    if (rows >= 1000000)
      spdlog::info("data export: writing {} rows of {} columns (about {} MiB of CSV; several seconds per million rows)",
                   d.x.size(0), d.x.size(1) + 1, static_cast<int64_t>(text / (1 << 20)) + 1);
    write_output(out, whvi::data::to_csv(d, static_cast<int>(classes)));
  }
};

struct TableCommand : Command {
  std::vector<std::string> files;
  std::string paper = "results/paper/whvi-neurips2020-table3.json", out, title;
  bool csv = false;
  void add(CLI::App& parent) override {
    app = parent.add_subcommand("table", "Render result files as Markdown tables beside the paper's");
    app->add_option("files", files, "Experiment JSON files")->required();
    app->add_option("--paper", paper, "The paper's numbers (JSON file, or the name of a table built into "
                    "whvi, e.g. whvi-neurips2020-table6); '' for none")->capture_default_str();
    app->add_option("--out", out, "Write the Markdown here (default or '-': stdout)");
    app->add_option("--title", title, "Title (default: beside a paper's table, its title or 'UCI regression'; "
                    "for your own data, the data sets and the task)");
    app->add_flag("--csv", csv, "Write one CSV row per result file (dataset, model, width, params, metric means and stds) instead of Markdown");
  }
  std::vector<std::pair<std::string, const char*>> outputs() const override { return {{out, "--out"}}; }
  std::vector<std::string> inputs() const override {
    auto in = files;
    in.push_back(paper);
    return in;
  }
  void run(const std::string& command_line) override {
    const auto md = csv ? whvi::report::render_csv_from_files(files)
                        : whvi::report::render_from_files(files, paper, title, whvi::models::model_kinds()) + "\nRendered by: " + code_span(command_line) + "\n";
    write_output(out.empty() ? "-" : out, md);
  }
};

struct SelectCommand : Command {
  std::vector<std::string> files;
  std::string out;
  void add(CLI::App& parent) override {
    app = parent.add_subcommand("select", "Rank hyper-parameter candidates by validation MNLL (selection runs only)");
    app->add_option("files", files, "Experiment JSON files of runs with data.validation_fraction > 0")->required();
    app->add_option("--out", out, "Write SUMMARY.md and summary.json into this folder (default: Markdown to stdout)");
  }
  std::vector<std::pair<std::string, const char*>> outputs() const override {
    if (out.empty()) return {};
    return {{out + "/SUMMARY.md", "--out"}, {out + "/summary.json", "--out"}};
  }
  std::vector<std::string> inputs() const override { return files; }
  void run(const std::string& command_line) override {
    const auto r = whvi::report::select_defaults(files);
    const std::string md = r.markdown + "\nRendered by: " + code_span(command_line) + "\n";
    if (out.empty()) {
      std::cout << md;
      return;
    }
    whvi::write_file_atomic(out + "/SUMMARY.md", md);
    whvi::write_file_atomic(out + "/summary.json", r.summary.dump(2) + "\n");
    spdlog::info("wrote {}/SUMMARY.md and summary.json", out);
  }
};

struct ConfigCommand : Command {
  bool describe = false;
  std::string dump_path;
  std::vector<std::string> overrides;
  void add(CLI::App& parent) override {
    app = parent.add_subcommand("config", "Show the configuration schema or a resolved config");
    app->add_flag("--describe", describe, "Every key with its type, default, bounds and meaning (Markdown)");
    app->add_option("--dump", dump_path, "Print the fully resolved config of this file");
    app->add_option("--set", overrides, "Overrides for --dump");
    // Nothing to do is a usage error (exit 2 and a hint), as `whvi data` alone is.
    app->callback([this] {
      const auto* version = app->get_parent()->get_option_no_throw("--version");
      if (version && version->count() > 0) return;  // whvi config --version: the version
      const bool dump = app->count("--dump") > 0;
      if (!dump && !overrides.empty())
        throw CLI::RequiredError("config: --set applies to --dump FILE only: give the config file it overrides "
                                 "(e.g. whvi config --dump configs/toy.yaml --set model.width=64)",
                                 CLI::ExitCodes::RequiredError);
      if (dump && describe)
        throw CLI::RequiredError("config: --describe and --dump do different things (every key; one file's "
                                 "resolved config): give one of them", CLI::ExitCodes::RequiredError);
      if (!dump && !describe)
        throw CLI::RequiredError("config: nothing to do: give --describe (every key, as Markdown) or --dump FILE "
                                 "(the resolved config of FILE), e.g. whvi config --describe",
                                 CLI::ExitCodes::RequiredError);
    });
  }
  void run(const std::string&) override {
    if (app->count("--dump") > 0)
      std::cout << whvi::experiment::load_config(dump_path, overrides).dump_yaml();
    else
      std::cout << whvi::config::Config::describe_markdown(whvi::experiment::recipe_defaults_markdown());
  }
};

std::string simd_name() { return whvi::kernels::simd_level_name(whvi::kernels::active_simd_level()); }

struct BenchFwhtCommand : Command {
  whvi::bench::FwhtBenchOptions o;
  std::string sizes = "64,256,1024,4096,16384", json, csv;
  bool no_backward = false;
  void add(CLI::App& parent) override {
    app = parent.add_subcommand("fwht", "FWHT against the dense Hadamard product");
    app->add_option("--device", o.device, "cpu | cuda")->check(CLI::IsMember({"cpu", "cuda"}));
    app->add_option("--sizes", sizes, "Comma-separated powers of two, at most 2^30")->capture_default_str();
    app->add_option("--batch", o.batch, "Rows per transform (batch x D must fit in half the memory)")
        ->capture_default_str()
        ->check(integer_in(1, int64_t{1} << 40, "a positive integer (rows per transform)", " (e.g. --batch 512)"));
    app->add_option("--dtype", o.dtype, "float32 | float64 (CPU); float32 | float16 | bfloat16 (CUDA)")
        ->check(CLI::IsMember({"float32", "float64", "float16", "bfloat16"}))->capture_default_str();
    app->add_option("--repeats", o.repeats, "Timed repetitions (max)")
        ->capture_default_str()
        ->check(integer_in(1, 1000000, "a positive integer (1 to 1000000)", " (e.g. --repeats 30)"));
    app->add_option("--warmup", o.warmup, "Untimed warm-up calls")
        ->capture_default_str()
        ->check(integer_in(0, 1000000, "a non-negative integer (0 to 1000000)", " (e.g. --warmup 3)"));
    app->add_option("--max-seconds", o.max_seconds, "Time budget per measured quantity (caps repeats, >= 3 kept)")
        ->capture_default_str()
        ->check(positive_seconds());
    app->add_option("--max-dense-d", o.max_dense_d, "Skip the dense product above this D")
        ->capture_default_str()
        ->check(integer_in(0, kMaxBenchSize, "an integer from 0 to 2^30", " (e.g. --max-dense-d 4096)"));
    app->add_option("--seed", o.seed, "Seed of the random inputs")
        ->capture_default_str()
        ->check(integer_in(0, LLONG_MAX, "a non-negative integer", " (e.g. --seed 0)"));
    app->add_flag("--no-backward", no_backward, "Time the forward pass only");
    app->add_option("--json", json, "Also write the results as JSON to this file");
    app->add_option("--csv", csv,
                    "Also write one CSV line per size (d,batch,fwht_ms,matmul_ms,copy_ms,fwht_fwd_bwd_ms,"
                    "matmul_fwd_bwd_ms; empty where not measured) to this file, for plotting");
  }
  std::vector<std::pair<std::string, const char*>> outputs() const override {
    return {{json, "--json"}, {csv, "--csv"}};
  }
  void run(const std::string& command_line) override {
    o.sizes = parse_sizes(sizes);
    o.backward = !no_backward;
    o.command_line = command_line;
    spdlog::info("bench fwht: device {}, dtype {}, batch {}, threads {}, SIMD {}", o.device, o.dtype, o.batch,
                 whvi::threads(), simd_name());
    const auto doc = whvi::bench::run_fwht_bench(o);
    if (!json.empty()) write_output(json, doc.dump(2) + "\n");
    if (!csv.empty())
      write_output(csv, rows_csv(doc["rows"], {"d", "batch", "fwht_ms", "matmul_ms", "copy_ms", "fwht_fwd_bwd_ms",
                                               "matmul_fwd_bwd_ms"}));
  }
};

struct BenchTrainCommand : Command {
  whvi::bench::TrainBenchOptions o;
  std::string kinds = "whvi,mfg,mcd", widths = "64,128,256,512", splits = "1", json, csv;
  void add(CLI::App& parent) override {
    app = parent.add_subcommand("train", "Training speed per layer kind and width on synthetic data");
    app->add_option("--kinds", kinds, "Comma-separated model kinds (model.kind: " + whvi::bench::stepped_model_kinds() + "), each optionally KIND:KEY=VALUE:... with its own settings")->capture_default_str();
    app->add_option("--set", o.sets, "Config override for every configuration, KEY=VALUE (repeatable)");
    app->add_option("--widths", widths, "Comma-separated hidden widths")->capture_default_str();
    app->add_option("--splits", splits,
                    "Comma-separated split counts: 1 = one split (the ordinary trainer); S > 1 = S splits trained "
                    "as one batched model (training.batched_splits), timed together")
        ->capture_default_str();
    app->add_option("--depth", o.depth, "Hidden layers")->capture_default_str()
        ->check(integer_in(0, 64, "an integer from 0 to 64", " (e.g. --depth 2)"));
    app->add_option("--batch", o.batch, "Mini-batch size")->capture_default_str()
        ->check(integer_in(1, 10000000, "a positive integer", " (e.g. --batch 64)"));
    app->add_option("--d-in", o.d_in, "Input dimension of the synthetic data")->capture_default_str()
        ->check(integer_in(1, 65536, "an integer from 1 to 65536", " (e.g. --d-in 8)"));
    app->add_option("--rows", o.rows, "Rows of synthetic training data")->capture_default_str()
        ->check(integer_in(2, 10000000, "an integer from 2 to 1e7", " (e.g. --rows 1000)"));
    app->add_option("--steps", o.steps, "Timed steps per configuration")->capture_default_str()
        ->check(integer_in(1, 100000000, "a positive integer", " (e.g. --steps 2000)"));
    app->add_option("--warmup", o.warmup, "Untimed steps before")->capture_default_str()
        ->check(integer_in(0, 100000000, "a non-negative integer", " (e.g. --warmup 100)"));
    app->add_option("--seed", o.seed, "Seed of the data and the runs")->capture_default_str()
        ->check(integer_in(0, LLONG_MAX, "a non-negative integer", " (e.g. --seed 0)"));
    app->add_option("--json", json, "Also write the results as JSON to this file");
    app->add_option("--csv", csv,
                    "Also write one CSV line per row (kind,width,splits,params,steps_per_second,ms_per_step,"
                    "split_steps_per_second,peak_rss_mib) to this file, for plotting");
  }
  std::vector<std::pair<std::string, const char*>> outputs() const override {
    return {{json, "--json"}, {csv, "--csv"}};
  }
  void run(const std::string& command_line) override {
    o.kinds = split_list(kinds, "--kinds");
    o.widths = parse_widths(widths);
    o.splits = parse_int_list(splits, "--splits", 1, 1024, false, "1,8");
    o.command_line = command_line;
    spdlog::info("bench train: kinds {}, depth {}, batch {}, d_in {}, threads {}, SIMD {}", kinds, o.depth, o.batch,
                 o.d_in, whvi::threads(), simd_name());
    const auto doc = whvi::bench::run_train_bench(o);
    if (!json.empty()) write_output(json, doc.dump(2) + "\n");
    if (!csv.empty())
      write_output(csv, rows_csv(doc["rows"], {"kind", "width", "splits", "params", "steps_per_second", "ms_per_step",
                                               "split_steps_per_second", "peak_rss_mib"}));
  }
};

struct BenchPredictCommand : Command {
  whvi::bench::PredictBenchOptions o;
  std::string kinds = "mcd,whvi", widths = "128", json, csv;
  void add(CLI::App& parent) override {
    app = parent.add_subcommand("predict", "Prediction time on a test set per model kind and width (the paper's Figs. 8, 16)");
    app->add_option("--kinds", kinds, "Comma-separated model kinds, each optionally KIND:KEY=VALUE:... with its own settings")->capture_default_str();
    app->add_option("--set", o.sets, "Config override for every configuration, KEY=VALUE (repeatable), e.g. model.architecture=simple-cnn")->capture_default_str();
    app->add_option("--widths", widths, "Comma-separated hidden widths")->capture_default_str();
    app->add_option("--depth", o.depth, "Hidden layers")->capture_default_str()
        ->check(integer_in(0, 64, "an integer from 0 to 64", " (e.g. --depth 2)"));
    app->add_option("--batch", o.batch, "Test mini-batch size (paper: 128)")->capture_default_str()
        ->check(integer_in(1, 10000000, "a positive integer", " (e.g. --batch 128)"));
    app->add_option("--mc", o.mc, "Monte Carlo samples per test point (paper: 64)")->capture_default_str()
        ->check(integer_in(1, 100000, "an integer from 1 to 100000", " (e.g. --mc 64)"));
    app->add_option("--d-in", o.d_in, "Input dimension (3072 for the CIFAR-10 CNNs)")->capture_default_str()
        ->check(integer_in(1, 65536, "an integer from 1 to 65536", " (e.g. --d-in 8)"));
    app->add_option("--rows", o.rows, "Test rows")->capture_default_str()
        ->check(integer_in(1, 10000000, "an integer from 1 to 1e7", " (e.g. --rows 1024)"));
    app->add_option("--repeats", o.repeats, "Timed passes over the test set")->capture_default_str()
        ->check(integer_in(1, 1000, "an integer from 1 to 1000", " (e.g. --repeats 5)"));
    app->add_option("--classes", o.classes, "0: regression; C >= 2: a softmax classifier")->capture_default_str()
        ->check(integer_in(0, 100000, "0 or an integer from 2 to 100000", " (e.g. --classes 10)"));
    app->add_option("--seed", o.seed, "Seed of the inputs and the networks")->capture_default_str()
        ->check(integer_in(0, LLONG_MAX, "a non-negative integer", " (e.g. --seed 0)"));
    app->add_option("--json", json, "Also write the results as JSON to this file");
    app->add_option("--csv", csv, "Also write one CSV line per row (kind,width,params,seconds_mean,seconds_std,ms_per_batch) to this file");
  }
  std::vector<std::pair<std::string, const char*>> outputs() const override {
    return {{json, "--json"}, {csv, "--csv"}};
  }
  void run(const std::string& command_line) override {
    o.kinds = split_list(kinds, "--kinds");
    o.widths = parse_widths(widths);
    o.command_line = command_line;
    spdlog::info("bench predict: kinds {}, depth {}, batch {}, {} MC samples, {} test rows, threads {}, SIMD {}", kinds,
                 o.depth, o.batch, o.mc, o.rows, whvi::threads(), simd_name());
    const auto doc = whvi::bench::run_predict_bench(o);
    if (!json.empty()) write_output(json, doc.dump(2) + "\n");
    if (!csv.empty())
      write_output(csv, rows_csv(doc["rows"], {"kind", "width", "params", "seconds_mean", "seconds_std", "ms_per_batch"}));
  }
};

struct ApproximationCommand : Command {
  whvi::analysis::ApproximationOptions o;
  std::string dims = "4,8,16,32,64,128,256,512,1024", json;
  void add(CLI::App& parent) override {
    app = parent.add_subcommand("approximation", "Fig. 11: how well S1 H G H S2 fits a dense U(-1,1) matrix");
    app->add_option("--dims", dims, "Comma-separated powers of two (2 to 8192)")->capture_default_str();
    app->add_option("--repeats", o.repeats, "Random matrices per D")->capture_default_str()
        ->check(integer_in(1, 100000, "a positive integer", " (e.g. --repeats 20)"));
    app->add_option("--steps", o.steps, "Adam steps per fit")->capture_default_str()
        ->check(integer_in(0, 100000000, "a non-negative integer", " (e.g. --steps 2000)"));
    app->add_option("--lr", o.lr, "Adam learning rate")->capture_default_str()->check(positive_finite(100, " (e.g. --lr 0.01)"));
    app->add_option("--seed", o.seed, "Seed of the matrices and initial values")->capture_default_str()
        ->check(integer_in(0, LLONG_MAX, "a non-negative integer", " (e.g. --seed 0)"));
    app->add_option("--json", json, "Write the results (JSON) to this file");
  }
  std::vector<std::pair<std::string, const char*>> outputs() const override { return {{json, "--json"}}; }
  void run(const std::string& command_line) override {
    o.dims = parse_int_list(dims, "--dims", 2, 8192, true, "4,8,16");
    auto doc = whvi::analysis::run_approximation(o);
    doc["environment"] = whvi::bench::bench_record("approximation", command_line, o.seed);
    write_output(json.empty() ? "-" : json, doc.dump(2) + "\n");
  }
};

// The global options, shared by every subcommand.
struct GlobalOptions {
  int threads = 0;
  std::string log_level = "info", simd;
  bool version = false;
  void add(CLI::App& app) {
    const int max_threads = whvi::max_threads();
    app.add_option("--threads", threads,
                   "Threads for LibTorch, OpenBLAS and the whvi kernels: 0 (all cores) up to 4 x the "
                   "cores, at most 1024 (here: " + std::to_string(max_threads) + ")")
        ->check(integer_in(0, max_threads,
                           "an integer from 0 (all cores) to " + std::to_string(max_threads) + " (4 x the " +
                               std::to_string(whvi::hardware_threads()) + " cores of this machine, at most 1024)",
                           " (e.g. --threads 1)"));
    app.add_option("--log-level", log_level, "trace|debug|info|warn|error|off")
        ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
    app.add_option("--simd", simd, "Force the CPU kernels' SIMD level (scalar|avx2|avx512); default: best available")
        ->check(CLI::IsMember({"scalar", "avx2", "avx512"}));
    app.add_flag("--version", version, "Print version, git commit, LibTorch, BLAS and CUDA facts");
  }
  // What a split worker of `whvi train` is given (experiment/workers.h sets its --threads).
  std::vector<std::string> for_workers() const {
    std::vector<std::string> a = {"--log-level", log_level};
    if (!simd.empty()) a.insert(a.end(), {"--simd", simd});
    return a;
  }
};

// The top-level commands, from the registered subcommands (never a list written by hand).
std::string command_names(CLI::App& app) {
  std::string names;
  for (const auto* sc : app.get_subcommands([](CLI::App*) { return true; }))
    names += (names.empty() ? "" : ", ") + sc->get_name();
  return names;
}

// Levenshtein distance, for "did you mean" (short words only).
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// The command the line named (whvi data export: export), or none.
CLI::App* parsed_command(CLI::App& app) {
  CLI::App* at = nullptr;
  for (auto subs = app.get_subcommands(); !subs.empty(); subs = subs.front()->get_subcommands()) at = subs.front();
  return at;
}

// An argument the command does not take, said first: before the required
// option it hides (CLI11 checks those first) and in whvi's words, with the
// nearest option of the command. "" when every argument was taken.
std::string unexpected_argument_text(CLI::App& app) {
  CLI::App* cmd = parsed_command(app);
  const auto extra = app.remaining(true);
  if (cmd == nullptr || extra.empty()) return "";
  if (!cmd->get_subcommands([](CLI::App*) { return true; }).empty()) return "";  // a group: its own message below
  std::string path;
  for (const CLI::App* a = cmd; a != nullptr && a != &app; a = a->get_parent()) path = " " + a->get_name() + path;
  const std::string name = "whvi" + path, x = extra[0], opt = x.substr(0, x.find('='));
  if (cmd->get_name() == "train" && (opt == "--data" || opt == "--dataset" || opt == "--target" || opt == "--csv" ||
                                     (x.rfind('-', 0) != 0 && whvi::is_data_file_name(x))))
    return name + " takes its data from a config, not from '" + shown(x) + "': write a config with the line `data: " +
           "{dataset: FILE, target: COLUMN}` (e.g. my.yaml) and run " + name + " --config my.yaml";
  if (x.empty() || x[0] != '-')
    return "'" + shown(x) + "' is not an argument of " + name + " (" + name + " --help lists what it takes)";
  std::string near;
  size_t best = 4;
  for (const CLI::App* a : {static_cast<const CLI::App*>(cmd), static_cast<const CLI::App*>(&app)})
    for (const auto* o : a->get_options())
      for (const auto& l : o->get_lnames()) {
        const std::string cand = "--" + l;
        const size_t d = cand.rfind(opt, 0) == 0 && opt.size() >= 3 ? 1 : edit_distance(opt, cand);
        if (d < best) best = d, near = cand;
      }
  if (near == opt)  // the command's own option, given before the command's name
    return "'" + shown(opt) + "' goes after the command: " + name + " " + opt + " ... (options follow their command)";
  return "'" + shown(opt) + "' is not an option of " + name +
         (near.empty() ? "" : "; did you mean '" + near + "'?") + " (" + name + " --help lists its options)";
}

// CLI11's parse errors in whvi's words where it has better ones: a word that
// is not a command (with the nearest command), an option given twice.
std::string parse_error_text(const CLI::ParseError& e, CLI::App& app) {
  const std::string what = e.what();
  if (const auto* version = app.get_option_no_throw("--version");
      version && version->count() > 0 && dynamic_cast<const CLI::RequiredError*>(&e))
    return "--version takes no command: run whvi --version alone";
  if (auto text = unexpected_argument_text(app); !text.empty()) return text;
  if (dynamic_cast<const CLI::ExtrasError*>(&e) && app.get_subcommands().empty()) {
    const auto extra = app.remaining();
    if (!extra.empty() && (extra[0].empty() || extra[0][0] != '-')) {
      std::string near;
      for (const auto* sc : app.get_subcommands([](CLI::App*) { return true; }))
        if (!extra[0].empty() && edit_distance(extra[0], sc->get_name()) <= 2) near = sc->get_name();
      return (extra[0].empty() ? std::string("'' (an empty argument)") : "'" + shown(extra[0]) + "'") +
             " is not a whvi command" + (near.empty() ? "" : "; did you mean '" + near + "'?") +
             " (the commands: " + command_names(app) + ")";
    }
  }
  // a group (data, bench, analysis) without one of its commands, or with a word that is not one
  if (what.find("A subcommand is required") != std::string::npos)
    for (auto* group : app.get_subcommands([](CLI::App* sc) { return sc->parsed(); })) {
      std::string names;
      for (const auto* sc : group->get_subcommands([](CLI::App*) { return true; }))
        names += (names.empty() ? "" : ", ") + sc->get_name();
      auto extra = group->remaining();
      if (extra.empty()) extra = app.remaining();  // a word after the group falls through to whvi itself
      const std::string g = "whvi " + group->get_name();
      if (extra.empty() || extra[0].empty() || extra[0][0] == '-')
        return g + " needs one of its commands: " + names + " (e.g. " + g + " " + names.substr(0, names.find(',')) +
               " --help)";
      std::string near;
      for (const auto* sc : group->get_subcommands([](CLI::App*) { return true; }))
        if (edit_distance(extra[0], sc->get_name()) <= 2) near = sc->get_name();
      return "'" + shown(extra[0]) + "' is not a " + g + " command" +
             (near.empty() ? "" : "; did you mean '" + near + "'?") + " (its commands: " + names + ")";
    }
  // an option at the end of the line without its value ("--set: 1 required TEXT missing")
  const std::string missing = " required TEXT missing";
  if (const auto at = what.find(": 1" + missing); at != std::string::npos && at > 0 && what[0] == '-') {
    const std::string opt = what.substr(0, at);
    return opt + " needs a value after it" +
           (opt == "--set" ? ": --set section.key=value, e.g. --set training.steps=100 (quote a value with spaces)"
                           : " (whvi " + std::string(app.get_subcommands().empty() ? "" : app.get_subcommands()[0]->get_name() + " ") + "--help lists it)");
  }
  const std::string twice = ": At Most 1 required but received ";
  if (const auto at = what.find(twice); dynamic_cast<const CLI::ArgumentMismatch*>(&e) && at != std::string::npos)
    return what.substr(0, at) + " was given " + what.substr(at + twice.size()) + " times; give it once";
  return what;
}

// Runs `body`, turning every error into the one-line message and exit status 1.
int guarded(const std::function<int()>& body) {
  try {
    return body();
  } catch (const whvi::Stopped& e) {
    // everything this run started is stopped and its lock released (unwound):
    // now end as the signal would have, so a shell or a scheduler sees it
    report_error(e.what());
    std::signal(e.signal, SIG_DFL);
    std::raise(e.signal);
    return 128 + e.signal;
  } catch (const c10::Error& e) {  // LibTorch: its message without the C++ backtrace
    const std::string msg = e.what_without_backtrace();
    if (msg.find("can't allocate memory") != std::string::npos || msg.find("DefaultCPUAllocator") != std::string::npos)
      report_error("out of memory: the run asked LibTorch for more memory than this machine can give (" +
                   printable(msg.find("you tried") == std::string::npos ? "a request it refused" : msg.substr(msg.find("you tried")), true) + "); use smaller sizes (model.width, "
                   "training.batch_size, evaluation.mc_samples, model.sghmc.samples, --batch, --sizes, --widths, --rows)");
    else
      report_error(printable(msg, true));
    return 1;
  } catch (const std::bad_alloc&) {
    report_error("out of memory: the run needs more memory than this machine can give; use smaller "
                  "sizes (model.width, training.batch_size, --batch, --sizes)");
    return 1;
  } catch (const std::exception& e) {
    report_error(printable(e.what(), false));
    return 1;
  }
}

// Checks before a command does any work: its outputs, and for the commands
// that compute (not `light` ones), the address-space limit.
void before_run(const Command& c, bool light) {
  check_outputs(c.outputs(), c.inputs());
  if (!light) check_address_space_limit(), check_stack_limit();
}

// The process's settings before anything else runs.
void prepare_process() {
  guard_standard_fds();
  keep_large_allocations();
  std::signal(SIGXFSZ, SIG_IGN);  // ulimit -f fails the write with EFBIG, named, instead of killing the process
}

}  // namespace

int main(int argc, char** argv) {
  prepare_process();
  CLI::App app{"whvi: Walsh-Hadamard Variational Inference experiment runner"};
  app.fallthrough();  // global options also after the subcommand (inherited by subcommands)
  GlobalOptions global;
  global.add(app);
  app.require_subcommand(0, 1);

  TrainCommand train;
  EvalCommand eval;
  PredictCommand predict;
  ExportCommand model_export;
  DataExportCommand data_export;
  TableCommand table;
  SelectCommand select;
  ConfigCommand config;
  BenchFwhtCommand bench_fwht;
  BenchTrainCommand bench_train;
  BenchPredictCommand bench_predict;
  ApproximationCommand approximation;
  train.add(app);
  eval.add(app);
  predict.add(app);
  model_export.add(app);
  auto* data = app.add_subcommand("data", "Data sets");
  data->require_subcommand(1);
  data_export.add(*data);
  table.add(app);
  select.add(app);
  config.add(app);
  auto* bench = app.add_subcommand("bench", "Benchmarks");
  bench->require_subcommand(1);
  bench_fwht.add(*bench);
  bench_train.add(*bench);
  bench_predict.add(*bench);
  auto* analysis = app.add_subcommand("analysis", "The paper's analyses");
  analysis->require_subcommand(1);
  approximation.add(*analysis);
  const std::vector<Command*> commands = {&train, &eval, &predict, &model_export, &data_export, &table, &select,
                                          &config, &bench_fwht, &bench_train, &bench_predict, &approximation};
  for (auto* group : {data, bench, analysis}) group->fallthrough();
  for (auto* c : commands) c->app->fallthrough();

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help
    return finish(app.exit(e));
  } catch (const CLI::ParseError& e) {
    std::cerr << "whvi: error: " << printable(parse_error_text(e, app), true)
              << "\nRun with --help for more information.\n";
    return 2;
  }
  if (app.get_subcommands().empty() && !global.version) {
    std::cerr << app.help() << "\nwhvi: error: no command given: use one of " << command_names(app)
              << " (e.g. whvi train --config configs/toy.yaml)\n";
    return 2;
  }

  spdlog::set_default_logger(std::make_shared<spdlog::logger>("whvi", std::make_shared<OneLineSink>()));
  spdlog::set_level(spdlog::level::from_str(global.log_level));

  return guarded([&] {
    if (!global.simd.empty()) whvi::kernels::set_simd_level(whvi::kernels::parse_simd_level(global.simd));
    whvi::set_threads(global.threads);
    if (global.version) {
      std::cout << whvi::version_string() << std::endl;
      return finish(0);
    }
    const std::string command_line = whvi::join_command_line(argc, argv);
    train.o.worker_globals = global.for_workers();
    for (auto* c : commands)
      if (c->app->parsed()) {
        before_run(*c, c == &table || c == &select || c == &config || c == &data_export);
        const whvi::heartbeat::Watch watch(kQuietSeconds);  // no run silent for longer
        c->run(command_line);
        break;
      }
    return finish(0);
  });
}
