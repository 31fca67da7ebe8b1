#!/usr/bin/env python3
"""Runs examples/strategy_comparison --strategies adaptive in process with rank 2 computing 4x
slower and the straggler triggers' window and dwell at 1 epoch, and checks that the summary and
the CSV name the run `adaptive`, that it left all-reduce for the parameter server after its first
epoch (so the straggler options reached it) and lists that switch, and that --slow-during is
recorded.

    comparison_adaptive.py STRATEGY_COMPARISON
"""
import csv
import json
import os
import subprocess
import sys
import tempfile

binary = sys.argv[1]
with tempfile.TemporaryDirectory() as work:
    runs_csv, summary = os.path.join(work, "runs.csv"), os.path.join(work, "runs.json")
    subprocess.run([binary, "--strategies", "adaptive", "--straggler", "2:4.0", "--ranks", "4", "--epochs", "2",
                    "--batch", "100", "--straggler-window", "1", "--straggler-dwell", "1", "--quiet",
                    "--slow-during", "h1:0.17:10:40", "--csv", runs_csv, "--summary", summary], check=True)
    records = json.load(open(summary))
    assert [r["strategy"] for r in records] == ["adaptive"], records
    record = records[0]
    assert record["slow_during"] == {"host": "h1", "share": 0.17, "from_seconds": 10, "to_seconds": 40}, record
    assert record["slow"] == [] and record["test_accuracy"] > 0.7, record
    assert len(record["switches"]) == 1 and record["switches"][0].startswith("after epoch 1 to ps: straggler ratio"), \
        record
    rows = list(csv.DictReader(open(runs_csv)))
    assert [(row["strategy"], row["stage"]) for row in rows] == [("adaptive", "allreduce"), ("adaptive", "ps")], rows
print("ok: strategy_comparison ran adaptive, which left all-reduce for the straggler after epoch 1")
