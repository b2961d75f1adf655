// Shared by the tests of the methods fitted in closed form (blr, gp) and of those
// fitted after their steps (laplace, swag).
#pragma once

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "common/errors.h"
#include "common/rng.h"
#include "experiment/resolve.h"
#include "infer/inference.h"
#include "helpers.h"

namespace whvi::testing {

// The method's state tensor `key` (its checkpoint entry).
inline torch::Tensor state_of(infer::Inference& inf, const std::string& key) {
  for (const auto& [k, t] : inf.state())
    if (k == key) return t;
  throw Error("no state " + key);
}

// The method of `sets` (model.kind=..., in float64, model.depth 0) fitted on
// every row of (x, y), whose targets have the statistics (y_mean, y_std).
inline std::unique_ptr<infer::Inference> fitted_closed_form(const std::vector<std::string>& sets,
                                                            const torch::Tensor& x, const torch::Tensor& y,
                                                            double y_mean = 0, double y_std = 1) {
  std::vector<std::string> all = {"model.depth=0", "training.dtype=float64"};
  all.insert(all.end(), sets.begin(), sets.end());
  auto inf = experiment::make_inference(x.size(1), cfg_with(all), y_mean, y_std, make_generator(1, 0, Stream::kInit));
  inf->to(torch::kFloat64);
  inf->begin(x.size(0), 0, make_generator(1));
  EXPECT_NE(inf->closed_form(), nullptr);
  inf->closed_form()->fit(x, y);
  inf->end();
  return inf;
}

// The method of `sets` (model.kind=..., in float64) trained `steps` full-batch
// steps on (x, y), then fitted after them (ClosedForm from after_steps()).
inline std::unique_ptr<infer::Inference> fitted_after_steps(const std::vector<std::string>& sets,
                                                            const torch::Tensor& x, const torch::Tensor& y,
                                                            int64_t classes, int64_t steps) {
  std::vector<std::string> all = {"training.dtype=float64"};
  all.insert(all.end(), sets.begin(), sets.end());
  auto inf = experiment::make_inference(x.size(1), cfg_with(all), 0, 1, make_generator(1, 0, Stream::kInit), classes);
  inf->to(torch::kFloat64);
  inf->begin(x.size(0), steps, make_generator(1));
  for (int64_t t = 0; t < steps; ++t) inf->step(x, y, t, make_generator(2 + static_cast<uint64_t>(t)));
  inf->end();
  EXPECT_EQ(inf->closed_form(), nullptr);
  EXPECT_NE(inf->after_steps(), nullptr);
  inf->after_steps()->fit(x, y);
  return inf;
}

}  // namespace whvi::testing
