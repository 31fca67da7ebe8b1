#!/usr/bin/env python3
"""Runs examples/fashion_mnist with --servers colocated: every rank works and serves one shard on a
thread beside its worker. One epoch of 20,000 examples on 3 ranks, in process (and under mpiexec
with --mpiexec), as the parameter server alone and as the first stage of a switch within the epoch.
Each summary must name the co-located servers, each run must learn as a parameter server does
(above 60% after one epoch; chance is 10%, and an asynchronous run of this size ends between about
70% and 74%, lower on a loaded machine, where its workers drift further apart), and the switch's epoch log must show it switched.

With --backups, the servers keep --consistency backups:1 (synchronous rounds that do not wait for
the slowest worker) on 4 ranks, rank 3 computing 4x slower. The switch's hand-over then assembles
the optimizer state from four shards and refuses shards that stepped unequally. Each run must also
apply no stale gradient and drop some of the straggler's late pushes.

    colocated.py FASHION_MNIST [--mpiexec MPIEXEC] [--backups]
"""
import argparse
import csv
import json
import os
import subprocess
import tempfile

parser = argparse.ArgumentParser()
parser.add_argument("binary")
parser.add_argument("--mpiexec")
parser.add_argument("--backups", action="store_true")
args = parser.parse_args()
ranks = "4" if args.backups else "3"
launch = [args.mpiexec, "--oversubscribe", "-n", ranks, args.binary] if args.mpiexec else [args.binary, "--ranks", ranks]
servers = ["--servers", "colocated"]
if args.backups:
    servers += ["--consistency", "backups:1", "--straggler", "3:4.0"]
runs = {
    "ps": ["--strategy", "ps"],
    "switch": ["--strategy", "switch", "--first", "ps", "--second", "allreduce", "--trigger", "steps:100"],
}
with tempfile.TemporaryDirectory() as work:
    for name, strategy in runs.items():
        summary = os.path.join(work, name + ".json")
        log = os.path.join(work, name + ".csv")
        subprocess.run(launch + strategy + servers + ["--epochs", "1", "--batch", "100", "--train-limit", "20000",
                                                      "--quiet", "--summary", summary, "--log", log],
                       check=True)
        record = json.load(open(summary))
        stage = list(csv.DictReader(open(log)))[0]["stage"]
        print(name, record["servers"], record["test_accuracy"], record["dropped_share"], stage)
        assert record["servers"] == "colocated", record
        assert record["test_accuracy"] > 0.6, record
        assert stage == ("ps>allreduce" if name == "switch" else "ps"), stage
        if args.backups:
            assert record["max_staleness"] == 0, record
            assert record["dropped_share"] > 0, record
