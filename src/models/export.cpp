// Networks as ONNX nodes (models/export.h).
#include "models/export.h"

namespace whvi::models {

namespace {
// Why layer `l` does not export, in a phrase.
std::string layer_refusal(const BayesianLayer& l) {
  const char* when = find_layer_kind(l.kind()).exported_when;
  return "its layer kind '" + l.kind() + "' " +
         (when && *when ? std::string("exports only ") + when
                        : std::string("does not export (layer kinds that do: ") +
                              layer_kinds_with(&LayerKind::exported_when) + ")");
}
}  // namespace

std::string export_features(onnx::Graph& g, const RegressionModel& model, const std::string& x, std::string& why) {
  if (model.has_trunk()) {
    why = "a network with a trunk (model.architecture other than mlp) does not export yet";
    return "";
  }
  std::string h = x;
  const auto& layers = model.layers();
  for (size_t l = 0; l + 1 < layers.size(); ++l) {
    h = layers[l]->export_onnx(g, h);
    if (h.empty()) {
      why = layer_refusal(*layers[l]);
      return "";
    }
    const auto& a = model.activation();
    h = g.op(a == "relu" ? "Relu" : a == "cos" ? "Cos" : "Tanh", {h});
  }
  return h;
}

std::string export_network(onnx::Graph& g, const RegressionModel& model, const std::string& x, std::string& why) {
  const auto h = export_features(g, model, x, why);
  if (h.empty()) return "";
  const auto& out = *model.layers().back();
  const auto f = out.export_onnx(g, h);
  if (f.empty()) {
    why = layer_refusal(out);
    return "";
  }
  return out.out_features() == 1 ? g.op("Reshape", {f, g.ints({-1})}) : f;
}

std::string export_samples(onnx::Graph& g, RegressionModel& model, const std::string& x, int64_t S, std::string& why) {
  const auto f = export_network(g, model, S == 1 ? x : g.op("Tile", {x, g.ints({S, 1})}), why);
  if (f.empty()) return "";
  const int64_t C = model.likelihood().out_dim();
  const auto shape = C == 1 ? std::vector<int64_t>{S, -1} : std::vector<int64_t>{S, -1, C};
  return export_likelihood(g, model, g.op("Reshape", {f, g.ints(shape)}), why);
}

std::string export_likelihood(onnx::Graph& g, RegressionModel& model, const std::string& f, std::string& why) {
  const auto out = model.likelihood().export_onnx(g, f);
  if (out.empty()) why = "its likelihood does not export yet (gaussian and softmax do)";
  return out;
}

}  // namespace whvi::models
