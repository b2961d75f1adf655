#include "analysis/approximation.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <spdlog/spdlog.h>

#include "common/errors.h"
#include "common/rng.h"
#include "ops/fwht_op.h"

namespace whvi::analysis {

torch::Tensor structured_matrix(const torch::Tensor& s1, const torch::Tensor& g, const torch::Tensor& s2) {
  const int64_t d = g.size(0);
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  const auto h = ops::fwht(torch::eye(d, g.options()), scale);      // H (symmetric)
  const auto m = ops::fwht((g.unsqueeze(1) * h).t(), scale).t();   // H diag(g) H
  return s1.unsqueeze(1) * m * s2.unsqueeze(0);
}

double fit_structure(const torch::Tensor& target, int64_t steps, double lr, const at::Generator& gen) {
  const int64_t d = target.size(0);
  WHVI_CHECK(target.dim() == 2 && target.size(1) == d && d >= 2 && (d & (d - 1)) == 0,
             "the approximation study needs square power-of-two matrices, got ", target.sizes());
  auto opts = torch::TensorOptions().dtype(torch::kFloat64);
  // g = sqrt(D/3) g~: with s1 = s2 = 1 the entries of W then have the target's variance 1/3
  const double g_scale = std::sqrt(static_cast<double>(d) / 3.0);
  auto s1 = (1.0 + 0.1 * torch::randn({d}, gen, opts)).requires_grad_();
  auto s2 = (1.0 + 0.1 * torch::randn({d}, gen, opts)).requires_grad_();
  auto gt = torch::randn({d}, gen, opts).requires_grad_();
  torch::optim::Adam adam({s1, s2, gt}, torch::optim::AdamOptions(lr));
  double best = INFINITY;
  for (int64_t t = 0; t <= steps; ++t) {
    adam.zero_grad();
    const auto loss = (structured_matrix(s1, gt * g_scale, s2) - target).square().mean();
    best = std::min(best, std::sqrt(loss.item<double>()));
    if (t == steps) break;
    loss.backward();
    adam.step();
  }
  return best;
}

namespace {

// One step's seconds at D, timed on three steps of a throwaway fit (its own
// generator, so the study's numbers do not depend on it).
double step_seconds(int64_t d, uint64_t seed) {
  const auto gen = make_generator(seed, 0xE571ULL, Stream::kData);
  const auto target = torch::rand({d, d}, gen, torch::kFloat64) * 2.0 - 1.0;
  const auto t0 = std::chrono::steady_clock::now();
  fit_structure(target, 2, 1e-3, gen);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / 3.0;
}

// Before any work: the study's time, from a step timed at the smallest D and
// at the largest, neither above 512 (a step at D = 8192 alone takes many
// seconds), and a line through them in D^2 log D (each step applies H to D x D
// matrices). Said when it is more than a few seconds.
void say_estimate(const ApproximationOptions& o) {
  constexpr int64_t kLargestTimed = 512;
  const auto [lo, hi] = std::minmax_element(o.dims.begin(), o.dims.end());
  const int64_t a = std::min(*lo, kLargestTimed), b = std::min(*hi, kLargestTimed);
  auto work = [](int64_t d) { return static_cast<double>(d) * d * std::log2(static_cast<double>(d)); };
  const double t_a = step_seconds(a, o.seed), t_b = b == a ? t_a : step_seconds(b, o.seed);
  // one size timed: time proportional to the work above it
  const double slope = b > a ? std::max(0.0, (t_b - t_a) / (work(b) - work(a))) : (*hi > a ? t_a / work(a) : 0.0);
  const auto per_step = [&](int64_t d) { return t_a + slope * (work(d) - work(a)); };
  double total = 0;
  for (int64_t d : o.dims) total += static_cast<double>(o.repeats) * (o.steps + 1) * per_step(d);
  if (total > 5)
    spdlog::info("approximation: about {:.0f} s for the study ({} D, {} repetitions of {} steps each; fewer with --dims, "
                 "--repeats or --steps)",
                 total, o.dims.size(), o.repeats, o.steps);
}

}  // namespace

nlohmann::json run_approximation(const ApproximationOptions& o) {
  WHVI_CHECK(o.repeats >= 1 && o.steps >= 0 && o.lr > 0, "approximation: repeats >= 1, steps >= 0 and lr > 0 needed");
  nlohmann::json dims = nlohmann::json::array();
  for (int64_t d : o.dims)
    WHVI_CHECK(d >= 2 && (d & (d - 1)) == 0 && d <= 8192, "approximation: D = ", d,
               " is not a power of two from 2 to 8192 (--dims 4,8,...,1024)");
  if (!o.dims.empty()) say_estimate(o);
  for (int64_t d : o.dims) {
    std::vector<double> rmse;
    for (int64_t r = 0; r < o.repeats; ++r) {
      const auto gen = make_generator(o.seed, static_cast<uint64_t>(d) * 100003ULL + static_cast<uint64_t>(r), Stream::kData);
      const auto target = torch::rand({d, d}, gen, torch::kFloat64) * 2.0 - 1.0;
      rmse.push_back(fit_structure(target, o.steps, o.lr, gen));
    }
    auto sorted = rmse;
    std::sort(sorted.begin(), sorted.end());
    const size_t n = sorted.size();
    const double median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
    spdlog::info("approximation: D = {}: median RMSE {:.4f} over {} repetitions (min {:.4f}, max {:.4f})", d, median, n,
                 sorted.front(), sorted.back());
    dims.push_back({{"d", d}, {"rmse", rmse}, {"median", median}});
  }
  return {{"analysis", "approximation"},
          {"what", "minimum RMSE of S1 H diag(g) H S2 fitted to a D x D matrix with i.i.d. U(-1, 1) entries (the WHVI paper's Fig. 11)"},
          {"rmse_of_zero", std::sqrt(1.0 / 3.0)},
          {"settings", {{"repeats", o.repeats}, {"steps", o.steps}, {"lr", o.lr}, {"optimizer", "adam"}, {"seed", o.seed}}},
          {"dims", dims}};
}

}  // namespace whvi::analysis
