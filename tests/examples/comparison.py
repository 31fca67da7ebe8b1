#!/usr/bin/env python3
"""Runs examples/strategy_comparison briefly, in process or under mpiexec, and checks what it
writes: one summary record per strategy with the time to each accuracy threshold (a number or
null) and the slow host, every epoch in the CSV, the switches inside an epoch at a step trigger,
and the plot. The all-reduce stages run --exchange overlapped, so the overlapped exchange works
inside both orders of a switch, also under MPI.

    comparison.py STRATEGY_COMPARISON PLOT_COMPARISON [--mpiexec MPIEXEC --ranks N]
"""
import argparse
import csv
import json
import os
import re
import subprocess
import tempfile

parser = argparse.ArgumentParser()
parser.add_argument("binary")
parser.add_argument("plot")
parser.add_argument("--mpiexec", help="run the comparison as one MPI job through this launcher")
parser.add_argument("--ranks", type=int, default=4)
args = parser.parse_args()

labels = ["allreduce", "ps", "ps>allreduce", "allreduce>ps"]
thresholds = ["0.5", "0.99"]  # one every run reaches in its first epoch, one none reaches
with tempfile.TemporaryDirectory() as work:
    runs_csv, summary = os.path.join(work, "runs.csv"), os.path.join(work, "runs.json")
    options = ["--batch", "100", "--train-limit", "20000", "--quiet", "--csv", runs_csv, "--summary", summary,
               "--thresholds", ",".join(thresholds), "--slow", "h1:0.17", "--exchange", "overlapped"]
    if args.mpiexec:
        # 200 batches of 100 an epoch (the first 20,000 examples): 100 batches is inside epoch 1;
        # one epoch keeps the job short.
        epochs = 1
        command = [args.mpiexec, "--oversubscribe", "-n", str(args.ranks), args.binary,
                   "--epochs", "1", "--trigger", "steps:100"] + options
    else:
        # 250 batches is inside epoch 2 for both orders.
        epochs = 2
        command = [args.binary, "--ranks", str(args.ranks), "--epochs", "2", "--trigger", "steps:250"] + options
    subprocess.run(command, check=True)
    records = json.load(open(summary))
    assert [r["strategy"] for r in records] == labels, records
    for r in records:
        assert r["transport"] == ("mpi" if args.mpiexec else "inproc"), r
        assert r["ranks"] == args.ranks and r["epochs"] == epochs and r["train_examples"] == 20000, r
        assert r["exchange"] == "overlapped" and r["bucket_kb"] == 0, r
        assert r["buckets"] == (0 if r["strategy"] == "ps" else 3), r  # one per layer of the mlp
        assert r["test_accuracy"] > 0.7, r
        assert r["train_samples_per_second"] > 0, r
        assert r["slow"] == [{"host": "h1", "share": 0.17}], r
        reached = r["time_to_accuracy"]
        assert list(reached) == thresholds, r
        assert isinstance(reached["0.5"], float) and 0 < reached["0.5"] <= r["wall_seconds"] + 1e-3, r
        assert reached["0.99"] is None, r
        # Where the workers' time went, in seconds per worker: the parameter server's stages have
        # 3 workers, all-reduce's 4; the slowest never computes less than the mean, the least
        # exchange time is never more than the mean.
        w = r["seconds_per_worker"]
        assert 0 < w["compute"] <= w["slowest_compute"] and 0 <= w["least_exchange"] <= w["exchange"], r
        assert w["compute"] + w["exchange"] <= r["wall_seconds"] + 1e-3, r
        assert r["bytes_sent"] > 0, r
        asynchronous = r["strategy"] != "allreduce"
        assert (r["server_busy_fraction"] > 0) == asynchronous, r
        # Workers in step with each other lead the slowest by nothing: the staleness may be 0.
        assert r["max_staleness"] >= r["mean_staleness"] >= 0 and (asynchronous or r["max_staleness"] == 0), r
    # Each switch_to names its one switch: the stage it entered and the batches the first trained.
    steps = 100 if args.mpiexec else 250
    for r in records:
        stages = r["strategy"].split(">")
        if len(stages) == 1:
            assert r["switches"] == [], r
            continue
        assert len(r["switches"]) == 1, r
        switched = re.fullmatch(rf"to {stages[1]} after (\d+) batches under {stages[0]}", r["switches"][0])
        assert switched and steps <= int(switched[1]) < steps + args.ranks, r
    rows = list(csv.DictReader(open(runs_csv)))
    stages = {(row["strategy"], int(row["epoch"])): row["stage"] for row in rows}
    assert len(rows) == 4 * epochs, rows
    assert stages[("allreduce", epochs)] == "allreduce" and stages[("ps", epochs)] == "ps", stages
    assert stages[("ps>allreduce", 1)] == ("ps>allreduce" if epochs == 1 else "ps"), stages
    assert stages[("ps>allreduce", epochs)] == "ps>allreduce", stages
    assert stages[("allreduce>ps", epochs)] == "allreduce>ps", stages
    for r in records:
        last = [row for row in rows if row["strategy"] == r["strategy"]][-1]
        assert abs(float(last["test_accuracy"]) - r["test_accuracy"]) < 1e-5, (last, r)
    image = os.path.join(work, "runs.svg")
    subprocess.run([args.plot, runs_csv, image], check=True)
    text = open(image).read()
    assert "<svg" in text and all(f">{label}<" in text for label in labels), text[:400]
print(f"strategy_comparison {'under mpiexec' if args.mpiexec else 'in process'}, {args.ranks} ranks: "
      "summary, CSV and plot checked")
