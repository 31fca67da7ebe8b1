#!/bin/sh
# The parameter-server benchmark of docs/performance.md: the mlp on Fashion-MNIST with 3 workers,
# under all-reduce (3 ranks) and under a parameter server with 1 server (4 ranks: workers 0-2,
# server 3) in async, bounded:2 and sync consistency, each without and with worker 2 slowed 3x.
# All eight runs go back to back; each writes a JSON summary to OUT_DIR, and the table at the
# end gives samples per second, accuracy and the ratios against the targets.
#
#   examples/bench_strategies.sh [BUILD_DIR [OUT_DIR [EPOCHS [EXTRA FASHION_MNIST OPTIONS...]]]]
#
# The extra options go to every run (e.g. --no-flush-subnormals).
set -eu

build=${1:-build}
out=${2:-bench-results}
epochs=${3:-15}
[ $# -gt 3 ] && shift 3 || set --
run="$build/examples/fashion_mnist --model mlp --epochs $epochs --quiet $*"
mkdir -p "$out"

for straggler in none 2:3.0; do
  slow=""
  [ "$straggler" = none ] || slow="--straggler $straggler"
  tag=$(echo "$straggler" | tr ':.' '__')
  # shellcheck disable=SC2086 # $run and $slow are lists of words
  $run --strategy allreduce --ranks 3 $slow --summary "$out/allreduce-$tag.json"
  for consistency in async bounded:2 sync; do
    name=$(echo "$consistency" | tr ':' '_')
    # shellcheck disable=SC2086
    $run --strategy ps --servers 1 --consistency "$consistency" --ranks 4 $slow --summary "$out/ps-$name-$tag.json"
  done
done

python3 - "$out" <<'PY'
import json, sys, os
out = sys.argv[1]
rows = {}
for name in sorted(os.listdir(out)):
    if name.startswith(("allreduce-", "ps-")) and name.endswith((("-none.json", "-2_3_0.json"))):
        rows[name[:-5]] = json.load(open(os.path.join(out, name)))
print(f"{'run':<28} {'samples/s':>10} {'test acc':>9} {'max stale':>9} {'server busy':>11}")
for name, r in rows.items():
    print(f"{name:<28} {r['train_samples_per_second']:>10.0f} {100 * r['test_accuracy']:>8.2f}% "
          f"{r['max_staleness']:>9} {100 * r['server_busy_fraction']:>10.0f}%")
def rate(name):
    return rows[name]["train_samples_per_second"]
slow = rate("ps-async-2_3_0") / rate("allreduce-2_3_0")
fast = rate("ps-async-none") / rate("allreduce-none")
acc = 100 * rows["ps-async-2_3_0"]["test_accuracy"]
print(f"with the straggler, async / all-reduce samples per second: {slow:.2f} (target >= 1.8: {'met' if slow >= 1.8 else 'not met'})")
print(f"with the straggler, async test accuracy: {acc:.2f}% (target >= 86%: {'met' if acc >= 86 else 'not met'})")
print(f"without a straggler, async / all-reduce samples per second: {fast:.2f} (target >= 0.8: {'met' if fast >= 0.8 else 'not met'})")
PY
