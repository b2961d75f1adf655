// Shared by the tests of the methods fitted in closed form (blr, gp).
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

}  // namespace whvi::testing
