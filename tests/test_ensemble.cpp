// Deep ensembles (infer/ensemble.cpp) against independent references: each
// member trained alone by LibTorch's own Adam, the shared noise variance's
// gradient summed by hand over the members, the predictive mixture read off
// the members one by one.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "common/errors.h"
#include "common/rng.h"
#include "common/runtime.h"
#include "config/config.h"
#include "experiment/resolve.h"
#include "infer/inference.h"
#include "models/regression_model.h"
#include "helpers.h"

using whvi::testing::cfg_with;
using whvi::testing::error_of;

using namespace whvi;

namespace {



struct Data {
  torch::Tensor x, y;
};
Data toy_rows(int64_t n, int64_t d) {
  torch::manual_seed(3);
  auto x = torch::randn({n, d}, torch::kFloat64);
  auto y = x.sum(1).sin() + 0.1 * torch::randn({n}, torch::kFloat64);
  return {x, y};
}

}  // namespace

TEST(Ensemble, MethodAndLabelFollowInferenceKind) {
  EXPECT_EQ(experiment::method_of(cfg_with({"model.kind=ensemble"})), "ensemble");
  EXPECT_EQ(experiment::model_label(cfg_with({"model.kind=ensemble"})), "ensemble");
  EXPECT_EQ(experiment::method_of(cfg_with({"model.kind=whvi", "inference.kind=ensemble"})), "ensemble");
  EXPECT_EQ(experiment::model_label(cfg_with({"model.kind=mfg", "inference.kind=ensemble"})), "ensemble-mfg");
  EXPECT_EQ(experiment::model_label(cfg_with({"model.kind=mfg", "inference.kind=variational"})), "mfg");
  EXPECT_EQ(experiment::model_label(cfg_with({"model.kind=sghmc"})), "sghmc");
  for (const auto& sets : std::vector<std::vector<std::string>>{{"model.kind=sghmc", "inference.kind=ensemble"},
                                                                {"model.kind=ensemble", "inference.kind=variational"},
                                                                {"model.kind=whvi", "inference.kind=nng"}}) {
    const auto msg = error_of([&] { experiment::method_of(cfg_with(sets)); });
    EXPECT_NE(msg.find("inference.kind"), std::string::npos) << msg;
    EXPECT_NE(msg.find("set inference.kind: auto"), std::string::npos) << msg;
  }
}

// With the noise variance frozen the members are independent: after 30 steps
// each member's weights equal those of the same network (same initial draws)
// trained alone on its NLL by torch::optim::Adam, in float64.
TEST(Ensemble, MembersTrainAsIfAlone) {
  set_threads(1);
  const int64_t M = 3, N = 40, D = 3, B = 8, T = 30;
  const double lr = 0.01;
  const auto cfg = cfg_with({"model.kind=ensemble", "ensemble.members=" + std::to_string(M), "model.depth=2",
                             "model.width=16", "training.lr=0.01", "training.lr_gamma=0",
                             "training.steps_fixed_noise=1000", "training.dtype=float64"});
  const auto [x, y] = toy_rows(N, D);
  auto inf = experiment::make_inference(D, cfg, 0.0, 1.0, make_generator(5, 0, Stream::kInit));
  inf->to(torch::kFloat64);
  // the reference networks: the same draws, in the same order
  std::vector<std::shared_ptr<models::RegressionModel>> refs;
  {
    const auto init = make_generator(5, 0, Stream::kInit);
    for (int64_t m = 0; m < M; ++m) refs.push_back(experiment::make_network(D, cfg, 0.0, 1.0, init));
  }
  std::vector<std::unique_ptr<torch::optim::Adam>> adams;
  for (auto& r : refs) {
    r->to(torch::kFloat64);
    std::vector<torch::Tensor> ps;
    for (const auto& p : r->named_parameters())
      if (p.key().rfind("likelihood", 0) != 0) ps.push_back(p.value());
    adams.push_back(std::make_unique<torch::optim::Adam>(ps, torch::optim::AdamOptions(lr)));
  }
  const auto gen = make_generator(5, 0, Stream::kTrain);
  inf->begin(N, T, gen);
  for (int64_t t = 0; t < T; ++t) {
    const auto xb = x.narrow(0, (t * B) % N, B), yb = y.narrow(0, (t * B) % N, B);
    const auto loss = inf->step(xb, yb, t, gen);
    double mean_ref = 0;
    for (int64_t m = 0; m < M; ++m) {
      adams[m]->zero_grad();
      const auto f = refs[m]->forward_standardized(xb, models::Mode::kMean);
      const auto lm = static_cast<double>(N) / B * refs[m]->likelihood().nll_sum(f, yb);
      lm.backward();
      adams[m]->step();
      mean_ref += lm.item<double>() / M;
    }
    EXPECT_NEAR(loss.item<double>(), mean_ref, 1e-9 * std::fabs(mean_ref)) << "step " << t;
  }
  inf->end();
  const auto state = inf->state();
  for (int64_t m = 0; m < M; ++m)
    for (const auto& p : refs[m]->named_parameters()) {
      const std::string key = "member" + std::to_string(m) + "." + p.key();
      const auto it = std::find_if(state.begin(), state.end(), [&](const auto& kv) { return kv.first == key; });
      ASSERT_NE(it, state.end()) << key;
      EXPECT_TRUE(torch::allclose(it->second, p.value(), 1e-9, 1e-12)) << key;
    }
  // every member moved away from the others' values (independent draws)
  const auto w0 = inf->state()[0].second, w1 = std::find_if(state.begin(), state.end(), [](const auto& kv) {
                                              return kv.first == "member1.layer0.w";
                                            })->second;
  EXPECT_GT((w0 - w1).abs().max().item<double>(), 1e-3);
}

// The members share one noise variance: its gradient is the sum of the
// members' NLL gradients (one SGD step without momentum reads it off).
TEST(Ensemble, SharedNoiseVarianceMovesByTheSumOfTheMembersGradients) {
  set_threads(1);
  const int64_t M = 2, N = 20, D = 2;
  const double lr = 0.05;
  const auto cfg = cfg_with({"model.kind=ensemble", "ensemble.members=2", "model.width=8", "training.lr=0.05",
                             "training.lr_gamma=0", "training.steps_fixed_noise=0", "training.optimizer=sgd",
                             "training.momentum=0", "training.dtype=float64"});
  const auto [x, y] = toy_rows(N, D);
  auto inf = experiment::make_inference(D, cfg, 0.0, 1.0, make_generator(9, 0, Stream::kInit));
  inf->to(torch::kFloat64);
  std::vector<std::shared_ptr<models::RegressionModel>> refs;
  const auto init = make_generator(9, 0, Stream::kInit);
  for (int64_t m = 0; m < M; ++m) refs.push_back(experiment::make_network(D, cfg, 0.0, 1.0, init));
  for (auto& r : refs) r->to(torch::kFloat64);
  // the shared parameter: the first member's log noise variance
  auto lnv = refs[0]->likelihood().parameters().front().detach().clone().requires_grad_(true);
  double g = 0;
  for (int64_t m = 0; m < M; ++m) {
    const auto f = refs[m]->forward_standardized(x, models::Mode::kMean).detach();
    const auto nll = 0.5 * ((2 * M_PI * lnv.exp()).log() + (y - f).square() / lnv.exp()).sum();
    g += torch::autograd::grad({nll}, {lnv})[0].item<double>();
  }
  const double before = lnv.item<double>();
  const auto gen = make_generator(9, 0, Stream::kTrain);
  inf->begin(N, 1, gen);
  inf->step(x, y, 0, gen);
  inf->end();
  const double after = inf->likelihood().parameters().front().item<double>();
  EXPECT_NEAR(after, before - lr * g, 1e-10 * std::max(1.0, std::fabs(before)));
  EXPECT_NE(after, before);
}

// Deterministic members: one sample each, their mean networks in original
// units; variational members: ceil(S / M) samples each.
TEST(Ensemble, PredictiveIsTheUniformMixtureOfTheMembers) {
  set_threads(1);
  const int64_t D = 3, N = 7;
  const double y_mean = 2.0, y_std = 3.0;
  const auto x = torch::randn({N, D});
  {
    const auto cfg = cfg_with({"model.kind=ensemble", "ensemble.members=4", "model.width=8"});
    auto inf = experiment::make_inference(D, cfg, y_mean, y_std, make_generator(1, 0, Stream::kInit));
    const auto f = inf->predict(x, 100, make_generator(1, 0, Stream::kEval));
    ASSERT_EQ(f.sizes(), (std::vector<int64_t>{4, N}));
    const auto init = make_generator(1, 0, Stream::kInit);
    torch::Tensor mean;
    for (int64_t m = 0; m < 4; ++m) {
      auto ref_ptr = experiment::make_network(D, cfg, y_mean, y_std, init);
      auto& ref = *ref_ptr;
      torch::NoGradGuard ng;
      const auto fm = ref.forward_standardized(x, models::Mode::kMean).to(torch::kFloat64) * y_std + y_mean;
      EXPECT_TRUE(torch::allclose(f[m], fm, 1e-6, 1e-6)) << m;
      mean = mean.defined() ? mean + fm : fm;
    }
    EXPECT_TRUE(torch::allclose(inf->mean_standardized(x).to(torch::kFloat64) * y_std + y_mean, mean / 4, 1e-6, 1e-6));
    // parameters: four networks and one shared noise variance
    auto one_ptr = experiment::make_network(D, cfg, y_mean, y_std, make_generator(2));
    auto& one = *one_ptr;
    EXPECT_EQ(inf->num_params(), 4 * (one.num_params() - 1) + 1);
  }
  {
    const auto cfg = cfg_with({"model.kind=mfg", "inference.kind=ensemble", "ensemble.members=3", "model.width=8"});
    auto inf = experiment::make_inference(D, cfg, y_mean, y_std, make_generator(1, 0, Stream::kInit));
    const auto f = inf->predict(x, 10, make_generator(1, 0, Stream::kEval));
    EXPECT_EQ(f.size(0), 12);  // 3 members x ceil(10 / 3)
    // draws differ within a member (variational) and the members differ
    EXPECT_GT((f[0] - f[1]).abs().max().item<double>(), 0.0);
    EXPECT_EQ(std::string(inf->method()), "ensemble");
  }
}

TEST(Ensemble, RefusesTheFusedEngine) {
  const auto msg = error_of([] {
    experiment::make_inference(2, cfg_with({"model.kind=ensemble", "training.engine=fused"}), 0, 1, make_generator(1));
  });
  EXPECT_NE(msg.find("training.engine: autograd"), std::string::npos) << msg;
}
