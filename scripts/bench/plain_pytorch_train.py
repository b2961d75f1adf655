#!/usr/bin/env python3
"""The reference for `whvi bench train`: training steps/s of plain PyTorch models, written the way a
PyTorch user writes them, on the same synthetic problem as `whvi bench train`.

  /usr/bin/python3 scripts/bench/plain_pytorch_train.py [--kinds mlp,bbb] \
      [--widths 64,128,256] [--depth 2] [--batch 64] [--d-in 8] [--rows 1000] \
      [--steps 2000] [--warmup 200] [--threads 1] [--json FILE]

Needs Debian 12's `python3-torch` (PyTorch 1.13.1, the same OpenBLAS as whvi through
libblas.so.3): `apt-get install python3-torch`, run with /usr/bin/python3.

Kinds:
  mlp  a deterministic MLP (nn.Sequential of nn.Linear and nn.ReLU), mean squared error,
       torch.optim.Adam: the cheapest thing a user would train.
  bbb  Bayes by backprop (Blundell et al. 2015) with the mean-field Gaussian posterior of
       whvi's `mfg` (weights sampled per mini-batch with torch.randn_like, sigma = softplus
       of rho, closed-form KL to N(0, 1)), a learned log noise variance, the negative ELBO
       with the KL divided by N, torch.optim.Adam.

Mini-batches: a fresh torch.randperm per epoch sliced into batches of `batch` rows (the
fast way; a DataLoader would be slower, so the comparison favours PyTorch). Timing: after
`warmup` steps, the wall clock (time.perf_counter) of `steps` steps; peak RSS from
resource.getrusage. No metric here is typed in: every number is measured by this run.
"""
import argparse
import json
import math
import os
import platform
import resource
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class BayesLinear(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.w_mu = nn.Parameter(torch.randn(d_out, d_in) / math.sqrt(d_in))
        self.w_rho = nn.Parameter(torch.full((d_out, d_in), -5.0))
        self.b_mu = nn.Parameter(torch.zeros(d_out))
        self.b_rho = nn.Parameter(torch.full((d_out,), -5.0))

    def forward(self, x):
        w_sigma = F.softplus(self.w_rho)
        b_sigma = F.softplus(self.b_rho)
        w = self.w_mu + w_sigma * torch.randn_like(w_sigma)
        b = self.b_mu + b_sigma * torch.randn_like(b_sigma)
        return F.linear(x, w, b)

    def kl(self):
        kl = 0.0
        for mu, rho in ((self.w_mu, self.w_rho), (self.b_mu, self.b_rho)):
            sigma = F.softplus(rho)
            kl = kl + 0.5 * (sigma.pow(2) + mu.pow(2) - 1.0 - 2.0 * torch.log(sigma)).sum()
        return kl


class BBBNet(nn.Module):
    def __init__(self, d_in, width, depth):
        super().__init__()
        dims = [d_in] + [width] * depth + [1]
        self.layers = nn.ModuleList(BayesLinear(a, b) for a, b in zip(dims[:-1], dims[1:]))
        self.log_noise_var = nn.Parameter(torch.tensor(-2.0))

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i + 1 < len(self.layers):
                x = F.relu(x)
        return x

    def kl(self):
        return sum(layer.kl() for layer in self.layers)


def make_mlp(d_in, width, depth):
    mods = []
    d = d_in
    for _ in range(depth):
        mods += [nn.Linear(d, width), nn.ReLU()]
        d = width
    mods.append(nn.Linear(d, 1))
    return nn.Sequential(*mods)


def bench(kind, width, args):
    torch.manual_seed(args.seed)
    x = torch.randn(args.rows, args.d_in)
    y = torch.sin(x[:, :1]) + 0.1 * torch.randn(args.rows, 1)  # as whvi bench train
    n = args.rows
    if kind == "mlp":
        model = make_mlp(args.d_in, width, args.depth)
    elif kind == "bbb":
        model = BBBNet(args.d_in, width, args.depth)
    else:
        sys.exit(f"plain_pytorch_train: unknown kind '{kind}' (known: mlp, bbb)")
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    state = {"perm": torch.randperm(n), "pos": 0}

    def next_batch():
        if state["pos"] + args.batch > n:
            state["perm"] = torch.randperm(n)
            state["pos"] = 0
        idx = state["perm"][state["pos"]:state["pos"] + args.batch]
        state["pos"] += args.batch
        return x[idx], y[idx]

    def step():
        xb, yb = next_batch()
        opt.zero_grad()
        if kind == "mlp":
            loss = F.mse_loss(model(xb), yb)
        else:
            out = model(xb)
            lv = model.log_noise_var
            nll = 0.5 * (math.log(2 * math.pi) + lv + (yb - out).pow(2) / lv.exp()).mean()
            loss = nll + model.kl() / n
        loss.backward()
        opt.step()
        return loss

    for _ in range(args.warmup):
        step()
    t0 = time.perf_counter()
    for _ in range(args.steps):
        loss = step()
    seconds = time.perf_counter() - t0
    if not math.isfinite(float(loss)):
        sys.exit(f"plain_pytorch_train: {kind} w{width} diverged (loss {float(loss)})")
    params = sum(p.numel() for p in model.parameters())
    return {
        "kind": kind,
        "width": width,
        "depth": args.depth,
        "params": params,
        "steps": args.steps,
        "seconds": seconds,
        "steps_per_second": args.steps / seconds,
        "ms_per_step": 1e3 * seconds / args.steps,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
    }


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--kinds", default="mlp,bbb")
    p.add_argument("--widths", default="64,128,256")
    p.add_argument("--depth", type=int, default=2)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--d-in", type=int, default=8)
    p.add_argument("--rows", type=int, default=1000)
    p.add_argument("--steps", type=int, default=2000)
    p.add_argument("--warmup", type=int, default=200)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json")
    args = p.parse_args()
    for name, v in (("--depth", args.depth), ("--batch", args.batch), ("--d-in", args.d_in),
                    ("--rows", args.rows), ("--steps", args.steps), ("--threads", args.threads)):
        if v < 1:
            sys.exit(f"plain_pytorch_train: {name} must be >= 1 (got {v})")
    if args.batch > args.rows:
        sys.exit(f"plain_pytorch_train: --batch {args.batch} exceeds --rows {args.rows}")
    try:
        widths = [int(w) for w in args.widths.split(",") if w]
        kinds = [k for k in args.kinds.split(",") if k]
    except ValueError:
        sys.exit(f"plain_pytorch_train: --widths must be a comma list of integers (got '{args.widths}')")
    torch.set_num_threads(args.threads)
    rows = []
    for kind in kinds:
        for w in widths:
            r = bench(kind, w, args)
            rows.append(r)
            print(f"{kind:>4} w{w:<5} {r['steps_per_second']:10.1f} steps/s  "
                  f"{r['ms_per_step']:.4f} ms/step  params {r['params']}", flush=True)
    out = {
        "benchmark": "plain-pytorch-train",
        "command": " ".join([os.path.basename(sys.executable)] + sys.argv),
        "torch_version": torch.__version__,
        "python": platform.python_version(),
        "threads": torch.get_num_threads(),
        "env_threads": {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")},
        "cpu_model": cpu_model(),
        "batch": args.batch, "d_in": args.d_in, "rows_of_data": args.rows,
        "warmup": args.warmup, "seed": args.seed,
        "timing": "wall clock of `steps` steps after `warmup` steps (time.perf_counter)",
        "rows": rows,
    }
    if args.json:
        tmp = args.json + ".tmp"
        with open(tmp, "w") as f:
            json.dump(out, f, indent=1, sort_keys=True)
        os.replace(tmp, args.json)


if __name__ == "__main__":
    main()
