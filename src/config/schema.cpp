// The one place where experiment parameters, their defaults and bounds live.
// Defaults reproduce the WHVI paper's UCI protocol (supplement D.1).
#include <limits>

#include "config/config.h"

namespace whvi::config {
namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

Param I(std::string key, std::string def, double lo, double hi, std::string help) {
  return {std::move(key), Type::kInt, std::move(def), lo, hi, {}, std::move(help)};
}
Param F(std::string key, std::string def, double lo, double hi, std::string help) {
  return {std::move(key), Type::kFloat, std::move(def), lo, hi, {}, std::move(help)};
}
Param S(std::string key, std::string def, std::vector<std::string> choices, std::string help) {
  return {std::move(key), Type::kString, std::move(def), 0, 0, std::move(choices), std::move(help)};
}
Param B(std::string key, std::string def, std::string help) {
  return {std::move(key), Type::kBool, std::move(def), 0, 0, {}, std::move(help)};
}
}  // namespace

const std::vector<Param>& schema() {
  static const std::vector<Param> params = {
      // ---- data
      S("data.dataset", "", {}, "UCI alias (boston, concrete, energy, kin8nm, naval, power, protein, wine, yacht), a UCI classification set (eeg, magic, letter) MNIST (mnist-mini, mnist), Fashion-MNIST (fashion-mnist; Debian's dataset-fashion-mnist is found by itself) or CIFAR-10 (cifar10-mini, cifar10): these need likelihood.kind softmax, 'toy', synthetic:<name> (friedman, hetero, gap, highdim, linear; the GP benchmarks borehole, hartmann6, rastrigin5, robot, otlcircuit), a CSV/TSV file with a header row (path ending .csv, .tsv, .csv.gz or .tsv.gz; see data.target), or a path to a folder in the UCI layout"),
      S("data.dir", "", {}, "data directory (default: $WHVI_DATA_DIR, else ./data)"),
      S("data.protocol", "paper", {"paper", "standard", "stratified", "random", "kfold"}, "paper: random 90/10 splits from data.split_seed; standard: the stored splits; stratified (classification): random splits that keep each class's share; random: data.splits random splits holding out data.test_fraction (stratified for classification; what paper means for a CSV file); kfold: data.folds folds, each row tested once (stratified for classification)"),
      S("data.target", "", {}, "CSV data: the target column's name (default: the last column)"),
      S("data.features", "", {}, "CSV data: the feature columns' names, a list or comma-separated (default: every column but the target)"),
      S("data.missing", "error", {"error", "drop"}, "CSV data: an empty cell, NA or NaN is an error naming row and column (error), or its row is dropped and counted (drop)"),
      F("data.test_fraction", "0.1", 0.01, 0.99, "fraction of the rows held out for testing by protocol random"),
      I("data.folds", "5", 2, 1000, "number of folds of protocol kfold (data.splits is not used)"),
      I("data.splits", "8", 0, 1000, "number of splits (standard: 0 = all stored)"),
      I("data.split_seed", "0", 0, 9.0e15, "seed of the paper protocol's splits (and of the toy data)"),
      F("data.train_fraction", "0.9", 0.01, 0.99, "training fraction of the paper protocol's splits"),
      I("data.toy_points", "128", 8, 1000000, "number of toy inputs (paper: 128)"),
      I("data.synthetic_rows", "0", 0, 10000000, "rows of a synthetic:<name> problem (0: the problem's default)"),
      B("data.augment", "false", "image data (CIFAR-10, MNIST): random crops with 4-pixel zero padding and horizontal flips of each training mini-batch (off by default, as the authors' code)"),
      F("data.validation_fraction", "0", 0, 0.5, "if > 0: evaluate on this fraction of each training split, carved out at random (hyper-parameter selection); the test rows are never read"),
      // ---- model
      S("model.kind", "whvi", {"whvi", "mfg", "mcd", "nf-whvi", "vsd", "tt", "nng", "sghmc", "ensemble"}, "the model: the kind of its hidden layers and its inference method (whvi, mfg, mcd, nf-whvi, vsd, tt (tensor train): variational; nng: noisy K-FAC; sghmc: SGHMC on a deterministic network; ensemble: a deep ensemble of deterministic networks, ensemble.*)"),
      S("model.architecture", "mlp", {"mlp", "simple-cnn", "alexnet", "vgg16", "resnet18", "rff"}, "mlp, or a convolutional trunk before the fully connected layers (image data; src/models/conv.cpp): simple-cnn (Fig. 7), alexnet, vgg16, resnet18 (the supplement's Tables 7-9); model.depth and model.width then set the fully connected head; or rff: random Fourier features of an RBF kernel (a GP approximation, Fig. 13; src/models/rff.cpp), usually with model.depth 0"),
      S("model.conv", "mcd", {"mcd", "mfg", "whvi", "lowrank-mcd", "nng"}, "kind of the convolutional filters (the paper: MCD): mcd, mfg, whvi (WHVI filter matrices over im2col patches, one g draw per image; options model.whvi.*), lowrank-mcd (MCD with a rank-r filter matrix, Fig. 7), nng (noisy K-FAC filters; only with model.kind nng)"),
      S("model.batch_norm", "auto", {"auto", "on", "off"}, "batch normalisation after every convolution (batch statistics in training steps, running averages at test time): auto = on for resnet18 only"),
      I("model.conv_rank", "0", 0, 1 << 20, "rank of lowrank-mcd filter matrices; 0 = as many parameters as WHVI filters of the same shape"),
      F("model.conv_dropout", "0.005", 0, 0.99, "dropout rate of mcd convolutions (the paper's MCD rate, supplement D.1)"),
      I("model.depth", "2", 0, 64, "number of hidden layers"),
      I("model.width", "128", 1, 1 << 20, "units per hidden layer"),
      S("model.activation", "relu", {"relu", "cos", "tanh"}, "hidden activation"),
      S("model.output_layer", "auto", {"auto", "mfg", "same", "whvi-reshape"}, "output layer kind: auto = mfg for whvi, nf-whvi, tt and mfg, a dropout-free linear layer for mcd, an nng layer for nng, a vsd layer for vsd, a linear layer for sghmc and ensemble; same = the hidden layers' kind; whvi-reshape = the whole weight matrix read from one WHVI matrix (the paper's GP reshape trick, src/models/whvi_reshape.cpp)"),
      F("model.whvi.prior_var", "1.0", 1e-12, kInf, "lambda: prior N(0, lambda I) on g (chosen on validation data, docs/reference.md; the paper says 1e-5)"),
      F("model.whvi.init_g_mean_std", "0.7071067811865476", 0, 1e6, "g mean initialised N(0, s^2): s = 1/sqrt(2) gives W a He-scale variance with kaiming-uniform S1, S2"),
      F("model.whvi.init_g_logvar", "-9.2103403719761836", -50, 10, "initial log variance of g (default log(1e-4): starts near a deterministic net)"),
      B("model.whvi.shared_g", "false", "one g shared by the stacked blocks (authors' linear layer) instead of one per block"),
      S("model.whvi.bias", "deterministic", {"deterministic", "bayesian", "none"}, "bias of WHVI layers"),
      F("model.whvi.bias_prior_var", "0.01", 1e-12, kInf, "prior variance of a Bayesian bias (authors: 0.01)"),
      S("model.whvi.structure", "s1hghs2", {"s1hghs2", "s1hghs2h", "shgh", "gh"}, "W's factorisation (the paper's Table 2): s1hghs2 = S1 H G H S2 (WHVI), s1hghs2h = S1 H G H S2 H, shgh = S H G H, gh = G H; G = diag(g) variational; g's initial scale and prior variance are multiplied by c^2 (1, 1/D, 2/D, 4/D) so every structure starts at the same weight variance"),
      S("model.whvi.s_posterior", "optimised", {"optimised", "mean-field"}, "S1, S2 optimised (WHVI) or mean-field Gaussian variational (Table 2's S_var rows; prior N(0, model.whvi.s_prior_var))"),
      F("model.whvi.s_prior_var", "0", 0, kInf, "prior variance of mean-field S1, S2; 0 = 2/D (the variance of their initial values)"),
      F("model.mfg.prior_var", "0", 0, kInf, "prior variance of the weights; 0 = 1/fan_in (vardl)"),
      F("model.mfg.bias_prior_var", "1.0", 1e-12, kInf, "prior variance of the biases"),
      F("model.mfg.init_logvar", "-9.2103403719761836", -50, 10, "initial log variance of weights and biases (default log(1e-4))"),
      F("model.mfg.init_mean_scale", "1.0", 0, 1e6, "weight means initialised U(-s/sqrt(fan_in), s/sqrt(fan_in))"),
      F("model.mcd.dropout", "0.1", 0, 0.99, "dropout rate after each hidden linear layer, active at test time (chosen on validation data, docs/reference.md; the paper used 0.005)"),
      F("model.mcd.length_scale", "1.0", 0, kInf, "prior length-scale l: KL term (1-p) l^2/2 |W|^2 + l^2/2 |b|^2 (Gal & Ghahramani; chosen on validation data, docs/reference.md; the paper's code used 0.01)"),
      I("model.nf_whvi.flows", "3", 0, 1000, "planar flows on each WHVI layer's g (paper: 10 on the toy problem, 3 on the CNNs); the other settings are model.whvi.*"),
      I("model.vsd.householder", "1", 0, 16, "T: Householder reflections of VSD's noise covariance U diag(alpha) U^T (paper: 1 or 2 at scale; 0 = Gaussian dropout); v_{t+1} = A_t v_t + c_t"),
      F("model.vsd.init_dropout", "0.1", 1e-4, 0.99, "initial alpha = p / (1 - p) of VSD's multiplicative noise (Gaussian dropout with rate p)"),
      B("model.vsd.hierarchical", "false", "VSD's prior hierarchy (paper 3.3): a scale z per input unit, q(z) LogNormal, p(z) Gamma(shape, rate)"),
      F("model.vsd.z_prior_shape", "1.0", 1e-6, kInf, "a: Gamma(a, rate b) prior on z (model.vsd.hierarchical)"),
      F("model.vsd.z_prior_rate", "1.0", 1e-6, kInf, "b: Gamma(a, rate b) prior on z (model.vsd.hierarchical)"),
      I("model.tt.rank", "4", 1, 4096, "R: the TT-rank between cores (tensor-train layer, the paper's Fig. 3)"),
      I("model.tt.cores", "3", 1, 30, "K: number of TT cores; input and output sizes are padded to powers of two and split over them"),
      S("model.tt.variational", "internal", {"internal", "all"}, "which cores are mean-field Gaussian: internal (cores 2 ... K-1, the others optimised, as the paper) or all"),
      F("model.tt.prior_var", "1.0", 1e-12, kInf, "prior N(0, v) on the entries of variational TT cores"),
      I("model.rff.features", "256", 1, 1 << 20, "N_RF: random Fourier features (the trunk has 2 N_RF outputs: sin and cos)"),
      F("model.rff.length_scale", "0", 0, 1e6, "initial RBF length scale (0: sqrt(D)/2, as the authors' vardl)"),
      B("model.rff.learn_hyper", "true", "optimise the length scale and the kernel variance with the ELBO (false: fixed at their initial values)"),
      F("model.nng.prior_var", "1.0", 1e-12, kInf, "eta: prior N(0, eta I) on the weights (authors' UCI config: 1)"),
      F("model.nng.kl_weight", "1.0", 1e-12, kInf, "lambda: the KL weight (1: the ELBO)"),
      F("model.nng.lr", "0.01", 0, 10, "alpha: step of the mean update (authors: 0.01)"),
      F("model.nng.ema", "0.001", 1e-9, 1, "beta: moving-average rate of the Kronecker factors (authors: 1e-3)"),
      F("model.nng.damping", "0", 0, kInf, "extrinsic damping added to gamma_in = lambda / (N eta) (authors: 0)"),
      F("model.nng.momentum", "0.9", 0, 0.999, "momentum of the mean update (authors: 0.9); see model.nng.update"),
      S("model.nng.update", "bias-corrected", {"bias-corrected", "heavy-ball"}, "mean update: bias-corrected momentum on the gradient, then preconditioned (the authors' UCI code) or heavy-ball momentum on the preconditioned gradient with the KL clip (their CIFAR-10 code)"),
      F("model.nng.kl_clip", "0", 0, kInf, "C: heavy-ball steps are scaled so that their squared norm in the preconditioner's metric is at most C x 0.95^epoch (authors' CIFAR-10: 1e-2 with batch norm, 1e-3 without); 0 = off"),
      F("model.nng.decay_at", "0.5", 0, 1, "alpha and beta x0.1 after this fraction of the steps (authors: after 500 of 1000 epochs)"),
      I("model.nng.particles", "10", 1, 1024, "weight samples per training step, each shared by the mini-batch (authors: 10)"),
      I("model.nng.inverse_every", "10", 1, 1e9, "steps between eigendecompositions of the factors (authors: 1; docs/reference.md gives the cost of each)"),
      S("model.nng.sampling", "weights", {"weights", "rows"}, "fully connected layers: form each particle's weights (the authors) or only its effect on the rows, the same draw, cheaper for wide layers and small batches (the prior term then uses the mean)"),
      I("model.nng.stats_every", "1", 1, 1e9, "steps between updates of the Kronecker factors' moving averages (authors: 1 on UCI, 10 on CIFAR-10)"),
      S("model.nng.fisher", "true", {"true", "empirical"}, "S from gradients of targets drawn from the model (true Fisher, the authors) or of the observed targets"),
      F("model.sghmc.prior_var", "0", 0, kInf, "prior N(0, v) on every weight and bias of the deterministic network; 0 = 1/fan_in (as model.mfg.prior_var)"),
      F("model.sghmc.lr", "0.1", 1e-12, 100, "h: preconditioned, the step of coordinate i is h^2 / (N sqrt(v_i)) (0.1 chosen on validation data, results/selection/sghmc; BOHAMIANN's default is 0.01); plain, h / N (0.01 and above diverge on the toy problem; 0.001 works)"),
      B("model.sghmc.precondition", "true", "scale-adapted SGHMC (Springenberg et al. 2016): a diagonal mass matrix from squared gradients averaged during the burn-in, frozen after it"),
      F("model.sghmc.friction", "0.05", 1e-6, 1, "alpha: v <- (1 - alpha) v - eta grad U + N(0, 2 alpha eta)"),
      F("model.sghmc.burn_in", "0.5", 0, 0.99, "fraction of the steps before samples are kept"),
      I("model.sghmc.samples", "100", 1, 100000, "posterior samples kept (thinned evenly over the steps after the burn-in); predictions use all"),
      F("model.sghmc.noise_prior_shape", "1.0", 1e-6, kInf, "a: Gamma(a, b) prior on the noise precision (standardised scale)"),
      F("model.sghmc.noise_prior_rate", "1.0", 0, kInf, "b: Gamma(a, b) prior on the noise precision"),
      // ---- inference
      S("inference.kind", "auto", {"auto", "variational", "ensemble", "sghmc", "nng"}, "how the network's parameters are learned: auto = model.kind's own (variational for whvi, mfg, mcd, nf-whvi, vsd, tt; ensemble for ensemble; sghmc; nng); ensemble with a variational model.kind trains ensemble.members independent variational networks of that kind and predicts with their mixture"),
      I("ensemble.members", "5", 1, 1000, "networks in a deep ensemble (Lakshminarayanan et al. 2017: 5), each initialised from its own draws; the predictive is their uniform mixture"),
      B("ensemble.prior", "false", "deterministic members (model.kind ensemble): add the weights' Gaussian prior (model.sghmc.prior_var) to each member's NLL, a MAP fit; off = the NLL alone, as the paper"),
      // ---- likelihood
      S("likelihood.kind", "gaussian", {"gaussian", "hetero-gaussian", "student-t", "softmax"}, "gaussian (regression, one learned noise variance), hetero-gaussian (regression: the network outputs a mean and a log variance per input, so the noise depends on the input; the predictive is the mixture over samples), student-t (regression: Student's t noise with a learned scale and learned degrees of freedom, robust to outlying targets) or softmax (classification: a categorical likelihood over the network's C outputs)"),
      F("likelihood.student_t.init_df", "4.0", 2.01, 1e4, "student-t: initial degrees of freedom nu (> 2, learned; 4: Lange, Little and Taylor 1989); its initial scale is likelihood.init_log_noise_var"),
      F("likelihood.init_log_noise_var", "-1.5", -30, 10, "initial log noise variance on the standardised target scale (authors: -1.5); student-t: its initial log scale^2"),
      F("likelihood.lr_factor", "1.0", 0, kInf, "learning rate of the noise variance relative to training.lr"),
      // ---- training
      I("training.steps_fixed_noise", "500", 0, 1e9, "first phase: steps with the noise variance frozen"),
      I("training.steps", "50000", 0, 1e9, "second phase: steps with the noise variance optimised"),
      I("training.batch_size", "64", 1, 1e9, "mini-batch size"),
      F("training.lr", "0.001", 0, 10, "lr_0 of the optimiser"),
      S("training.optimizer", "adam", {"adam", "sgd", "rmsprop"}, "optimiser of the variational models (the paper's GP experiments use SGD and RMSprop); nng and sghmc bring their own"),
      F("training.momentum", "0.9", 0, 0.999, "momentum of training.optimizer: sgd"),
      F("training.lr_gamma", "0.0005", 0, kInf, "lr_t = lr_0 (1 + gamma t)^-p"),
      F("training.lr_power", "0.3", 0, kInf, "p of the learning-rate decay"),
      I("training.mc_samples", "1", 1, 4096, "Monte Carlo samples per data point in training"),
      I("training.kl_warmup", "0", 0, 1e9,
        "variational methods: KL annealing, the KL term's weight grows linearly from 1/W to training.kl_weight over "
        "the first W steps (0: off, the full weight from the first step)"),
      F("training.kl_weight", "1.0", 1e-6, 1e6,
        "variational methods: the weight of the KL term in the objective after any warm-up (1: the ELBO; below 1 "
        "tempers the posterior towards the data)"),
      I("training.seed", "0", 0, 9.0e15, "seed of initialisation, batches and noise; split k's streams are derived from (seed, k) only"),
      I("training.batched_splits", "1", 1, 1024, "train this many of the config's splits at once as one batched model (train/batched.h: one forward and backward pass for all, each split with its own generator, optimiser state and checks, so its numbers do not depend on the others in its group); 1: one split at a time. Variational whvi, mfg and mcd MLPs with the gaussian likelihood"),
      S("training.engine", "auto", {"auto", "autograd", "fused"}, "how a variational step computes its gradient: fused (infer/fused_step.h: hand-written forward and backward on reused buffers, the same draws, the same numbers to float rounding, faster; mcd, mfg and default-structure whvi MLPs with the gaussian likelihood on the CPU, one split at a time), autograd (LibTorch's, the reference), or auto: fused wherever it applies, autograd otherwise. Every split record says which ran (engine)"),
      S("training.stopping", "auto", {"auto", "off", "validation"},
        "validation: hold out training.stopping_fraction of each split's training rows, measure the predictive NLL "
        "on them every training.stopping_every steps, stop after training.stopping_patience measurements without "
        "improvement (the configured steps are then the maximum) and keep the parameters of the best measurement "
        "(train/stopping.h; the record's `stopping` says where); off: the fixed schedule; auto: validation for a "
        "CSV file of yours and the synthetic problems (splits of 20 training rows or more), off for the named data "
        "sets (their papers' schedules); chosen on validation rows (results/selection/stopping/). Not for sghmc, "
        "batched splits or a GPU"),
      F("training.stopping_fraction", "0.1", 0.01, 0.5, "training.stopping: share of the training rows held out (at least 1 row)"),
      I("training.stopping_every", "500", 1, 1e9, "training.stopping: steps between measurements on the held-out rows"),
      I("training.stopping_patience", "10", 1, 1e6, "training.stopping: measurements without improvement before training stops (never inside training.steps_fixed_noise)"),
      I("training.stopping_mc_samples", "32", 1, 1e6, "training.stopping: Monte Carlo samples of each measurement"),
      I("training.log_every", "5000", 1, 1e9, "steps between log lines (when not on a terminal)"),
      S("training.dtype", "float32", {"float32", "float64"}, "parameter and activation precision"),
      S("training.device", "cpu", {"cpu", "cuda"}, "where the training steps run: cpu, or cuda (the first visible GPU; pick one with CUDA_VISIBLE_DEVICES) for a build with CUDA. The data and the run's generator stay on the CPU: each mini-batch and each draw is copied over, so a run draws the same numbers on either device. The parameters come back to the CPU after the last step, where prediction, evaluation and checkpoints happen. Variational methods with the autograd engine, one split at a time, no learning curve"),
      // ---- evaluation
      I("evaluation.mc_samples", "64", 1, 1000000, "Monte Carlo samples at test time"),
      S("evaluation.ood_dataset", "", {}, "classifiers: also score this data set's stored test rows (e.g. mnist-mini for a Fashion-MNIST model; same input size) as out-of-distribution and record the AUROC and AUPR of telling them from the test rows by predictive entropy and by mutual information"),
      I("evaluation.every", "0", 0, 1e9, "if > 0: also evaluate every this many steps during training (a learning curve, stored as `curve` in the split's record; the paper's Figs. 2, 3, 7); its Monte Carlo draws come from their own stream, so the trained model does not change"),
      I("evaluation.curve_mc_samples", "16", 1, 1000000, "Monte Carlo samples of each learning-curve point"),
      // ---- output
      S("output.dir", "results/uci", {}, "folder for result files"),
      S("output.name", "", {}, "experiment name (default: the config file's stem); a plain file name: letters, digits, -_.+, not starting with '.'"),
      B("output.checkpoints", "true", "write a checkpoint per split (needed by `whvi eval`)"),
      I("output.grid_points", "0", 0, 1000000, "if > 0 (1-D inputs): predictions on a grid written as CSV"),
      F("output.grid_lo", "-2", -1e15, 1e15, "grid start (original input units)"),
      F("output.grid_hi", "3", -1e15, 1e15, "grid end (original input units)"),
      B("output.plot", "true", "with a grid: render a PNG with gnuplot (scripts/plot_toy.sh)"),
  };
  return params;
}

}  // namespace whvi::config
