#!/usr/bin/env python3
"""The criterion of configs/selection/protocol-stopping-rule.yaml, applied to the
records of `scripts/experiments/select_defaults.sh --stage stopping-rule`.

Every record trained without stopping, with the held-out stopping rows
measured every 50 steps (`stopping.step`, `stopping.validation_mnll`) and the
learning curve on the validation rows every 50 steps (`curve`). A candidate
rule measures every `every` steps and stops after `patience` measurements
without a lower stopping-row NLL (never before training.steps_fixed_noise);
it keeps the parameters of its best measurement. Replayed on the curves at a
budget B, it is scored by

  loss = validation MNLL at the step it keeps
         - validation MNLL at the step kept by measuring every 50 steps to B
  cost = the steps it trains / B

A rule's interval is every = max(B / K, one epoch if F) rounded to the nearest
multiple of 50 steps (the curves' grid; at least 50); a rule "after the frozen
noise" takes no measurement inside training.steps_fixed_noise (a variant added
after a run on a table outside the pool kept step 110 of 5,500, inside that
phase; added before this replay was first run on the pool). The replay reuses the
every-50-steps measurements, so its Monte Carlo draws are not those a run at
that interval would make.

Writes Markdown to stdout:

    python3 scripts/render/stopping_rule.py results/selection/stopping-rule > results/selection/stopping-rule/CRITERION.md
"""
import glob
import json
import math
import os
import sys

from cli import args

BUDGETS = (5500, 50500)
KS = (25, 50, 100, 200)
PATIENCES = (3, 5, 10, 20)
GRID = 50
MEAN_LOSS, MAX_LOSS = 0.01, 0.1


def load(folder):
    cells = []
    for path in sorted(glob.glob(os.path.join(folder, "*-curve.json"))):
        r = json.load(open(path))
        s = r["splits"][0]
        st = s["stopping"]
        cfg = r["config"]
        val = {int(p["step"]): p["mnll"] for p in s["curve"]}
        stop = dict(zip((int(x) for x in st["step"]), st["validation_mnll"]))
        n_fit = s["n_train"] - st["validation_rows"]
        batch = cfg["training"]["batch_size"]
        cells.append({
            "name": os.path.basename(path)[: -len("-curve.json")],
            "val": val, "stop": stop, "min_steps": cfg["training"]["steps_fixed_noise"],
            "epoch": math.ceil(n_fit / batch),
        })
    return cells


def interval(budget, k, floor_epoch, epoch):
    e = budget / k
    if floor_epoch:
        e = max(e, epoch)
    return max(GRID, GRID * round(e / GRID))


def replay(cell, budget, every, patience, after_frozen=False):
    """(step kept, step stopped) of the rule on this cell's curves; after_frozen:
    no measurement inside training.steps_fixed_noise (the noise variance frozen)."""
    best, best_step, since = math.inf, None, 0
    steps = [t for t in range(every, budget + 1, every) if not after_frozen or t >= cell["min_steps"]]
    if steps[-1] != budget:
        steps.append(budget)  # a run measures at its last step too
    for t in steps:
        nll = cell["stop"][t]
        if math.isfinite(nll) and nll < best:
            best, best_step, since = nll, t, 0
            continue
        since += 1
        if since >= patience and t >= cell["min_steps"]:
            return best_step, t
    return best_step, budget


def score(cells, rule):
    losses, costs, per = [], [], []
    for c in cells:
        for b in BUDGETS:
            ref_kept, _ = replay(c, b, GRID, 10**9)
            kept, stopped = replay(c, b, rule(c, b), rule.patience, rule.after_frozen)
            loss = c["val"][kept] - c["val"][ref_kept]
            losses.append(loss)
            costs.append(stopped / b)
            per.append((c["name"], b, kept, stopped, loss))
    return losses, costs, per


class Rule:
    def __init__(self, name, patience, every_of, after_frozen=False):
        self.name, self.patience, self.every_of, self.after_frozen = name, patience, every_of, after_frozen

    def __call__(self, cell, budget):
        return self.every_of(cell, budget)


def main():
    folder = (args(__doc__, most=1) or ["results/selection/stopping-rule"])[0]
    cells = load(folder)
    if not cells:
        sys.exit(f"stopping_rule: no *-curve.json records in {folder}")
    rules = [Rule("every 500, patience 10 (before)", 10, lambda c, b: 500)]
    for w in (False, True):
        for f in (False, True):
            for k in KS:
                for p in PATIENCES:
                    rules.append(Rule(f"B/{k}{', at least an epoch' if f else ''}, patience {p}"
                                      f"{', after the frozen noise' if w else ''}", p,
                                      lambda c, b, k=k, f=f: interval(b, k, f, c["epoch"]), w))
    print("# Stopping's interval and patience, replayed on learning curves (validation rows only)\n")
    print(f"Written by `python3 scripts/render/stopping_rule.py {folder}` from the {len(cells)} split-0 records "
          f"in this folder, at budgets {', '.join(f'{b:,}' for b in BUDGETS)} steps "
          f"({len(cells) * len(BUDGETS)} cells). Loss: validation MNLL (nats) of the kept parameters minus that "
          "of measuring every 50 steps to the budget; cost: the share of the budget trained. "
          f"Criterion (configs/selection/protocol-stopping-rule.yaml): among the rules with mean loss <= {MEAN_LOSS} "
          f"and largest loss <= {MAX_LOSS}, the lowest mean cost.\n")
    print("| rule | mean loss | largest loss | mean cost | mean cost at 5,500 | mean cost at 50,500 | eligible |")
    print("|---|---:|---:|---:|---:|---:|---|")
    chosen, chosen_cost, details = None, math.inf, {}
    for r in rules:
        losses, costs, per = score(cells, r)
        details[r.name] = per
        ml, xl, mc = sum(losses) / len(losses), max(losses), sum(costs) / len(costs)
        by_b = [sum(c for c, (_, b, *_) in zip(costs, per) if b == bb) / len(cells) for bb in BUDGETS]
        ok = ml <= MEAN_LOSS and xl <= MAX_LOSS
        if ok and mc < chosen_cost and not r.name.endswith("(before)"):
            chosen, chosen_cost = r, mc
        print(f"| {r.name} | {ml:.4f} | {xl:.3f} | {mc:.3f} | {by_b[0]:.3f} | {by_b[1]:.3f} | {'yes' if ok else 'no'} |")
    if chosen is None:
        print("\nNo rule meets the criterion.")
        return
    print(f"\nChosen: **{chosen.name}**.\n")
    print(f"## Each cell under the chosen rule and the rule before\n")
    print("| cell | budget | kept (chosen) | stopped (chosen) | loss (chosen) | kept (before) | stopped (before) | loss (before) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for a, b in zip(details[chosen.name], details[rules[0].name]):
        print(f"| {a[0]} | {a[1]:,} | {a[2]:,} | {a[3]:,} | {a[4]:.4f} | {b[2]:,} | {b[3]:,} | {b[4]:.4f} |")


main()
