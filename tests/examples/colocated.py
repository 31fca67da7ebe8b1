#!/usr/bin/env python3
"""Runs examples/fashion_mnist with --servers colocated: every rank works and serves one shard on a
thread beside its worker. One epoch of 20,000 examples on 3 ranks, in process (and under mpiexec
with --mpiexec), as the parameter server alone and as the first stage of a switch within the epoch.
Each summary must name the co-located servers, each run must learn as a parameter server does
(above 60% after one epoch; chance is 10%, and an asynchronous run of this size ends between about
70% and 74%, lower on a loaded machine, where its workers drift further apart), and the switch's epoch log must show it switched.

    colocated.py FASHION_MNIST [--mpiexec MPIEXEC]
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
launch = [args.mpiexec, "--oversubscribe", "-n", "3", args.binary] if args.mpiexec else [args.binary, "--ranks", "3"]
runs = {
    "ps": ["--strategy", "ps"],
    "switch": ["--strategy", "switch", "--first", "ps", "--second", "allreduce", "--trigger", "steps:100"],
}
with tempfile.TemporaryDirectory() as work:
    for name, strategy in runs.items():
        summary = os.path.join(work, name + ".json")
        log = os.path.join(work, name + ".csv")
        subprocess.run(launch + strategy + ["--servers", "colocated", "--epochs", "1", "--batch", "100",
                                            "--train-limit", "20000", "--quiet", "--summary", summary, "--log", log],
                       check=True)
        record = json.load(open(summary))
        stage = list(csv.DictReader(open(log)))[0]["stage"]
        print(name, record["servers"], record["test_accuracy"], stage)
        assert record["servers"] == "colocated", record
        assert record["test_accuracy"] > 0.6, record
        assert stage == ("ps>allreduce" if name == "switch" else "ps"), stage
