#!/usr/bin/env python3
"""Which model an example config should train: the criterion of the wide stage applied
across models instead of across one model's candidates (results/selection/README.md,
"The examples' model").

From a selection stage's split-0 records (FOLDER/SET-MODEL-CANDIDATE.json) of one task at
one candidate (the example's own setting), per data set the MODELS are ranked by validation
predictive MNLL and by validation calibration error (1 = best, ties share the mean rank,
a missing or non-finite record last on both); a model's score is the mean over the sets
of the two ranks' mean; the lowest score wins, ties broken by the lower mean excess MNLL
over each set's best, and a tie on both keeps the first model named (the incumbent).
Writes Markdown to stdout; every number comes from the records.

    python3 scripts/render/model_criterion.py FOLDER regression|classification CANDIDATE MODEL[,MODEL...] > OUT.md
"""
import glob
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli import args  # noqa: E402
from wide_criterion import cell, finite  # noqa: E402


def load(folder, candidate, models, task):
    """{(set, model): split-0 record} for the `task` records of `models` at `candidate`."""
    out = {}
    for path in glob.glob(os.path.join(folder, f"*-{candidate}.json")):
        key = os.path.basename(path)[: -len(f"-{candidate}.json")]
        # the longest model name the key ends with owns it (boston-nf-whvi is NF-WHVI's)
        hits = [m for m in models if key.endswith(f"-{m}")]
        if not hits:
            continue
        model = max(hits, key=len)
        d = json.load(open(path))
        if d.get("splits") and d.get("task") == task:
            out[(key[: -len(f"-{model}")], model)] = dict(d["splits"][0],
                                                          _auto_candidates=d.get("auto", {}).get("candidates", []))
    return out


def candidates_seconds(folder, split):
    """model.kind auto: the training seconds of its candidates' runs on this split (0 otherwise)."""
    total = 0.0
    for c in split.get("_auto_candidates", []):
        path = os.path.join(folder, c.get("record", ""))
        if c.get("record") and os.path.exists(path):
            splits = json.load(open(path)).get("splits", [])
            k = split.get("split", 0)
            if k < len(splits):
                total += finite(splits[k].get("train_seconds")) or 0.0
    return total


def main():
    folder, task, candidate, models = args(__doc__, least=4, most=4)
    models = models.split(",")
    rec = load(folder, candidate, models, task)
    sets = sorted({s for s, _ in rec})
    if not sets:
        sys.exit(f"model_criterion: no {task} records of {','.join(models)} at {candidate} in {folder}")
    print(f"# The {task} example's model: MNLL and calibration together across models (validation rows only)\n")
    print(f"Written by `python3 scripts/render/model_criterion.py {folder} {task} {candidate} {','.join(models)}` "
          f"from the split-0 {task} records in this folder at `{candidate}`.\n")
    print("Each cell: validation MNLL / calibration error (MNLL rank, calibration rank).\n")
    print("| data set | " + " | ".join(models) + " |")
    print("|---|" + "---|" * len(models))
    score = {m: [] for m in models}
    excess = {m: [] for m in models}
    cov = {m: [] for m in models}
    secs = {m: [] for m in models}
    for s in sets:
        got = [rec.get((s, m)) for m in models]
        mnll, ce, r1, r2, best = cell(got)
        cells = []
        for i, m in enumerate(models):
            score[m].append((r1[i] + r2[i]) / 2)
            if mnll[i] is None or best is None:
                excess[m].append(float("inf"))
                cells.append(f"failed or missing ({r1[i]:g}, {r2[i]:g})")
                continue
            excess[m].append(mnll[i] - best)
            c = finite(got[i].get("coverage_95"))
            if c is not None:
                cov[m].append(c)
            t = finite(got[i].get("train_seconds"))
            if t is not None:
                secs[m].append(t + candidates_seconds(folder, got[i]))
            cells.append(f"{mnll[i]:.4g} / {ce[i]:.3f} ({r1[i]:g}, {r2[i]:g})")
        print(f"| {s} | " + " | ".join(cells) + " |")
    print("\n| model | sets | score (mean of the two ranks) | mean excess MNLL | "
          "mean 95% coverage (regression) | mean training seconds (one thread; auto: with its candidates') |")
    print("|---|---:|---:|---:|---:|---:|")
    summary = []
    for order, m in enumerate(models):
        sc = sum(score[m]) / len(score[m])
        ex = sum(excess[m]) / len(excess[m])
        cv = f"{sum(cov[m]) / len(cov[m]):.3f}" if cov[m] else "–"
        tm = f"{sum(secs[m]) / len(secs[m]):.1f}" if secs[m] else "–"
        summary.append((sc, ex, order, m))
        print(f"| {m} | {len(score[m])} | {sc:.3f} | {ex:.4g} | {cv} | {tm} |")
    winner = min(summary)[3]
    print(f"\n**{winner}** wins ({len(sets)} sets).")


if __name__ == "__main__":
    main()
