#!/usr/bin/env python3
"""Kills examples/fashion_mnist with SIGKILL after its first checkpoint, resumes it with --resume,
and checks that it ends where the same run uninterrupted ends; then that a corrupted checkpoint
and one of another model or strategy are refused with a message and a non-zero status.

The run is a Strategy Switch from a synchronous parameter server to all-reduce after epoch 2:
both stages repeat bit for bit, so the final accuracies must be equal (the issue asks for 0.5
points), and the checkpoint of epoch 1 is taken before the switch, so the resumed run must switch
itself."""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

binary = sys.argv[1]
settings = ["--strategy", "switch", "--first", "ps", "--consistency", "sync", "--second", "allreduce",
            "--trigger", "epochs:2", "--epochs", "3", "--batch", "100", "--ranks", "3", "--quiet"]


def summary_of(path):
    with open(path) as f:
        return json.load(f)


with tempfile.TemporaryDirectory() as work:
    whole = os.path.join(work, "whole.json")
    subprocess.run([binary, *settings, "--summary", whole], check=True)

    checkpoints = os.path.join(work, "checkpoints")
    checkpoint = os.path.join(checkpoints, "checkpoint.bin")
    killed = subprocess.Popen([binary, *settings, "--checkpoint", checkpoints])
    deadline = time.monotonic() + 600
    while not os.path.exists(checkpoint) and killed.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert killed.poll() is None, "the run ended before it was killed"
    assert os.path.exists(checkpoint), "no checkpoint after 600 s"
    killed.send_signal(signal.SIGKILL)
    assert killed.wait() == -signal.SIGKILL

    resumed = os.path.join(work, "resumed.json")
    run = subprocess.run([binary, *settings, "--checkpoint", checkpoints, "--resume", "--summary", resumed],
                         check=True, capture_output=True, text=True)
    print(run.stdout, end="")
    assert "resuming from " + checkpoint + " after epoch 1" in run.stdout, run.stdout
    a, b = summary_of(whole), summary_of(resumed)
    assert a["epochs"] == b["epochs"] == 3, (a, b)
    difference = abs(a["test_accuracy"] - b["test_accuracy"])
    print(f"uninterrupted {a['test_accuracy']:.6f}, killed and resumed {b['test_accuracy']:.6f}")
    assert difference == 0.0, (a, b)

    def refused(extra, message, run_settings=settings):
        r = subprocess.run([binary, *run_settings, "--checkpoint", checkpoints, "--resume", *extra],
                           capture_output=True, text=True)
        assert r.returncode != 0, (extra, r.stdout)
        assert message in r.stderr, (message, r.stderr)
        assert "final test accuracy" not in r.stdout, r.stdout  # no training ran

    refused(["--model", "cnn"], "is for another model: 'mlp'")
    swapped = list(settings)  # the same stages in the other order
    swapped[swapped.index("--first") + 1], swapped[swapped.index("--second") + 1] = "allreduce", "ps"
    refused([], "was written by strategy 'ps>allreduce', this run's strategy is 'allreduce>ps'", swapped)
    data = bytearray(open(checkpoint, "rb").read())
    data[len(data) // 2] ^= 0x40
    open(checkpoint, "wb").write(bytes(data))
    refused([], "is corrupted: the payload's CRC-32 does not match")
    open(checkpoint, "wb").write(bytes(data[: len(data) // 3]))
    refused([], "is truncated")
print("fashion_mnist: killed, resumed, equal to the uninterrupted run; bad checkpoints refused")
