// whvi export: a trained split's model as a self-contained ONNX graph
// (experiment.h, docs/export.md). The graph does what `whvi predict` does
// after it has encoded a row: fills missing cells, zeroes one-hot inputs that
// training never set, standardises, draws S predictive samples (the
// posterior's sampling in the graph: RandomNormalLike and RandomUniformLike,
// afresh at every call) and reduces them to predict's columns, in float32.
// The interval is the central interval of the samples' Gaussian mixture, by
// bisection on its CDF unrolled in the graph (kBisections halvings of a
// bracket 24 noise sds wider than the samples' range).
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "calibration/calibration.h"
#include "common/errors.h"
#include "common/io.h"
#include "common/runtime.h"
#include "experiment/checkpoint.h"
#include "experiment/encoding.h"
#include "experiment/experiment.h"
#include "onnx/graph.h"

namespace whvi::experiment {
namespace {
using nlohmann::json;
using onnx::Attr;
using onnx::Dim;
using onnx::Elem;
using onnx::Graph;
using onnx::reduce;

constexpr int kBisections = 48;

std::string mean0(Graph& g, const std::string& x) { return reduce(g, "ReduceMean", x, 0); }

// The p-quantile of the mixture (1/S) Σ_s N(mu_s, sd_s²) per row, mu [S, N],
// inv = 1 / (sd √2) [S, N] (or broadcast), within [lo, hi] [N].
std::string mixture_quantile(Graph& g, const std::string& mu, const std::string& inv, std::string lo, std::string hi,
                             double p) {
  // Φ(z) < p  ⟺  mean_s erf((q − mu_s) inv_s) < 2p − 1
  const auto target = g.scalar(2 * p - 1), half = g.scalar(0.5);
  for (int it = 0; it < kBisections; ++it) {
    const auto mid = g.op("Mul", {g.op("Add", {lo, hi}), half});
    const auto e = mean0(g, g.op("Erf", {g.op("Mul", {g.op("Sub", {mid, mu}), inv})}));
    const auto below = g.op("Less", {e, target});
    lo = g.op("Where", {below, mid, lo});
    hi = g.op("Where", {below, hi, mid});
  }
  return g.op("Mul", {g.op("Add", {lo, hi}), half});
}

// What a regression model's outputs are made from.
struct Regression {
  bool components = false;  // [S, N, 2] Gaussian components (mean, log variance), else [S, N] means
  bool log_target = false;  // the model is of ln y: moments of the log-normal mixture, the interval exponentiated
  double noise_var = 0;     // σ² (of ln y for a log target)
  double interval = 0.95;
  calibration::Fitted cal;
};

// The moments in the target's units: mean, epistemic and aleatoric variance
// (as whvi predict's regression_lines), from mu, var [S, N] of the model's
// scale. A log target's are differences of large exponentials (e^σ² − 1 with a
// small σ², total − aleatoric): they are formed in float64, then rounded.
std::array<std::string, 3> moments(Graph& g, const std::string& mu_in, const std::string& var_in, const Regression& r) {
  const bool dbl = r.log_target;
  const auto cast = [&](const std::string& v, Elem to) { return onnx::cast(g, v, to); };
  const auto mu = dbl ? cast(mu_in, Elem::kDouble) : mu_in, var = dbl ? cast(var_in, Elem::kDouble) : var_in;
  const auto c = [&](double v) { return g.scalar(v, dbl); };
  const auto sq = [&](const std::string& v) { return g.op("Mul", {v, v}); };
  const auto lin = [&](const std::string& a, double ka, const std::string& b, double kb) {  // ka a + kb b
    return g.op("Add", {g.op("Mul", {a, c(ka)}), g.op("Mul", {b, c(kb)})});
  };
  const auto exp_of = [&](const std::string& a, double ka, const std::string& b, double kb) {
    return g.op("Exp", {lin(a, ka, b, kb)});
  };
  if (!r.log_target) {
    const auto mean = mean0(g, mu);
    const auto excess = g.op("Max", {g.op("Sub", {var, c(r.noise_var)}), c(0)});
    const auto epi2 = g.op("Add", {mean0(g, sq(g.op("Sub", {mu, mean}))), mean0(g, excess)});
    return {mean, epi2, g.op("Add", {g.op("Mul", {mean, c(0)}), c(r.noise_var)})};
  }
  const auto m = exp_of(mu, 1, var, 0.5);  // E[y | component]
  const auto mean = mean0(g, m);
  std::string epi2, a2;
  if (!r.components) {  // the law of total variance over the samples
    a2 = mean0(g, g.op("Mul", {g.op("Sub", {g.op("Exp", {var}), c(1)}), exp_of(mu, 2, var, 1)}));
    epi2 = mean0(g, sq(g.op("Sub", {m, mean})));
  } else {  // y log-normal given f ~ N(mu, var − σ²): Var(y | f) = (e^σ² − 1) e^(2f + σ²)
    const auto total = g.op("Sub", {mean0(g, exp_of(mu, 2, var, 2)), sq(mean)});
    const auto shifted = g.op("Exp", {g.op("Sub", {lin(mu, 2, var, 2), c(r.noise_var)})});
    a2 = g.op("Mul", {mean0(g, shifted), c(std::exp(r.noise_var) - 1)});
    epi2 = g.op("Max", {g.op("Sub", {total, a2}), c(0)});
  }
  return {cast(mean, Elem::kFloat), cast(epi2, Elem::kFloat), cast(a2, Elem::kFloat)};
}

// Regression's columns from f: [S, N] samples of the mean (noise σ² each) or
// [S, N, 2] Gaussian components (mean, log variance).
void regression_outputs(Graph& g, const std::string& f, const Regression& r) {
  std::string mu = f, var;
  if (r.components) {
    const auto split = [&](int64_t k) {
      return g.op("Squeeze", {g.op("Slice", {f, g.ints({k}), g.ints({k + 1}), g.ints({2})}), g.ints({2})});
    };
    mu = split(0);
    var = g.op("Exp", {split(1)});
  } else {
    var = g.op("Add", {g.op("Mul", {mu, g.scalar(0)}), g.scalar(r.noise_var)});  // σ² in mu's shape
  }
  const auto [mean, epi2, alea2] = moments(g, mu, var, r);
  const auto comp_sd = g.op("Sqrt", {var});
  const auto inv = g.op("Reciprocal", {g.op("Mul", {comp_sd, g.scalar(std::sqrt(2.0))})});
  const auto reach = g.op("Mul", {reduce(g, "ReduceMax", comp_sd, 0), g.scalar(12)});
  const auto lo = g.op("Sub", {reduce(g, "ReduceMin", mu, 0), reach});
  const auto hi = g.op("Add", {reduce(g, "ReduceMax", mu, 0), reach});
  const double a = (1 - r.interval) / 2;
  const auto units = [&](const std::string& v) { return r.log_target ? g.op("Exp", {v}) : v; };
  const std::vector<Dim> rows = {{-1, "N"}};
  g.output(mean, "mean", Elem::kFloat, rows);
  g.output(g.op("Sqrt", {g.op("Add", {epi2, alea2})}), "std", Elem::kFloat, rows);
  g.output(g.op("Sqrt", {epi2}), "epistemic_std", Elem::kFloat, rows);
  g.output(g.op("Sqrt", {alea2}), "aleatoric_std", Elem::kFloat, rows);
  g.output(units(mixture_quantile(g, mu, inv, lo, hi, a)), "lower", Elem::kFloat, rows);
  g.output(units(mixture_quantile(g, mu, inv, lo, hi, 1 - a)), "upper", Elem::kFloat, rows);
  if (r.cal.kind == "cqr") {  // the model's central calibration.level interval ± Q (calibration::conformal_interval)
    const double ac = (1 - r.cal.level) / 2;
    const auto q = g.scalar(r.cal.value);
    g.output(units(g.op("Sub", {mixture_quantile(g, mu, inv, lo, hi, ac), q})), "conformal_lower", Elem::kFloat, rows);
    g.output(units(g.op("Add", {mixture_quantile(g, mu, inv, lo, hi, 1 - ac), q})), "conformal_upper", Elem::kFloat,
             rows);
    return;
  }
  if (r.cal.kind != "conformal") return;
  // mean ± q sd of the model's scale (calibration::conformal_interval), in the target's units
  const auto cm = mean0(g, mu);
  const auto dev = g.op("Sub", {mu, cm});
  const auto csd = g.op("Sqrt", {g.op("Add", {mean0(g, g.op("Mul", {dev, dev})), mean0(g, var)})});
  const auto half = g.op("Mul", {csd, g.scalar(r.cal.value)});
  g.output(units(g.op("Sub", {cm, half})), "conformal_lower", Elem::kFloat, rows);
  g.output(units(g.op("Add", {cm, half})), "conformal_upper", Elem::kFloat, rows);
}

// Classification's columns from log class probabilities [S, N, C]; with a
// temperature calibration T, p = softmax(log p̄ / T).
void classification_outputs(Graph& g, const std::string& logp, int64_t classes, const calibration::Fitted& cal) {
  const auto ps = g.op("Exp", {logp});
  const auto p_raw = mean0(g, ps);  // [N, C]
  const auto tiny = g.scalar(1e-30);
  const auto log_raw = g.op("Log", {g.op("Max", {p_raw, tiny})});
  std::string p = p_raw, log_p = log_raw;
  if (cal.kind == "temperature") {
    log_p = g.op("LogSoftmax", {g.op("Div", {log_raw, g.scalar(cal.value)})}, {Attr::integer("axis", 1)});
    p = g.op("Exp", {log_p});
  }
  const auto neg_sum = [&](const std::string& a, const std::string& b, int64_t axis) {
    return g.op("Neg", {reduce(g, "ReduceSum", g.op("Mul", {a, b}), axis)});
  };
  const auto entropy = neg_sum(p, g.op("Log", {g.op("Max", {p, tiny})}), 1);
  const auto expected = mean0(g, neg_sum(ps, logp, 2));
  const auto mi = g.op("Max", {g.op("Sub", {neg_sum(p_raw, log_raw, 1), expected}), g.scalar(0)});
  const std::vector<Dim> rows = {{-1, "N"}};
  g.output(p, "probabilities", Elem::kFloat, {{-1, "N"}, {classes, ""}});
  g.output(g.op("ArgMax", {p}, {Attr::integer("axis", 1), Attr::integer("keepdims", 0)}), "predicted", Elem::kInt64,
           rows);
  g.output(reduce(g, "ReduceMax", p, 1), "confidence", Elem::kFloat, rows);
  g.output(entropy, "entropy", Elem::kFloat, rows);
  g.output(mi, "mutual_information", Elem::kFloat, rows);
  if (cal.kind == "conformal")  // the classes whose mixture probability is at least 1 − q (calibration::conformal_sets)
    g.output(g.op("Not", {g.op("Less", {p_raw, g.scalar(1 - cal.value)})}), "conformal_set", Elem::kBool,
             {{-1, "N"}, {classes, ""}});
}

// The rows as the network sees them: missing cells filled, one-hot inputs
// that training never set zeroed, standardised (as whvi predict does).
std::string standardised_input(Graph& g, const json& columns, const CheckpointMeta& meta) {
  const auto fill = g.constant(input_fill(columns, meta));
  const auto keep = (~never_set_inputs(columns, meta.x_mean)).to(torch::kFloat32);
  const auto x = g.op("Mul", {g.op("Where", {g.op("IsNaN", {"x"}), fill, "x"}), g.constant(keep)});
  return g.op("Div", {g.op("Sub", {x, g.constant(meta.x_mean)}), g.constant(meta.x_std)});
}

}  // namespace

json run_export(const ExportOptions& o) {
  WHVI_CHECK(o.format == "onnx", "--format ", printable(o.format, 20), " is not known; the formats: onnx");
  WHVI_CHECK(o.interval > 0 && o.interval < 1, "--interval ", o.interval, " is not in (0, 1) (e.g. --interval 0.95)");
  WHVI_CHECK(o.mc_samples >= 0 && o.mc_samples <= 100000, "--mc-samples ", o.mc_samples,
             " is out of range; give 1 to 100000 samples per call (0: the checkpoint's evaluation.mc_samples)");
  // the name says what the file is: a graph is never written over a table or a checkpoint by a slip of the name
  WHVI_CHECK(o.out.size() > 5 && o.out.compare(o.out.size() - 5, 5, ".onnx") == 0, "--out '", printable(o.out, 200),
             "': an ONNX graph's file name ends in .onnx (e.g. --out model.onnx)");
  check_output_path(o.out, "--out");
  auto loaded = load_checkpoint(o.checkpoint);
  const auto& meta = loaded.meta;
  const auto refuse = [&](const std::string& why) {
    throw Error("'" + o.checkpoint + "' does not export to ONNX: " + why);
  };
  if (meta.inputs_json.empty()) refuse("it was written by an older whvi without its input columns; retrain the split");
  const json enc = json::parse(meta.inputs_json);
  if (enc.value("pixels", false)) refuse("models of images do not export yet");
  const auto cal = stored_calibration(meta, o.checkpoint);
  const bool classify = meta.num_classes > 0;
  const int64_t S = o.mc_samples > 0 ? o.mc_samples : loaded.plan.mc_samples;

  Graph g;
  const int64_t width = meta.d_in;
  g.input("x", Elem::kFloat, {{-1, "N"}, {width, ""}});
  std::string why;
  auto& inf = *loaded.inf;
  const auto f = inf.export_onnx(g, standardised_input(g, enc["columns"], meta), S, why);
  if (f.empty()) refuse(why);
  const bool components = inf.closed_form() != nullptr;
  if (classify) classification_outputs(g, f, meta.num_classes, cal);
  else regression_outputs(g, f, {components, loaded.plan.log_target,
                                 inf.likelihood().noise_var_original(), o.interval, cal});

  g.meta("whvi.inputs", enc["columns"].dump());
  g.meta("whvi.classes", enc["classes"].dump());
  g.meta("whvi.mc_samples", std::to_string(components ? 1 : S));
  g.meta("whvi.interval", std::to_string(o.interval));
  g.meta("whvi.checkpoint", meta.source);
  const std::string doc =
      "whvi model: input x [N, " + std::to_string(width) +
      "] = the input columns of whvi.inputs in order (a text column one-hot over its categories, NaN for a missing "
      "cell); outputs as whvi predict's columns, from " + std::to_string(S) + " posterior samples drawn at every call";
  const auto bytes = g.serialise(std::string(WHVI_VERSION) + " " + git_commit(), doc);
  AtomicFile out(o.out);
  out.write(bytes);
  out.commit();
  spdlog::info("export: {} ({} nodes, {:.1f} MB, {} samples per call)", o.out, g.nodes(), bytes.size() / 1e6,
               components ? 1 : S);
  return {{"out", o.out}, {"nodes", g.nodes()}, {"bytes", bytes.size()}, {"mc_samples", components ? 1 : S}};
}

}  // namespace whvi::experiment
