#!/bin/bash
# Where ranks sit, on the emulated cluster (docs/cluster.md, "Placement"): allreduce_bench's flat
# ring and hierarchical all-reduce with K ranks per host placed round-robin and by node, beside the
# flat ring with one rank per host, RUNS rounds taken in turn; then the median over the rounds of
# each job's median time per call, and the ratios the placement decides.
#
#   examples/cluster/bench_placement.sh [BUILD_DIR [OUT_DIR]]
#
# BUILD_DIR defaults to build, OUT_DIR to bench-placement. HOSTS (default 4), CPU (0.5), LINK
# (1gbit), K (ranks per host, 2), SIZES (1mb) and RUNS (3) choose the runs; EXTRA holds more
# allreduce_bench options for every job (e.g. "--trials 21 --min-trial-seconds 0.2"). Needs root
# (examples/cluster/emulate).
set -euo pipefail

# shellcheck source-path=SCRIPTDIR
# shellcheck source=bench_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench_common.sh" bench-placement "$@"
bench=$(realpath "$build/examples/allreduce_bench")
per_host=${K:-2}
sizes=${SIZES:-1mb}
cluster_up
"$emulate" status >"$out/cluster.txt"
for run in $(seq 1 "${RUNS:-3}"); do
  for layout in flat round-robin by-node; do
    if [[ $layout == flat ]]; then
      options=() algorithms=ring
    else
      options=(--ranks-per-host "$per_host" --placement "$layout") algorithms=ring,hierarchical
    fi
    echo "+ emulate run ${options[*]} -- allreduce_bench --sizes $sizes --algorithms $algorithms ${extra[*]} (run $run)"
    timeout 600 "$emulate" run "${options[@]}" -- "$bench" --sizes "$sizes" --algorithms "$algorithms" "${extra[@]}" \
      --json "$out/$layout-$run.json" 2>&1 | tee "$out/$layout-$run.txt"
  done
done
"$emulate" down

python3 - "$out" "$per_host" <<'EOF'
import glob, json, os, statistics, sys

out, per_host = sys.argv[1], int(sys.argv[2])
times = {}  # (layout, algorithm, bytes) -> each run's median seconds
for path in sorted(glob.glob(os.path.join(out, "*-[0-9]*.json"))):
    layout = os.path.basename(path).rsplit("-", 1)[0]
    for r in json.load(open(path)):
        times.setdefault((layout, r["algorithm"], r["bytes"]), []).append(r["median_s"])
median = {key: statistics.median(values) for key, values in times.items()}
runs = max(len(v) for v in times.values())
print(f"\nmedian over {runs} runs of each job's median time per call (ms); layouts: flat = 1 rank per host, "
      f"round-robin and by-node = {per_host} per host")
for size in sorted({b for _, _, b in median}):
    print(f"\n{size} bytes")
    for (layout, algorithm, b), t in sorted(median.items()):
        if b == size:
            print(f"  {layout:>12} {algorithm:>13}: {t * 1e3:8.2f} ms  (runs: "
                  + ", ".join(f"{x * 1e3:.2f}" for x in times[(layout, algorithm, b)]) + ")")
    def ratio(a, b):
        return f"{median[a] / median[b]:.2f}" if a in median and b in median else "n/a"
    for layout in ("round-robin", "by-node"):
        print(f"  hierarchical / ring, {layout}: {ratio((layout, 'hierarchical', size), (layout, 'ring', size))}")
    print(f"  ring round-robin / ring flat: {ratio(('round-robin', 'ring', size), ('flat', 'ring', size))}")
    print(f"  ring by-node / ring flat: {ratio(('by-node', 'ring', size), ('flat', 'ring', size))}")
    print(f"  hierarchical by-node / ring flat: {ratio(('by-node', 'hierarchical', size), ('flat', 'ring', size))}")
EOF
