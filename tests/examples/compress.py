#!/usr/bin/env python3
"""Runs examples/fashion_mnist with all-reduce for one epoch of 20,000 examples on 3 in-process
ranks, with float, fp16 and bf16 gradients on the wire from the same seed, and checks that each
summary names its encoding and that the compressed runs learn as the float run does (within 1.5
points after one epoch; a codec that garbled the gradients would be far off). Then the parameter
server with bf16 pushes and pulls (--ps-compress) must learn too.

    compress.py FASHION_MNIST
"""
import json
import os
import subprocess
import sys
import tempfile

binary = sys.argv[1]
accuracy = {}
with tempfile.TemporaryDirectory() as work:
    for compress in ("none", "fp16", "bf16"):
        summary = os.path.join(work, compress + ".json")
        subprocess.run([binary, "--strategy", "allreduce", "--compress", compress, "--ranks", "3", "--epochs", "1",
                        "--batch", "100", "--train-limit", "20000", "--quiet", "--summary", summary], check=True)
        record = json.load(open(summary))
        assert record["compress"] == compress, record
        accuracy[compress] = record["test_accuracy"]
print(accuracy)
assert accuracy["none"] > 0.75, accuracy
for compress in ("fp16", "bf16"):
    assert abs(accuracy[compress] - accuracy["none"]) < 0.015, (compress, accuracy)
with tempfile.TemporaryDirectory() as work:
    summary = os.path.join(work, "ps.json")
    subprocess.run([binary, "--strategy", "ps", "--ps-compress", "bf16", "--ranks", "3", "--epochs", "1",
                    "--batch", "100", "--train-limit", "20000", "--quiet", "--summary", summary], check=True)
    ps = json.load(open(summary))["test_accuracy"]
print("ps, bf16 pushes and pulls:", ps)
assert ps > 0.7, ps
