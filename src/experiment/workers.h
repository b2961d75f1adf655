// Splits trained at once, each in a process of its own (`whvi train
// --worker-split K`, the same binary run by its absolute path with an
// argument vector: no shell). A split's numbers depend only on the config,
// the seed, the split and its thread count, so a worker's record is the one
// the split would get run alone with that thread count; the parent adopts
// the records the workers wrote (as --resume does, checksums included).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "experiment/experiment.h"

namespace whvi::experiment {

// How many workers to run and with how many threads each: `asked` workers
// (0: as many as the cores this process may use allow), at most one per
// pending split; the threads (threads(), the --threads setting) shared among
// them, at least 1 each. workers <= 1: train in this process.
struct WorkerPlan {
  int workers = 1;
  int threads_each = 1;
};
WorkerPlan plan_workers(int asked, size_t pending);

// Trains each split of `splits` in a worker, at most plan.workers at once;
// `label(k)` names split k in the log; `lock_token` is the token of the
// experiment's lock, held by the caller (FileLock::token). Returns the splits
// whose worker failed (its error is on the console, written by the worker).
//
// A worker cannot outlive the run. It is given `--worker-link PID:FD:TOKEN`
// (attach_worker): it asks the kernel to kill it when its parent dies
// (PR_SET_PDEATHSIG), exits when the pipe whose read end is FD reaches its
// end (the parent holds the only write end, so it closes when the parent
// dies, however), and puts no file in place unless the experiment's lock is
// held under TOKEN (set_commit_guard). While workers run, SIGINT, SIGTERM and
// SIGHUP to the parent are sent on to every worker; the parent waits for them
// (SIGKILL after 2 s) and throws Stopped: finished splits stay on disk for
// --resume.
std::vector<size_t> run_split_workers(const TrainOptions& o, const std::vector<size_t>& splits, const WorkerPlan& plan,
                                      const std::string& lock_token,
                                      const std::function<std::string(size_t)>& label);

// In a worker (o.worker_split >= 0), first thing: ties the process to the run
// that started it (o.worker_link, see run_split_workers), or throws when there
// is none (--worker-split is not for people). Exits at once when that run
// has already ended.
void attach_worker(const TrainOptions& o);

// In a worker, once the experiment's lock path is known: every file the
// worker puts in place first proves the lock is held under the run's token.
void guard_worker_writes(const TrainOptions& o, const std::string& lock_path);

}  // namespace whvi::experiment
