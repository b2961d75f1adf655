#!/usr/bin/env python3
"""The criterion of configs/selection/protocol-wide.yaml (and of the stages that reuse it: protocol-<stage>.yaml), applied to the records of
`scripts/experiments/select_defaults.sh --stage wide`: per (data set, model) cell the
model's candidates ranked by validation predictive MNLL and by validation calibration
error (1 = best, ties share the mean rank, a missing or non-finite record last on
both); a candidate's score is the mean over its model's cells of the two ranks'
mean; the lowest score wins, ties broken by the lower mean excess MNLL over each
cell's best. Writes Markdown to stdout; every number comes from the records.

    python3 scripts/render/wide_criterion.py [results/selection/wide [configs/selection/candidates-wide.txt]] > results/selection/wide/CRITERION.md
"""
import glob
import json
import math
import os
import sys

from cli import args


def candidates(path):
    out = []
    for line in open(path):
        words = line.split()
        if words and not words[0].startswith("#"):
            out.append((words[0], words[1]))
    return out


def owner(key, cands):
    """The model of record `key` (SET-MODEL-NAME): the longest candidate model name it ends with."""
    hits = [m for m, n in cands if key.endswith(f"-{m}-{n}")]
    return max(hits, key=len) if hits else None


def ranks(values):
    """1-based ranks of `values` (None = worst), ties sharing their mean rank."""
    key = [(math.inf if v is None else v) for v in values]
    order = sorted(range(len(key)), key=lambda i: key[i])
    r = [0.0] * len(key)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and key[order[j + 1]] == key[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r


def finite(x):
    return x if isinstance(x, (int, float)) and math.isfinite(x) else None


def cell(splits):
    """One cell's candidates (split records, None when missing): their validation MNLL and
    calibration error (regression: the quantile calibration error; classification: ECE), both
    None where either is missing or not finite, their ranks on each, and the best MNLL."""
    mnll = [finite(g.get("mnll")) if g else None for g in splits]
    ce = [finite(g.get("calibration_error", g.get("ece"))) if g else None for g in splits]
    failed = [a is None or b is None for a, b in zip(mnll, ce)]
    mnll = [None if f else v for f, v in zip(failed, mnll)]
    ce = [None if f else v for f, v in zip(failed, ce)]
    best = min((v for v in mnll if v is not None), default=None)
    return mnll, ce, ranks(mnll), ranks(ce), best


def main():
    given = args(__doc__, most=2)
    folder, cand_file = given + ["results/selection/wide", "configs/selection/candidates-wide.txt"][len(given):]
    cands = candidates(cand_file)
    models = []
    for m, _ in cands:
        if m not in models:
            models.append(m)
    records = {}
    for path in glob.glob(os.path.join(folder, "*.json")):
        name = os.path.basename(path)[: -len(".json")]
        if name == "summary":
            continue
        d = json.load(open(path))
        if not d.get("splits"):
            continue
        records[name] = (d["splits"][0], d.get("dataset", ""))
    print("# MNLL and calibration together (validation rows only)\n")
    protocol = os.path.join(os.path.dirname(cand_file),
                            os.path.basename(cand_file).replace("candidates-", "protocol-").replace(".txt", ".yaml"))
    print(f"Written by `python3 scripts/render/wide_criterion.py {folder} {cand_file}` from the split-0 records "
          f"in this folder; the criterion is the one written in `{protocol}` before its runs.\n")
    verdicts = []
    for model in models:
        names = [n for m, n in cands if m == model]
        # a record belongs to the longest model name it ends with (boston-nf-whvi-refit is NF-WHVI's, not WHVI's)
        sets = sorted({k[: -len(f"-{model}-{n}")] for k in records for n in names
                       if k.endswith(f"-{model}-{n}") and owner(k, cands) == model})
        if not sets:
            continue
        score = {n: [] for n in names}
        excess = {n: [] for n in names}
        cov = {n: [] for n in names}
        print(f"## {model.upper()}\n")
        print("Each cell: validation MNLL / calibration error (MNLL rank, calibration rank); "
              "rows: training rows of the split (after the validation rows are carved out).\n")
        print("| data set | rows | " + " | ".join(names) + " |")
        print("|---|---:|" + "---|" * len(names))
        for s in sets:
            got = [records.get(f"{s}-{model}-{n}") for n in names]
            mnll, ce, r1, r2, best = cell([g[0] if g else None for g in got])
            cells = []
            for i, n in enumerate(names):
                score[n].append((r1[i] + r2[i]) / 2)
                if mnll[i] is not None and best is not None:
                    excess[n].append(mnll[i] - best)
                    cov[n].append(got[i][0].get("coverage_95", float("nan")))
                    cells.append(f"{mnll[i]:.4g} / {ce[i]:.3f} ({r1[i]:g}, {r2[i]:g})")
                else:
                    excess[n].append(math.inf)
                    cells.append(f"failed or missing ({r1[i]:g}, {r2[i]:g})")
            rows = next((g[0].get("n_train") for g in got if g), "")
            print(f"| {s} | {rows} | " + " | ".join(cells) + " |")
        print()
        print("| candidate | cells | score (mean of the two ranks) | mean excess MNLL | mean 95% coverage (regression) |")
        print("|---|---:|---:|---:|---:|")
        summary = []
        for n in names:
            sc = sum(score[n]) / len(score[n])
            ex = sum(excess[n]) / len(excess[n])
            cv = [c for c in cov[n] if finite(c) is not None]  # regression cells only
            cv = f"{sum(cv) / len(cv):.3f}" if cv else "–"  # – : classification only
            summary.append((sc, ex, n))
            print(f"| {n} | {len(score[n])} | {sc:.3f} | {ex:.4g} | {cv} |")
        winner = min(summary)[2]
        print(f"\n**{model.upper()}: {winner}** wins ({len(sets)} cells).\n")
        verdicts.append(f"{model}: {winner}")
    if not verdicts:
        sys.exit(f"wide_criterion: no records of the candidates in {folder}")
    print("Winners: " + "; ".join(verdicts) + ".")


if __name__ == "__main__":
    main()
