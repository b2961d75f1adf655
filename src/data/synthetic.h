// Built-in regression problems with a known noise floor (`data.dataset:
// synthetic:<name>`), for checking that a model's predictive uncertainty is
// right, not only its error: on fresh test data no model can beat the floor,
// and a calibrated model gets close to it.
//
// Every problem is generated deterministically from data.split_seed (inputs
// and noise; the fixed coefficients of `highdim` come from a constant seed, so
// the function is the same for every seed). Random numbers come from
// std::mt19937_64 with uniforms from the top 53 bits and Box-Muller normals
// written here, as for the toy problem, so the data are the same on every
// platform (up to the last-ulp rounding of libm). Each problem also stores 10
// random 90/10 splits (protocol `standard`); protocol `paper` draws its own.
//
//   name      rows  inputs  f(x)                                              noise
//   friedman  1000  10      10 sin(pi x1 x2) + 20 (x3 - 1/2)^2 + 10 x4 + 5 x5   N(0, 1); x ~ U[0,1]^10, x6..x10 irrelevant
//   hetero    1000  1       x sin(x)                                          N(0, s(x)^2), s(x) = 0.1 + 0.4 |x| / 4; x ~ U[-4, 4]
//   gap        500  1       sin(2x) + x / 2                                   N(0, 0.01); x ~ U[-3, 3] without (-0.5, 1)
//   highdim   2000  32      sum_j a_j tanh(w_j . x / sqrt(32)), 8 units        N(0, 0.1); x ~ N(0, I)
//   linear     500  8       w . x + 1                                         N(0, 0.25); x ~ N(0, I)
//   borehole, hartmann6, rastrigin5, robot, otlcircuit: the WHVI paper's GP
//   benchmarks (Fig. 13), 2000 rows each, inputs uniform on the Virtual
//   Library of Simulation Experiments' ranges, noise sd 1, 0.01, 0.5, 0.01,
//   0.01 (synthetic.cpp gives each formula).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/dataset.h"

namespace whvi::data {

inline constexpr const char* kSyntheticPrefix = "synthetic:";

std::vector<std::string> synthetic_names();
bool is_synthetic(const std::string& dataset);  // starts with "synthetic:"

// The best any model can do on fresh data from the problem, in original units:
// RMSE = sqrt(E[noise variance]); MNLL = E[-log N(y | f(x), s(x)^2)] =
// E[0.5 log(2 pi e s(x)^2)]. For input-dependent noise (hetero) a model with
// one noise variance can at best reach mnll_homoscedastic =
// 0.5 log(2 pi e E[s(x)^2]); elsewhere the two are equal.
using NoiseFloor = RegressionData::NoiseFloor;
NoiseFloor synthetic_floor(const std::string& name);
std::string synthetic_description(const std::string& name);

// f of a GP benchmark (borehole, hartmann6, rastrigin5, robot, otlcircuit) at
// x in the function's own units (VLSE conventions; robot: 4 angles then 4
// lengths).
double gp_benchmark(const std::string& name, const double* x);

// `dataset` is "synthetic:<name>"; rows <= 0 takes the problem's default.
// An unknown name is an error listing the known ones.
RegressionData make_synthetic(const std::string& dataset, uint64_t seed, int64_t rows = 0);

}  // namespace whvi::data
