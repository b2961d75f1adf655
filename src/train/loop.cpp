#include "train/loop.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include <spdlog/spdlog.h>

#include "common/errors.h"
#include "common/heartbeat.h"
#include "common/io.h"
#include "common/memory.h"
#include "common/rng.h"
#include "common/runtime.h"
#include "data/augment.h"
#include "models/conv.h"

namespace whvi::train {

std::string duration_text(double seconds) {
  char buf[32];
  if (seconds < 90) std::snprintf(buf, sizeof buf, "%.0f s", seconds);
  else if (seconds < 5400) std::snprintf(buf, sizeof buf, "%.1f min", seconds / 60);
  else std::snprintf(buf, sizeof buf, "%.1f h", seconds / 3600);
  return buf;
}

namespace {

// Rows idx[0], ..., idx[B-1] of x (contiguous): x.index_select(0, idx) as a
// plain copy of whole rows, the same values without the op's dispatch (the
// gather of x and y was ~3% of a 2 x 128 fused WHVI step); other devices take
// index_select.
torch::Tensor gather_rows(const torch::Tensor& x, const torch::Tensor& perm, int64_t pos, int64_t B) {
  if (!x.is_cpu() || !x.is_contiguous() || !perm.is_cpu() || perm.scalar_type() != torch::kInt64)
    return x.index_select(0, perm.narrow(0, pos, B));
  auto shape = x.sizes().vec();
  shape[0] = B;
  auto out = torch::empty(shape, x.options());
  const size_t row = static_cast<size_t>(x.numel() / x.size(0)) * x.element_size();
  const auto* src = static_cast<const char*>(x.data_ptr());
  auto* dst = static_cast<char*>(out.data_ptr());
  const int64_t* idx = perm.data_ptr<int64_t>() + pos;
  for (int64_t i = 0; i < B; ++i) std::memcpy(dst + i * row, src + idx[i] * row, row);
  return out;
}

// Throws the divergence error for `label` at step t, with the method's own
// diagnosis when it has one.
// What makes a closed-form fit (no steps, no learning rate) fail.
const char* const kClosedFormCause =
    "a feature that gives the target exactly (a copy of it, or a leak; check data.features) or one column "
    "repeated, so the noise the fit finds is zero";

[[noreturn]] void diverged(const std::string& label, int64_t t, const std::string& what,
                           const std::string& suspects, const infer::Inference& inf, bool closed_form = false) {
  const auto why = inf.diagnose();
  const std::string found = why.empty() ? what : detail::concat(what, " (", why, ")");
  if (closed_form)
    throw Error(detail::concat(label, ": the closed-form fit failed: ", found, ". Most likely cause: ",
                               kClosedFormCause, "; nothing was written for this split"));
  throw Error(divergence_message(label, t, found, suspects));
}

// Final health checks: an exploded likelihood parameter (the Gaussian's
// noise variance) or a fit far worse than the constant predictor is
// divergence, not a result.
void check_fit(infer::Inference& inf, const torch::Tensor& x, const torch::Tensor& y, const std::string& suspects,
               const std::string& label, int64_t done, bool closed_form = false) {
  auto& lik = inf.likelihood();
  if (const auto problem = lik.health_problem()) diverged(label, done, *problem, suspects, inf, closed_form);
  const int64_t n_fit = std::min<int64_t>(x.size(0), 2048);
  const auto fit = inf.mean_standardized(x.narrow(0, 0, n_fit));
  if (const auto problem = lik.fit_problem(fit, y.narrow(0, 0, n_fit)))
    diverged(label, done, *problem, suspects, inf, closed_form);
}

// The activations a step keeps for its backward pass: batch x training draws
// rows through every layer, about 4 numbers per unit (the output, its
// gradient, the draws and noise that made it); refused before the first step
// when they cannot fit, naming the settings that multiply them, instead of the
// kernel's OOM killer ending the run without a word. The width is the network's
// own (a 1-row pass); a convolutional trunk sizes its own maps and is left out.
void check_step_memory(infer::Inference& inf, const torch::Tensor& x, int64_t batch, const std::string& label) {
  auto& model = inf.model();
  if (model.has_trunk() || x.size(0) == 0) return;
  const int64_t draws = inf.split_step() ? inf.split_step()->mc_samples() : 1;
  int64_t width = 0;
  {
    torch::NoGradGuard ng;
    models::ForwardCtx ctx;
    width = model.features_standardized(x.narrow(0, 0, 1), ctx).size(-1);
  }
  const double layers = static_cast<double>(std::max<size_t>(1, model.layers().size()));
  const double need = 4.0 * static_cast<double>(x.element_size()) * static_cast<double>(batch) *
                      static_cast<double>(draws) * static_cast<double>(width) * layers;
  refuse_unless_room(need, detail::concat(label, ": one training step's activations (training.batch_size ", batch,
                                          " x training.mc_samples ", draws, " x model.width ", width, " x ",
                                          static_cast<int64_t>(layers), " layers)"),
                     "lower training.batch_size, training.mc_samples or model.width");
}

// A method fitted in closed form (infer::ClosedForm): one fit on every
// training row, no steps.
TrainStats fit_closed_form(infer::Inference& inf, infer::ClosedForm& cf, const torch::Tensor& x,
                           const torch::Tensor& y, const std::string& suspects, const std::string& label,
                           const std::function<void()>& on_end) {
  const auto t0 = std::chrono::steady_clock::now();
  try {
    cf.fit(x, y);
  } catch (const c10::Error& e) {
    const std::string what = e.what_without_backtrace();
    if (what.find("can't allocate memory") != std::string::npos)  // LibTorch's allocator: not a fit problem
      throw Error(detail::concat(label, ": the closed-form fit ran out of memory (", printable(what, 200),
                                 "); its matrices grow with the inputs (each one-hot category is one) and the "
                                 "rows: leave wide categories out of data.features, or train on fewer rows; "
                                 "nothing was written for this split"));
    throw Error(detail::concat(label, ": the closed-form fit failed (", printable(what, 200),
                               "). Most likely cause: ", kClosedFormCause, "; nothing was written for this split"));
  } catch (const std::bad_alloc&) {
    throw Error(detail::concat(label, ": the closed-form fit ran out of memory; its matrices grow with the inputs "
                               "(each one-hot category is one) and the rows: leave wide categories out of "
                               "data.features, or train on fewer rows; nothing was written for this split"));
  }
  TrainStats st;
  st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  st.final_loss = std::nan("");
  inf.end();
  if (on_end) on_end();
  check_fit(inf, x, y, suspects, label, 0, true);
  spdlog::info("{}: fitted in closed form ({:.3g} s)", label, st.seconds);
  return st;
}

// Mini-batches of B rows in a fresh random order each pass over the N rows (a
// pass's tail shorter than a batch is skipped).
class Batches {
 public:
  Batches(const torch::Tensor& x, const torch::Tensor& y, int64_t B, const at::Generator& gen)
      : x_(x), y_(y), N_(x.size(0)), B_(B), perm_(torch::randperm(N_, gen, torch::kInt64)) {}
  std::pair<torch::Tensor, torch::Tensor> next(const at::Generator& gen) {
    if (pos_ + B_ > N_) {
      perm_ = torch::randperm(N_, gen, torch::kInt64);
      pos_ = 0;
    }
    auto xb = gather_rows(x_, perm_, pos_, B_);
    auto yb = gather_rows(y_, perm_, pos_, B_);
    pos_ += B_;
    return {xb, yb};
  }

 private:
  const torch::Tensor& x_;
  const torch::Tensor& y_;
  int64_t N_, B_;
  torch::Tensor perm_;
  int64_t pos_ = 0;
};

// The loop's clock: t0 is moved forward by the time spent in on_every, so
// steps/s counts training steps only.
struct Clock {
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now(), last_print = t0;
  bool tty = ::isatty(STDERR_FILENO);
  bool printed = false;  // a log line (with its estimate of the time left) was printed
};

// Every kCheckEvery steps, at each log line and at each progress update: the
// loss must be finite and every parameter below kMaxAbsParam (else training
// stops with a diagnosis); prints the progress line or the log line. Returns
// the loss read, or `loss_value` when this step reads none.
double check_and_report(infer::Inference& inf, const std::string& suspects, const LoopOptions& o,
                        const std::string& label, int64_t t, int64_t total, bool last, const torch::Tensor& loss,
                        double lr, Clock& clock, double loss_value) {
  constexpr double kMaxAbsParam = 1e6;
  constexpr int64_t kCheckEvery = 100;
  const auto now = std::chrono::steady_clock::now();
  // off a terminal, a line at least every 30 s too, not only every log_every steps, and
  // the first (with its estimate of the time left) after 5 s, however slow the steps
  const double since_print = std::chrono::duration<double>(now - clock.last_print).count();
  const bool log_line = (t + 1) % o.log_every == 0 || last ||
                        (!clock.tty && (since_print > 30 || (!clock.printed && since_print > 5)));
  const bool progress = clock.tty && since_print > 0.25;
  if (!(log_line || progress || (t + 1) % kCheckEvery == 0)) return loss_value;
  loss_value = loss.item<double>();
  if (!std::isfinite(loss_value)) diverged(label, t + 1, detail::concat("the loss is ", loss_value), suspects, inf);
  const double max_abs = inf.max_abs_param();
  if (!(max_abs <= kMaxAbsParam))
    diverged(label, t + 1, detail::concat("a parameter reached magnitude ", max_abs), suspects, inf);
  const double secs = std::chrono::duration<double>(now - clock.t0).count();
  const double rate = (t + 1) / std::max(secs, 1e-9);
  const double eta = static_cast<double>(total - t - 1) / std::max(rate, 1e-9);
  if (progress && !log_line) {
    std::fprintf(stderr, "\r%s step %lld/%lld  loss %.4g  lr %.3g  %.4g steps/s  %s left   ", label.c_str(),
                 static_cast<long long>(t + 1), static_cast<long long>(total), loss_value, lr, rate,
                 duration_text(eta).c_str());
    heartbeat::touch();
    clock.last_print = now;
  } else if (log_line) {
    if (clock.tty) std::fprintf(stderr, "\r%*s\r", 110, "");
    spdlog::info("{} step {}/{}  {} {:.5g}  {}  lr {:.3g}  {:.4g} steps/s  {} left", label, t + 1, total,
                 infer::capabilities_of(inf.method()).objective, loss_value, inf.likelihood().log_text(), lr,
                 rate, duration_text(eta));
    clock.last_print = now;
    clock.printed = true;
  }
  return loss_value;
}

TrainStats train_loop(infer::Inference& inf, const torch::Tensor& x_in, const torch::Tensor& y_in,
                      const std::string& suspects, const LoopOptions& o, const at::Generator& gen,
                      const std::string& label, int64_t every, const std::function<bool(int64_t)>& on_every,
                      const std::function<void()>& on_end) {
  const auto x = x_in.to(o.dtype).contiguous();
  const auto y = y_in.to(o.dtype).contiguous();
  const int64_t N = x.size(0);
  WHVI_CHECK(N > 0, "training: the training set is empty");
  const int64_t total = o.total_steps;
  const std::vector<int64_t> chw = o.augment ? models::image_shape_for(x.size(1)) : std::vector<int64_t>{};
  inf.begin(N, total, gen);
  const heartbeat::Phase training(label + ": training");
  if (auto* cf = inf.closed_form()) return fit_closed_form(inf, *cf, x, y, suspects, label, on_end);

  check_step_memory(inf, x, std::min<int64_t>(o.batch_size, N), label);
  Batches batches(x, y, std::min<int64_t>(o.batch_size, N), gen);
  TrainStats st;
  Clock clock;
  double loss_value = std::nan("");
  const int64_t trace_every = std::max<int64_t>(1, total / 50);
  const bool trace = std::isfinite(inf.kl_value());
  int64_t done = total;
  for (int64_t t = 0; t < total; ++t) {
    auto [xb, yb] = batches.next(gen);
    if (o.augment) xb = data::augment_images(xb, chw, gen);
    if (!o.device.is_cpu()) {
      // The data stay on the CPU; each mini-batch is copied over.
      xb = xb.to(o.device);
      yb = yb.to(o.device);
    }
    torch::Tensor loss;
    try {
      loss = inf.step(xb, yb, t, gen);
    } catch (const NonFiniteError& e) {  // a step that cannot go on (e.g. targets drawn from non-finite outputs)
      diverged(label, t + 1, e.what(), suspects, inf);
    }
    const double lr = inf.step_size(t);
    st.final_lr = lr;
    heartbeat::touch();  // a step done is progress: the watcher speaks only inside a long one

    bool stop = false;
    if (every > 0 && on_every && ((t + 1) % every == 0 || t + 1 == total)) {
      const auto c0 = std::chrono::steady_clock::now();
      const heartbeat::Phase measuring(label + ": measuring at step " + std::to_string(t + 1) +
                                       " (the stopping rule's held-out rows, or the learning curve)");
      stop = on_every(t + 1);
      const auto spent = std::chrono::steady_clock::now() - c0;
      clock.t0 += spent;
      clock.last_print += spent;
    }
    const bool last = t + 1 == total || stop;
    if (trace && ((t + 1) % trace_every == 0 || last)) {
      st.trace_step.push_back(static_cast<double>(t + 1));
      st.trace_loss.push_back(loss.item<double>());
      st.trace_kl.push_back(inf.kl_value());
      st.trace_kl_weight.push_back(inf.kl_factor(t));
    }
    loss_value = check_and_report(inf, suspects, o, label, t, total, last, loss, lr, clock, loss_value);
    if (stop) {
      done = t + 1;
      spdlog::info("{}: stopped at step {} of {}", label, done, total);
      break;
    }
  }
  st.steps = done;
  st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - clock.t0).count();
  st.steps_per_second = static_cast<double>(done) / std::max(st.seconds, 1e-9);
  st.final_loss = loss_value;
  inf.end();
  if (on_end) on_end();
  if (auto* post = inf.after_steps()) post->fit(x, y);
  check_fit(inf, x, y, suspects, label, done);
  return st;
}

}  // namespace

std::string divergence_message(const std::string& label, int64_t t, const std::string& what,
                               const std::string& suspects) {
  return detail::concat(label, ": training diverged at step ", t, ": ", what, ". Most likely cause: ", suspects,
                        ". Lower the learning rate (or restore those settings) and run again; "
                        "nothing was written for this split");
}

void LoopOptions::finish() {
  total_steps = steps_fixed_noise + steps;
  dtype = dtype_name == "float64" ? torch::kFloat64 : torch::kFloat32;
  device = device_name == "cuda" ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);
}

void check_before_steps(infer::Inference& inference, const torch::Tensor& x, const LoopPlan& plan,
                        const std::string& label) {
  const auto& o = plan.options;
  inference.to(o.dtype);
  const auto xs = x.to(o.dtype).contiguous();
  WHVI_CHECK(xs.size(0) > 0, "training: the training set is empty");
  inference.begin(xs.size(0), o.total_steps, make_generator(0));  // a throwaway generator: nothing is trained
  if (inference.closed_form()) return;
  check_step_memory(inference, xs, std::min<int64_t>(o.batch_size, xs.size(0)), label);
}

TrainStats train(infer::Inference& inference, const torch::Tensor& x, const torch::Tensor& y, const LoopPlan& plan,
                 const at::Generator& gen, const std::string& label, int64_t every,
                 const std::function<bool(int64_t)>& on_every, const std::function<void()>& on_end) {
  const auto& o = plan.options;
  inference.to(o.dtype);
  inference.to_device(o.device);
  return train_loop(inference, x, y, plan.suspects, o, gen, label, every, on_every, on_end);
}

}  // namespace whvi::train
