#include "experiment/workers.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <map>
#include <thread>

#include <spdlog/spdlog.h>

#include "common/errors.h"
#include "common/io.h"
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

// The fd a worker finds its end of the parent's pipe on.
constexpr int kWorkerPipeFd = 3;

pid_t spawn(const std::string& exe, const std::vector<std::string>& args, int pipe_read) {
  std::vector<std::string> a = args;
  std::vector<char*> argv;
  std::string name = exe;
  argv.push_back(name.data());
  for (auto& s : a) argv.push_back(s.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, pipe_read, kWorkerPipeFd);  // dup2 clears close-on-exec
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, exe.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  WHVI_CHECK(rc == 0, "cannot start a worker (", exe, "): ", std::strerror(rc), "; use --parallel 1");
  return pid;
}

// SIGINT, SIGTERM and SIGHUP caught (not restarting system calls) while the
// workers run; the previous handlers put back after.
volatile sig_atomic_t g_stop_signal = 0;
void note_stop_signal(int sig) { g_stop_signal = sig; }

class StopSignals {
 public:
  StopSignals() {
    g_stop_signal = 0;
    struct sigaction sa {};
    sa.sa_handler = note_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;
    // a signal ignored on entry (nohup's SIGHUP, a background job's SIGINT)
    // stays ignored, here and in the workers, which inherit it
    for (size_t i = 0; i < 3; ++i) {
      ::sigaction(kSignals[i], nullptr, &old_[i]);
      caught_[i] = old_[i].sa_handler != SIG_IGN;
      if (caught_[i]) ::sigaction(kSignals[i], &sa, nullptr);
    }
  }
  ~StopSignals() {
    for (size_t i = 0; i < 3; ++i)
      if (caught_[i]) ::sigaction(kSignals[i], &old_[i], nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  static int caught() { return g_stop_signal; }

 private:
  static constexpr int kSignals[3] = {SIGINT, SIGTERM, SIGHUP};
  struct sigaction old_[3];
  bool caught_[3] = {false, false, false};
};

const char* signal_name(int sig) {
  switch (sig) {
    case SIGINT: return "SIGINT (Ctrl-C)";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    default: return "a signal";
  }
}

// The read and write ends of a pipe, both close-on-exec; closed when destroyed.
struct Pipe {
  int fd[2] = {-1, -1};
  Pipe() {
    WHVI_CHECK(::pipe2(fd, O_CLOEXEC) == 0, "cannot create a pipe for the split workers: ", std::strerror(errno),
               "; use --parallel 1");
    for (int& f : fd)  // kept off the worker's fd: dup2 onto itself would keep close-on-exec
      if (f <= kWorkerPipeFd) {
        const int g = ::fcntl(f, F_DUPFD_CLOEXEC, 10);
        ::close(f);
        f = g;
        WHVI_CHECK(f >= 0, "cannot create a pipe for the split workers: ", std::strerror(errno), "; use --parallel 1");
      }
  }
  ~Pipe() {
    for (int f : fd)
      if (f >= 0) ::close(f);
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
};

// Sends `sig` to every running worker, waits for them (SIGKILL to those still
// there after `grace`), and forgets them.
void stop_workers(std::map<pid_t, size_t>& running, int sig, std::chrono::milliseconds grace) {
  for (const auto& [pid, k] : running) ::kill(pid, sig);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  bool killed = false;
  while (!running.empty()) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      running.erase(pid);
      continue;
    }
    if (pid < 0 && errno != EINTR) break;
    if (!killed && std::chrono::steady_clock::now() >= deadline) {
      for (const auto& [p, k] : running) ::kill(p, SIGKILL);
      killed = true;
    }
    ::poll(nullptr, 0, 10);
  }
  running.clear();
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
                                      const std::string& lock_token,
                                      const std::function<std::string(size_t)>& label) {
  const std::string exe = own_executable();
  // Its write end stays here only (close-on-exec); a worker holds the read
  // end as fd kWorkerPipeFd and sees its end when this process is gone.
  const Pipe link;
  std::vector<std::string> base = o.worker_globals;
  base.insert(base.end(), {"--threads", std::to_string(plan.threads_each), "train", "--config", o.config_path});
  for (const auto& s : o.overrides) base.insert(base.end(), {"--set", s});
  base.insert(base.end(), {"--worker-link", std::to_string(::getpid()) + ":" + std::to_string(kWorkerPipeFd) + ":" +
                                                lock_token});
  std::map<pid_t, size_t> running;
  std::vector<size_t> failed;
  size_t next = 0, finished = 0;
  const auto t0 = std::chrono::steady_clock::now();
  spdlog::info("training {} split(s), {} at a time, each in its own process with {} thread(s)", splits.size(),
               plan.workers, plan.threads_each);
  const StopSignals signals;
  try {
    while ((next < splits.size() && failed.empty()) || !running.empty()) {
      // after a failure no further split starts (the run fails either way; those running finish)
      while (next < splits.size() && running.size() < static_cast<size_t>(plan.workers) && failed.empty() &&
             !StopSignals::caught()) {
        auto args = base;
        args.insert(args.end(), {"--worker-split", std::to_string(splits[next])});
        running[spawn(exe, args, link.fd[0])] = splits[next];
        ++next;
      }
      if (const int sig = StopSignals::caught()) {
        stop_workers(running, sig, std::chrono::milliseconds(2000));
        throw Stopped(sig, std::string("stopped by ") + signal_name(sig) + ": the split workers were stopped with it; "
                      "the splits that had finished are kept: run again with --resume to train the rest");
      }
      int status = 0;
      const pid_t pid = ::waitpid(-1, &status, WNOHANG);
      if (pid == 0 || (pid < 0 && errno == EINTR)) {
        ::poll(nullptr, 0, 50);  // a caught signal ends the wait early
        continue;
      }
      if (pid < 0) throw Error(std::string("waiting for the split workers failed: ") + std::strerror(errno));
      const auto it = running.find(pid);
      if (it == running.end()) continue;
      const size_t k = it->second;
      running.erase(it);
      if (StopSignals::caught() && WIFSIGNALED(status)) continue;  // stopped with us (Ctrl-C reaches the group)
      ++finished;
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        const double eta = s / static_cast<double>(finished) * static_cast<double>(splits.size() - finished);
        spdlog::info("{}: done ({} of {} splits, {:.1f} s so far, about {:.0f} s left)", label(k), finished,
                     splits.size(), s, eta);
      } else if (WIFEXITED(status)) {  // it said its error itself; the run's last line names the split
        failed.push_back(k);
        if (failed.size() == 1 && next < splits.size())
          spdlog::info("{}: its worker failed; no further split is started", label(k));
      } else {
        failed.push_back(k);
        // a worker killed by a signal printed no error of its own: SIGKILL from outside is most often
        // the kernel's out-of-memory killer
        spdlog::error("{}: its worker failed ({}){}", label(k),
                      WTERMSIG(status) == SIGKILL
                          ? std::string("killed by SIGKILL, with no error of its own: most often the kernel's "
                                        "out-of-memory killer (dmesg says); lower --parallel, model.width or "
                                        "training.batch_size")
                          : "killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
                                printable(strsignal(WTERMSIG(status)), 40) + "), with no error of its own",
                      failed.size() == 1 && next < splits.size() ? "; no further split is started" : "");
      }
    }
  } catch (...) {
    stop_workers(running, SIGTERM, std::chrono::milliseconds(2000));  // never leave one behind
    throw;
  }
  std::sort(failed.begin(), failed.end());
  return failed;
}

namespace {

struct Link {
  pid_t parent = -1;
  int fd = -1;
  std::string token;
};

Link parse_link(const std::string& text) {
  Link l;
  const auto a = text.find(':'), b = text.find(':', a == std::string::npos ? a : a + 1);
  bool ok = a != std::string::npos && b != std::string::npos;
  if (ok) {
    try {
      l.parent = static_cast<pid_t>(std::stol(text.substr(0, a)));
      l.fd = std::stoi(text.substr(a + 1, b - a - 1));
    } catch (const std::exception&) {
      ok = false;
    }
    l.token = text.substr(b + 1);
  }
  ok = ok && l.parent > 1 && l.fd >= 0 && l.token.size() == 32 &&
       l.token.find_first_not_of("0123456789abcdef") == std::string::npos;
  WHVI_CHECK(ok, "--worker-split and --worker-link are whvi's own, for the workers of a parallel run; to train "
             "one split alone, select it in the config and use --parallel 1");
  return l;
}

[[noreturn]] void leave(const char* why) {
  const std::string line = std::string("whvi: error: a split worker stopped: ") + why + "\n";
  [[maybe_unused]] const auto n = ::write(2, line.data(), line.size());
  ::_exit(1);
}

}  // namespace

void attach_worker(const TrainOptions& o) {
  const Link l = parse_link(o.worker_link);
  // killed by the kernel when the parent dies; a parent already gone (before
  // this call) shows as another parent pid
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != l.parent) leave("the run that started it had already ended");
  const int fd = l.fd;
  ::fcntl(fd, F_SETFD, FD_CLOEXEC);  // not passed on to what this worker starts (gnuplot)
  std::thread([fd] {
    char c = 0;
    for (;;) {
      const ssize_t n = ::read(fd, &c, 1);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) leave("the run that started it has ended");
    }
  }).detach();
}

void guard_worker_writes(const TrainOptions& o, const std::string& lock_path) {
  const Link l = parse_link(o.worker_link);
  set_commit_guard([l, lock_path](const std::string& path) {
    if (::getppid() != l.parent || !lock_held_by(lock_path, l.token))
      throw Error("a split worker did not write " + path + ": the run that started it no longer holds " + lock_path +
                  " (it was stopped, or a newer run took the experiment)");
  });
}

}  // namespace whvi::experiment
