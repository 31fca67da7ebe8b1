#!/bin/sh
# One process per node against one rank per process, for docs/performance.md: 4 ranks as 2
# processes x 2 threads (transport::hybrid), as 4 MPI processes (with raw MPI_Allreduce as the
# baseline) and as 4 in-process ranks in 2 virtual nodes, in ROUNDS rounds (default 3) that run the
# three one after the other. Prints, per size and algorithm, the median over the rounds of each
# run's median time per call, and leaves the JSON files of every run in OUT_DIR.
#
#   examples/bench_hybrid.sh [BUILD_DIR [OUT_DIR [allreduce_bench options...]]]
#
# BUILD_DIR defaults to build, OUT_DIR to bench-hybrid; the options default to
# --sizes 1MiB,4MiB,16MiB,64MiB --trials 5. MPIEXEC_ARGS adds options to mpiexec.
set -eu

build=${1:-build}
if [ $# -gt 0 ]; then shift; fi
out=${1:-bench-hybrid}
if [ $# -gt 0 ]; then shift; fi
if [ $# -eq 0 ]; then set -- --sizes 1MiB,4MiB,16MiB,64MiB --trials 5; fi
rounds=${ROUNDS:-3}
mpiexec_args=${MPIEXEC_ARGS:-}
bench="$build/examples/allreduce_bench"

mkdir -p "$out"
# Open MPI refuses to run as root without these (containers, CI).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

run() {
  echo "+ $*"
  "$@" > /dev/null
}

round=1
while [ "$round" -le "$rounds" ]; do
  # shellcheck disable=SC2086 # MPIEXEC_ARGS is a list of words
  run mpiexec --oversubscribe $mpiexec_args -n 2 --map-by node --bind-to none "$bench" --threads-per-node 2 \
    --algorithms ring,hierarchical --json "$out/hybrid-$round.json" "$@"
  # shellcheck disable=SC2086
  run mpiexec --oversubscribe $mpiexec_args -n 4 "$bench" --algorithms ring,mpi_raw --json "$out/mpi-$round.json" "$@"
  run "$bench" --ranks 4 --nodes 2 --algorithms ring,hierarchical,native --json "$out/inproc-$round.json" "$@"
  round=$((round + 1))
done

python3 - "$out" "$rounds" <<'PY'
import json, statistics, sys

out, rounds = sys.argv[1], int(sys.argv[2])
runs = [("hybrid", "2 processes x 2 threads"), ("mpi", "4 MPI ranks"), ("inproc", "4 in-process ranks, 2 nodes")]
median = {}
for name, _ in runs:
    times = {}
    for r in range(1, rounds + 1):
        with open(f"{out}/{name}-{r}.json") as f:
            for rec in json.load(f):
                times.setdefault((rec["algorithm"], rec["bytes"]), []).append(rec["median_s"])
    median[name] = {key: statistics.median(t) for key, t in times.items()}
columns = [(name, algorithm) for name, _ in runs for (algorithm, _b) in sorted(set(median[name]))]
columns = list(dict.fromkeys(columns))
sizes = sorted({b for name, _ in runs for (_a, b) in median[name]})
label = dict(runs)
print(f"median over {rounds} rounds of the median time per call, ms (bus bandwidth, GB/s)")
print("| size | " + " | ".join(f"{label[n]}: {a}" for n, a in columns) + " |")
print("| ---: | " + " | ".join("---:" for _ in columns) + " |")
for size in sizes:
    cells = []
    for name, algorithm in columns:
        t = median[name].get((algorithm, size))
        cells.append("" if t is None else f"{t * 1e3:.2f} ({size / t / 1e9 * 2 * 3 / 4:.2f})")
    print(f"| {size >> 20} MiB | " + " | ".join(cells) + " |")
PY
