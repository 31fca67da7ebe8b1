#!/usr/bin/env python3
"""Runs examples/fashion_mnist with --consistency backups:1: synchronous rounds on co-located
servers that do not wait for the slowest worker. One epoch of 20,000 examples on 4 ranks, in
process (and under mpiexec with --mpiexec), with rank 3 computing 4x slower: as the parameter
server alone, and as the first stage of a switch to all-reduce within the epoch (whose hand-over
assembles the optimizer state from the four shards and refuses shards that stepped unequally).
Each run must learn (above 60% after one epoch; chance is 10%), apply no stale gradient, drop some
of the straggler's late pushes, and the switch's epoch log must show it switched.

    backups.py FASHION_MNIST [--mpiexec MPIEXEC]
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
args = parser.parse_args()
launch = [args.mpiexec, "--oversubscribe", "-n", "4", args.binary] if args.mpiexec else [args.binary, "--ranks", "4"]
runs = {
    "ps": ["--strategy", "ps"],
    "switch": ["--strategy", "switch", "--first", "ps", "--second", "allreduce", "--trigger", "steps:100"],
}
with tempfile.TemporaryDirectory() as work:
    for name, strategy in runs.items():
        summary = os.path.join(work, name + ".json")
        log = os.path.join(work, name + ".csv")
        subprocess.run(launch + strategy + ["--servers", "colocated", "--consistency", "backups:1",
                                            "--straggler", "3:4.0", "--epochs", "1", "--batch", "100",
                                            "--train-limit", "20000", "--quiet", "--summary", summary, "--log", log],
                       check=True)
        record = json.load(open(summary))
        stage = list(csv.DictReader(open(log)))[0]["stage"]
        print(name, record["test_accuracy"], record["max_staleness"], record["dropped_share"], stage)
        assert record["test_accuracy"] > 0.6, record
        assert record["max_staleness"] == 0, record
        assert record["dropped_share"] > 0, record
        assert stage == ("ps>allreduce" if name == "switch" else "ps"), stage
