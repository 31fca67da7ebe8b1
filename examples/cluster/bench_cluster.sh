#!/bin/bash
# All-reduce across emulated hosts (docs/cluster.md): allreduce_bench on 2 and 4 hosts at 1 Gbit/s
# with each host's default CPU share (cores / hosts), under the passive and the spinning wait
# policy, then a table of busbw against the link rate and of the 64 KiB time against 2 hosts'.
#
#   examples/cluster/bench_cluster.sh [BUILD_DIR [OUT_DIR [allreduce_bench options...]]]
#
# BUILD_DIR defaults to build, OUT_DIR to bench-cluster; HOSTS (default "2 4"), WAITS (default
# "passive spin") and LINK (default 1gbit) choose the runs. Needs root (examples/cluster/emulate).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
emulate="$here/emulate"
build=${1:-build}
if [[ $# -gt 0 ]]; then shift; fi
out=${1:-bench-cluster}
if [[ $# -gt 0 ]]; then shift; fi
bench=$(realpath "$build/examples/allreduce_bench")
link=${LINK:-1gbit}
mkdir -p "$out"
out=$(realpath "$out")

trap '"$emulate" down >/dev/null 2>&1 || true' EXIT
trap 'exit 130' INT TERM

for hosts in ${HOSTS:-2 4}; do
  "$emulate" up "$hosts" --link "$link"
  for wait in ${WAITS:-passive spin}; do
    echo "+ SWITCHYARD_MPI_WAIT=$wait emulate run -- allreduce_bench --json $out/$hosts-$wait.json $*"
    SWITCHYARD_MPI_WAIT=$wait timeout 1200 "$emulate" run -- "$bench" --json "$out/$hosts-$wait.json" "$@" |
      tee "$out/$hosts-$wait.txt"
  done
  "$emulate" down
done

python3 - "$out" "$link" <<'EOF'
import glob, json, os, re, sys

out, link = sys.argv[1], sys.argv[2]
number, unit = re.fullmatch(r"([0-9.]+)(bit|kbit|mbit|gbit)", link).groups()
link_gbps = float(number) * {"bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9}[unit] / 8e9  # GB/s
runs = {}
for path in sorted(glob.glob(os.path.join(out, "*-*.json"))):
    hosts, wait = os.path.basename(path)[:-5].split("-")
    runs[(int(hosts), wait)] = json.load(open(path))

def human(b):
    return f"{b >> 20} MiB" if b >= 1 << 20 else f"{b >> 10} KiB" if b >= 1 << 10 else f"{b} B"

print(f"\nbusbw / link ({link} = {link_gbps:.3f} GB/s each way), median time per call")
for (hosts, wait), records in sorted(runs.items()):
    print(f"\n{hosts} hosts, {wait} waits")
    algorithms = list(dict.fromkeys(r["algorithm"] for r in records))
    print(f"{'size':>8}  " + "  ".join(f"{a:>20}" for a in algorithms))
    for size in sorted({r["bytes"] for r in records}):
        cells = []
        for a in algorithms:
            r = next((r for r in records if r["algorithm"] == a and r["bytes"] == size), None)
            cells.append(f"{r['busbw_gbps'] / link_gbps:6.2f} {r['median_s'] * 1e3:9.3f} ms" if r else " " * 20)
        print(f"{human(size):>8}  " + "  ".join(cells))

small = 64 << 10
for wait in sorted({w for _, w in runs}):
    if (2, wait) not in runs or (4, wait) not in runs:
        continue
    print(f"\n64 KiB, {wait} waits: 4 hosts / 2 hosts time per call")
    for a in dict.fromkeys(r["algorithm"] for r in runs[(4, wait)]):
        t4 = next((r["median_s"] for r in runs[(4, wait)] if r["algorithm"] == a and r["bytes"] == small), None)
        t2 = next((r["median_s"] for r in runs[(2, wait)] if r["algorithm"] == a and r["bytes"] == small), None)
        if t4 and t2:
            print(f"  {a:>20}: {t4 * 1e3:.3f} ms / {t2 * 1e3:.3f} ms = {t4 / t2:.2f}x")
EOF
