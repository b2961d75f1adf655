#include "common/heartbeat.h"

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>

#include <spdlog/spdlog.h>

namespace whvi::heartbeat {

namespace {

using Clock = std::chrono::steady_clock;

std::atomic<int64_t> last_line{Clock::now().time_since_epoch().count()};
std::mutex phase_mutex;
std::string phase;  // guarded by phase_mutex

struct Watcher {
  std::mutex m;
  std::condition_variable cv;
  bool stop = false;
  std::thread thread;
};
Watcher* watcher = nullptr;

void watch(Watcher* w, double quiet) {
  std::unique_lock<std::mutex> lock(w->m);
  const auto period = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(quiet / 4));
  while (!w->cv.wait_for(lock, period, [w] { return w->stop; })) {
    const auto since = Clock::now() - Clock::time_point(Clock::duration(last_line.load()));
    const double s = std::chrono::duration<double>(since).count();
    if (s < quiet) continue;
    std::string what;
    {
      const std::lock_guard<std::mutex> g(phase_mutex);
      what = phase;
    }
    spdlog::info("{}: still working ({:.0f} s since the last progress)", what.empty() ? "whvi" : what, s);
    touch();
  }
}

// At exit (std::exit from anywhere): the thread stops before the logger goes.
void stop_at_exit() {
  if (watcher == nullptr) return;
  {
    const std::lock_guard<std::mutex> g(watcher->m);
    watcher->stop = true;
  }
  watcher->cv.notify_all();
  if (watcher->thread.joinable()) watcher->thread.join();
}

}  // namespace

void touch() { last_line.store(Clock::now().time_since_epoch().count()); }

Phase::Phase(std::string what) {
  const std::lock_guard<std::mutex> g(phase_mutex);
  previous_ = std::move(phase);
  phase = std::move(what);
}

Phase::~Phase() {
  const std::lock_guard<std::mutex> g(phase_mutex);
  phase = std::move(previous_);
}

Watch::Watch(double quiet) {
  if (watcher != nullptr) return;
  owner_ = true;
  static const bool at_exit = std::atexit(stop_at_exit) == 0;
  (void)at_exit;
  touch();
  watcher = new Watcher;
  // the thread takes no signal: a stop signal must reach the thread that waits
  // for the split workers (experiment/workers.cpp) and interrupt its wait
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  watcher->thread = std::thread(watch, watcher, quiet);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

Watch::~Watch() {
  if (!owner_ || watcher == nullptr) return;
  {
    const std::lock_guard<std::mutex> g(watcher->m);
    watcher->stop = true;
  }
  watcher->cv.notify_all();
  if (watcher->thread.joinable()) watcher->thread.join();
  delete watcher;
  watcher = nullptr;
}

}  // namespace whvi::heartbeat
