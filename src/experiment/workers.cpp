#include "experiment/workers.h"

#include <sched.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <map>

#include <spdlog/spdlog.h>

#include "common/errors.h"
#include "common/runtime.h"

extern char** environ;

namespace whvi::experiment {
namespace {

// The cores this process may run on (its affinity mask), at least 1.
int usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return hardware_threads();
}

// This binary's absolute path (never looked up through PATH or the working directory).
std::string own_executable() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  WHVI_CHECK(n > 0 && buf[0] == '/', "cannot find whvi's own executable (/proc/self/exe) to train splits in "
             "parallel; use --parallel 1");
  return std::string(buf, static_cast<size_t>(n));
}

pid_t spawn(const std::string& exe, const std::vector<std::string>& args) {
  std::vector<std::string> a = args;
  std::vector<char*> argv;
  std::string name = exe;
  argv.push_back(name.data());
  for (auto& s : a) argv.push_back(s.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, exe.c_str(), nullptr, nullptr, argv.data(), environ);
  WHVI_CHECK(rc == 0, "cannot start a worker (", exe, "): ", std::strerror(rc), "; use --parallel 1");
  return pid;
}

}  // namespace

WorkerPlan plan_workers(int asked, size_t pending) {
  WorkerPlan p;
  const int cores = usable_cores();
  int w = asked > 0 ? asked : std::min(cores, threads());
  w = static_cast<int>(std::min<size_t>(static_cast<size_t>(std::max(w, 1)), pending));
  p.workers = std::max(w, 1);
  p.threads_each = std::max(1, threads() / p.workers);
  return p;
}

std::vector<size_t> run_split_workers(const TrainOptions& o, const std::vector<size_t>& splits, const WorkerPlan& plan,
                                      const std::function<std::string(size_t)>& label) {
  const std::string exe = own_executable();
  std::vector<std::string> base = o.worker_globals;
  base.insert(base.end(), {"--threads", std::to_string(plan.threads_each), "train", "--config", o.config_path});
  for (const auto& s : o.overrides) base.insert(base.end(), {"--set", s});
  std::map<pid_t, size_t> running;
  std::vector<size_t> failed;
  size_t next = 0, finished = 0;
  const auto t0 = std::chrono::steady_clock::now();
  spdlog::info("training {} split(s), {} at a time, each in its own process with {} thread(s)", splits.size(),
               plan.workers, plan.threads_each);
  while (next < splits.size() || !running.empty()) {
    while (next < splits.size() && running.size() < static_cast<size_t>(plan.workers)) {
      auto args = base;
      args.insert(args.end(), {"--worker-split", std::to_string(splits[next])});
      running[spawn(exe, args)] = splits[next];
      ++next;
    }
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      throw Error(std::string("waiting for the split workers failed: ") + std::strerror(errno));
    }
    const auto it = running.find(pid);
    if (it == running.end()) continue;
    const size_t k = it->second;
    running.erase(it);
    ++finished;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
      const double eta = s / static_cast<double>(finished) * static_cast<double>(splits.size() - finished);
      spdlog::info("{}: done ({} of {} splits, {:.1f} s so far, about {:.0f} s left)", label(k), finished,
                   splits.size(), s, eta);
    } else {
      failed.push_back(k);
      spdlog::error("{}: its worker failed ({}; its error is above)", label(k),
                    WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                                        : "exit status " + std::to_string(WEXITSTATUS(status)));
    }
  }
  std::sort(failed.begin(), failed.end());
  return failed;
}

}  // namespace whvi::experiment
