#!/usr/bin/env python3
"""scripts/render/model_criterion.py against hand-computed ranks: two models whose names
end alike (m and nf-m), two regression sets and a classification record the regression
verdict must not read; a full tie, which keeps the first model named; and model.kind
auto, whose cost counts its candidates' training. Exit 0 when every expected line is in
the output.

    python3 tests/scripts/model_criterion_test.py REPO_ROOT
"""
import json
import os
import subprocess
import sys
import tempfile

root = sys.argv[1]
script = os.path.join(root, "scripts/render/model_criterion.py")


def write(folder, name, task, split, auto=None):
    doc = {"task": task, "splits": [split]}
    if auto is not None:
        doc["auto"] = {"candidates": auto}
    with open(os.path.join(folder, name + ".json"), "w") as f:
        json.dump(doc, f)


def run(folder, task, models):
    return subprocess.run([sys.executable, script, folder, task, "e", models],
                          capture_output=True, text=True, check=True).stdout


fails = []


def expect(out, lines):
    fails.extend(f"missing: {e}\n--- output:\n{out}" for e in lines if e not in out)


# a: m (1.0, 0.10), nf-m (2.0, 0.05) -> m (1, 2), nf-m (2, 1)
# b: m (1.0, 0.20), nf-m (0.5, 0.10) -> m (2, 2), nf-m (1, 1)
# scores: m (1.5 + 2) / 2 = 1.75, nf-m (1.5 + 1) / 2 = 1.25
one = tempfile.mkdtemp()
for s, m, v in (("a", "m", (1.0, 0.10)), ("a", "nf-m", (2.0, 0.05)), ("b", "m", (1.0, 0.20)),
                ("b", "nf-m", (0.5, 0.10))):
    write(one, f"{s}-{m}-e", "regression", {"mnll": v[0], "calibration_error": v[1], "coverage_95": 0.9,
                                            "train_seconds": 1.0})
write(one, "c-m-e", "classification", {"mnll": 9.0, "ece": 0.5, "train_seconds": 1.0})
out = run(one, "regression", "m,nf-m")
expect(out, ["| a | 1 / 0.100 (1, 2) | 2 / 0.050 (2, 1) |", "| b | 1 / 0.200 (2, 2) | 0.5 / 0.100 (1, 1) |",
             "| m | 2 | 1.750 |", "| nf-m | 2 | 1.250 |", "**nf-m** wins (2 sets)."])
if "| c |" in out:
    fails.append("the classification record was read for the regression verdict:\n" + out)

# a full tie (same MNLL, same calibration error): the first model named wins
two = tempfile.mkdtemp()
for m in ("m", "nf-m"):
    write(two, f"a-{m}-e", "regression", {"mnll": 1.0, "calibration_error": 0.1, "train_seconds": 1.0})
expect(run(two, "regression", "m,nf-m"), ["**m** wins (1 sets)."])
expect(run(two, "regression", "nf-m,m"), ["**nf-m** wins (1 sets)."])

# auto: its own 1.0 s plus its candidate's 2.0 s; the candidate's record is not a model's;
# ranks m (2, 1.5), auto (1, 1.5): ECE tied
three = tempfile.mkdtemp()
write(three, "a-m-e", "classification", {"mnll": 1.0, "ece": 0.1, "train_seconds": 1.0})
write(three, "a-auto-e", "classification", {"mnll": 0.5, "ece": 0.1, "train_seconds": 1.0, "split": 0},
      auto=[{"kind": "m", "record": "a-auto-e-auto-m.json"}, {"kind": "gp", "skipped": "classes"}])
write(three, "a-auto-e-auto-m", "classification", {"mnll": 0.7, "ece": 0.2, "train_seconds": 2.0})
expect(run(three, "classification", "m,auto"), ["| m | 1 | 1.750 | 0.5 | – | 1.0 |",
                                                "| auto | 1 | 1.250 | 0 | – | 3.0 |", "**auto** wins (1 sets)."])

if fails:
    print("model_criterion_test:\n" + "\n".join(fails))
    sys.exit(1)
print("model_criterion_test: ok")
