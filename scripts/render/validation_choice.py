#!/usr/bin/env python3
"""The criterion of configs/selection/protocol-table6-select.yaml, applied to the records of
`scripts/experiments/select_defaults.sh --stage table6-select`: per data set the model of
lowest validation MNLL (the predictive's, averaged over the stage's splits) is chosen, a
model missing or not finite on any split is not; the chosen model's test MNLL is then read
from its record in TEST_FOLDER (<set>-<model>.json, mean and standard error over its
splits) and set beside the lowest test MNLL there, which no selection could know. Writes
Markdown to stdout; every number comes from the records.

    python3 scripts/render/validation_choice.py STAGE_FOLDER CANDIDATES TEST_FOLDER > STAGE_FOLDER/CHOSEN.md
"""
import glob
import json
import math
import os
import sys

from cli import args
from wide_criterion import candidates, finite, owner


def validation_mnll(record):
    """The mean validation MNLL over a stage record's splits, with their count; None where a
    split is not finite or was not evaluated on validation rows."""
    splits = record.get("splits") or []
    values = [finite(s.get("mnll")) for s in splits]
    if not values or any(v is None for v in values) or record.get("protocol", {}).get("evaluated_on") != "validation":
        return None, len(splits)
    return sum(values) / len(values), len(values)


def test_mnll(path):
    """A test record's MNLL: mean and standard error over its splits, and their count."""
    if not os.path.exists(path):
        return None
    splits = json.load(open(path)).get("splits") or []
    values = [finite(s.get("mnll")) for s in splits]
    if not values or any(v is None for v in values):
        return None
    n = len(values)
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else math.nan
    return mean, sd / math.sqrt(n), n


def main():
    folder, cand_file, test_folder = args(__doc__, 3, 3)
    cands = candidates(cand_file)
    by_set = {}
    for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
        key = os.path.basename(path)[: -len(".json")]
        model = owner(key, cands)
        if model is None:
            continue
        name = next(n for m, n in cands if m == model and key.endswith(f"-{m}-{n}"))
        by_set.setdefault(key[: -len(f"-{model}-{name}")], {})[model] = json.load(open(path))
    if not by_set:
        sys.exit(f"validation_choice: no records of the candidates in {folder}")
    protocol = cand_file.replace("candidates-", "protocol-").replace(".txt", ".yaml")
    print("# The model chosen on validation rows, and its test MNLL\n")
    print(f"Written by `python3 scripts/render/validation_choice.py {folder} {cand_file} {test_folder}` from "
          f"the records in this folder (validation rows only) and the test records in `{test_folder}`; the "
          f"criterion is the one written in `{protocol}` before its runs.\n")
    print("## Validation MNLL (mean over the splits; the chosen model in bold)\n")
    models = [m for m, _ in cands]
    print("| data set | splits | " + " | ".join(models) + " |")
    print("|---|---:|" + "---|" * len(models))
    chosen = {}
    for s in sorted(by_set):
        got = {m: validation_mnll(r) for m, r in by_set[s].items()}
        ok = {m: v for m, (v, _) in got.items() if v is not None}
        if ok:
            chosen[s] = min(ok, key=lambda m: (ok[m], models.index(m)))
        cells = []
        for m in models:
            if m not in got:
                cells.append("–")
            elif got[m][0] is None:
                cells.append("failed")
            else:
                cells.append(f"**{got[m][0]:.4f}**" if chosen.get(s) == m else f"{got[m][0]:.4f}")
        n = max(k for _, k in got.values())
        print(f"| {s} | {n} | " + " | ".join(cells) + " |")
    print("\n## Test MNLL of the chosen model\n")
    print(f"From `{test_folder}/<set>-<model>.json` (mean ± standard error over its splits); the last column "
          "is the lowest test MNLL of any of the stage's models there, known only after the fact.\n")
    print("| data set | chosen on validation | its test MNLL | test splits | lowest test MNLL (model) |")
    print("|---|---|---:|---:|---|")
    for s in sorted(by_set):
        tests = {m: test_mnll(os.path.join(test_folder, f"{s}-{m}.json")) for m in models}
        tests = {m: t for m, t in tests.items() if t is not None}
        best = min(tests, key=lambda m: tests[m][0]) if tests else None
        best_cell = f"{tests[best][0]:.3f} ({best})" if best else "–"
        m = chosen.get(s)
        if m is None or m not in tests:
            print(f"| {s} | {m or 'none'} | – | – | {best_cell} |")
            continue
        mean, se, n = tests[m]
        print(f"| {s} | {m} | {mean:.3f}{f' ± {se:.3f}' if n > 1 else ''} | {n} | {best_cell} |")


if __name__ == "__main__":
    main()
