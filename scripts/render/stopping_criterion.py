#!/usr/bin/env python3
"""The criterion of configs/selection/protocol-stopping.yaml, applied to the
records of `scripts/experiments/select_defaults.sh --stage stopping`: per (data set, model)
cell the validation predictive MNLL and 95% coverage of the fixed schedule and
of stopping on held-out rows, which is lower, and the verdict (stopping wins if
it has the lower MNLL in a majority of the cells and its mean |coverage - 0.95|
is no larger). Writes Markdown to stdout.

    python3 scripts/render/stopping_criterion.py results/selection/stopping > results/selection/stopping/CRITERION.md
"""
import glob
import json
import os
import sys

from cli import args

folder = (args(__doc__, most=1) or ["results/selection/stopping"])[0]
rows, wins, cov_err = [], 0, {"fixed": [], "stop": []}
for fixed_path in sorted(glob.glob(os.path.join(folder, "*-fixed.json"))):
    stop_path = fixed_path[: -len("-fixed.json")] + "-stop.json"
    if not os.path.exists(stop_path):
        continue
    a, b = (json.load(open(p))["splits"][0] for p in (fixed_path, stop_path))
    win = b["mnll"] < a["mnll"]
    wins += win
    for name, s in (("fixed", a), ("stop", b)):
        cov_err[name].append(abs(s["coverage_95"] - 0.95))
    rows.append(
        f"| {os.path.basename(fixed_path)[:-len('-fixed.json')]} | {a['mnll']:.4g} | {a['coverage_95']:.3f} | "
        f"{b['mnll']:.4g} | {b['coverage_95']:.3f} | {b['stopping']['best_step']} | {b['stopping']['stopped_at']} | "
        f"{'stop' if win else 'fixed'} |"
    )
n = len(rows)
if n == 0:
    sys.exit(f"stopping_criterion: no paired *-fixed.json / *-stop.json records in {folder}")
mf, ms = (sum(cov_err[k]) / n for k in ("fixed", "stop"))
verdict = wins * 2 > n and ms <= mf
print("# Stopping on held-out rows against the fixed schedule (validation rows only)\n")
print(f"Written by `python3 scripts/render/stopping_criterion.py {folder}` from the split-0 records in this folder.\n")
print("| data set-model | fixed MNLL | fixed cov95 | stop MNLL | stop cov95 | best step | stopped at | lower MNLL |")
print("|---|---:|---:|---:|---:|---:|---:|---|")
print("\n".join(rows))
print(f"\nStopping has the lower validation MNLL in **{wins} of {n}** cells; mean |cov95 - 0.95|: "
      f"fixed {mf:.4f}, stop {ms:.4f}.")
print(f"\nCriterion (configs/selection/protocol-stopping.yaml): **{'met: stopping' if verdict else 'not met: fixed'}**.")
