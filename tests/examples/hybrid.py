#!/usr/bin/env python3
"""Runs examples/fashion_mnist with --threads-per-node 2 under mpiexec on 2 processes: 4 ranks, the
threads of each process talking in process and the processes over MPI (transport::hybrid). The
summary must count 4 ranks on 2 nodes, the banner must name the shape, and the all-reduce run must
learn: one epoch of 12,000 examples (60 steps of 4 x 50) ends far above chance (10%), above 60%
(78.5% on an AMD EPYC, family 26 model 2).

    hybrid.py FASHION_MNIST MPIEXEC
"""
import json
import os
import subprocess
import sys
import tempfile

binary, mpiexec = sys.argv[1:3]
with tempfile.TemporaryDirectory() as work:
    summary = os.path.join(work, "hybrid.json")
    # --bind-to none lets each process's threads use every core; --oversubscribe-threads lets the
    # test run on a machine with a single core as well.
    run = subprocess.run([mpiexec, "--oversubscribe", "--bind-to", "none", "-n", "2", binary,
                          "--threads-per-node", "2", "--oversubscribe-threads", "--strategy", "allreduce",
                          "--epochs", "1", "--batch", "50", "--train-limit", "12000", "--summary", summary],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace", check=False)
    print(run.stdout)
    assert run.returncode == 0, f"exit status {run.returncode}"
    assert "4 ranks: 2 processes x 2 threads" in run.stdout, "the banner does not name the hybrid world"
    record = json.load(open(summary))
    print(record["ranks"], record["nodes"], record["test_accuracy"])
    assert record["ranks"] == 4 and record["nodes"] == 2, record
    assert record["strategy"] == "allreduce" and record["epochs"] == 1, record
    assert record["test_accuracy"] > 0.6, record
