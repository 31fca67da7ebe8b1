#!/bin/sh
# The node-aware co-located parameter server in process, for docs/performance.md: fashion_mnist's
# mlp on virtual nodes of 2+2 and 3+3 ranks, pushing per node (--ps-aggregate node) and per rank
# (--ps-aggregate rank), in ROUNDS rounds (default 3) that run the four one after the other.
# Prints the median over the rounds of the workers' exchange seconds per step (the epoch log's
# exchange_seconds over the steps each worker took) and of the training samples per second, and
# leaves every run's summary and log in OUT_DIR.
#
#   examples/bench_ps_aggregate.sh [BUILD_DIR [OUT_DIR [fashion_mnist options...]]]
#
# BUILD_DIR defaults to build, OUT_DIR to bench-ps-aggregate; the options default to
# --consistency sync --batch 16 --epochs 1 --train-limit 9600.
set -eu

build=${1:-build}
if [ $# -gt 0 ]; then shift; fi
out=${1:-bench-ps-aggregate}
if [ $# -gt 0 ]; then shift; fi
if [ $# -eq 0 ]; then set -- --consistency sync --batch 16 --epochs 1 --train-limit 9600; fi
rounds=${ROUNDS:-3}
mnist="$build/examples/fashion_mnist"

mkdir -p "$out"
round=1
while [ "$round" -le "$rounds" ]; do
  for nodes in 2,2 3,3; do
    ranks=$((${nodes%,*} + ${nodes#*,}))
    for aggregate in node rank; do
      name="$out/2x${nodes#*,}-$aggregate-$round"
      echo "+ $mnist --model mlp --ranks $ranks --node-sizes $nodes --strategy ps --servers colocated --ps-aggregate $aggregate $* --quiet --summary $name.json --log $name.csv"
      "$mnist" --model mlp --ranks "$ranks" --node-sizes "$nodes" --strategy ps --servers colocated \
        --ps-aggregate "$aggregate" "$@" --quiet --summary "$name.json" --log "$name.csv" > /dev/null
    done
  done
  round=$((round + 1))
done

python3 - "$out" "$rounds" <<'PY'
import csv, json, statistics, sys

out, rounds = sys.argv[1], int(sys.argv[2])
print(f"median over {rounds} rounds")
print("| nodes x ranks | --ps-aggregate | pushes aggregated by | exchange ms per step | samples/s | node / rank exchange |")
print("| --- | --- | --- | ---: | ---: | ---: |")
for nodes in ("2x2", "2x3"):
    exchange = {}
    for aggregate in ("node", "rank"):
        per_step, speed = [], []
        for r in range(1, rounds + 1):
            name = f"{out}/{nodes}-{aggregate}-{r}"
            summary = json.load(open(name + ".json"))
            epochs = list(csv.DictReader(open(name + ".csv")))
            steps = sum(int(e["samples"]) for e in epochs) / summary["ranks"] / summary["batch_per_worker"]
            per_step.append(sum(float(e["exchange_seconds"]) for e in epochs) / steps)
            speed.append(summary["train_samples_per_second"])
        exchange[aggregate] = statistics.median(per_step)
        ratio = f"{exchange['node'] / exchange['rank']:.2f}x" if aggregate == "rank" else ""
        print(f"| {nodes.replace('x', ' x ')} | {aggregate} | {summary['ps_aggregated_by']} | "
              f"{exchange[aggregate] * 1e3:.2f} | {statistics.median(speed):.0f} | {ratio} |")
PY
