// Every architecture before the fully connected layers, in one place. A new
// one is its file (defining `std::vector<TrunkKind> <name>_trunk_kinds()`, the
// architectures it registers), one X(<name>) line here and its tests.
#include "models/trunk.h"

#define WHVI_TRUNK_FILES(X) \
  X(conv) /* simple-cnn, alexnet, vgg16, resnet18 (conv.cpp) */ \
  X(rff)  /* rff (rff.cpp) */

namespace whvi::models {

#define WHVI_DECLARE(name) std::vector<TrunkKind> name##_trunk_kinds();
WHVI_TRUNK_FILES(WHVI_DECLARE)
#undef WHVI_DECLARE

const std::vector<TrunkKind>& trunk_kinds() {
  static const std::vector<TrunkKind> r = [] {
    std::vector<TrunkKind> k;
#define WHVI_APPEND(name)                                \
  for (auto& t : name##_trunk_kinds()) k.push_back(std::move(t));
    WHVI_TRUNK_FILES(WHVI_APPEND)
#undef WHVI_APPEND
    return k;
  }();
  return r;
}

const TrunkKind& find_trunk(const std::string& arch) {
  return options::find_kind(trunk_kinds(), arch, "model.architecture");
}

}  // namespace whvi::models
