#!/bin/bash
# The experiment script on the emulator: examples/cluster/run_experiment.sh on 2 hosts, one run of
# a one-epoch comparison, writes every output with four strategies and the slow host in it, and
# leaves nothing of the cluster; interrupted while its job runs, it also leaves nothing.
#
#   test_experiment.sh EMULATE RUN_EXPERIMENT BUILD_DIR
set -euo pipefail
emulate=$1 experiment=$2 build=$(realpath "$3")
# shellcheck source-path=SCRIPTDIR
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
require_emulator
out=$(mktemp -d)
# The script brings its cluster down itself; common.sh's trap stays as a safety net.
trap 'status=$?; rm -rf "$out"; (exit "$status"); cleanup' EXIT
we_are_up=1

# 600 batches of 100 an epoch: the switches happen inside it, at batch 300.
tiny=(--epochs 1 --batch 100 --trigger steps:300 --thresholds '0.5,0.99' --quiet)
timeout 150 "$experiment" --hosts 2 --link 1gbit --slow h1:0.5 --runs 1 --build "$build" --out "$out/done" \
  -- "${tiny[@]}" || fail "run_experiment.sh failed"
assert_nothing_left
for file in runs-1.csv summary-1.json log-1.txt plot-1.svg cluster.txt summary.json summary.txt; do
  [[ -s $out/done/$file ]] || fail "run_experiment.sh did not write $file"
done
python3 - "$out/done" <<'EOF' || fail "the outputs of run_experiment.sh are not as expected"
import csv, json, os, sys
out = sys.argv[1]
labels = ["allreduce", "ps", "ps>allreduce", "allreduce>ps"]
run = json.load(open(os.path.join(out, "summary-1.json")))
assert [r["strategy"] for r in run] == labels, run
for r in run:
    assert r["transport"] == "mpi" and r["ranks"] == 2, r
    assert r["slow"] == [{"host": "h1", "share": 0.5}], r
    assert isinstance(r["time_to_accuracy"]["0.5"], float) and r["time_to_accuracy"]["0.99"] is None, r
rows = list(csv.DictReader(open(os.path.join(out, "runs-1.csv"))))
assert [row["strategy"] for row in rows] == labels, rows
summary = json.load(open(os.path.join(out, "summary.json")))
assert summary["setup"]["hosts"] == 2 and summary["setup"]["shares"] == {"h0": "1", "h1": "0.5"}, summary["setup"]
medians = summary["medians"]
assert [m["strategy"] for m in medians] == labels, medians
for m, r in zip(medians, run):
    assert m["runs"] == 1 and m["test_accuracy"] == r["test_accuracy"], (m, r)
    assert m["time_to_accuracy"] == r["time_to_accuracy"] and m["reached"] == {"0.5": 1, "0.99": 0}, m
    assert m["seconds_per_worker"] == r["seconds_per_worker"] and m["bytes_sent"] == r["bytes_sent"], m
    assert m["server_busy_fraction"] == r["server_busy_fraction"] and m["max_staleness"] == r["max_staleness"], m
text = open(os.path.join(out, "summary.txt")).read()
assert "seconds per worker (medians)" in text and all(f"\n{label} " in text for label in labels), text
assert "<svg" in open(os.path.join(out, "plot-1.svg")).read()
print("ok: run_experiment.sh wrote the CSV, the summaries, the medians and the plot")
EOF

# The headline figures from the same directory: one line per strategy, all-reduce at 1.00 of itself.
python3 "$(dirname "$experiment")/headline.py" "$out/done" --json "$out/headline.json" ||
  fail "headline.py failed on the experiment's directory"
python3 - "$out/headline.json" <<'EOF' || fail "headline.py's figures are not as expected"
import json, sys
h = json.load(open(sys.argv[1]))
assert h["runs"] == 1, h
assert [s["strategy"] for s in h["strategies"]] == ["allreduce", "ps", "ps>allreduce", "allreduce>ps"], h
ar = h["strategies"][0]
assert ar["points_vs_allreduce"] == 0 and ar["wall_vs_allreduce"] == 1.0, ar
assert ar["time_to_target_vs_allreduce"] == 1.0, ar
assert abs(h["target_accuracy"] - (ar["final_accuracy"] - 0.005)) < 1e-9, h
EOF

# Interrupted (TERM) while its job runs: the job ends and the hosts come down.
"$experiment" --hosts 2 --runs 1 --build "$build" --out "$out/interrupted" -- --epochs 3 --batch 100 --quiet &
script=$!
for ((tries = 0; tries < 300; ++tries)); do
  grep -qs '^emulate: rank 1 on h1' "$out/interrupted/log-1.txt" && break
  sleep 0.1
done
grep -qs '^emulate: rank 1 on h1' "$out/interrupted/log-1.txt" || fail "the interrupted run did not start its job in 30 s"
sleep 2
kill -TERM "$script"
status=0
wait "$script" || status=$?
[[ $status -eq 143 ]] || fail "interrupted, run_experiment.sh ended with status $status, not 143"
assert_nothing_left
if pgrep -f "$build/examples/strategy_comparison" >/dev/null; then
  fail "ranks of the interrupted job survive: $(pgrep -af "$build/examples/strategy_comparison")"
fi
echo "ok: interrupted, run_experiment.sh ended its job and brought the hosts down"
we_are_up=0
