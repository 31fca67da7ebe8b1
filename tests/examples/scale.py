#!/usr/bin/env python3
"""Runs examples/simulation/scale.sh on a tiny grid (4 hosts, the mlp at 10 Gbit/s, three
strategies, with and without the slow host, 5 steps) and checks:

- every run wrote its summary, log and CPU seconds, and the summaries describe the grid (hosts,
  link, slow host, strategy, the steps per worker of one epoch);
- scale_table.py prints one row per run, in the grid's order, each epoch's seconds the samples
  trained over the rate, and writes the plot data; its pivot shows a missing run as "-";
- the switches and `adaptive` over dedicated servers (psN8-ar, ar-psN8, adaptiveN8) serve from
  H/8 hosts and switch half way;
- a grid needing more examples than the data set has trains on it repeated (--train-repeat),
  which the table says, as it says a time precision other than 1 ns (PRECISION);
- a second call runs nothing (its runs are there), one at another PRECISION refuses to mix its
  runs with them, and a run that fails fails the script and leaves no summary;
- scale.gp draws the figure, when gnuplot is installed.

    scale.py FASHION_MNIST SCALE_SH SCALE_TABLE_PY SCALE_GP
"""
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile

binary, script, table, plot = sys.argv[1:5]
strategies = ["automatic", "ps1", "ps-ar"]
steps, batch = 5, 32  # 5: ps-ar switches after 10 of 20 batches and drops the 2 that do not make a step
grid = {"HOSTS": "4", "MODELS": "mlp", "LINKS": "10Gbps", "STRATEGIES": " ".join(strategies),
        "SLOW": "none 1:0.25", "STEPS": str(steps), "BATCH": str(batch), "FASHION_MNIST": binary}


def scale(out, **more):
    env = dict(os.environ, OUT=out, **grid)
    env.update(more)
    return subprocess.run(["sh", script], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


with tempfile.TemporaryDirectory() as work:
    out = os.path.join(work, "scale")
    first = scale(out)
    print(first.stdout)
    assert first.returncode == 0, first.returncode
    names = [f"mlp-10Gbps-h4-{slow}-{s}" for slow in ("none", "1_0.25") for s in strategies]
    for name in names:
        for ext in ("json", "csv", "cpu", "out"):
            assert os.path.isfile(os.path.join(out, f"{name}.{ext}")), (name, ext, sorted(os.listdir(out)))
        summary = json.load(open(os.path.join(out, name + ".json")))
        sim = summary["simulation"]
        assert (sim["hosts"], sim["link"], sim["compute"]) == (4, "10Gbps", "calibrated"), sim
        assert sim["time_precision"] == "1ns", sim
        assert sim["slow"] == ([] if "-none-" in name else [{"host": 1, "factor": 0.25}]), sim
        workers = 3 if name.endswith("ps1") else 4
        assert summary["train_examples"] == workers * batch * steps and summary["epochs"] == 1, summary
        assert summary["simulated_seconds"] > 0 and summary["test_accuracy"] > 0.1, summary
    switch = json.load(open(os.path.join(out, names[2] + ".json")))
    assert switch["strategy"] == "ps>allreduce" and len(switch["switches"]) == 1, switch

    rows = subprocess.run([sys.executable, table, out, "--expect", str(len(names))], check=True,
                          stdout=subprocess.PIPE, text=True).stdout.splitlines()
    print("\n".join(rows))
    cells = [[c.strip() for c in row.strip("|").split("|")] for row in rows[2:]]
    assert [(c[3], c[4]) for c in cells] == [(slow, s) for slow in ("none", "1:0.25") for s in strategies], cells
    assert all(c[:3] == ["mlp", "10Gbps", "4"] and float(c[5].replace(",", "")) > 0 for c in cells), cells
    assert os.path.isfile(os.path.join(out, "plot-mlp-10Gbps-none.dat")), os.listdir(out)
    # Seconds of the epoch: the samples trained over the rate (a switch into all-reduce may train
    # fewer than the examples).
    for name, c in zip(names, cells):
        with open(os.path.join(out, name + ".csv")) as f:
            trained = sum(int(e["samples"]) for e in csv.DictReader(f))
        rate = float(c[5].replace(",", ""))
        assert abs(float(c[6]) - trained / rate) <= 1e-3 * trained / rate, (name, c, trained)

    # The pivot: one row per slow host, a run that is missing shown as "-".
    partial = os.path.join(work, "partial")
    shutil.copytree(out, partial)
    for ext in ("json", "csv", "cpu", "out"):
        os.remove(os.path.join(partial, f"mlp-10Gbps-h4-1_0.25-ps1.{ext}"))
    pivot = subprocess.run([sys.executable, table, partial, "--pivot"], check=True, stdout=subprocess.PIPE,
                           text=True).stdout.splitlines()
    print("\n".join(pivot))
    header = [c.strip() for c in pivot[0].strip("|").split("|")]
    none, slowed = ([c.strip() for c in row.strip("|").split("|")] for row in pivot[2:])
    assert header[4:] == strategies and none[2] == "none" and slowed[2] == "1:0.25", pivot
    assert "-" not in none[4:] and slowed[4 + strategies.index("ps1")] == "-", pivot

    # The switches over dedicated servers: H/8 hosts serve (at least 1), the others train under
    # the server stage, and the switch comes half way through the workers' batches.
    dedicated = os.path.join(work, "dedicated")
    run = scale(dedicated, HOSTS="8", STRATEGIES="psN8-ar ar-psN8 adaptiveN8", SLOW="none")
    print(run.stdout)
    assert run.returncode == 0, run.stdout
    expected = {"psN8-ar": ("ps>allreduce", "to allreduce after 17 batches under ps"),
                "ar-psN8": ("allreduce>ps", "to ps after 24 batches under allreduce"),
                "adaptiveN8": ("allreduce<>ps", None)}
    for s, (kind, switch) in expected.items():
        summary = json.load(open(os.path.join(dedicated, f"mlp-10Gbps-h8-none-{s}.json")))
        assert (summary["strategy"], summary["servers"]) == (kind, 1), summary
        assert summary["train_examples"] == 7 * batch * steps, summary
        assert summary["switches"] == ([switch] if switch else []), summary

    # More examples than Fashion-MNIST has (4 x 1,000 x 16 = 64,000): the training set twice over.
    repeated = os.path.join(work, "repeated")
    large = scale(repeated, STRATEGIES="automatic", SLOW="none", STEPS="16", BATCH="1000", PRECISION="1us")
    print(large.stdout)
    assert large.returncode == 0, large.stdout
    summary = json.load(open(os.path.join(repeated, "mlp-10Gbps-h4-none-automatic.json")))
    assert (summary["train_examples"], summary["train_repeat"]) == (64000, 2), summary
    assert summary["simulation"]["time_precision"] == "1us", summary
    row = subprocess.run([sys.executable, table, repeated], check=True, stdout=subprocess.PIPE,
                         text=True).stdout.splitlines()[2]
    assert "(data x2)" in row and "| automatic (1us) |" in row, row

    again = scale(out)
    assert again.returncode == 0 and "scale.sh: mlp" not in again.stdout, again.stdout
    mixed = scale(out, PRECISION="1us")
    assert mixed.returncode != 0 and "was simulated at time precision 1ns, not PRECISION=1us" in mixed.stdout, \
        mixed.stdout

    broken = os.path.join(work, "broken")
    failed = scale(broken, STRATEGIES="automatic", SLOW="none", EXTRA="--lr nan")
    print(failed.stdout)
    assert failed.returncode != 0 and "--lr" in failed.stdout, failed.stdout
    assert not [f for f in os.listdir(broken) if f.endswith(".json")], os.listdir(broken)
    unknown = scale(broken, STRATEGIES="tree")
    assert unknown.returncode != 0 and "unknown strategy 'tree'" in unknown.stdout, unknown.stdout

    if shutil.which("gnuplot"):
        svg = os.path.join(work, "scaling.svg")
        subprocess.run(["gnuplot", "-e", f"dir='{out}'; output='{svg}'; columns='mlp-10Gbps'", plot], check=True)
        assert "<svg" in open(svg).read(), svg
