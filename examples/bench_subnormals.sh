#!/bin/sh
# The cost of subnormal floats on the README's main job (fashion_mnist with no arguments: the mlp,
# 3 epochs on a parameter server, then 12 of all-reduce, Adam, 4 in-process ranks), three ways,
# interleaved round by round so that drift in the machine's load hits all three alike:
#   default  the trainer flushes subnormals on every rank (trainer_options::flush_subnormals)
#   kept     --no-flush-subnormals: subnormals kept
#   forced   --no-flush-subnormals with FTZ and DAZ switched on for the whole process from outside
#            (LD_PRELOAD of libforce_flush.so, x86-64 only)
# Prints each run's wall time and accuracy, then the medians and the ratios against the target
# (default within 1.05x of forced). docs/performance.md ("Subnormal floats") records the results.
#
#   examples/bench_subnormals.sh [BUILD_DIR [OUT_DIR [ROUNDS [EXTRA FASHION_MNIST OPTIONS...]]]]
set -eu

build=${1:-build}
out=${2:-bench-subnormals}
rounds=${3:-3}
[ $# -gt 3 ] && shift 3 || set --
preload="$build/examples/libforce_flush.so"
[ -f "$preload" ] || { echo "bench_subnormals.sh: $preload is missing (built on x86-64 only)" >&2; exit 1; }
mkdir -p "$out"
grep -m1 "model name" /proc/cpuinfo | sed 's/.*: /CPU: /'
grep -qw avx512f /proc/cpuinfo && echo "CPU flags: avx512f" || true

for round in $(seq 1 "$rounds"); do
  for mode in default kept forced; do
    summary="$out/$mode-$round.json"
    case $mode in
      default) "$build/examples/fashion_mnist" --quiet --summary "$summary" "$@" ;;
      kept) "$build/examples/fashion_mnist" --quiet --no-flush-subnormals --summary "$summary" "$@" ;;
      forced) LD_PRELOAD="$preload" "$build/examples/fashion_mnist" --quiet --no-flush-subnormals \
                --summary "$summary" "$@" ;;
    esac >/dev/null
    python3 - "$summary" "$round" "$mode" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
wall, accuracy = r["wall_seconds"], 100 * r["test_accuracy"]
print(f"round {sys.argv[2]} {sys.argv[3]:<8} {wall:7.1f} s  {accuracy:.2f}%")
PY
  done
done

python3 - "$out" "$rounds" <<'PY'
import json, os, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def runs(mode):
    return [json.load(open(os.path.join(out, f"{mode}-{r}.json"))) for r in range(1, rounds + 1)]
wall = {m: statistics.median(r["wall_seconds"] for r in runs(m)) for m in ("default", "kept", "forced")}
acc = {m: statistics.median(100 * r["test_accuracy"] for r in runs(m)) for m in ("default", "kept", "forced")}
for m in ("default", "kept", "forced"):
    print(f"median {m:<8} {wall[m]:7.1f} s  {acc[m]:.2f}%  ({rounds} runs)")
ratio = wall["default"] / wall["forced"]
print(f"default / forced wall time: {ratio:.3f} (target <= 1.05: {'met' if ratio <= 1.05 else 'NOT MET'})")
print(f"kept / default wall time: {wall['kept'] / wall['default']:.2f}")
PY
