// The convolution-filter axis: what a convolutional trunk's layers (models/conv.h,
// ConvLayer) convolve with. One filter kind per file (conv_mcd.cpp: mcd and
// lowrank-mcd, conv_mfg.cpp, conv_whvi.cpp, conv_nng.cpp), each with its options
// beside it, registered in conv_registry.cpp; model.conv picks one.
//
// A new filter kind is its own file (a ConvFilter and a `<name>_filter()`
// registration), one X(<name>) line in conv_registry.cpp and its test.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "common/options.h"
#include "nn/layer.h"

namespace whvi::models {

// One convolution: ksize x ksize filters (3 or 1) from cin to cout channels,
// padding ksize / 2, the given stride, on [N, C, H, W].
struct ConvShape {
  int64_t cin = 0, cout = 0, ksize = 3, stride = 1;
};

class ConvFilter {
 public:
  virtual ~ConvFilter() = default;
  virtual torch::Tensor forward(const torch::Tensor& x, ForwardCtx& ctx) = 0;
  virtual torch::Tensor kl() = 0;
  // lowrank-mcd: the rank of its filter matrix; whvi: the padded patch size D; 0 otherwise.
  virtual int64_t rank() const { return 0; }
};

// Builds a filter of one shape; it registers its parameters (and
// submodules) on `owner`, drawing their initial values from `gen`.
using FilterMaker =
    std::function<std::unique_ptr<ConvFilter>(torch::nn::Module& owner, const ConvShape&, const at::Generator& gen)>;

// A registered filter kind: its name (model.conv), its options' declarations
// and the keys they read, and the maker built from them.
struct FilterKind {
  std::string name;
  std::vector<options::Spec> (*declare)();
  std::vector<std::string> (*reads)();
  options::Resolve resolve;  // reads its options struct (the experiment calls it)
  std::function<FilterMaker(const options::Resolved&)> make;
  const char* help = "";     // model.conv's help for it
  FilterKind described(const char* h) const {
    FilterKind k = *this;
    k.help = h;
    return k;
  }
};

// The registration of a filter kind built from its options O.
template <class O>
FilterKind filter_kind(std::string name, std::unique_ptr<ConvFilter> (*make)(const O&, torch::nn::Module&,
                                                                             const ConvShape&, const at::Generator&)) {
  return {std::move(name), &options::declare<O>, &options::keys_read<O>, &options::resolve<O>,
          [make](const options::Resolved& r) {
            const O o = r.template as<O>();
            return FilterMaker([make, o](torch::nn::Module& m, const ConvShape& s, const at::Generator& g) {
              return make(o, m, s, g);
            });
          }};
}

// The registered filter kinds (each defines its `<name>_filter()`, listed in
// conv_registry.cpp), in registration order.
const std::vector<FilterKind>& filter_kinds();
std::vector<std::string> filter_names();
// model.conv's help: every filter kind with its own.
std::string filter_kinds_help();
// The registered filter kind `name` (an unknown one is an error listing the others).
const FilterKind& find_filter(const std::string& name);
// Every registered filter kind's options, declared.
std::vector<options::Spec> filter_option_specs();

// The rank that gives a lowrank-mcd filter matrix [cout, cin*k²] as many
// parameters as a WHVI one (4 D per stacked block, D the padded patch size).
int64_t matched_conv_rank(int64_t cin, int64_t cout, int64_t ksize = 3);

}  // namespace whvi::models
