#!/usr/bin/env python3
"""The mission's headline figures for one experiment directory of run_experiment.sh: for each
strategy, the medians over the runs of its final test accuracy and of the wall time at which it
first reached all-reduce's final accuracy less 0.5 points (all-reduce's own median final accuracy
sets the target), with the ratios against all-reduce, and whether each switch order ended above
the asynchronous parameter server.

    examples/cluster/headline.py OUT [--margin 0.005]

Reads OUT/runs-K.csv (every epoch of every strategy, run K); prints a table, and with --json
writes the same figures as JSON.
"""
import argparse
import csv
import glob
import json
import math
import os
import re
import statistics
import sys

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("out", help="a directory written by run_experiment.sh")
parser.add_argument("--margin", type=float, default=0.005, help="below all-reduce's final accuracy (0.005: 0.5 points)")
parser.add_argument("--json", help="also write the figures here")
args = parser.parse_args()

files = sorted(glob.glob(os.path.join(args.out, "runs-*.csv")), key=lambda f: int(re.findall(r"\d+", f)[-1]))
if not files:
    sys.exit(f"headline.py: no runs-K.csv in {args.out}: give a directory written by examples/cluster/run_experiment.sh")

# runs[k][strategy] = [(wall_seconds, test_accuracy), ...] in epoch order
runs = []
for name in files:
    epochs = {}
    with open(name) as f:
        for row in csv.DictReader(f):
            epochs.setdefault(row["strategy"], []).append((float(row["wall_seconds"]), float(row["test_accuracy"])))
    runs.append(epochs)
strategies = list(dict.fromkeys(s for run in runs for s in run))
if "allreduce" not in strategies:
    sys.exit(f"headline.py: the runs in {args.out} have no allreduce strategy to compare with")


def median(values):
    m = statistics.median(values)
    return None if math.isinf(m) else m


final = {s: median([run[s][-1][1] for run in runs if s in run]) for s in strategies}
target = final["allreduce"] - args.margin


def time_to(epochs, accuracy):
    return next((wall for wall, acc in epochs if acc >= accuracy), math.inf)


reach = {s: median([time_to(run[s], target) for run in runs if s in run]) for s in strategies}
wall = {s: median([run[s][-1][0] for run in runs if s in run]) for s in strategies}
base_reach, base_wall = reach["allreduce"], wall["allreduce"]
figures = []
for s in strategies:
    figures.append({
        "strategy": s,
        "final_accuracy": final[s],
        "points_vs_allreduce": 100 * (final[s] - final["allreduce"]),
        "points_vs_ps": 100 * (final[s] - final["ps"]) if "ps" in final else None,
        "seconds_to_target": reach[s],
        "time_to_target_vs_allreduce": reach[s] / base_reach if reach[s] is not None and base_reach else None,
        "wall_seconds": wall[s],
        "wall_vs_allreduce": wall[s] / base_wall if base_wall else None,
    })

print(f"{len(runs)} run(s) in {args.out}; target: all-reduce's final {100 * final['allreduce']:.2f}% "
      f"- {100 * args.margin:.1f} points = {100 * target:.2f}%")
print(f"{'strategy':<14} {'final':>8} {'vs AR':>7} {'vs PS':>7} {'s to target':>12} {'vs AR':>7} {'wall s':>8} {'vs AR':>7}")


def show(value, pattern):
    return "never" if value is None else format(value, pattern)


for f in figures:
    print(f"{f['strategy']:<14} {100 * f['final_accuracy']:>7.2f}% {f['points_vs_allreduce']:>+7.2f} "
          f"{show(f['points_vs_ps'], '+7.2f'):>7} {show(f['seconds_to_target'], '12.1f'):>12} "
          f"{show(f['time_to_target_vs_allreduce'], '7.2f'):>7} {f['wall_seconds']:>8.1f} {f['wall_vs_allreduce']:>7.2f}")
if args.json:
    with open(args.json, "w") as f:
        json.dump({"runs": len(runs), "target_accuracy": target, "strategies": figures}, f, indent=2)
