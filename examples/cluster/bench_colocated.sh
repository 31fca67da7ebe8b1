#!/bin/bash
# Co-located parameter servers on the emulated cluster (docs/results.md, issue 14): fashion_mnist
# under `emulate run` as all-reduce over one worker per host, as the parameter server with a server
# rank beside each worker (`--ranks-per-host 2 --servers HOSTS`), with a serving thread inside each
# worker (`--servers colocated`), and with those threads and pipelined workers (`--ps-pipeline`),
# asynchronous and synchronous (`--consistency sync`), RUNS times each, taken in turn; then each layout's median training samples/s, its ratio to
# all-reduce's, its median accuracy and the servers' busy fraction.
#
#   examples/cluster/bench_colocated.sh [BUILD_DIR [OUT_DIR]]
#
# BUILD_DIR defaults to build, OUT_DIR to bench-colocated. HOSTS (default 4), CPU (0.5), LINK
# (1gbit), SLOW (a slow host, e.g. h1:0.17; default none), MODELS ("mlp cnn"), RUNS (3), EPOCHS_MLP
# (2) / EPOCHS_CNN (1) and LAYOUTS (a subset of "allreduce ranks threads pipelined syncpipelined",
# the default) choose the runs; EXTRA holds more fashion_mnist options for every run (e.g.
# "--train-limit 20000"). Needs root (examples/cluster/emulate).
set -euo pipefail

# shellcheck source-path=SCRIPTDIR
# shellcheck source=bench_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench_common.sh" bench-colocated "$@"
program=$(realpath "$build/examples/fashion_mnist")
cluster_up
for model in ${MODELS:-mlp cnn}; do
  if [[ $model == mlp ]]; then epochs=${EPOCHS_MLP:-2}; else epochs=${EPOCHS_CNN:-1}; fi
  for run in $(seq 1 "${RUNS:-3}"); do
    for layout in ${LAYOUTS:-allreduce ranks threads pipelined syncpipelined}; do
      case $layout in
        allreduce) placement=(); strategy=(--strategy allreduce) ;;
        ranks) placement=(--ranks-per-host 2); strategy=(--strategy ps --servers "$hosts") ;;
        threads) placement=(); strategy=(--strategy ps --servers colocated) ;;
        pipelined) placement=(); strategy=(--strategy ps --servers colocated --ps-pipeline) ;;
        syncpipelined) placement=(); strategy=(--strategy ps --servers colocated --ps-pipeline --consistency sync) ;;
      esac
      summary="$out/$model-$layout-$run.json"
      echo "+ emulate run ${placement[*]} -- fashion_mnist --model $model --epochs $epochs ${strategy[*]}"
      timeout 1800 "$emulate" run "${placement[@]}" -- "$program" --model "$model" --epochs "$epochs" \
        "${strategy[@]}" "${extra[@]}" --quiet --summary "$summary" >"$out/$model-$layout-$run.txt"
    done
  done
done
"$emulate" down

python3 - "$out" <<'PY'
import glob, json, os, statistics, sys

out = sys.argv[1]
runs = {}
for path in sorted(glob.glob(os.path.join(out, "*-*-*.json"))):
    model, layout, _ = os.path.basename(path)[:-5].split("-")
    runs.setdefault((model, layout), []).append(json.load(open(path)))
names = {"allreduce": "all-reduce", "ranks": "server ranks beside the workers", "threads": "serving threads",
         "pipelined": "serving threads, pipelined", "syncpipelined": "the same, synchronous"}
print("\nmodel  layout                            runs  samples/s (median)  vs all-reduce  accuracy  server busy")
for model in sorted({m for m, _ in runs}):
    base = statistics.median(r["train_samples_per_second"] for r in runs[(model, "allreduce")])
    for layout in ("allreduce", "ranks", "threads", "pipelined", "syncpipelined"):
        records = runs.get((model, layout), [])
        if not records:
            continue
        rate = statistics.median(r["train_samples_per_second"] for r in records)
        accuracy = statistics.median(r["test_accuracy"] for r in records)
        busy = statistics.median(r["server_busy_fraction"] for r in records) if layout != "allreduce" else 0
        print(f"{model:5}  {names[layout]:32}  {len(records):4}  {rate:18,.0f}  {rate / base:12.2f}x"
              f"  {accuracy:7.2%}  {busy:10.0%}")
PY
