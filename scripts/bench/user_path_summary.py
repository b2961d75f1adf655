#!/usr/bin/env python3
"""SUMMARY.md of scripts/bench/user_path_vs_pytorch.sh: best of the rounds of
`whvi train`'s steps/s (the record's `steps_per_second`) for yacht's WHVI and MFG,
and of plain PyTorch's MLP and Bayes by backprop at the same shape, with the
ratios WHVI / MLP and MFG / BBB; also whvi's whole command (`wall_seconds`:
loading, training, evaluation, writing) as steps per wall second.

  python3 scripts/bench/user_path_summary.py OUT_DIR
"""
import glob
import json
import os
import sys


def main():
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__, file=sys.stdout if len(sys.argv) == 2 else sys.stderr)
        return 0 if len(sys.argv) == 2 else 2
    out = sys.argv[1]
    whvi, wall, torch_rates, meta = {}, {}, {}, {}
    for path in sorted(glob.glob(os.path.join(out, "whvi-train-*-r*.json"))):
        with open(path) as f:
            rec = json.load(f)
        kind = rec["config"]["model"]["kind"]
        s = rec["splits"][0]
        whvi.setdefault(kind, []).append(s["steps_per_second"])
        wall.setdefault(kind, []).append(s["steps"] / rec["wall_seconds"])
        meta = dict(commit=rec.get("whvi_commit"), cpu=rec.get("cpu_model"), simd=rec.get("simd_level"),
                    command=rec.get("command"))
    for path in sorted(glob.glob(os.path.join(out, "pytorch-r*.json"))):
        with open(path) as f:
            rec = json.load(f)
        for row in rec["rows"]:
            torch_rates.setdefault(row["kind"], []).append(row["steps_per_second"])
        meta["torch"] = rec.get("torch_version")
        meta["torch_command"] = rec.get("command")
    best = lambda xs: max(xs) if xs else float("nan")  # noqa: E731
    print("# whvi train (the user's path) against plain PyTorch, yacht's shape\n")
    print(f"Written by `scripts/bench/user_path_summary.py` from the records in this folder. whvi commit "
          f"{meta.get('commit')}, {meta.get('cpu')}, SIMD {meta.get('simd')}, 1 thread; PyTorch "
          f"{meta.get('torch')}, 1 thread. Best of {len(whvi.get('whvi', []))} interleaved rounds.\n")
    print(f"whvi command (one of them): `{meta.get('command')}`\n")
    print(f"PyTorch command (one of them): `{meta.get('torch_command')}`\n")
    print("| contender | steps/s (best) | every round | × plain MLP | × Bayes by backprop |")
    print("|---|---:|---|---:|---:|")
    mlp, bbb = best(torch_rates.get("mlp", [])), best(torch_rates.get("bbb", []))
    for name, xs, ref in (("pytorch-mlp", torch_rates.get("mlp", []), None),
                          ("pytorch-bbb", torch_rates.get("bbb", []), None),
                          ("whvi train: WHVI (training loop)", whvi.get("whvi", []), "mlp"),
                          ("whvi train: WHVI (whole command)", wall.get("whvi", []), "mlp"),
                          ("whvi train: MFG (training loop)", whvi.get("mfg", []), "bbb"),
                          ("whvi train: MFG (whole command)", wall.get("mfg", []), "bbb")):
        b = best(xs)
        rounds = " / ".join(f"{x:,.0f}" for x in xs)
        r_mlp = f"{b / mlp:.2f}" if ref == "mlp" else ""
        r_bbb = f"{b / bbb:.2f}" if ref == "bbb" else ""
        print(f"| {name} | {b:,.0f} | {rounds} | {r_mlp} | {r_bbb} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
