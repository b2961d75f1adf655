#include "data/synthetic.h"

#include <cmath>
#include <random>

#include "data/csv.h"
#include "data/source.h"
#include "common/errors.h"
#include "common/memory.h"
#include "common/rng.h"

namespace whvi::data {
namespace {

struct Rng {
  explicit Rng(uint64_t seed) : g(seed) {}
  double uniform() { return uniform01(g); }  // [0, 1)
  double normal() {
    const double u1 = uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(1.0 - u1)) * std::cos(6.283185307179586476925286766559 * u2);
  }
  std::mt19937_64 g;
};

constexpr double kPi = 3.14159265358979323846;
constexpr int kStoredSplits = 10;

struct Problem {
  const char* name;
  int64_t rows;
  int64_t dims;
  const char* description;
};
constexpr Problem kProblems[] = {
    {"friedman", 1000, 10, "Friedman #1: 10 inputs U[0,1], 5 irrelevant, noise variance 1"},
    {"hetero", 1000, 1, "1-D x sin(x) with input-dependent noise sd 0.1 + 0.1|x| on U[-4, 4]"},
    {"gap", 500, 1, "1-D sin(2x) + x/2 on U[-3, 3] with no inputs in (-0.5, 1), noise variance 0.01"},
    {"highdim", 2000, 32, "32 Gaussian inputs, a fixed random 8-unit tanh network, noise variance 0.1"},
    {"linear", 500, 8, "linear in 8 Gaussian inputs, noise variance 0.25"},
    {"bimodal", 1000, 1,
     "1-D two equally likely branches sin(x) +- (1 + |x|)/2 on U[-3, 3], noise sd 0.2: bimodal given x, so one "
     "Gaussian per input cannot reach the floor a mixture can"},
    // The WHVI paper's GP benchmarks (Fig. 13), from the Virtual Library of
    // Simulation Experiments (Surjanovic & Bingham), inputs uniform on the
    // library's ranges, with small Gaussian noise of a fixed sd (kGpNoiseSd).
    {"borehole", 2000, 8, "borehole water flow (8 inputs on the VLSE ranges), noise sd 1 (f spans about 10-300)"},
    {"hartmann6", 2000, 6, "Hartmann 6-D on [0,1]^6, noise sd 0.01 (f spans about -3.3-0)"},
    {"rastrigin5", 2000, 5, "Rastrigin 5-D on [-5.12, 5.12]^5, noise sd 0.5 (f spans about 0-200)"},
    {"robot", 2000, 8, "robot arm end distance (4 angles on [0, 2 pi], 4 lengths on [0, 1]), noise sd 0.01"},
    {"otlcircuit", 2000, 6, "OTL circuit midpoint voltage (6 inputs on the VLSE ranges), noise sd 0.01"},
};

// Noise sd of the GP benchmarks (0: not one of them).
double gp_noise_sd(const std::string& name) {
  if (name == "borehole") return 1.0;
  if (name == "rastrigin5") return 0.5;
  if (name == "hartmann6" || name == "robot" || name == "otlcircuit") return 0.01;
  return 0;
}

double lerp(double lo, double hi, double u) { return lo + (hi - lo) * u; }

const Problem& find_problem(const std::string& name) {
  for (const auto& p : kProblems)
    if (name == p.name) return p;
  std::string known;
  for (const auto& p : kProblems) known += (known.empty() ? "" : ", ") + std::string(kSyntheticPrefix) + p.name;
  throw Error("unknown synthetic problem '" + name + "'; known: " + known);
}

double hetero_sd(double x) { return 0.1 + 0.1 * std::fabs(x); }

// The fixed network of `highdim`: a_j, w_j from a constant seed.
struct HighDim {
  std::vector<double> a, w;  // w: 8 x 32
  HighDim() {
    Rng r(0x5eed0f42ULL);
    for (int j = 0; j < 8; ++j) a.push_back(1.5 * r.normal());
    for (int j = 0; j < 8 * 32; ++j) w.push_back(r.normal());
  }
  double f(const double* x) const {
    double s = 0;
    for (int j = 0; j < 8; ++j) {
      double d = 0;
      for (int i = 0; i < 32; ++i) d += w[j * 32 + i] * x[i];
      s += a[j] * std::tanh(d / std::sqrt(32.0));
    }
    return s;
  }
};

const double kLinearW[8] = {1.0, -2.0, 0.5, 0.0, 3.0, -1.0, 0.25, 2.0};

double half_log_2pi_e(double var) { return 0.5 * std::log(2.0 * kPi * std::exp(1.0) * var); }

// The GP benchmarks' inputs from uniform draws u [dims] in [0, 1).
void gp_inputs(const std::string& name, const double* u, double* x) {
  constexpr double k2Pi = 6.283185307179586476925286766559;
  if (name == "borehole") {
    const double lo[8] = {0.05, 100, 63070, 990, 63.1, 700, 1120, 9855};
    const double hi[8] = {0.15, 50000, 115600, 1110, 116, 820, 1680, 12045};
    for (int j = 0; j < 8; ++j) x[j] = lerp(lo[j], hi[j], u[j]);
  } else if (name == "hartmann6") {
    for (int j = 0; j < 6; ++j) x[j] = u[j];
  } else if (name == "rastrigin5") {
    for (int j = 0; j < 5; ++j) x[j] = lerp(-5.12, 5.12, u[j]);
  } else if (name == "robot") {
    for (int j = 0; j < 4; ++j) x[j] = k2Pi * u[j], x[4 + j] = u[4 + j];
  } else {  // otlcircuit
    const double lo[6] = {50, 25, 0.5, 1.2, 0.25, 50}, hi[6] = {150, 70, 3, 2.5, 1.2, 300};
    for (int j = 0; j < 6; ++j) x[j] = lerp(lo[j], hi[j], u[j]);
  }
}

}  // namespace

std::vector<std::string> synthetic_names() {
  std::vector<std::string> v;
  for (const auto& p : kProblems) v.emplace_back(p.name);
  return v;
}

double gp_benchmark(const std::string& name, const double* x) {
  constexpr double k2Pi = 6.283185307179586476925286766559;
  if (name == "borehole") {
    const double rw = x[0], r = x[1], tu = x[2], hu = x[3], tl = x[4], hl = x[5], l = x[6], kw = x[7];
    const double lr = std::log(r / rw);
    return k2Pi * tu * (hu - hl) / (lr * (1.0 + 2.0 * l * tu / (lr * rw * rw * kw) + tu / tl));
  }
  if (name == "hartmann6") {
    static const double alpha[4] = {1.0, 1.2, 3.0, 3.2};
    static const double A[4][6] = {{10, 3, 17, 3.5, 1.7, 8}, {0.05, 10, 17, 0.1, 8, 14},
                                   {3, 3.5, 1.7, 10, 17, 8}, {17, 8, 0.05, 10, 0.1, 14}};
    static const double P[4][6] = {{1312, 1696, 5569, 124, 8283, 5886}, {2329, 4135, 8307, 3736, 1004, 9991},
                                   {2348, 1451, 3522, 2883, 3047, 6650}, {4047, 8828, 8732, 5743, 1091, 381}};
    double f = 0;
    for (int i = 0; i < 4; ++i) {
      double s = 0;
      for (int j = 0; j < 6; ++j) s += A[i][j] * (x[j] - 1e-4 * P[i][j]) * (x[j] - 1e-4 * P[i][j]);
      f -= alpha[i] * std::exp(-s);
    }
    return f;
  }
  if (name == "rastrigin5") {
    double f = 50.0;
    for (int j = 0; j < 5; ++j) f += x[j] * x[j] - 10.0 * std::cos(k2Pi * x[j]);
    return f;
  }
  if (name == "robot") {
    double a = 0, px = 0, py = 0;
    for (int j = 0; j < 4; ++j) {
      a += x[j];
      px += x[4 + j] * std::cos(a);
      py += x[4 + j] * std::sin(a);
    }
    return std::sqrt(px * px + py * py);
  }
  WHVI_CHECK(name == "otlcircuit", "'", name, "' is not one of the GP benchmarks (borehole, hartmann6, rastrigin5, robot, otlcircuit)");
  const double rb1 = x[0], rb2 = x[1], rf = x[2], rc1 = x[3], rc2 = x[4], beta = x[5];
  const double vb1 = 12.0 * rb2 / (rb1 + rb2), bc = beta * (rc2 + 9.0), den = bc + rf;
  return (vb1 + 0.74) * bc / den + 11.35 * rf / den + 0.74 * rf * bc / (den * rc1);
}

bool is_synthetic(const std::string& dataset) { return dataset.rfind(kSyntheticPrefix, 0) == 0; }

std::string synthetic_description(const std::string& name) { return find_problem(name).description; }

namespace {

// synthetic:bimodal: y = sin(x) + b h(x) + 0.2 e, b = +-1 equally likely,
// h(x) = (1 + |x|) / 2, x ~ U[-3, 3].
constexpr double kBimodalSd = 0.2;
double bimodal_half_gap(double x) { return 0.5 * (1.0 + std::fabs(x)); }

// Its floor by quadrature: p(y | x) is 1/2 N(h, s^2) + 1/2 N(-h, s^2) about
// sin(x), whose entropy depends on h alone (trapezoid rule in y over +-(h + 12 s)
// on 8,000 cells, midpoint rule in x on 2,000); the best mean is sin(x), with
// E[(y - sin x)^2] = E[h^2] + s^2 (rmse), which one Gaussian variance can at
// best turn into 0.5 log(2 pi e (E[h^2] + s^2)) (mnll_homoscedastic).
NoiseFloor bimodal_floor() {
  const int nx = 2000, ny = 8000;
  const double s = kBimodalSd;
  double eh2 = 0, eh = 0;
  for (int i = 0; i < nx; ++i) {
    const double h = bimodal_half_gap(-3.0 + 6.0 * (i + 0.5) / nx);
    eh2 += h * h / nx;
    const double lo = -h - 12 * s, dy = 2 * (h + 12 * s) / ny;
    double ent = 0;
    for (int j = 0; j <= ny; ++j) {
      const double y = lo + j * dy;
      const double p = 0.5 * (std::exp(-0.5 * std::pow((y - h) / s, 2)) + std::exp(-0.5 * std::pow((y + h) / s, 2))) /
                       (s * std::sqrt(2 * kPi));
      if (p > 0) ent -= (j == 0 || j == ny ? 0.5 : 1.0) * p * std::log(p) * dy;
    }
    eh += ent / nx;
  }
  NoiseFloor fl;
  fl.rmse = std::sqrt(eh2 + s * s);
  fl.mnll = eh;
  fl.mnll_homoscedastic = half_log_2pi_e(eh2 + s * s);
  return fl;
}

}  // namespace

NoiseFloor synthetic_floor(const std::string& name) {
  find_problem(name);
  NoiseFloor fl;
  if (name == "hetero") {
    // x ~ U[-4, 4]: E[s^2] and E[log s^2] by the midpoint rule on 10^6 cells
    const int n = 1000000;
    double es2 = 0, elog = 0;
    for (int i = 0; i < n; ++i) {
      const double x = -4.0 + 8.0 * (i + 0.5) / n;
      const double s2 = hetero_sd(x) * hetero_sd(x);
      es2 += s2 / n;
      elog += std::log(s2) / n;
    }
    fl.rmse = std::sqrt(es2);
    fl.mnll = 0.5 * (std::log(2.0 * kPi) + 1.0 + elog);
    fl.mnll_homoscedastic = half_log_2pi_e(es2);
    return fl;
  }
  if (name == "bimodal") return bimodal_floor();
  const double gp = gp_noise_sd(name);
  const double var = gp > 0 ? gp * gp : name == "friedman" ? 1.0 : name == "gap" ? 0.01 : name == "highdim" ? 0.1 : 0.25;
  fl.rmse = std::sqrt(var);
  fl.mnll = fl.mnll_homoscedastic = half_log_2pi_e(var);
  return fl;
}

RegressionData make_synthetic(const std::string& dataset, uint64_t seed, int64_t rows) {
  WHVI_CHECK(is_synthetic(dataset), "'", dataset, "' is not a synthetic problem (synthetic:<name>)");
  const std::string name = dataset.substr(std::string(kSyntheticPrefix).size());
  const Problem& p = find_problem(name);
  const int64_t n = rows > 0 ? rows : p.rows;
  WHVI_CHECK(n >= 10, "data.synthetic_rows = ", n, " is too small: a synthetic problem needs at least 10 rows");
  RegressionData d;
  d.name = dataset;
  d.source = "generated";
  d.x = torch::empty({n, p.dims}, torch::kFloat64);
  d.y = torch::empty({n, 1}, torch::kFloat64);
  double* px = d.x.data_ptr<double>();
  double* py = d.y.data_ptr<double>();
  Rng r(seed);
  static const HighDim highdim;
  for (int64_t i = 0; i < n; ++i) {
    double* x = px + i * p.dims;
    double f = 0, sd = 0;
    if (gp_noise_sd(name) > 0) {
      double u[8];
      for (int64_t j = 0; j < p.dims; ++j) u[j] = r.uniform();
      gp_inputs(name, u, x);
      f = gp_benchmark(name, x);
      sd = gp_noise_sd(name);
    } else if (name == "friedman") {
      for (int j = 0; j < 10; ++j) x[j] = r.uniform();
      f = 10.0 * std::sin(kPi * x[0] * x[1]) + 20.0 * (x[2] - 0.5) * (x[2] - 0.5) + 10.0 * x[3] + 5.0 * x[4];
      sd = 1.0;
    } else if (name == "hetero") {
      x[0] = -4.0 + 8.0 * r.uniform();
      f = x[0] * std::sin(x[0]);
      sd = hetero_sd(x[0]);
    } else if (name == "gap") {
      do x[0] = -3.0 + 6.0 * r.uniform();
      while (x[0] > -0.5 && x[0] < 1.0);
      f = std::sin(2.0 * x[0]) + 0.5 * x[0];
      sd = 0.1;
    } else if (name == "highdim") {
      for (int j = 0; j < 32; ++j) x[j] = r.normal();
      f = highdim.f(x);
      sd = std::sqrt(0.1);
    } else if (name == "bimodal") {
      x[0] = -3.0 + 6.0 * r.uniform();
      f = std::sin(x[0]) + (r.uniform() < 0.5 ? -1.0 : 1.0) * bimodal_half_gap(x[0]);
      sd = kBimodalSd;
    } else {  // linear
      f = 1.0;
      for (int j = 0; j < 8; ++j) x[j] = r.normal(), f += kLinearW[j] * x[j];
      sd = 0.5;
    }
    py[i] = f + sd * r.normal();
  }
  // Stored splits: random 90/10 permutations from the next draws of the same stream.
  const int64_t n_train = std::llround(0.9 * static_cast<double>(n));
  for (int k = 0; k < kStoredSplits; ++k) {
    std::vector<int64_t> perm(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) perm[i] = i;
    shuffle(perm, r.g);
    d.std_train.emplace_back(perm.begin(), perm.begin() + n_train);
    d.std_test.emplace_back(perm.begin() + n_train, perm.end());
  }
  d.noise_floor = synthetic_floor(name);
  return d;
}

namespace {
struct SyntheticOptions {
  int64_t rows = 0, classes = 0;
  template <class V>
  void visit(V& v) {
    v.num("data.synthetic_rows", rows, 0, 10000000, "rows of a synthetic:<name> problem (0: the problem's default)");
    v.num("data.synthetic_classes", classes, 0, 100,
          "K >= 2: a synthetic:<name> problem becomes classification, its target replaced by its quantile bin "
          "(classes q1..qK of nearly equal size over all the problem's rows, as `whvi data export --classes K` "
          "writes them; needs likelihood.kind softmax); 0: regression");
    v.late();
  }
};

RegressionData load_synthetic(const SyntheticOptions& o, const DataRequest& r) {
  WHVI_CHECK(o.classes != 1, "data.synthetic_classes: 1 class cannot be classified; give 0 (regression) or 2 or more");
  WHVI_CHECK(!r.classification || o.classes >= 2, "data.dataset ", r.dataset.substr(0, 60), " is a regression "
             "problem but the likelihood classifies: set data.synthetic_classes (e.g. 3) to classify its target's "
             "quantile bins, or choose a regression likelihood");
  WHVI_CHECK(r.classification || o.classes == 0, "data.synthetic_classes ", o.classes, " makes class labels but the "
             "likelihood is for regression: set likelihood.kind softmax, or data.synthetic_classes 0");
  // the rows in doubles and the copies a run makes of them (standardised,
  // float32, a split's rows, the generator's draws): about six
  const auto& problem = find_problem(r.dataset.substr(std::string(kSyntheticPrefix).size()));
  const double rows = static_cast<double>(o.rows > 0 ? o.rows : problem.rows);
  refuse_unless_room(6.0 * 8.0 * rows * static_cast<double>(problem.dims + 1),
                     detail::concat(r.dataset.substr(0, 60), " with ", static_cast<int64_t>(rows), " rows of ",
                                    problem.dims, " inputs"),
                     "lower data.synthetic_rows");
  auto d = make_synthetic(r.dataset, r.seed, o.rows);
  if (o.classes >= 2) targets_to_quantile_classes(d, static_cast<int>(o.classes));
  return d;
}
}  // namespace

DataSourceKind synthetic_data_source() {
  static const std::string help = [] {
    std::string names;
    for (const auto& p : kProblems) names += (names.empty() ? "" : ", ") + std::string(p.name);
    return "synthetic:<name> (" + names + "), drawn from data.split_seed";
  }();
  auto k = data_source<SyntheticOptions>(
      "synthetic", help.c_str(),
      [](const std::string& ds) { return is_synthetic(ds); }, [](const std::string&) { return false; },
      load_synthetic);
  k.not_this = [](const std::string& ds, const std::string&) -> std::string {
    try {
      find_problem(ds.substr(std::string(kSyntheticPrefix).size()));
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  return k;
}

}  // namespace whvi::data
