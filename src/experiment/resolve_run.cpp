// The run's plan read from the config once: see run_plan.h.
#include "experiment/run_plan.h"

#include "common/errors.h"
#include "data/dataset.h"
#include "experiment/resolve.h"
#include "infer/inference.h"
#include "likelihoods/likelihood.h"

namespace whvi::experiment {

namespace {
struct Kinds {
  std::string model, likelihood;
  template <class V>
  void visit(V& v) {
    v.use("model.kind", model);
    v.use("likelihood.kind", likelihood);
  }
};
}  // namespace

const infer::Capabilities& RunPlan::can() const {
  static const infer::Capabilities none;
  return method.method.empty() ? none : infer::capabilities_of(method.method);
}

bool RunPlan::keeps_samples() const { return can().keeps_samples; }

RunPlan resolve_run(const config::Config& cfg) {
  RunPlan p;
  p.config = &cfg;
  p.origin = cfg.source();
  p.data = options::read<DataOptions>(cfg);
  p.data_plan = data_plan(cfg, p.data.dataset, data::resolve_data_dir(p.data.dir));  // refuses a data.* key this source does not read
  p.source = p.data_plan.source;
  p.run = options::read<RunOptions>(cfg);
  p.uses = options::read<Uses>(cfg);
  p.calibration = options::read<calibration::CalibrationOptions>(cfg);
  const auto kinds = options::read<Kinds>(cfg);
  if (kinds.model == "auto") {  // the race (auto_kind.cpp) chooses the method; each candidate has a plan of its own
    p.method.kind = kinds.model;
    p.method.likelihood_kind = kinds.likelihood;
  } else {
    p.method = method_plan(cfg);
    p.fingerprint = fingerprint_of(cfg);
    p.group = group_plan(cfg);
    p.loop = p.group.loop;
    try {  // refuses training.stopping: validation where it cannot act
      p.stopping = options::read<train::StoppingOptions>(cfg);
    } catch (const Error& e) {
      throw Error(cfg.source() + ": " + e.what());
    }
  }
  p.classification =
      likelihoods::likelihood_can(p.method.likelihood_kind, likelihoods::Capability::kClassification);
  p.toy = p.source->all_rows_train;
  p.no_test_rows = p.toy || p.data.protocol == "all";
  return p;
}

CheckpointPlan resolve_checkpoint(const config::Config& cfg) {
  CheckpointPlan p;
  p.method = method_plan(cfg);
  p.dtype = options::read<train::LoopOptions>(cfg).dtype;
  const auto run = options::read<RunOptions>(cfg);
  p.seed = run.seed;
  p.mc_samples = run.mc_samples;
  p.log_target = options::read<DataOptions>(cfg).target_transform == "log";
  return p;
}

}  // namespace whvi::experiment
