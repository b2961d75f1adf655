#!/usr/bin/env python3
"""scripts/render/validation_choice.py against hand-computed choices: two models whose names
end alike (m and nf-m); a model with a non-finite split, which is not chosen; a record
evaluated on test rows, which is not chosen either; a tie, which keeps the model named
first; and the chosen model's test MNLL with its standard error beside the lowest one.
Exit 0 when every expected line is in the output.

    python3 tests/scripts/validation_choice_test.py REPO_ROOT
"""
import json
import os
import subprocess
import sys
import tempfile

root = sys.argv[1]
script = os.path.join(root, "scripts/render/validation_choice.py")


def write(folder, name, mnlls, on="validation"):
    doc = {"protocol": {"evaluated_on": on}, "splits": [{"mnll": v} for v in mnlls]}
    with open(os.path.join(folder, name + ".json"), "w") as f:
        json.dump(doc, f)


stage, test = tempfile.mkdtemp(), tempfile.mkdtemp()
cands = os.path.join(stage, "candidates-x.txt")
with open(cands, "w") as f:
    f.write("# a comment\nm e\nnf-m e\n")
# a: m 1.5, nf-m 1.4 -> nf-m (its record ends like m's)
write(stage, "a-m-e", [1.0, 2.0])
write(stage, "a-nf-m-e", [1.4, 1.4])
# b: nf-m lower on its finite split but not finite on the other -> m
write(stage, "b-m-e", [1.0, 1.0])
write(stage, "b-nf-m-e", [0.5, float("nan")])
# c: nf-m lower but evaluated on test rows -> m
write(stage, "c-m-e", [2.0])
write(stage, "c-nf-m-e", [1.0], on="test")
# d: a tie -> m, named first
write(stage, "d-m-e", [1.0])
write(stage, "d-nf-m-e", [1.0])
# test records: a-nf-m [2, 4] -> 3.000 ± 1.000 (sample sd sqrt(2) / sqrt(2)); a-m [1, 1] the lowest
write(test, "a-nf-m", [2.0, 4.0], on="test")
write(test, "a-m", [1.0, 1.0], on="test")
write(test, "b-m", [5.0], on="test")
out = subprocess.run([sys.executable, script, stage, cands, test], capture_output=True, text=True,
                     check=True).stdout
want = ["| a | 2 | 1.5000 | **1.4000** |", "| b | 2 | **1.0000** | failed |", "| c | 1 | **2.0000** | failed |",
        "| d | 1 | **1.0000** | 1.0000 |", "| a | nf-m | 3.000 ± 1.000 | 2 | 1.000 (m) |",
        "| b | m | 5.000 | 1 | 5.000 (m) |", "| c | m | – | – | – |"]
fails = [f"missing: {w}" for w in want if w not in out]
if fails:
    print("validation_choice_test:\n" + "\n".join(fails) + "\n--- output:\n" + out)
    sys.exit(1)
print("validation_choice_test: ok")
