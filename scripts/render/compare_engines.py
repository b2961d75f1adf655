#!/usr/bin/env python3
"""The same experiments trained by two engines (training.engine: autograd and fused), split by
split: split k of both has the same data split, initialisation and draws, so what differs is
float rounding carried through training. Writes a markdown table of the per-split differences
in test RMSE and MNLL, each in units of the reference's split-to-split standard deviation (how
far apart two splits of one engine are), and the training time of both.

  python3 scripts/render/compare_engines.py REF_DIR OTHER_DIR OUT.md [--models mcd,mfg,whvi]

e.g. python3 scripts/render/compare_engines.py results/uci results/uci-fused results/uci-fused/ENGINES.md
Only splits present in both files are compared; every number comes from the two folders' result
files (their commits and commands are listed in the output).
"""
import argparse
import json
import math
import os
import statistics
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ref")
    ap.add_argument("other")
    ap.add_argument("out")
    ap.add_argument("--models", default="mcd,mfg,whvi")
    ap.add_argument("--builds", action="store_true",
                    help="the two folders come from two builds of one engine (not two engines): say so in the header")
    a = ap.parse_args()
    models = a.models.split(",")
    rows, commits, worst = [], set(), {}
    for name in sorted(os.listdir(a.other)):
        if not name.endswith(".json") or name.rsplit("-", 1)[-1][:-5] not in models:
            continue
        rp, op = os.path.join(a.ref, name), os.path.join(a.other, name)
        if not os.path.exists(rp):
            continue
        r, o = load(rp), load(op)
        rs = {s["split"]: s for s in r["splits"]}
        os_ = {s["split"]: s for s in o["splits"]}
        common = sorted(set(rs) & set(os_))
        if not common:
            continue
        for s in list(rs.values()) + list(os_.values()):
            commits.add(s.get("whvi_commit", "?"))
        line = [name[:-5], str(len(common))]
        for m in ("rmse", "mnll"):
            ref_vals = [rs[k][m] for k in sorted(rs)]
            sd = statistics.stdev(ref_vals) if len(ref_vals) > 1 else float("nan")
            diffs = [os_[k][m] - rs[k][m] for k in common]
            mean_ref = statistics.mean(rs[k][m] for k in common)
            mean_oth = statistics.mean(os_[k][m] for k in common)
            maxabs = max(abs(d) for d in diffs)
            in_sd = maxabs / sd if sd > 0 else float("nan")
            worst[m] = max(worst.get(m, 0.0), in_sd if not math.isnan(in_sd) else 0.0)
            line += [f"{mean_ref:.4g}", f"{mean_oth:.4g}", f"{maxabs:.3g}", f"{in_sd:.2f}"]
        tr = sum(rs[k]["train_seconds"] for k in common)
        to = sum(os_[k]["train_seconds"] for k in common)
        line += [f"{tr:.0f}", f"{to:.0f}"]
        rows.append(line)
    if not rows:
        sys.exit(f"compare_engines: no experiment with common splits in {a.ref} and {a.other}")
    with open(a.out, "w") as f:
        what = "two builds" if a.builds else "two engines"
        f.write(f"# The same splits trained by {what}\n\n")
        flag = " --builds" if a.builds else ""
        f.write(f"Written by `python3 scripts/render/compare_engines.py{flag} {a.ref} {a.other} {a.out}` from the result files of "
                f"both folders (commits: {', '.join(sorted(commits))}). Split k of both is the same data split, "
                "initialisation and draw sequence; " +
                ("wherever the two builds compute the same thing, every difference column is 0. " if a.builds else
                 "the engines differ by float rounding only, which training carries forward. ") +
                "`max abs diff` is the largest per-split difference; `/ sd` divides it by the "
                "reference's split-to-split standard deviation of that metric. Training seconds come from "
                "different runs, machines and loads: they are not a speed comparison.\n\n")
        f.write("| experiment | splits | RMSE ref | RMSE other | max abs diff | / sd | MNLL ref | MNLL other | "
                "max abs diff | / sd | train s ref | train s other |\n")
        f.write("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
        for line in rows:
            f.write("| " + " | ".join(line) + " |\n")
        f.write(f"\nLargest per-split difference over all experiments, in split-to-split standard deviations: "
                f"RMSE {worst.get('rmse', float('nan')):.2f}, MNLL {worst.get('mnll', float('nan')):.2f}.\n")
    print(f"compare_engines: {len(rows)} experiments -> {a.out}")


if __name__ == "__main__":
    main()
