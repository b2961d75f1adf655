// The run's plan: the config read once, here, into each component's typed
// options (infer::MethodPlan with its network and likelihood, train::LoopPlan,
// train::GroupPlan, data::DataPlan). Below the experiment nothing reads the
// config; the components' factories take these structs.
//
// The second half builds components straight from a config (a plan read and
// used at once), for `whvi bench` and the tests.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/options.h"
#include "data/source.h"
#include "infer/plan.h"
#include "likelihoods/likelihood.h"
#include "models/trunk.h"
#include "nn/conv_filter.h"
#include "nn/layer.h"
#include "optim/rule.h"
#include "train/batched.h"
#include "train/loop.h"

namespace whvi::experiment {

infer::MethodPlan method_plan(const options::Source& cfg);
train::LoopPlan loop_plan(const options::Source& cfg);
train::GroupPlan group_plan(const options::Source& cfg);
// The source of `dataset` with its options; refuses a data.* option that this
// source does not read but another does, set away from its default (naming
// the sources that read it), so a key never silently does nothing.
data::DataPlan data_plan(const options::Source& cfg, const std::string& dataset, const std::string& data_dir);

// The settings that most plausibly make training diverge, for error messages:
// "training.lr = 10 (default 0.001)" and every numeric model/likelihood/training
// key that differs from its default by more than 10x.
std::string divergence_suspects(const options::Source& cfg);
// training.stopping resolved (train::StoppingOptions::resolve), errors prefixed
// with the config's name.
bool stopping_on(const options::Source& cfg, std::string* why_off = nullptr);

// Built straight from a config.
std::unique_ptr<infer::Inference> make_inference(int64_t d_in, const options::Source& cfg, double y_mean,
                                                 double y_std, const at::Generator& init, int64_t num_classes = 0);
std::shared_ptr<models::RegressionModel> make_network(int64_t d_in, const options::Source& cfg, double y_mean,
                                                      double y_std, const at::Generator& init,
                                                      int64_t num_classes = 0);
models::LayerPtr make_layer(const std::string& kind, int64_t in, int64_t out, const options::Source& cfg,
                            const models::LayerContext& ctx);
std::shared_ptr<likelihoods::Likelihood> make_likelihood(const options::Source& cfg, double y_mean, double y_std,
                                                         int64_t num_classes = 0);
models::FilterMaker make_filter_maker(const std::string& kind, const options::Source& cfg);
std::shared_ptr<models::Trunk> make_trunk(const std::string& arch, int64_t d_in, const options::Source& cfg,
                                          const at::Generator& gen);
std::shared_ptr<const optim::UpdateRule> make_rule(const std::string& name, const options::Source& cfg);
std::string engine_for(const options::Source& cfg);
std::string method_of(const options::Source& cfg);
std::string model_label(const options::Source& cfg);
bool fits_in_closed_form(const options::Source& cfg);
train::TrainStats train(infer::Inference& inference, const torch::Tensor& x, const torch::Tensor& y,
                        const options::Source& cfg, const at::Generator& gen, const std::string& label,
                        int64_t every = 0, const std::function<bool(int64_t)>& on_every = {},
                        const std::function<void()>& on_end = {});
void train_group(std::vector<train::SplitTask>& tasks, const options::Source& cfg);
std::string batched_unsupported(const options::Source& cfg, infer::Inference& example);
data::RegressionData load_data(const options::Source& cfg, const data::DataRequest& r);

}  // namespace whvi::experiment
