#include "models/regression_model.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>

#include "common/runtime.h"

namespace whvi::models {

double estimated_param_count(int64_t d_in, const NetworkOptions& o) {
  const double depth = static_cast<double>(o.depth);
  const double w = static_cast<double>(o.width);
  const double in = static_cast<double>(d_in);
  if (depth == 0) return 2.0 * (in + 1.0);
  // mean-field layers hold two numbers per weight; WHVI far fewer
  return 2.0 * ((in + 1.0) * w + (depth - 1.0) * (w + 1.0) * w + (w + 1.0));
}

std::vector<std::string> architectures() {
  std::vector<std::string> out = {"mlp"};
  for (const auto& k : trunk_kinds()) out.push_back(k.name);
  return out;
}

void NetworkPlan::finish(const options::Nested& read) {
  hidden = hidden_layer_kind(net.kind);
  output = output_layer_kind(net.kind, net.output_layer);
  if (net.architecture != "mlp") trunk = read(find_trunk(net.architecture).resolve);
  hidden_options = read(find_layer_kind(hidden).resolve);
  output_options = output == hidden ? hidden_options : read(find_layer_kind(output).resolve);
}

RegressionModel::RegressionModel(int64_t d_in, const NetworkPlan& plan, std::shared_ptr<likelihoods::Likelihood> lik,
                                 const at::Generator& init) {
  const auto& o = plan.net;
  {
    // parameters, gradients and Adam's two moments, in float64 at most; a layer kind
    // that counts its own (TT: its cores, from the rank) is asked
    double count = estimated_param_count(d_in, o);
    if (o.depth > 0 && o.architecture == "mlp") {
      const auto& hidden = find_layer_kind(plan.hidden);
      count = find_layer_kind(plan.output).param_count(o.width, lik->out_dim(), plan.output_options);
      for (int64_t l = 0; l < o.depth; ++l)
        count += hidden.param_count(l == 0 ? d_in : o.width, o.width, plan.hidden_options);
    }
    const double bytes = count * 4.0 * 8.0;
    const double mem = static_cast<double>(usable_memory_bytes());
    WHVI_CHECK(!(mem > 0) || bytes < 0.5 * mem, "model.depth = ", o.depth, " and model.width = ", o.width,
               " make a network that needs about ", bytes / 1e9, " GB for its parameters and optimiser state, "
               "more than half of the ", mem / 1e9, " GB this process can use: lower model.width (or model.depth",
               plan.hidden == "tt" ? ", or model.tt.rank" : "", ")");
  }
  activation_ = o.activation;
  int64_t in = d_in;
  if (o.architecture != "mlp") {
    trunk_ = register_module("trunk", find_trunk(o.architecture).make(d_in, plan.trunk, init));
    in = trunk_->features();
  }
  for (int64_t l = 0; l < o.depth; ++l) {
    layers_.push_back(make_layer(plan.hidden, in, o.width, plan.hidden_options, {false, init}));
    register_module("layer" + std::to_string(l), layers_.back());
    in = o.width;
  }
  layers_.push_back(make_layer(plan.output, in, lik->out_dim(), plan.output_options, {true, init}));
  register_module("layer" + std::to_string(o.depth), layers_.back());
  likelihood_ = register_module("likelihood", lik);
}

std::string architecture_help() {
  return "mlp, or a trunk before the fully connected layers (model.depth and model.width then set the head): " +
         options::kinds_help(trunk_kinds());
}

std::string output_layer_help() {
  std::string auto_text;
  std::vector<std::string> outputs;
  for (const auto& r : recipes())
    if (std::find(outputs.begin(), outputs.end(), r.output) == outputs.end()) outputs.push_back(r.output);
  for (const auto& out : outputs) {
    std::string kinds;
    for (const auto& r : recipes())
      if (r.output == out) kinds += (kinds.empty() ? "" : ", ") + r.kind;
    auto_text += (auto_text.empty() ? "" : "; ") + out + " for " + kinds;
  }
  return "output layer kind: auto = the model kind's own (" + auto_text +
         "; an mcd output layer applies no dropout); same = the hidden layers' kind; whvi-reshape = the whole "
         "weight matrix read from one WHVI matrix (the paper's GP reshape trick, src/nn/whvi_reshape.cpp)";
}

std::string model_kinds_with(const char* LayerKind::*capability, const std::string& method) {
  std::string out;
  for (const auto& r : recipes())
    if (r.method == method && find_layer_kind(r.hidden).*capability && find_layer_kind(r.output).*capability)
      out += (out.empty() ? "" : ", ") + r.kind;
  return out;
}

std::string hidden_layer_kind(const std::string& model_kind) { return recipe(model_kind).hidden; }

std::string output_layer_kind(const std::string& model_kind, const std::string& output_layer) {
  if (output_layer == "same") return hidden_layer_kind(model_kind);
  if (output_layer != "auto") return output_layer;
  return recipe(model_kind).output;
}

torch::Tensor RegressionModel::forward_standardized(const torch::Tensor& x, Mode mode,
                                                   const at::Generator& gen) {
  ForwardCtx ctx;
  ctx.mode = mode;
  ctx.gen = gen;
  return forward_standardized(x, ctx);
}

torch::Tensor RegressionModel::features_standardized(const torch::Tensor& x, ForwardCtx& ctx) {
  torch::Tensor h = trunk_ ? trunk_->forward(x, ctx) : x;
  for (size_t l = 0; l + 1 < layers_.size(); ++l) {
    h = layers_[l]->forward(h, ctx);
    if (activation_ == "relu") h = torch::relu(h);
    else if (activation_ == "cos") h = torch::cos(h);
    else h = torch::tanh(h);
  }
  return h;
}

torch::Tensor RegressionModel::forward_standardized(const torch::Tensor& x, ForwardCtx& ctx) {
  return layers_.back()->forward(features_standardized(x, ctx), ctx).squeeze(1);
}

std::string group_unsupported(const RegressionModel& model) {
  if (model.has_trunk())
    return "training.batched_splits: model.architecture must be mlp (a convolutional or RFF trunk cannot be "
           "batched over splits); set training.batched_splits: 1";
  for (const auto& l : model.layers())
    if (!l->group())
      return "training.batched_splits: layer kind '" + l->kind() + "' cannot train splits as one batched model "
             "(supported: " + layer_kinds_with(&LayerKind::batched_when) + "); set "
             "training.batched_splits: 1";
  return "";
}

torch::Tensor forward_group(const std::vector<RegressionModel*>& models, const torch::Tensor& x, Mode mode,
                            const std::vector<at::Generator>& gens, torch::Tensor* kl) {
  WHVI_ASSERT(!models.empty() && x.dim() == 3 && x.size(0) == static_cast<int64_t>(models.size()));
  WHVI_ASSERT(mode == Mode::kMean || gens.size() == models.size());
  const auto& first = *models.front();
  const size_t L = first.layers().size();
  torch::Tensor h = x;
  for (size_t l = 0; l < L; ++l) {
    std::vector<BayesianLayer*> group;
    for (auto* m : models) {
      WHVI_ASSERT(m->layers().size() == L && m->layers()[l]->kind() == first.layers()[l]->kind());
      group.push_back(m->layers()[l].get());
    }
    torch::Tensor kl_l;
    h = group.front()->group()->forward_group(group, h, mode, gens, kl ? &kl_l : nullptr);
    if (kl) *kl = kl->defined() ? *kl + kl_l : kl_l;
    if (l + 1 == L) break;
    const auto& a = first.activation();
    if (a == "relu") h = torch::relu(h);
    else if (a == "cos") h = torch::cos(h);
    else h = torch::tanh(h);
  }
  return h.squeeze(2);
}

torch::Tensor RegressionModel::kl() {
  torch::Tensor total = layers_[0]->kl();
  for (size_t l = 1; l < layers_.size(); ++l) total = total + layers_[l]->kl();
  if (trunk_) total = total + trunk_->kl();
  return total;
}

int64_t RegressionModel::num_params() const { return count_trainable(*this); }

}  // namespace whvi::models
