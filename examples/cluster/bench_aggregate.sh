#!/bin/bash
# Per-node aggregation of the co-located parameter server on the emulated cluster
# (docs/cluster.md, "Per-node aggregation"): fashion_mnist with 2 ranks per host, every rank a worker
# with a serving thread beside it (`--servers colocated`), pushing one sum per node
# (`--ps-aggregate node`) or one gradient per rank (`--ps-aggregate rank`), RUNS times each, taken
# in turn; then each one's median exchange time per step (the epoch log's exchange_seconds, per
# worker, over each worker's steps), median samples/s and accuracy, and node's ratios to rank's.
# LAUNCH says how a host's ranks run: `mpi` (the default), K MPI processes per host; `threads`, one
# process per host with K threads (`fashion_mnist --threads-per-node K`, transport::hybrid: a node's
# ranks exchange in process); "mpi threads" runs both in every round, side by side. PIPELINE says
# whether the workers pipeline (`--ps-pipeline`): `off` (the default), `on`, or "off on", both in
# every round (the pipelined runs are named pipelined-node, pipelined-rank, ...).
#
#   examples/cluster/bench_aggregate.sh [BUILD_DIR [OUT_DIR]]
#
# BUILD_DIR defaults to build, OUT_DIR to bench-aggregate. HOSTS (default 4), CPU (0.5), LINK
# (1gbit), SLOW (a slow host, e.g. h1:0.17; default none), K (ranks per host, 2), MODEL (mlp),
# EPOCHS (2) and RUNS (3) choose the runs; EXTRA holds more fashion_mnist options for every run
# (e.g. "--consistency sync"). Needs root (examples/cluster/emulate).
set -euo pipefail

# shellcheck source-path=SCRIPTDIR
# shellcheck source=bench_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench_common.sh" bench-aggregate "$@"
program=$(realpath "$build/examples/fashion_mnist")
cluster_up
"$emulate" status >"$out/cluster.txt"
for run in $(seq 1 "${RUNS:-3}"); do
  for launch in ${LAUNCH:-mpi}; do
    case $launch in
      mpi) per_host=${K:-2} prefix="" threads=() ;;
      threads) per_host=1 prefix="threads-" threads=(--threads-per-node "${K:-2}") ;;
      *) echo "bench_aggregate.sh: LAUNCH holds mpi and threads, not '$launch'" >&2; exit 2 ;;
    esac
    for pipeline in ${PIPELINE:-off}; do
      case $pipeline in
        off) pipelined="" pipe=() ;;
        on) pipelined="pipelined-" pipe=(--ps-pipeline) ;;
        *) echo "bench_aggregate.sh: PIPELINE holds off and on, not '$pipeline'" >&2; exit 2 ;;
      esac
      for aggregate in node rank; do
        name="$out/$prefix$pipelined$aggregate-$run"
        echo "+ emulate run --ranks-per-host $per_host -- fashion_mnist ${threads[*]} --model ${MODEL:-mlp}" \
          "--epochs ${EPOCHS:-2} --strategy ps --servers colocated --ps-aggregate $aggregate ${pipe[*]} ${extra[*]}" \
          "(run $run)"
        timeout 1200 "$emulate" run --ranks-per-host "$per_host" -- "$program" "${threads[@]}" --model "${MODEL:-mlp}" \
          --epochs "${EPOCHS:-2}" --strategy ps --servers colocated --ps-aggregate "$aggregate" "${pipe[@]}" \
          "${extra[@]}" --quiet --summary "$name.json" --log "$name.jsonl" >"$name.txt"
      done
    done
  done
done
"$emulate" down

python3 - "$out" <<'EOF_PY'
import glob, json, os, statistics, sys

out = sys.argv[1]
rows = {}  # [threads-][pipelined-]aggregate -> [(exchange seconds per step, samples/s, accuracy)]
for path in sorted(glob.glob(os.path.join(out, "*-[0-9]*.json"))):
    aggregate = os.path.basename(path).rsplit("-", 1)[0]
    summary = json.load(open(path))
    epochs = [json.loads(line) for line in open(path[:-5] + ".jsonl")]
    # exchange_seconds is per worker; a worker takes samples / (ranks x batch) steps.
    steps = sum(e["samples"] for e in epochs) / (summary["ranks"] * summary["batch_per_worker"])
    exchange = sum(e["exchange_seconds"] for e in epochs) / steps
    rows.setdefault(aggregate, []).append((exchange, summary["train_samples_per_second"], summary["test_accuracy"]))
median = {a: [statistics.median(r[i] for r in runs) for i in range(3)] for a, runs in rows.items()}
print("\naggregate                runs  exchange ms/step (median; runs)          samples/s (median; runs)        accuracy")
for a, runs in sorted(rows.items()):
    print(f"{a:23}  {len(runs):4}  {median[a][0] * 1e3:7.2f} ("
          + ", ".join(f"{r[0] * 1e3:.2f}" for r in runs) + f")  {median[a][1]:9,.0f} ("
          + ", ".join(f"{r[1]:,.0f}" for r in runs) + f")  {median[a][2]:.2%}")
for prefix in ["", "threads-"]:
    for pipelined in ["", "pipelined-"]:
        for base in sorted({"", pipelined}):
            node, rank = median.get(prefix + pipelined + "node"), median.get(prefix + base + "rank")
            if node and rank:
                print(f"{prefix}{pipelined}node / {prefix}{base}rank: exchange per step {node[0] / rank[0]:.2f}x, "
                      f"samples/s {node[1] / rank[1]:.2f}x")
EOF_PY
