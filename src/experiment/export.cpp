// whvi export: a trained split's model as a self-contained ONNX graph
// (experiment.h, docs/export.md). The graph does what `whvi predict` does
// after it has encoded a row: fills missing cells, zeroes one-hot inputs that
// training never set, standardises, draws S predictive samples (the
// posterior's sampling in the graph: RandomNormalLike and RandomUniformLike,
// afresh at every call) and reduces them to predict's columns, in float32.
// The interval is the central interval of the samples' Gaussian mixture, by
// bisection on its CDF unrolled in the graph (kBisections halvings of a
// bracket 24 noise sds wider than the samples' range).
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

constexpr int kBisections = 48;

// A reduction over one axis, dropped (opset 17: ReduceSum takes its axes as an input, the others as an attribute).
std::string reduce(Graph& g, const std::string& op, const std::string& x, int64_t axis) {
  if (op == "ReduceSum") return g.op(op, {x, g.ints({axis})}, {Attr::integer("keepdims", 0)});
  return g.op(op, {x}, {Attr::list("axes", {axis}), Attr::integer("keepdims", 0)});
}
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

// Regression's columns from [S, N] samples of the mean with noise variance
// σ², or [S, N, 2] Gaussian components (mean, log variance).
void regression_outputs(Graph& g, const std::string& f, bool components, double noise_var, double interval) {
  std::string mu = f, var;
  if (components) {
    const auto split = [&](int64_t k) {
      return g.op("Squeeze", {g.op("Slice", {f, g.ints({k}), g.ints({k + 1}), g.ints({2})}), g.ints({2})});
    };
    mu = split(0);
    var = g.op("Exp", {split(1)});
  } else {
    var = g.op("Add", {g.op("Mul", {mu, g.scalar(0)}), g.scalar(noise_var)});  // σ² in mu's shape
  }
  const auto mean = mean0(g, mu);
  const auto dev = g.op("Sub", {mu, mean});
  const auto excess = g.op("Max", {g.op("Sub", {var, g.scalar(noise_var)}), g.scalar(0)});
  const auto epi2 = g.op("Add", {mean0(g, g.op("Mul", {dev, dev})), mean0(g, excess)});
  const auto epi = g.op("Sqrt", {epi2});
  const auto alea = g.op("Add", {g.op("Mul", {mean, g.scalar(0)}), g.scalar(std::sqrt(noise_var))});
  const auto sd = g.op("Sqrt", {g.op("Add", {epi2, g.scalar(noise_var)})});
  const auto comp_sd = g.op("Sqrt", {var});
  const auto inv = g.op("Reciprocal", {g.op("Mul", {comp_sd, g.scalar(std::sqrt(2.0))})});
  const auto reach = g.op("Mul", {reduce(g, "ReduceMax", comp_sd, 0), g.scalar(12)});
  const auto lo = g.op("Sub", {reduce(g, "ReduceMin", mu, 0), reach});
  const auto hi = g.op("Add", {reduce(g, "ReduceMax", mu, 0), reach});
  const double a = (1 - interval) / 2;
  const std::vector<Dim> rows = {{-1, "N"}};
  g.output(mean, "mean", Elem::kFloat, rows);
  g.output(sd, "std", Elem::kFloat, rows);
  g.output(epi, "epistemic_std", Elem::kFloat, rows);
  g.output(alea, "aleatoric_std", Elem::kFloat, rows);
  g.output(mixture_quantile(g, mu, inv, lo, hi, a), "lower", Elem::kFloat, rows);
  g.output(mixture_quantile(g, mu, inv, lo, hi, 1 - a), "upper", Elem::kFloat, rows);
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
  check_output_path(o.out, "--out");
  auto loaded = load_checkpoint(o.checkpoint);
  const auto& meta = loaded.meta;
  const auto refuse = [&](const std::string& why) {
    throw Error("'" + o.checkpoint + "' does not export to ONNX: " + why);
  };
  if (meta.inputs_json.empty()) refuse("it was written by an older whvi without its input columns; retrain the split");
  const json enc = json::parse(meta.inputs_json);
  if (enc.value("pixels", false)) refuse("models of images do not export yet");
  const auto& cfg = loaded.cfg;
  if (cfg.get_string("data.target_transform") == "log") refuse("a model of the target's log does not export yet");
  const auto cal = stored_calibration(meta, o.checkpoint);
  if (cal.kind == "conformal") refuse("conformal calibration does not export yet; use whvi predict");
  const bool classify = meta.num_classes > 0;
  const int64_t S = o.mc_samples > 0 ? o.mc_samples : cfg.get_int("evaluation.mc_samples");

  Graph g;
  const int64_t width = meta.d_in;
  g.input("x", Elem::kFloat, {{-1, "N"}, {width, ""}});
  std::string why;
  auto& inf = *loaded.inf;
  const auto f = inf.export_onnx(g, standardised_input(g, enc["columns"], meta), S, why);
  if (f.empty()) refuse(why);
  const bool components = inf.closed_form() != nullptr;
  if (classify) classification_outputs(g, f, meta.num_classes, cal);
  else regression_outputs(g, f, components, inf.likelihood().noise_var_original(), o.interval);

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
