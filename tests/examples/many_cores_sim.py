#!/usr/bin/env python3
"""Runs examples/many_cores_sim.sh on a tiny cluster (2 hosts of 16 ranks, the mlp, a batch of 4,
two epochs) with a fixed compute step and two of its runs, and checks:

- each run wrote its summary, log and CPU seconds, trained two epochs of one step on 16 ranks a
  host, and simulated the fixed step (COMPUTE_MLP) instead of calibrating one;
- the table at the end has a row per run, in RUNS' order;
- an unknown run or model fails the script with its name before anything runs.

    many_cores_sim.py MANY_CORES_SIM_SH BUILD_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

script, build = sys.argv[1:3]
runs = ["allreduce-hierarchical", "ps-node"]


def many_cores(out, models="mlp", **more):
    env = dict(os.environ, COMPUTE_MLP="0.0005", RUNS=" ".join(runs))
    env.update(more)
    return subprocess.run(["sh", script, build, out, "2", models, "2", "4"], env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)


with tempfile.TemporaryDirectory() as work:
    out = os.path.join(work, "sim")
    done = many_cores(out)
    print(done.stdout)
    assert done.returncode == 0, done.stdout
    for run in runs:
        for ext in ("json", "csv", "cpu"):
            assert os.path.isfile(os.path.join(out, f"mlp-{run}.{ext}")), (run, ext, sorted(os.listdir(out)))
        summary = json.load(open(os.path.join(out, f"mlp-{run}.json")))
        sim = summary["simulation"]
        assert (summary["ranks"], summary["epochs"], summary["train_examples"]) == (32, 2, 128), summary
        assert (sim["hosts"], sim["compute"], sim["step_seconds"]) == (2, "calibrated", 0.0005), sim
    rows = [line for line in done.stdout.splitlines() if line.startswith("| mlp |")]
    assert [r.split("|")[2].strip() for r in rows] == runs, rows

    # Bad names are refused before any run: nothing is written for the good ones before them.
    unknown = many_cores(os.path.join(work, "unknown"), RUNS="ps-node ps-tree")
    assert unknown.returncode != 0 and "unknown run 'ps-tree'" in unknown.stdout, unknown.stdout
    model = many_cores(os.path.join(work, "model"), models="mlp rnn")
    assert model.returncode != 0 and "unknown model 'rnn'" in model.stdout, model.stdout
    assert not os.listdir(os.path.join(work, "unknown")) and not os.listdir(os.path.join(work, "model"))
