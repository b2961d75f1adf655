// A feature extractor before the fully connected layers (model.architecture
// other than mlp): the convolutional trunks (conv.cpp) and the random Fourier
// features of a GP approximation (rff.cpp).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "common/options.h"
#include "nn/layer.h"

namespace whvi::models {

class Trunk : public torch::nn::Module {
 public:
  // x [N, d_in] -> [N, features()]
  virtual torch::Tensor forward(const torch::Tensor& x, ForwardCtx& ctx) = 0;
  virtual torch::Tensor kl() = 0;
  virtual int64_t features() const = 0;
};

// A registered architecture (model.architecture other than mlp): its name,
// its options' declarations and a factory reading them.
struct TrunkKind {
  std::string name;
  std::vector<options::Spec> (*declare)();
  std::vector<std::string> (*reads)();  // every key its options read
  options::Resolve resolve;  // reads its options struct (the experiment calls it)
  std::function<std::shared_ptr<Trunk>(int64_t d_in, const options::Resolved&, const at::Generator&)> make;
  const char* help = "";     // model.architecture's help for it
  TrunkKind described(const char* h) const {
    TrunkKind k = *this;
    k.help = h;
    return k;
  }
};

// The registration of an architecture whose factory takes its options O.
template <class O>
TrunkKind trunk_kind(std::string name,
                     std::shared_ptr<Trunk> (*make)(const std::string& arch, int64_t d_in, const O&, const at::Generator&)) {
  return {name, &options::declare<O>, &options::keys_read<O>, &options::resolve<O>,
          [make, name](int64_t d_in, const options::Resolved& o, const at::Generator& gen) {
            return make(name, d_in, o.template as<O>(), gen);
          }};
}

// The registered architectures (trunks.cpp), in registration order.
const std::vector<TrunkKind>& trunk_kinds();
// The registered architecture `arch` (not mlp; an unknown one is an error).
const TrunkKind& find_trunk(const std::string& arch);

}  // namespace whvi::models
