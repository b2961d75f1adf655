// Networks as ONNX nodes (models/export.h).
#include "models/export.h"

namespace whvi::models {

std::string export_network(onnx::Graph& g, const RegressionModel& model, const std::string& x, std::string& why) {
  if (model.has_trunk()) {
    why = "a network with a trunk (model.architecture other than mlp) does not export yet";
    return "";
  }
  std::string h = x;
  const auto& layers = model.layers();
  for (size_t l = 0; l < layers.size(); ++l) {
    h = layers[l]->export_onnx(g, h);
    if (h.empty()) {
      const char* when = find_layer_kind(layers[l]->kind()).exported_when;
      why = "its layer kind '" + layers[l]->kind() + "' " +
            (when && *when ? std::string("exports only ") + when
                           : std::string("does not export (layer kinds that do: ") +
                                 layer_kinds_with(&LayerKind::exported_when) + ")");
      return "";
    }
    if (l + 1 == layers.size()) break;
    const auto& a = model.activation();
    h = g.op(a == "relu" ? "Relu" : a == "cos" ? "Cos" : "Tanh", {h});
  }
  return layers.back()->out_features() == 1 ? g.op("Reshape", {h, g.ints({-1})}) : h;
}

}  // namespace whvi::models
