#!/usr/bin/env python3
"""Runs examples/fashion_mnist with all-reduce for one epoch of 20,000 examples from the same seed
with --exchange buckets and --exchange overlapped, and checks that both summaries name their
exchange and reduced the mlp's three layers as three buckets, and end with the same test loss and
accuracy (the overlapped exchange reduces the same buckets in the same order, so it trains to the
same bits), and that --exchange whole, with no buckets, lands close. In process on 3 ranks, and with
--mpiexec under mpiexec -n 2 (the example initializes MPI for a communication thread).

    exchange.py FASHION_MNIST [--mpiexec MPIEXEC]
"""
import json
import os
import subprocess
import sys
import tempfile

binary = sys.argv[1]
launchers = [("inproc", [], ["--ranks", "3"])]
if len(sys.argv) > 3 and sys.argv[2] == "--mpiexec":
    launchers = [("mpi", [sys.argv[3], "--oversubscribe", "-n", "2"], [])]
for name, launcher, ranks in launchers:
    results = {}
    with tempfile.TemporaryDirectory() as work:
        for exchange in ("whole", "buckets", "overlapped"):
            summary = os.path.join(work, exchange + ".json")
            subprocess.run(launcher + [binary, "--strategy", "allreduce", "--exchange", exchange, "--epochs", "1",
                                       "--batch", "100", "--train-limit", "20000", "--quiet", "--summary", summary]
                           + ranks, check=True)
            record = json.load(open(summary))
            assert record["exchange"] == exchange and record["train_examples"] == 20000, record
            # The mlp's three layers with parameters are three buckets; whole is none.
            assert record["buckets"] == (0 if exchange == "whole" else 3), record
            results[exchange] = (record["test_loss"], record["test_accuracy"])
    print(name, results)
    assert results["overlapped"] == results["buckets"], results
    assert results["whole"][1] > 0.75 and abs(results["whole"][1] - results["buckets"][1]) < 0.01, results
