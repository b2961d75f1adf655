// The run's plan read from the config: see resolve.h.
#include "experiment/resolve.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <sstream>

#include "common/errors.h"
#include "infer/inference.h"
#include "train/stopping.h"

namespace whvi::experiment {

infer::MethodPlan method_plan(const options::Source& cfg) { return options::read<infer::MethodPlan>(cfg); }

train::LoopPlan loop_plan(const options::Source& cfg) {
  return {options::read<train::LoopOptions>(cfg), divergence_suspects(cfg)};
}

train::GroupPlan group_plan(const options::Source& cfg) {
  return {loop_plan(cfg), options::read<train::BatchedOptions>(cfg),
          options::read<infer::VariationalOptions>(cfg).plain_elbo()};
}

namespace {

// Every key some data source declares (its declaration), and which sources read it.
struct KeyUse {
  options::Spec spec;
  std::vector<std::string> readers;
};

std::map<std::string, KeyUse> key_uses() {
  std::map<std::string, KeyUse> out;
  for (const auto& s : data::data_sources())
    for (const auto& spec : s.declare()) out[spec.key].spec = spec;
  for (const auto& s : data::data_sources())
    for (const auto& k : s.keys())
      if (out.count(k)) out[k].readers.push_back(s.name);
  return out;
}

}  // namespace

data::DataPlan data_plan(const options::Source& cfg, const std::string& dataset, const std::string& data_dir) {
  WHVI_CHECK(!dataset.empty(), cfg.source(), ": data.dataset is not set; set it to ", data::dataset_help());
  const auto& s = data::data_source_for(dataset);
  if (s.not_this)  // what is wrong with the name itself comes before the keys it would read
    if (const auto why = s.not_this(dataset, data_dir); !why.empty()) throw Error(why);
  const auto reads = s.keys();
  for (const auto& [key, use] : key_uses()) {
    if (std::find(reads.begin(), reads.end(), key) != reads.end() || options::at_default(cfg, use.spec)) continue;
    std::string who;
    for (const auto& w : use.readers) who += (who.empty() ? "" : ", ") + w;
    throw Error(cfg.source() + ": " + key + " is read by " + who + " data, but data.dataset '" + dataset +
                "' is read as " + s.name + " data, which does not use it; remove " + key);
  }
  return {&s, s.resolve(cfg)};
}

std::string divergence_suspects(const options::Source& cfg) {
  const auto& schema = cfg.declared();
  const auto def_of = [&](const std::string& key) -> const std::string& {
    for (const auto& p : schema)
      if (p.key == key) return p.def;
    throw Error("divergence_suspects: '" + key + "' is not declared");
  };
  std::ostringstream os;
  // The step size that moves the weights comes first: the method's own where
  // it has one (training.lr only drives the noise variance's Adam there).
  const auto& can = infer::capabilities_of(infer::method_of(cfg.get_string("model.kind")));
  const std::string& step_key = can.step_key;
  os << step_key << " = " << cfg.get_float(step_key) << " (default " << def_of(step_key) << ")";
  // the rule that takes that step (SGD at Adam's rate is a classic)
  if (step_key == "training.lr" && cfg.get_string("training.optimizer") != def_of("training.optimizer"))
    os << ", training.optimizer = " << cfg.get_string("training.optimizer") << " (default "
       << def_of("training.optimizer") << ")";
  const std::string& steady_key = can.steady_key;  // a setting that steadies the method's step
  if (!steady_key.empty())
    os << ", " << steady_key << " = " << cfg.get_float(steady_key) << " (default " << def_of(steady_key) << "; "
       << can.steady_why << ")";
  for (const auto& p : schema) {
    if (p.type != options::Type::kFloat || p.key == step_key || p.key == steady_key) continue;
    if (p.key.rfind("model.", 0) != 0 && p.key.rfind("likelihood.", 0) != 0 &&
        p.key.rfind("training.", 0) != 0)
      continue;
    const double d = std::strtod(p.def.c_str(), nullptr), v = cfg.get_float(p.key);
    if (v == d) continue;
    // a logarithm (model.mfg.init_logvar, ...) is a factor of 10 away at a difference of ln 10
    const bool log_scale = p.key.find("log") != std::string::npos;
    if (log_scale ? std::fabs(v - d) > 2.302585 : d != 0 && (std::fabs(v / d) > 10 || std::fabs(v / d) < 0.1))
      os << ", " << p.key << " = " << v << " (default " << p.def << ")";
  }
  return os.str();
}

bool stopping_on(const options::Source& cfg, std::string* why_off) {
  try {
    auto o = options::read<train::StoppingOptions>(cfg);
    return o.resolve(why_off);
  } catch (const Error& e) {
    throw Error(cfg.source() + ": " + e.what());
  }
}

std::unique_ptr<infer::Inference> make_inference(int64_t d_in, const options::Source& cfg, double y_mean,
                                                 double y_std, const at::Generator& init, int64_t num_classes) {
  return infer::make_inference(d_in, method_plan(cfg), y_mean, y_std, init, num_classes);
}

std::shared_ptr<models::RegressionModel> make_network(int64_t d_in, const options::Source& cfg, double y_mean,
                                                      double y_std, const at::Generator& init, int64_t num_classes) {
  return infer::make_network(d_in, method_plan(cfg), y_mean, y_std, init, num_classes);
}

models::LayerPtr make_layer(const std::string& kind, int64_t in, int64_t out, const options::Source& cfg,
                            const models::LayerContext& ctx) {
  return models::make_layer(kind, in, out, models::find_layer_kind(kind).resolve(cfg), ctx);
}

std::shared_ptr<likelihoods::Likelihood> make_likelihood(const options::Source& cfg, double y_mean, double y_std,
                                                         int64_t num_classes) {
  return likelihoods::make_likelihood(options::read<likelihoods::LikelihoodPlan>(cfg), y_mean, y_std, num_classes);
}

models::FilterMaker make_filter_maker(const std::string& kind, const options::Source& cfg) {
  const auto& k = models::find_filter(kind);
  return k.make(k.resolve(cfg));
}

std::shared_ptr<models::Trunk> make_trunk(const std::string& arch, int64_t d_in, const options::Source& cfg,
                                          const at::Generator& gen) {
  const auto& k = models::find_trunk(arch);
  return k.make(d_in, k.resolve(cfg), gen);
}

std::shared_ptr<const optim::UpdateRule> make_rule(const std::string& name, const options::Source& cfg) {
  const auto& k = optim::find_rule(name);
  return k.make(k.resolve(cfg));
}

std::string engine_for(const options::Source& cfg) { return infer::engine_for(method_plan(cfg)); }
std::string method_of(const options::Source& cfg) { return method_plan(cfg).method; }
std::string model_label(const options::Source& cfg) { return method_plan(cfg).label; }
bool fits_in_closed_form(const options::Source& cfg) { return infer::fits_in_closed_form(method_of(cfg)); }

train::TrainStats train(infer::Inference& inference, const torch::Tensor& x, const torch::Tensor& y,
                        const options::Source& cfg, const at::Generator& gen, const std::string& label, int64_t every,
                        const std::function<bool(int64_t)>& on_every, const std::function<void()>& on_end) {
  return train::train(inference, x, y, loop_plan(cfg), gen, label, every, on_every, on_end);
}

void train_group(std::vector<train::SplitTask>& tasks, const options::Source& cfg) {
  train::train_group(tasks, group_plan(cfg));
}

std::string batched_unsupported(const options::Source& cfg, infer::Inference& example) {
  return train::batched_unsupported(group_plan(cfg), example);
}

data::RegressionData load_data(const options::Source& cfg, const data::DataRequest& r) {
  return data::load_data(data_plan(cfg, r.dataset, r.data_dir), r);
}

}  // namespace whvi::experiment
