#!/usr/bin/env python3
"""The Fashion-MNIST WHVI gap table: for each experiment record (one split,
validation images held out, a learning curve with training rows,
evaluation.curve_train_rows), the final validation error, MNLL and ECE (the
record's split, 64 samples), the last curve point's training error and MNLL
(16 samples on the first 6,000 images the steps fit) and the lowest validation
error along the curve with its step.

  python3 scripts/render/fashion_whvi_gap.py EXPERIMENT.json...

Nothing is recomputed but rounding.
"""
import json
import sys

from cli import args


def main():
    paths = args(__doc__, least=1)
    print("# WHVI against MC dropout on Fashion-MNIST FC 400x2, validation images\n")
    print("Written by `scripts/render/fashion_whvi_gap.py` from the records (validation: 6,000 of the "
          "60,000 training images, held out; the test images are never read). Validation columns: the "
          "record's evaluation with 64 samples; training columns: the last learning-curve point, 16 samples "
          "on the first 6,000 images the steps fit; best: the lowest validation error of the curve "
          "(16 samples).\n")
    print("| run | parameters | steps | validation error | validation MNLL | ECE | training error | "
          "training MNLL | gap (val − train error) | best validation error (step) | commit |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for path in paths:
        with open(path) as f:
            rec = json.load(f)
        s = rec["splits"][0]
        curve = s.get("curve") or []
        last = curve[-1] if curve else {}
        best = min(curve, key=lambda p: p["error"]) if curve else None
        te = last.get("train_error")
        params = s["params"]["total"] if isinstance(s["params"], dict) else s["params"]
        cells = [rec["experiment"], f"{params:,}", f"{s['steps']:,}", f"{100 * s['error']:.2f}%",
                 f"{s['mnll']:.3f}", f"{s['ece']:.3f}",
                 f"{100 * te:.2f}%" if te is not None else "",
                 f"{last['train_mnll']:.3f}" if last.get("train_mnll") is not None else "",
                 f"{100 * (s['error'] - te):.2f}" if te is not None else "",
                 f"{100 * best['error']:.2f}% ({best['step']:,})" if best else "",
                 rec.get("whvi_commit", "?")[:7]]
        print("| " + " | ".join(cells) + " |")
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
