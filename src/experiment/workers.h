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
// `label(k)` names split k in the log. Returns the splits whose worker failed
// (its error is on the console, written by the worker).
std::vector<size_t> run_split_workers(const TrainOptions& o, const std::vector<size_t>& splits, const WorkerPlan& plan,
                                      const std::function<std::string(size_t)>& label);

}  // namespace whvi::experiment
