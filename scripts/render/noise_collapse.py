#!/usr/bin/env python3
"""The noise-collapse table: for each experiment record (with a learning curve,
evaluation.every), the mean over splits of the validation RMSE, the learned
noise sd (the square root of the curve's noise_var, target's units), their
ratio, the validation MNLL and the 95% coverage at a few steps along training.

  python3 scripts/render/noise_collapse.py EXPERIMENT.json...

Nothing is recomputed but means over splits, square roots and rounding.
"""
import json
import math
import sys

from cli import args

STEPS = (2500, 5000, 10000, 20000, 30000, 40000, 50500)


def main():
    paths = args(__doc__, least=1)
    print("# Learned noise under the paper's fixed schedule (boston, validation rows)\n")
    print("Written by `scripts/render/noise_collapse.py` from the records' learning curves "
          "(validation rows: 20% of each split's training rows; the test rows are never read). "
          "Mean over splits; noise sd = √(learned noise variance), in the target's units.\n")
    for path in paths:
        with open(path) as f:
            rec = json.load(f)
        splits = [s for s in rec["splits"] if s.get("curve")]
        print(f"## {rec['experiment']} ({len(splits)} splits, commit {rec.get('whvi_commit', '?')[:7]})\n")
        print("| step | validation RMSE | noise sd | RMSE / noise sd | validation MNLL | 95% coverage |")
        print("|---:|---:|---:|---:|---:|---:|")
        for step in STEPS:
            pts = [p for s in splits for p in s["curve"] if p["step"] == step]
            if len(pts) != len(splits) or not all("noise_var" in p for p in pts):
                continue
            mean = lambda k: sum(p[k] for p in pts) / len(pts)  # noqa: E731
            rmse, sd = mean("rmse"), sum(math.sqrt(p["noise_var"]) for p in pts) / len(pts)
            print(f"| {step:,} | {rmse:.3f} | {sd:.3f} | {rmse / sd:.2f} | {mean('mnll'):.3f} | "
                  f"{mean('coverage_95'):.3f} |")
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
