#!/usr/bin/env python3
"""Runs examples/fashion_mnist on 4 simulated hosts (--simulate 4) and checks:

- repeatable: the asynchronous parameter server (--strategy ps) with --sim-compute calibrated, whose
  calibration the first run measures and prints, run again with that cost
  (--sim-compute calibrated:SECONDS), ends with the same test loss and accuracy and the same
  simulated_seconds, to the bit;
- the same answers as in process: a synchronous all-reduce run on 4 simulated hosts ends with the
  test loss and accuracy of 4 in-process ranks;
- a transient slow host (--slow 1:0.25@FROM-TO) inside the run makes it take longer in simulated
  time than the same run without it, and the progress lines show simulated and real time;
- a platform file with --sim-compute calibrated, whose calibration is a simulated world of its
  own before the training's, loads in both worlds of the process;
- the summary names the allocator the build linked (ALLOCATOR: mimalloc or system), found by
  asking whether malloc's memory is mimalloc's, so it fails if the link dropped mimalloc.

    simulated.py FASHION_MNIST PLATFORM_FILE ALLOCATOR
"""
import json
import os
import re
import subprocess
import sys
import tempfile

binary, platform, allocator = sys.argv[1], sys.argv[2], sys.argv[3]
small = ["--epochs", "1", "--batch", "50", "--train-limit", "2000", "--seed", "7"]


def run(work, name, args, quiet=True):
    summary = os.path.join(work, name + ".json")
    out = subprocess.run([binary] + small + args + (["--quiet"] if quiet else []) + ["--summary", summary],
                         check=True, stdout=subprocess.PIPE, text=True).stdout
    print(out)
    return json.load(open(summary)), out


with tempfile.TemporaryDirectory() as work:
    # Repeatable: the calibration of the first run, given to the second.
    first, out = run(work, "ps1", ["--simulate", "4", "--strategy", "ps", "--sim-compute", "calibrated"])
    step = first["simulation"]["step_seconds"]
    assert step > 0 and f"--sim-compute calibrated:{step!r}" in out, (step, out)
    second, _ = run(work, "ps2", ["--simulate", "4", "--strategy", "ps", "--sim-compute", f"calibrated:{step!r}"])
    for key in ("test_accuracy", "test_loss", "simulated_seconds", "max_staleness", "mean_staleness"):
        assert first[key] == second[key], (key, first[key], second[key])
    assert first["simulated_seconds"] > 0 and first["wall_seconds"] > 0, first
    assert first["strategy"] == "ps:async" and first["ranks"] == 4, first
    assert first["test_accuracy"] > 0.5, first
    assert first["simulation"]["time_precision"] == "1ns", first
    assert first["allocator"].split()[0] == allocator, (first["allocator"], allocator)

    # The same answers as 4 in-process ranks.
    simulated, _ = run(work, "ar_sim", ["--simulate", "4", "--strategy", "allreduce"])
    inproc, _ = run(work, "ar_inproc", ["--ranks", "4", "--strategy", "allreduce"])
    assert inproc["simulated_seconds"] is None and inproc["simulation"] is None, inproc
    assert (simulated["test_loss"], simulated["test_accuracy"]) == (inproc["test_loss"], inproc["test_accuracy"]), \
        (simulated, inproc)

    # A transient slow host: host 1 at a hundredth of its speed for the first half of the (calibrated)
    # run costs simulated time; the progress lines show both clocks.
    calibrated = ["--simulate", "4", "--strategy", "allreduce", "--sim-compute", f"calibrated:{step!r}"]
    steady, _ = run(work, "steady", calibrated)
    end = steady["simulated_seconds"]
    slowed, out = run(work, "slowed", calibrated + ["--slow", f"h1:0.01@0-{end / 2!r}"], quiet=False)
    assert slowed["simulated_seconds"] > steady["simulated_seconds"] * 1.2, (slowed, steady)
    assert slowed["simulation"]["slow"] == [{"host": 1, "factor": 0.01, "from_seconds": 0.0,
                                             "to_seconds": end / 2}], slowed
    assert re.search(r"^epoch 1 ends at [0-9.]+ s of simulated time, [0-9.]+ s of real time$", out, re.M), out
    assert re.search(r"^final test accuracy [0-9.]+% after [0-9.]+ s of simulated time", out, re.M), out

    # A platform file in two worlds of one process: the calibration's, then the training's.
    filed, out = run(work, "platform", ["--simulate", "2", "--platform", platform, "--strategy", "allreduce",
                                        "--sim-compute", "calibrated"])
    assert "a step costs" in out and filed["ranks"] == 2 and filed["simulated_seconds"] > 0, (filed, out)
print("simulated runs OK")
