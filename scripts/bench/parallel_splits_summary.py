#!/usr/bin/env python3
"""Reads the records of scripts/bench/parallel_splits.sh and prints their wall
times (whvi's own `wall_seconds`), the ratios, and whether each split's numbers
are identical between the parallel run and the one-thread run one by one."""
import glob, json, os, statistics, sys

if len(sys.argv) != 2 or sys.argv[1] in ('-h', '--help'):
    print(__doc__ + "\nusage: scripts/bench/parallel_splits_summary.py OUT_DIR")
    sys.exit(0 if len(sys.argv) == 2 else 2)
out = sys.argv[1]
runs = {}
for p in sorted(glob.glob(os.path.join(out, '*-r*.json'))):
    name = os.path.basename(p)[:-5]
    kind, _, _ = name.rpartition('-r')
    r = json.load(open(p))
    if r.get('complete') and 'wall_seconds' in r:  # a run still going has neither
        runs.setdefault(kind, []).append(r)
first = next(iter(runs.values()))[0]
print(f"config {first['config_file']}, commit {first['whvi_commit']}, cpu {first['cpu_model']}, "
      f"simd {first['simd_level']}, {len(first['splits'])} splits of {first['splits'][0]['steps']} steps")
for kind, rs in runs.items():
    w = [r['wall_seconds'] for r in rs]
    print(f"{kind:22s} threads {rs[0]['threads']}  workers {rs[0].get('split_workers', 'none')}  "
          f"wall s {', '.join(f'{x:.1f}' for x in w)}  (median {statistics.median(w):.1f})")
med = {k: statistics.median(r['wall_seconds'] for r in rs) for k, rs in runs.items()}
if 'parallel' in med:
    for k in med:
        if k != 'parallel':
            print(f"speed-up of parallel over {k}: {med[k] / med['parallel']:.2f}x")
if 'parallel' in runs and 'onebyone-1thread' in runs:
    keys = ['rmse', 'mnll', 'coverage_95', 'crps']
    same = all(a[k] == b[k] for ra, rb in zip(runs['parallel'], runs['onebyone-1thread'])
               for a, b in zip(ra['splits'], rb['splits']) for k in keys)
    print('parallel splits identical to one-thread one-by-one:', same)
