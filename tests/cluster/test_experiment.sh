#!/bin/bash
# The experiment script on the emulator: examples/cluster/run_experiment.sh on 2 hosts, one run of
# a one-epoch comparison, writes every output with four strategies and the slow host in it, makes
# the other host slow from second 0.2 to 1.5 of each strategy's run (--slow-during) and back, and
# leaves nothing of the cluster; interrupted while its job runs and the host is slow, it gives the
# host its share back, ends the watcher and also leaves nothing.
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

# The first 20,000 training examples, 200 batches of 100 an epoch: the switches happen inside it,
# at batch 100.
tiny=(--epochs 1 --batch 100 --train-limit 20000 --trigger steps:100 --thresholds '0.5,0.99' --quiet)
timeout 150 "$experiment" --hosts 2 --link 1gbit --slow h1:0.5 --slow-during h0:0.3:0.2:1.5 --runs 1 \
  --build "$build" --out "$out/done" -- "${tiny[@]}" || fail "run_experiment.sh failed"
assert_nothing_left
for file in runs-1.csv summary-1.json log-1.txt plot-1.svg cluster.txt schedule.log summary.json summary.txt; do
  [[ -s $out/done/$file ]] || fail "run_experiment.sh did not write $file"
done
python3 - "$out/done" <<'EOF' || fail "the outputs of run_experiment.sh are not as expected"
import csv, json, os, sys
out = sys.argv[1]
labels = ["allreduce", "ps", "ps>allreduce", "allreduce>ps"]
window = {"host": "h0", "share": 0.3, "from_seconds": 0.2, "to_seconds": 1.5}
run = json.load(open(os.path.join(out, "summary-1.json")))
assert [r["strategy"] for r in run] == labels, run
for r in run:
    assert r["transport"] == "mpi" and r["ranks"] == 2, r
    assert r["slow"] == [{"host": "h1", "share": 0.5}] and r["slow_during"] == window, r
    assert isinstance(r["time_to_accuracy"]["0.5"], float) and r["time_to_accuracy"]["0.99"] is None, r
rows = list(csv.DictReader(open(os.path.join(out, "runs-1.csv"))))
assert [row["strategy"] for row in rows] == labels, rows
summary = json.load(open(os.path.join(out, "summary.json")))
assert summary["setup"]["hosts"] == 2 and summary["setup"]["shares"] == {"h0": "1", "h1": "0.5"}, summary["setup"]
assert summary["setup"]["slow_during"] == dict(window, slowed_runs={label: 1 for label in labels}), summary["setup"]
medians = summary["medians"]
assert [m["strategy"] for m in medians] == labels, medians
for m, r in zip(medians, run):
    assert m["runs"] == 1 and m["test_accuracy"] == r["test_accuracy"], (m, r)
    assert m["time_to_accuracy"] == r["time_to_accuracy"] and m["reached"] == {"0.5": 1, "0.99": 0}, m
    assert m["seconds_per_worker"] == r["seconds_per_worker"] and m["bytes_sent"] == r["bytes_sent"], m
    assert m["server_busy_fraction"] == r["server_busy_fraction"] and m["max_staleness"] == r["max_staleness"], m
text = open(os.path.join(out, "summary.txt")).read()
assert "seconds per worker (medians)" in text and all(f"\n{label} " in text for label in labels), text
assert ("h0 at 0.3 cores from second 0.2 to 1.5 of each strategy's run, else 1; runs slowed: "
        "allreduce 1/1, ps 1/1, ps>allreduce 1/1, allreduce>ps 1/1\n") in text, text
# The schedule: for each strategy in turn, h0 at 0.3 from second 0.2 (late by the watcher's
# reaction at most), then at its share of 1 again at second 1.5, or earlier when the run ended.
changes = [line.split() for line in open(os.path.join(out, "schedule.log")) if not line.startswith("#")]
assert [c[2] for c in changes] == [label for label in labels for _ in range(2)], changes
for slow, back in zip(changes[::2], changes[1::2]):
    assert slow[1] == "1" and slow[4:] == ["h0", "0.3", "slow"] and 0.2 <= float(slow[3]) < 1.2, slow
    assert back[4:6] == ["h0", "1"], back
    assert back[6] == "restored-early" or (back[6] == "restored" and float(back[3]) >= 1.5), back
assert "<svg" in open(os.path.join(out, "plot-1.svg")).read()
print("ok: run_experiment.sh wrote the CSV, the summaries, the medians and the plot, and slowed h0 in each strategy's run")
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

# Interrupted (TERM) while its job runs and h0 is slow: the job ends, h0 gets its share back, the
# watcher and its tail end, and the hosts come down.
"$experiment" --hosts 2 --slow-during h0:0.3:0:100 --runs 1 --build "$build" --out "$out/interrupted" \
  -- --epochs 3 --batch 100 --quiet &
script=$!
for ((tries = 0; tries < 300; ++tries)); do
  grep -qs ' allreduce [0-9.]* h0 0\.3 slow$' "$out/interrupted/schedule.log" && break
  sleep 0.1
done
grep -qs ' allreduce [0-9.]* h0 0\.3 slow$' "$out/interrupted/schedule.log" ||
  fail "the interrupted run did not slow h0 at the start of its first strategy in 30 s"
kill -TERM "$script"
status=0
wait "$script" || status=$?
[[ $status -eq 143 ]] || fail "interrupted, run_experiment.sh ended with status $status, not 143"
assert_nothing_left
if pgrep -f "$build/examples/strategy_comparison" >/dev/null; then
  fail "ranks of the interrupted job survive: $(pgrep -af "$build/examples/strategy_comparison")"
fi
if pgrep -f "tail -n \+1 -f $out/interrupted/" >/dev/null; then
  fail "the watcher's tail survives: $(pgrep -af "tail -n \+1 -f $out/interrupted/")"
fi
last=$(tail -n 1 "$out/interrupted/schedule.log")
[[ $last == *" 1 allreduce "*" h0 1 restored-early" ]] ||
  fail "interrupted, the schedule's last line is '$last', not h0 back at 1 (restored-early)"
echo "ok: interrupted, run_experiment.sh ended its job, gave h0 its share back and brought the hosts down"
we_are_up=0
