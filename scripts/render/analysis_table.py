#!/usr/bin/env python3
"""One Markdown table of experiment records, one row per experiment (unlike
`whvi table`, which keeps one result per data set and model kind): the
analyses compare variants of one model kind.

  python3 scripts/render/analysis_table.py TITLE METRIC[,METRIC...] EXPERIMENT.json...

Each row: the experiment's name, parameters, splits done, and for each metric
the mean ± standard error over splits, from the record's summary (as the
program wrote it: nothing is recomputed but the rounding). The protocol note
of the first record is printed under the table.
"""
import json
import sys

from cli import args


def main():
    argv = args(__doc__, least=3)
    title, metrics, files = argv[0], argv[1].split(","), argv[2:]
    print(f"### {title}\n")
    print("| experiment | parameters | splits | " + " | ".join(f"test {m}" for m in metrics) + " | steps/s | commit |")
    print("|---|---:|---:|" + "---:|" * len(metrics) + "---:|---|")
    note = ""
    for f in files:
        d = json.load(open(f))
        s = d.get("summary", {})
        params = d["splits"][0]["params"]["total"] if d.get("splits") else ""
        cells = []
        for m in metrics:
            e = s.get(m)
            cells.append(f"{e['mean']:.4f} ± {e['sem']:.4f}" if e and e.get("mean") is not None else "–")
        sps = s.get("steps_per_second", {}).get("mean")
        sps_cell = f"{sps:.0f}" if sps else "–"
        print(f"| {d['experiment']} | {params} | {len(d.get('splits', []))} | " + " | ".join(cells) +
              f" | {sps_cell} | {d.get('whvi_commit', '')[:7]} |")
        note = note or d.get("protocol", {}).get("note", "")
    if note:
        print(f"\nProtocol: {note.strip()}")
    print()


main()
