#!/usr/bin/env python3
"""scripts/render/wide_criterion.py against hand-computed ranks: two models, three
candidates each, three data sets, with a tie, a failed run (non-finite MNLL) and a
missing record; and two models whose names end alike (w and nf-w, the way WHVI and
NF-WHVI do), whose records must not be counted for each other; and a classifier
(ECE, no coverage), whose coverage column reads "–", not "nan". Exit 0 when every
expected line is in the output.

    python3 tests/scripts/wide_criterion_test.py REPO_ROOT
"""
import json
import os
import subprocess
import sys
import tempfile

root = sys.argv[1]
tmp = tempfile.mkdtemp()
# (data set, model, candidate) -> (mnll, calibration error); None: no record
cells = {
    ("a", "m", "x"): (1.0, 0.10), ("a", "m", "y"): (2.0, 0.05), ("a", "m", "z"): (3.0, 0.20),
    ("b", "m", "x"): (1.0, 0.10), ("b", "m", "y"): (1.0, 0.30), ("b", "m", "z"): (0.5, 0.10),
    ("c", "m", "x"): (float("nan"), 0.0), ("c", "m", "y"): (5.0, 0.02), ("c", "m", "z"): None,
    ("a", "n", "p"): (0.0, 0.0), ("a", "n", "q"): (1.0, 0.1),
    ("a", "w", "r"): (1.0, 0.1), ("a", "w", "s"): (2.0, 0.2),
    ("a", "nf-w", "r"): (2.0, 0.2), ("a", "nf-w", "s"): (1.0, 0.1),
}
for (d, m, c), v in cells.items():
    if v is None:
        continue
    split = {"mnll": v[0], "calibration_error": v[1], "coverage_95": 0.95, "n_train": 10}
    with open(os.path.join(tmp, f"{d}-{m}-{c}.json"), "w") as f:
        json.dump({"dataset": d, "splits": [split]}, f)
for c, v in (("u", (0.3, 0.05)), ("v", (0.4, 0.02))):  # a classifier: ECE, no coverage
    with open(os.path.join(tmp, f"a-k-{c}.json"), "w") as f:
        json.dump({"dataset": "a", "splits": [{"mnll": v[0], "ece": v[1], "n_train": 10}]}, f)
cand = os.path.join(tmp, "cands.txt")
with open(cand, "w") as f:
    f.write("# comment\nm x\nm y\nm z\nn p\nn q\nw r\nw s\nnf-w r\nnf-w s\nk u\nk v\n")
out = subprocess.run([sys.executable, os.path.join(root, "scripts/render/wide_criterion.py"), tmp, cand],
                     capture_output=True, text=True, check=True).stdout
# model m, by hand: ranks (mnll, ce) per cell
#   a: x (1, 2), y (2, 1), z (3, 3)
#   b: x (2.5, 1.5), y (2.5, 3), z (1, 1.5)        ties share the mean rank
#   c: x failed (2.5, 2.5), y (1, 1), z missing (2.5, 2.5)   failures tie for last
# scores: x (1.5 + 2 + 2.5) / 3 = 2.0; y (1.5 + 2.75 + 1) / 3 = 1.75; z (3 + 1.25 + 2.5) / 3 = 2.25
expected = [
    "| a | 10 | 1 / 0.100 (1, 2) | 2 / 0.050 (2, 1) | 3 / 0.200 (3, 3) |",
    "| b | 10 | 1 / 0.100 (2.5, 1.5) | 1 / 0.300 (2.5, 3) | 0.5 / 0.100 (1, 1.5) |",
    "| c | 10 | failed or missing (2.5, 2.5) | 5 / 0.020 (1, 1) | failed or missing (2.5, 2.5) |",
    "| x | 3 | 2.000 |",
    "| y | 3 | 1.750 |",
    "| z | 3 | 2.250 |",
    "**M: y** wins (3 cells).",
    "**N: p** wins (1 cells).",
    "**W: r** wins (1 cells).",  # a-nf-w-r is NF-W's record, not W's on a set "a-nf"
    "**NF-W: s** wins (1 cells).",
    "| u | 1 | 1.500 | 0 | – |",  # ranks (1, 2) and (2, 1): tied, u by the lower excess MNLL
    "| v | 1 | 1.500 | 0.1 | – |",
    "**K: u** wins (1 cells).",
]
missing = [e for e in expected if e not in out]
if missing:
    print("wide_criterion_test: missing from the output:\n" + "\n".join(missing) + "\n--- output:\n" + out)
    sys.exit(1)
print("wide_criterion_test: ok")
