// Every architecture before the fully connected layers, in one place. A new
// one is its file, its registration here and its tests.
#include "models/trunk.h"

namespace whvi::models {

const std::vector<TrunkKind>& trunk_kinds() {
  static const std::vector<TrunkKind> r = [] {
    std::vector<TrunkKind> k = conv_trunk_kinds();
    k.push_back(rff_trunk_kind());
    return k;
  }();
  return r;
}

std::shared_ptr<Trunk> make_trunk(const std::string& arch, int64_t d_in, const options::Source& src,
                                  const at::Generator& gen) {
  for (const auto& k : trunk_kinds())
    if (k.name == arch) return k.make(d_in, src, gen);
  throw Error("model.architecture '" + arch + "' is not registered");
}

}  // namespace whvi::models
