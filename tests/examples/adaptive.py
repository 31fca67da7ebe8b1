#!/usr/bin/env python3
"""Runs examples/fashion_mnist --strategy adaptive in process with rank 2 computing 4x slower, and
checks that the run left all-reduce for the parameter server after its first epoch (window and
dwell of 1) and stayed there, that the switch is printed and listed in the summary with its
straggler ratio, and that the epoch log names each epoch's stage and carries the switch, with its
reason, on the line after the epoch it followed. The switch rescales the learning rate by the
square-root rule, which the summary records.

    adaptive.py FASHION_MNIST
"""
import csv
import json
import os
import re
import subprocess
import sys
import tempfile

binary = sys.argv[1]
with tempfile.TemporaryDirectory() as work:
    summary, log = os.path.join(work, "run.json"), os.path.join(work, "epochs.csv")
    out = subprocess.run([binary, "--strategy", "adaptive", "--straggler", "2:4.0", "--ranks", "4", "--epochs", "3",
                          "--batch", "100", "--straggler-window", "1", "--straggler-dwell", "1", "--switch-rescale", "sqrt", "--quiet",
                          "--summary", summary, "--log", log],
                         check=True, capture_output=True, text=True).stdout
    print(out)
    printed = re.findall(r"^switch after epoch (\d+) to (\w+): straggler ratio ([\d.]+) > 1.5 for 1 epoch$", out, re.M)
    assert len(printed) == 1 and printed[0][:2] == ("1", "ps") and float(printed[0][2]) > 2.0, printed
    record = json.load(open(summary))
    assert record["strategy"] == "allreduce<>ps", record
    assert record["switch_rescale"] == "sqrt", record
    assert len(record["switches"]) == 1 and record["switches"][0].startswith("after epoch 1 to ps:"), record
    assert record["test_accuracy"] > 0.7, record
    rows = list(csv.DictReader(open(log)))
    assert [row["stage"] for row in rows] == ["allreduce", "ps", "ps"], rows
    assert [row["switches"] for row in rows] == ["", record["switches"][0], ""], rows
    assert float(rows[0]["slowest_step_compute_seconds"]) > 2.0 * float(rows[0]["median_step_compute_seconds"]), rows
    # The straggler's pass counts as compute: under all-reduce, where every worker trains as many
    # steps, the slowest worker computes far longer than the mean (under the server it trains fewer).
    assert float(rows[0]["slowest_compute_seconds"]) > 1.5 * float(rows[0]["compute_seconds"]), rows
print("ok: the adaptive run switched to the parameter server after epoch 1, for the straggler")
