#!/usr/bin/env python3
"""Best-of-rounds table of `whvi bench train` rows against plain PyTorch rows
(scripts/bench/plain_pytorch_train.py), as written by scripts/bench/vs_pytorch.sh.

  python3 scripts/bench/compare_vs_pytorch.py --out PREFIX WHVI_JSON... PYTORCH_JSON...

Each input is one program's JSON of one round; rows are matched by (contender, width) and
the best steps/s over the rounds is kept (best of 3). Ratios: every whvi
contender against the plain MLP, and MFG (both engines) against Bayes by backprop (the
goals: WHVI >= 3x the plain MLP, MFG >= 3x Bayes by backprop). Writes PREFIX.json
and PREFIX.md; no number is typed in, all come from the inputs.
"""
import argparse
import json
import os
import sys


def contender(doc, row):
    if doc.get("benchmark") == "plain-pytorch-train":
        return "pytorch-" + row["kind"]
    spec = row.get("spec", row["kind"])
    if row.get("splits", 1) != 1:
        spec += f"/splits{row['splits']}"
    # rows name their engine (whvi:training.engine=autograd); older runs' plain kind meant autograd
    spec = spec.replace(":training.engine=autograd", "").replace("training.engine=autograd", "")
    return "whvi-" + spec.replace("training.engine=fused", "fused").replace(":", "+")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("inputs", nargs="+")
    a = p.parse_args()
    best, rounds, meta = {}, {}, {"whvi": [], "pytorch": []}
    for path in a.inputs:
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            sys.exit(f"compare_vs_pytorch: cannot read '{path}': {e}")
        side = "pytorch" if doc.get("benchmark") == "plain-pytorch-train" else "whvi"
        if side == "whvi" and doc.get("benchmark") != "train":
            sys.exit(f"compare_vs_pytorch: '{path}' is neither a `whvi bench train` nor a plain_pytorch_train JSON")
        meta[side].append({k: doc.get(k) for k in ("command", "whvi_commit", "torch_version", "threads",
                                                   "cpu_model", "simd_level", "blas", "batch", "d_in",
                                                   "rows_of_data")} | {"file": os.path.basename(path)})
        for row in doc["rows"]:
            key = (contender(doc, row), int(row["width"]))
            rounds.setdefault(key, []).append(row["steps_per_second"])
            if key not in best or row["steps_per_second"] > best[key]["steps_per_second"]:
                best[key] = dict(row, contender=key[0])
    if not meta["whvi"] or not meta["pytorch"]:
        sys.exit("compare_vs_pytorch: need at least one whvi and one PyTorch JSON")
    for side in meta:
        shapes = {(m["batch"], m["d_in"], m["rows_of_data"]) for m in meta[side]}
        if len(shapes) != 1:
            sys.exit(f"compare_vs_pytorch: {side} rounds differ in batch/d_in/rows: {sorted(shapes)}")
    if {(m["batch"], m["d_in"], m["rows_of_data"]) for side in meta for m in meta[side]}.__len__() != 1:
        sys.exit("compare_vs_pytorch: whvi and PyTorch runs used different problems (batch, d_in, rows)")
    widths = sorted({w for _, w in best})
    names = sorted({c for c, _ in best})
    ratios = []
    for w in widths:
        mlp = best.get(("pytorch-mlp", w))
        bbb = best.get(("pytorch-bbb", w))
        for c in names:
            if not c.startswith("whvi-") or (c, w) not in best:
                continue
            s = best[(c, w)]["steps_per_second"]
            r = {"width": w, "contender": c, "steps_per_second": s}
            if mlp:
                r["vs_pytorch_mlp"] = s / mlp["steps_per_second"]
            if bbb and c.startswith("whvi-mfg"):
                r["vs_pytorch_bbb"] = s / bbb["steps_per_second"]
            ratios.append(r)
    out = {"benchmark": "train-vs-pytorch", "best_of_rounds": len(meta["whvi"]),
           "inputs": meta, "best": [best[k] for k in sorted(best)],
           "rounds_steps_per_second": {f"{c}@w{w}": v for (c, w), v in sorted(rounds.items())},
           "ratios": ratios}
    with open(a.out + ".json.tmp", "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
    os.replace(a.out + ".json.tmp", a.out + ".json")

    m0 = meta["whvi"][0]
    lines = [
        "# Training steps/s: whvi against plain PyTorch, side by side",
        "",
        f"Written by `scripts/bench/compare_vs_pytorch.py` from {len(meta['whvi'])} interleaved rounds "
        f"(best of the rounds per row). whvi commit {m0['whvi_commit']}, {m0['cpu_model']}, "
        f"SIMD {m0['simd_level']}, whvi threads {m0['threads']}, PyTorch {meta['pytorch'][0]['torch_version']} "
        f"threads {meta['pytorch'][0]['threads']}; batch {m0['batch']}, d_in {m0['d_in']}, "
        f"{m0['rows_of_data']} rows, depth 2.",
        "",
        "whvi command: `" + (m0["command"] or "") + "`",
        "",
        "PyTorch command: `" + (meta["pytorch"][0]["command"] or "") + "`",
        "",
        "| width | contender | steps/s (best) | rounds | × plain MLP | × Bayes by backprop |",
        "| ---: | --- | ---: | --- | ---: | ---: |",
    ]
    for w in widths:
        for c in names:
            if (c, w) not in best:
                continue
            s = best[(c, w)]["steps_per_second"]
            rr = next((r for r in ratios if r["width"] == w and r["contender"] == c), {})
            f = lambda k: f"{rr[k]:.2f}" if k in rr else ""
            lines.append(f"| {w} | {c} | {s:,.0f} | {' / '.join(f'{v:,.0f}' for v in rounds[(c, w)])} "
                         f"| {f('vs_pytorch_mlp')} | {f('vs_pytorch_bbb')} |")
    with open(a.out + ".md.tmp", "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(a.out + ".md.tmp", a.out + ".md")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
