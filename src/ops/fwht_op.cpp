#include "ops/fwht_op.h"

#include <string>

#include "common/errors.h"
#include "common/runtime.h"
#include "fwht.h"
#ifdef WHVI_TORCH_CUDA
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include "fwht_cuda.h"
#endif

namespace whvi::ops {
namespace {

using torch::Tensor;
using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

std::string shape_str(const Tensor& t) {
  std::ostringstream os;
  os << t.sizes();
  return os.str();
}

void check_last_dim(const Tensor& x, const char* what) {
  WHVI_CHECK_AS(ShapeError, x.dim() >= 1, what, ": expected at least 1 dimension, got a scalar");
  const int64_t d = x.size(-1);
  WHVI_CHECK_AS(ShapeError, kernels::is_power_of_two(d), what, ": last dimension D=", d,
                " (shape ", shape_str(x),
                ") is not a power of two; zero-pad it to the next power of two");
}

// If the rows of x (all but the last dimension flattened) are evenly spaced
// with a unit last stride, returns the row stride; otherwise -1.
int64_t uniform_row_stride(const Tensor& x) {
  const int64_t n = x.dim(), d = x.size(-1);
  if (d > 1 && x.stride(-1) != 1) return -1;
  if (n == 1) return d;
  int64_t rs = -1;
  int64_t expected = -1;
  for (int64_t i = n - 2; i >= 0; --i) {
    if (x.size(i) == 1) continue;
    if (rs < 0) {
      rs = x.stride(i);
      if (rs < d) return -1;
      expected = rs * x.size(i);
    } else {
      if (x.stride(i) != expected) return -1;
      expected *= x.size(i);
    }
  }
  return rs < 0 ? d : rs;
}

// y must be contiguous with x's shape, dtype and device.
void fwht_into(const Tensor& x_in, Tensor& y, double scale) {
  check_last_dim(x_in, "fwht");
  const int64_t d = x_in.size(-1);
  Tensor x = x_in;
  int64_t rs = uniform_row_stride(x);
  if (rs < 0) {
    x = x.contiguous();
    rs = d;
  }
  const int64_t rows = d ? x.numel() / d : 0;
  if (rows == 0) return;
  if (x.is_cpu()) {
    const auto st = x.scalar_type();
    if (st == torch::kFloat32)
      kernels::fwht_cpu<float>(x.data_ptr<float>(), rs, y.data_ptr<float>(), d, rows, d,
                               static_cast<float>(scale), threads());
    else if (st == torch::kFloat64)
      kernels::fwht_cpu<double>(x.data_ptr<double>(), rs, y.data_ptr<double>(), d, rows, d, scale,
                                threads());
    else
      WHVI_CHECK_AS(ShapeError, false, "fwht: dtype ", st,
                    " is not supported on CPU; use float32 or float64");
    return;
  }
#ifdef WHVI_TORCH_CUDA
  if (x.is_cuda()) {
    const c10::cuda::CUDAGuard guard(x.device());
    kernels::cuda::DType dt;
    switch (x.scalar_type()) {
      case torch::kFloat32: dt = kernels::cuda::DType::kFloat32; break;
      case torch::kFloat16: dt = kernels::cuda::DType::kFloat16; break;
      case torch::kBFloat16: dt = kernels::cuda::DType::kBFloat16; break;
      default:
        WHVI_CHECK_AS(ShapeError, false, "fwht: dtype ", x.scalar_type(),
                      " is not supported on CUDA; use float32, float16 or bfloat16");
    }
    kernels::cuda::fwht(dt, x.data_ptr(), rs, y.data_ptr(), d, rows, d, static_cast<float>(scale),
                        c10::cuda::getCurrentCUDAStream().stream());
    return;
  }
#endif
  WHVI_CHECK_AS(ShapeError, false, "fwht: device ", x.device(),
                " is not supported by this build (CPU",
#ifdef WHVI_TORCH_CUDA
                " and CUDA",
#endif
                " only)");
}

Tensor fwht_impl(const Tensor& x, double scale) {
  Tensor y = torch::empty(x.sizes(), x.options().memory_format(at::MemoryFormat::Contiguous));
  fwht_into(x, y, scale);
  return y;
}

struct FwhtFunction : torch::autograd::Function<FwhtFunction> {
  static Tensor forward(AutogradContext* ctx, const Tensor& x, double scale) {
    ctx->saved_data["scale"] = scale;
    return fwht_impl(x, scale);
  }
  static tensor_list backward(AutogradContext* ctx, tensor_list grads) {
    const double scale = ctx->saved_data["scale"].toDouble();
    return {FwhtFunction::apply(grads[0], scale), Tensor()};
  }
};

// ---- fused WHVI ---------------------------------------------------------------

kernels::WhviShape check_whvi(const Tensor& x, const Tensor& eps, const Tensor& s1,
                              const Tensor& s2, const Tensor& mu, const Tensor& sg, bool shared) {
  WHVI_CHECK_AS(ShapeError, x.dim() == 2, "whvi_matvec: x must be [batch, D], got ", shape_str(x));
  WHVI_CHECK_AS(ShapeError, s1.dim() == 2, "whvi_matvec: s1 must be [blocks, D], got ",
                shape_str(s1));
  kernels::WhviShape sh;
  sh.batch = x.size(0);
  sh.d = x.size(1);
  sh.blocks = s1.size(0);
  sh.shared_g = shared;
  check_last_dim(x, "whvi_matvec (x)");
  const int64_t G = sh.groups();
  auto expect = [&](const Tensor& t, std::vector<int64_t> want, const char* name) {
    WHVI_CHECK_AS(ShapeError, t.sizes() == torch::IntArrayRef(want), "whvi_matvec: ", name,
                  " has shape ", shape_str(t), ", expected ", torch::IntArrayRef(want));
    WHVI_CHECK_AS(ShapeError, t.scalar_type() == x.scalar_type(), "whvi_matvec: ", name,
                  " has dtype ", t.scalar_type(), " but x has ", x.scalar_type());
    WHVI_CHECK_AS(ShapeError, t.device() == x.device(), "whvi_matvec: ", name, " is on ",
                  t.device(), " but x is on ", x.device());
  };
  expect(s1, {sh.blocks, sh.d}, "s1");
  expect(s2, {sh.blocks, sh.d}, "s2");
  expect(mu, {G, sh.d}, "mu");
  expect(sg, {G, sh.d}, "sigma");
  if (eps.defined()) expect(eps, {sh.batch, G, sh.d}, "eps");
  const auto st = x.scalar_type();
  WHVI_CHECK_AS(ShapeError, st == torch::kFloat32 || (st == torch::kFloat64 && x.is_cpu()),
                "whvi_matvec: dtype ", st, " not supported (float32; float64 on CPU)");
  return sh;
}

template <class T>
const T* ptr_or_null(const Tensor& t) {
  return t.defined() ? t.data_ptr<T>() : nullptr;
}

struct WhviFunction : torch::autograd::Function<WhviFunction> {
  // eps_in is an empty tensor when has_eps is false (LibTorch 1.13's
  // autograd cannot take an undefined tensor as an input).
  static Tensor forward(AutogradContext* ctx, const Tensor& x_, const Tensor& eps_in,
                        const Tensor& s1_, const Tensor& s2_, const Tensor& mu_,
                        const Tensor& sg_, bool shared, bool has_eps, bool keep) {
    const Tensor eps_ = has_eps ? eps_in : Tensor();
    const auto sh = check_whvi(x_, eps_, s1_, s2_, mu_, sg_, shared);
    Tensor x = x_.contiguous(), s1 = s1_.contiguous(), s2 = s2_.contiguous(),
           mu = mu_.contiguous(), sg = sg_.contiguous();
    Tensor eps = eps_.defined() ? eps_.contiguous() : Tensor();
    Tensor y = torch::empty({sh.batch, sh.blocks, sh.d}, x.options());
    // On the CPU with a backward to come, the kernel also keeps its two
    // intermediate transforms, so the backward does not redo them (same numbers).
    Tensor hu, hw;
    if (keep && x.is_cpu()) {
      hu = torch::empty_like(y);
      hw = torch::empty_like(y);
    }
    ctx->saved_data["shared"] = shared;
    ctx->save_for_backward({x, eps.defined() ? eps : torch::Tensor(), s1, s2, mu, sg, hu, hw});
    if (x.is_cpu()) {
      AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "whvi_matvec", [&] {
        kernels::whvi_forward_cpu<scalar_t>(sh, x.data_ptr<scalar_t>(), ptr_or_null<scalar_t>(eps),
                                            s1.data_ptr<scalar_t>(), s2.data_ptr<scalar_t>(),
                                            mu.data_ptr<scalar_t>(), sg.data_ptr<scalar_t>(),
                                            y.data_ptr<scalar_t>(), threads(),
                                            hu.defined() ? hu.data_ptr<scalar_t>() : nullptr,
                                            hw.defined() ? hw.data_ptr<scalar_t>() : nullptr);
      });
      return y;
    }
#ifdef WHVI_TORCH_CUDA
    if (x.is_cuda()) {
      const c10::cuda::CUDAGuard guard(x.device());
      kernels::cuda::whvi_forward(sh, x.data_ptr<float>(), ptr_or_null<float>(eps),
                                  s1.data_ptr<float>(), s2.data_ptr<float>(), mu.data_ptr<float>(),
                                  sg.data_ptr<float>(), y.data_ptr<float>(),
                                  c10::cuda::getCurrentCUDAStream().stream());
      return y;
    }
#endif
    WHVI_CHECK_AS(ShapeError, false, "whvi_matvec: device ", x.device(), " not supported");
    return y;
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list grads) {
    const auto saved = ctx->get_saved_variables();
    const bool shared = ctx->saved_data["shared"].toBool();
    const Tensor &x = saved[0], &eps = saved[1], &s1 = saved[2], &s2 = saved[3], &mu = saved[4],
                 &sg = saved[5], &hu = saved[6], &hw = saved[7];
    const Tensor dy = grads[0].contiguous();
    kernels::WhviShape sh;
    sh.batch = x.size(0);
    sh.d = x.size(1);
    sh.blocks = s1.size(0);
    sh.shared_g = shared;
    auto maybe = [&](int i, const Tensor& like) {
      return ctx->needs_input_grad(i) ? torch::empty_like(like) : Tensor();
    };
    Tensor dx = maybe(0, x), ds1 = maybe(2, s1), ds2 = maybe(3, s2), dmu = maybe(4, mu),
           dsg = maybe(5, sg);
    if (x.is_cpu()) {
      AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "whvi_matvec_backward", [&] {
        auto out = [](Tensor& t) { return t.defined() ? t.data_ptr<scalar_t>() : nullptr; };
        kernels::whvi_backward_cpu<scalar_t>(
            sh, x.data_ptr<scalar_t>(), ptr_or_null<scalar_t>(eps), s1.data_ptr<scalar_t>(),
            s2.data_ptr<scalar_t>(), mu.data_ptr<scalar_t>(), sg.data_ptr<scalar_t>(),
            dy.data_ptr<scalar_t>(), out(dx), out(ds1), out(ds2), out(dmu), out(dsg), threads(),
            ptr_or_null<scalar_t>(hu), ptr_or_null<scalar_t>(hw));
      });
    }
#ifdef WHVI_TORCH_CUDA
    else if (x.is_cuda()) {
      const c10::cuda::CUDAGuard guard(x.device());
      auto out = [](Tensor& t) { return t.defined() ? t.data_ptr<float>() : nullptr; };
      kernels::cuda::whvi_backward(sh, x.data_ptr<float>(), ptr_or_null<float>(eps),
                                   s1.data_ptr<float>(), s2.data_ptr<float>(), mu.data_ptr<float>(),
                                   sg.data_ptr<float>(), dy.data_ptr<float>(), out(dx), out(ds1),
                                   out(ds2), out(dmu), out(dsg),
                                   c10::cuda::getCurrentCUDAStream().stream());
    }
#endif
    return {dx, Tensor(), ds1, ds2, dmu, dsg, Tensor(), Tensor(), Tensor()};
  }
};

}  // namespace

Tensor fwht(const Tensor& x, double scale) { return FwhtFunction::apply(x, scale); }

void fwht_out(const Tensor& x, Tensor& out, double scale) {
  WHVI_CHECK_AS(ShapeError,
                out.is_contiguous() && out.sizes() == x.sizes() &&
                    out.scalar_type() == x.scalar_type() && out.device() == x.device(),
                "fwht_out: out must be contiguous with x's shape ", shape_str(x), ", dtype ",
                x.scalar_type(), " and device ", x.device());
  // Either the in-place transform (same memory) or no overlap at all.
  const auto* xb = static_cast<const char*>(x.data_ptr());
  const auto* ob = static_cast<const char*>(out.data_ptr());
  const auto x_end = xb + x.storage().nbytes(), o_end = ob + out.numel() * out.element_size();
  WHVI_CHECK_AS(ShapeError, ob == xb || o_end <= xb || x_end <= ob,
                "fwht_out: out partially overlaps x; pass out = x (in place) or a separate tensor");
  fwht_into(x, out, scale);
}

Tensor whvi_matvec(const Tensor& x, const Tensor& eps, const Tensor& s1, const Tensor& s2,
                   const Tensor& mu, const Tensor& sigma, bool shared_g) {
  const bool has_eps = eps.defined();
  bool keep = false;  // a backward will run: some input takes a gradient, with grad mode on
  if (torch::GradMode::is_enabled())
    for (const auto* t : {&x, &s1, &s2, &mu, &sigma}) keep = keep || t->requires_grad();
  return WhviFunction::apply(x, has_eps ? eps : torch::empty({0}, x.options()), s1, s2, mu, sigma,
                             shared_g, has_eps, keep);
}

Tensor hadamard_matrix(int64_t d, torch::ScalarType dtype) {
  WHVI_CHECK_AS(ShapeError, kernels::is_power_of_two(d), "hadamard_matrix: d=", d,
                " is not a power of two");
  auto idx = torch::arange(d, torch::kInt64);
  auto bits = torch::bitwise_and(idx.unsqueeze(1), idx.unsqueeze(0));
  // parity of popcount(i & j) by folding the bits
  for (int64_t s = 32; s >= 1; s /= 2) bits = torch::bitwise_xor(bits, bits.__rshift__(s));
  auto parity = torch::bitwise_and(bits, 1);
  return (1 - 2 * parity).to(dtype);
}

}  // namespace whvi::ops
