#!/bin/bash
# The co-located servers' benchmark on the emulator: examples/cluster/bench_colocated.sh on 2 hosts,
# one run of the mlp for one epoch of 20,000 examples in each layout (all-reduce, a server rank
# beside each worker, a serving thread in each worker, and those threads with pipelined workers,
# asynchronous and synchronous); each run writes its summary with its layout, the table names all
# five with all-reduce at 1.00x, and nothing of the cluster is left.
#
#   test_bench_colocated.sh EMULATE BENCH_COLOCATED BUILD_DIR
set -euo pipefail
emulate=$1 bench=$2 build=$(realpath "$3")
# shellcheck source-path=SCRIPTDIR
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
require_emulator
out=$(mktemp -d)
trap 'status=$?; rm -rf "$out"; (exit "$status"); cleanup' EXIT
we_are_up=1

HOSTS=2 RUNS=1 MODELS=mlp EPOCHS_MLP=1 EXTRA="--train-limit 20000 --batch 100" timeout 200 "$bench" "$build" "$out" \
  >"$out/bench.txt" 2>&1 || { cat "$out/bench.txt"; fail "bench_colocated.sh failed"; }
assert_nothing_left
python3 - "$out" <<'PY' || { cat "$out/bench.txt"; fail "the outputs of bench_colocated.sh are not as expected"; }
import json, os, re, sys
out = sys.argv[1]
servers = {"allreduce": 0, "ranks": 2, "threads": "colocated", "pipelined": "colocated", "syncpipelined": "colocated"}
for layout, expected in servers.items():
    r = json.load(open(os.path.join(out, f"mlp-{layout}-1.json")))
    assert r["servers"] == expected and r["epochs"] == 1 and r["train_examples"] == 20000, r
    assert r["ps_pipeline"] == layout.endswith("pipelined"), r
    assert r["strategy"] == {"allreduce": "allreduce", "syncpipelined": "ps:sync"}.get(layout, "ps:async"), r
    assert r["ranks"] == (4 if layout == "ranks" else 2), r
    assert r["test_accuracy"] > 0.6, r
text = open(os.path.join(out, "bench.txt")).read()
for name in ("all-reduce", "server ranks beside the workers", "serving threads", "serving threads, pipelined",
             "the same, synchronous"):
    assert re.search(rf"^mlp\s+{name}\s+1\s", text, re.M), (name, text)
assert re.search(r"^mlp\s+all-reduce\s+1\s+[0-9,]+\s+1\.00x", text, re.M), text
print("ok: bench_colocated.sh ran the five layouts on 2 hosts and tabled them")
PY
we_are_up=0
