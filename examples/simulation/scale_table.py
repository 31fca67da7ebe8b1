#!/usr/bin/env python3
"""The table and plot data of examples/simulation/scale.sh: reads its output directory OUT and

- prints a markdown table, one row per run: model, link, hosts, slow host, strategy, simulated
  samples per second and seconds of the epoch's training (the trainer's train_seconds: the
  samples trained over the rate), the simulated seconds of the whole run (simulated_seconds:
  the start, the training and the epoch's end), final test accuracy ("(data xK)" after it: the
  training set repeated K times, --train-repeat), switches made and the CPU
  seconds the simulation took; a strategy simulated at another time precision than SimGrid's
  1 ns (scale.sh's PRECISION) says it, as "psN8 (1us)" (--pivot: the samples per second only, one column per strategy,
  "-" where a run is missing);
- writes OUT/plot-MODEL-LINK-SLOW.dat for examples/simulation/scale.gp: one row per host count,
  the hosts then the samples per second of each strategy ("?" where a run is missing).

    examples/simulation/scale_table.py OUT [--pivot] [--expect N]

--expect N fails (status 1) unless OUT holds exactly N runs, each with its summary, log and CPU
seconds. A run is named MODEL-LINK-hHOSTS-SLOW-STRATEGY (SLOW: none, or HOST_FACTOR).
"""
import argparse
import csv
import json
import os
import sys

STRATEGIES = ["ring", "rd", "automatic", "ps1", "psN8", "colocated", "ps-ar", "ar-ps", "adaptive",
              "psN8-ar", "ar-psN8", "adaptiveN8"]
MODELS = ["mlp", "cnn"]


def rate_order(link):
    """Links by their rate, fastest first: 10Gbps before 1Gbps."""
    units = {"T": 1e12, "G": 1e9, "M": 1e6, "k": 1e3}
    number = link.rstrip("bpsB")
    scale = units.get(number[-1:], 1)
    digits = number[:-1] if number[-1:] in units else number
    try:
        return -float(digits) * scale
    except ValueError:
        return 0.0


def read_run(out, name):
    """One run's figures, or an error naming what is missing."""
    model, link, hosts, slow, strategy = name.split("-", 4)
    base = os.path.join(out, name)
    summary = json.load(open(base + ".json"))
    epochs = list(csv.DictReader(open(base + ".csv")))
    if not epochs:
        raise ValueError(f"{base}.csv has no epoch")
    cpu = sum(float(x) for x in open(base + ".cpu").read().split()[-2:])
    rate = summary["train_samples_per_second"]
    return {
        "model": model,
        "link": link,
        "hosts": int(hosts[1:]),
        "slow": "none" if slow == "none" else slow.replace("_", ":"),
        "strategy": strategy,
        "rate": rate,
        # The summary's train_seconds has 3 decimals; its rate is exact. The samples trained, not
        # the examples: a switch into all-reduce leaves out the last batches that do not make a
        # step of every worker.
        "epoch": sum(int(e["samples"]) for e in epochs) / rate if rate > 0 else float("nan"),
        "run": summary["simulated_seconds"],
        "accuracy": summary["test_accuracy"],
        "repeat": summary.get("train_repeat", 1),
        "switches": len(summary["switches"]),
        "precision": summary["simulation"].get("time_precision", "1ns"),
        "cpu": cpu,
    }


def order(run):
    strategy = STRATEGIES.index(run["strategy"]) if run["strategy"] in STRATEGIES else len(STRATEGIES)
    model = MODELS.index(run["model"]) if run["model"] in MODELS else len(MODELS)
    return (model, rate_order(run["link"]), run["slow"] != "none", run["slow"], run["hosts"], strategy,
            run["strategy"])


def accuracy(run):
    """The test accuracy, with the repeats of a training set that --train-repeat enlarged."""
    repeated = f" (data x{run['repeat']})" if run["repeat"] > 1 else ""
    return f"{100 * run['accuracy']:.2f}%{repeated}"


def print_table(runs):
    print("| model | link | hosts | slow host | strategy | samples/s (simulated) | s/epoch (simulated) "
          "| run s (simulated) | test accuracy | switches | CPU s |")
    print("| --- | --- | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in runs:
        strategy = r["strategy"] if r["precision"] == "1ns" else f"{r['strategy']} ({r['precision']})"
        print(f"| {r['model']} | {r['link']} | {r['hosts']} | {r['slow']} | {strategy} | {r['rate']:,.0f} "
              f"| {r['epoch']:.4g} | {r['run']:.4g} | {accuracy(r)} | {r['switches']} | {r['cpu']:.1f} |")


def strategies_of(runs):
    present = {r["strategy"] for r in runs}
    return [s for s in STRATEGIES if s in present] + sorted(present - set(STRATEGIES))


def panels(runs):
    """The runs by (model, link, slow), in table order."""
    result = {}
    for r in runs:
        result.setdefault((r["model"], r["link"], r["slow"]), []).append(r)
    return result


def print_pivot(runs):
    names = strategies_of(runs)
    print("| model | link | slow host | hosts | " + " | ".join(names) + " |")
    print("| --- | --- | --- | ---: | " + " | ".join("---:" for _ in names) + " |")
    for (model, link, slow), group in panels(runs).items():
        for hosts in sorted({r["hosts"] for r in group}):
            rates = {r["strategy"]: r["rate"] for r in group if r["hosts"] == hosts}
            best = max(rates.values())
            cells = [("**{:,.0f}**" if rates[s] == best else "{:,.0f}").format(rates[s]) if s in rates else "-"
                     for s in names]
            print(f"| {model} | {link} | {slow} | {hosts} | " + " | ".join(cells) + " |")


def write_plot_data(out, runs):
    names = strategies_of(runs)
    for (model, link, slow), group in panels(runs).items():
        path = os.path.join(out, f"plot-{model}-{link}-{slow.replace(':', '_')}.dat")
        with open(path, "w") as f:
            f.write("# hosts " + " ".join(names) + "\n")
            for hosts in sorted({r["hosts"] for r in group}):
                rates = {r["strategy"]: r["rate"] for r in group if r["hosts"] == hosts}
                f.write(f"{hosts} " + " ".join(str(rates.get(s, "?")) for s in names) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out")
    parser.add_argument("--pivot", action="store_true")
    parser.add_argument("--expect", type=int)
    args = parser.parse_args()
    names = sorted(f[:-len(".json")] for f in os.listdir(args.out)
                   if f.endswith(".json") and not f.endswith(".tmp.json"))
    runs = []
    for name in names:
        try:
            runs.append(read_run(args.out, name))
        except (OSError, ValueError, KeyError) as e:
            sys.exit(f"scale_table.py: run {name}: {e}")
    if args.expect is not None and len(runs) != args.expect:
        sys.exit(f"scale_table.py: {args.out} holds {len(runs)} runs, expected {args.expect}")
    runs.sort(key=order)
    if args.pivot:
        print_pivot(runs)
    else:
        print_table(runs)
    write_plot_data(args.out, runs)


main()
