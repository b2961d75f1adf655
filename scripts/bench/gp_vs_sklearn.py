#!/usr/bin/env python3
"""The exact GP's fit beside scikit-learn's GaussianProcessRegressor, side by side.

Both fit the same rows with the same model: an ARD squared-exponential kernel
times a signal variance plus white noise, on standardised inputs and targets,
its hyper-parameters maximising the marginal likelihood by L-BFGS from the same
number of starting points (whvi: model.gp.restarts 3; scikit-learn:
n_restarts_optimizer 2, i.e. 3 starts), one thread each. The rows: split 0 of
whvi's own random 90/10 split of synthetic:friedman (ROWS rows, exported by
`whvi data export`), its training rows read back from the record's folder.

whvi's time is the split's `train_seconds` (the fit alone, from its record);
scikit-learn's is the wall time of `fit`. Both are written, with the command,
commit, machine and threads, to OUT/results.json and OUT/RESULTS.md.

  /usr/bin/python3 scripts/bench/gp_vs_sklearn.py [--whvi build/whvi] [--rows 1000] [--out results/bench/...]
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"  # before numpy loads: scikit-learn on one thread, as whvi --threads 1


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--whvi", default="build/whvi")
    ap.add_argument("--rows", type=int, default=1000)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    import numpy as np
    import sklearn
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel

    whvi = os.path.abspath(a.whvi)
    commit = subprocess.run(["git", "rev-parse", "--short=8", "HEAD"], capture_output=True, text=True).stdout.strip()
    out = a.out or f"results/bench/gp-fit-vs-sklearn-{commit}"
    with tempfile.TemporaryDirectory() as tmp:
        csv = os.path.join(tmp, "friedman.csv")
        subprocess.run([whvi, "data", "export", "synthetic:friedman", "--rows", str(a.rows), "--out", csv,
                        "--log-level", "warn"], check=True)
        cfg = os.path.join(tmp, "gp.yaml")
        with open(cfg, "w") as f:
            f.write(f"data:\n  dataset: {csv}\n  target: y\n  splits: 1\nmodel:\n  kind: gp\n"
                    f"output:\n  dir: {tmp}/out\n  name: gp\n")
        subprocess.run([whvi, "--threads", "1", "train", "--config", cfg, "--log-level", "warn"], check=True)
        with open(os.path.join(tmp, "out", "gp.json")) as f:
            rec = json.load(f)
        split = rec["splits"][0]
        whvi_s = split["train_seconds"]
        with open(os.path.join(tmp, "out", "gp", "split-00-test-rows.txt")) as f:  # 0-based data rows
            test = {int(line) for line in f if line.strip() and not line.startswith("#")}
        data = np.genfromtxt(csv, delimiter=",", names=True)
        cols = [c for c in data.dtype.names if c != "y"]
        x = np.column_stack([data[c] for c in cols])
        y = data["y"]
        train = np.array([i for i in range(len(y)) if i not in test])
        xs = (x[train] - x[train].mean(0)) / x[train].std(0)
        kernel = ConstantKernel(1.0, (1e-3, 1e4)) * RBF(np.ones(x.shape[1]), (1e-2, 1e3)) + WhiteKernel(0.1, (1e-6, 10))
        gp = GaussianProcessRegressor(kernel=kernel, normalize_y=True, n_restarts_optimizer=2, random_state=0)
        t0 = time.perf_counter()
        gp.fit(xs, y[train])
        sk_s = time.perf_counter() - t0
    doc = {
        "command": " ".join([os.path.basename(sys.executable)] + sys.argv),
        "commit": commit,
        "machine": f"{cpu_name()}, {os.cpu_count()} cores",
        "threads": 1,
        "rows": {"generated": a.rows, "train": int(len(train))},
        "whvi": {"version": rec.get("whvi_version", rec.get("version")), "commit": rec.get("whvi_commit"),
                 "train_seconds": whvi_s, "starts": 3},
        "sklearn": {"version": sklearn.__version__, "fit_seconds": sk_s, "starts": 3,
                    "log_marginal_likelihood": float(gp.log_marginal_likelihood_value_)},
        "ratio_whvi_over_sklearn": whvi_s / sk_s,
    }
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(doc, f, indent=2)
    with open(os.path.join(out, "RESULTS.md"), "w") as f:
        f.write("# The exact GP's fit against scikit-learn's, side by side\n\n"
                "Written by `scripts/bench/gp_vs_sklearn.py`; do not edit: run it again.\n\n"
                f"- command: `{doc['command']}`\n- commit: `{commit}`\n- machine: {doc['machine']}\n"
                f"- threads: 1 each\n- rows: {len(train)} training rows of synthetic:friedman "
                f"(split 0 of whvi's 90/10 split of {a.rows})\n\n"
                "| | fit seconds | starting points |\n|---|---:|---:|\n"
                f"| whvi (`model.kind: gp`) | {whvi_s:.2f} | 3 |\n"
                f"| scikit-learn {sklearn.__version__} GaussianProcessRegressor | {sk_s:.2f} | 3 |\n\n"
                f"whvi / scikit-learn: {doc['ratio_whvi_over_sklearn']:.3f}\n")
    print(json.dumps(doc, indent=2))


if __name__ == "__main__":
    main()
