#!/usr/bin/env python3
"""Runs examples/strategy_comparison briefly and checks what it writes: one summary record per
strategy, every epoch in the CSV, the switches inside epoch 2 at a step trigger, and the plot."""
import csv
import json
import os
import subprocess
import sys
import tempfile

binary, plot = sys.argv[1], sys.argv[2]
labels = ["allreduce", "ps", "ps>allreduce", "allreduce>ps"]
with tempfile.TemporaryDirectory() as work:
    runs_csv, summary = os.path.join(work, "runs.csv"), os.path.join(work, "runs.json")
    # 600 batches of 100 an epoch: 700 batches is inside epoch 2 for both orders.
    subprocess.run([binary, "--epochs", "2", "--batch", "100", "--ranks", "4", "--trigger", "steps:700", "--quiet",
                    "--csv", runs_csv, "--summary", summary], check=True)
    records = json.load(open(summary))
    assert [r["strategy"] for r in records] == labels, records
    for r in records:
        assert r["test_accuracy"] > 0.7, r
        assert r["seconds_to_88"] is None or r["seconds_to_88"] <= r["wall_seconds"] + 1e-3, r
        assert r["seconds_to_85"] is None or r["seconds_to_85"] <= r["wall_seconds"] + 1e-3, r
    rows = list(csv.DictReader(open(runs_csv)))
    stages = {(row["strategy"], int(row["epoch"])): row["stage"] for row in rows}
    assert len(rows) == 8, rows
    assert stages[("allreduce", 2)] == "allreduce" and stages[("ps", 2)] == "ps", stages
    assert stages[("ps>allreduce", 1)] == "ps" and stages[("ps>allreduce", 2)] == "ps>allreduce", stages
    assert stages[("allreduce>ps", 2)] == "allreduce>ps", stages
    for r in records:
        last = [row for row in rows if row["strategy"] == r["strategy"]][-1]
        assert abs(float(last["test_accuracy"]) - r["test_accuracy"]) < 1e-5, (last, r)
    image = os.path.join(work, "runs.svg")
    subprocess.run([plot, runs_csv, image], check=True)
    text = open(image).read()
    assert "<svg" in text and all(f">{label}<" in text for label in labels), text[:400]
print("strategy_comparison: summary, CSV and plot checked")
