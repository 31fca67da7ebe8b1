#!/bin/sh
# Side-by-side all-reduce sweeps for docs/performance.md: for each rank count, the in-process
# transport and then the MPI transport (which also times raw MPI_Allreduce), back to back, so every
# ratio compares figures taken moments apart on the same machine. Prints the ratios against the
# targets and leaves one JSON file per sweep in OUT_DIR.
#
#   examples/bench_collectives.sh [BUILD_DIR [OUT_DIR [allreduce_bench options...]]]
#
# BUILD_DIR defaults to build, OUT_DIR to bench-results; RANKS (default "2 4") sets the rank counts
# and MPIEXEC_ARGS adds options to mpiexec (for instance "--mca btl_vader_single_copy_mechanism none").
set -eu

build=${1:-build}
if [ $# -gt 0 ]; then shift; fi
out=${1:-bench-results}
if [ $# -gt 0 ]; then shift; fi
ranks=${RANKS:-2 4}
mpiexec_args=${MPIEXEC_ARGS:-}
bench="$build/examples/allreduce_bench"

mkdir -p "$out"
# Open MPI refuses to run as root without these (containers, CI).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

for n in $ranks; do
  echo "+ $bench --ranks $n --json $out/inproc-$n.json $*"
  "$bench" --ranks "$n" --json "$out/inproc-$n.json" "$@"
  echo "+ mpiexec --oversubscribe $mpiexec_args -n $n $bench --json $out/mpi-$n.json $*"
  # shellcheck disable=SC2086 # MPIEXEC_ARGS is a list of words
  mpiexec --oversubscribe $mpiexec_args -n "$n" "$bench" --json "$out/mpi-$n.json" "$@"
done

python3 - "$out" "$ranks" <<'EOF'
import json, sys

out, ranks = sys.argv[1], [int(n) for n in sys.argv[2].split()]
MiB = 1 << 20
switchyard = ("ring", "recursive_doubling", "native", "automatic")

def load(path):
    with open(path) as f:
        return {(r["algorithm"], r["bytes"]): r for r in json.load(f)}

def best(records, size):
    return max((r for (a, b), r in records.items() if b == size and a in switchyard), key=lambda r: r["busbw_gbps"])

def verdict(ok):
    return "met" if ok else "NOT met"

for n in ranks:
    inproc, mpi = load(f"{out}/inproc-{n}.json"), load(f"{out}/mpi-{n}.json")
    sizes = sorted(b for (a, b) in mpi if a == "mpi_raw")
    print(f"\n{n} ranks: busbw ratios against raw MPI_Allreduce (same rank count, same script run)")
    print(f"{'bytes':>10}  {'MPI best/raw':<26}  {'MPI native/raw':>14}  {'in-process best/raw':<26}")
    for size in sizes:
        raw = mpi[("mpi_raw", size)]["busbw_gbps"]
        if raw == 0:
            continue
        mpi_best = best(mpi, size)
        native = mpi[("native", size)]["busbw_gbps"] / raw
        line = f"{size:>10}  {mpi_best['busbw_gbps'] / raw:>7.3f} {mpi_best['algorithm']:<18}  {native:>14.3f}"
        if any(b == size for (_, b) in inproc):
            in_best = best(inproc, size)
            line += f"  {in_best['busbw_gbps'] / raw:>7.3f} {in_best['algorithm']:<18}"
        notes = []
        if n == 4 and size >= MiB:
            notes.append(f"MPI best >= 0.90: {verdict(mpi_best['busbw_gbps'] / raw >= 0.90)}")
        if n == 4:
            notes.append(f"native within 3%: {verdict(native >= 1 / 1.03)}")
        if MiB <= size <= 16 * MiB and any(b == size for (_, b) in inproc):
            notes.append(f"in-process >= 2x: {verdict(best(inproc, size)['busbw_gbps'] / raw >= 2)}")
        print(line + ("  " + "; ".join(notes) if notes else ""))
EOF
