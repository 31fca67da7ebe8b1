#!/bin/bash
# The Strategy Switch experiment on an emulated cluster (docs/cluster.md, "Running the
# experiment"): brings N hosts up, runs examples/strategy_comparison across them R times (one rank
# per host), writes each run's CSV, summary, log and plot and the medians per strategy to OUT, and
# brings the hosts down at the end, also when it fails or is interrupted.
#
#   examples/cluster/run_experiment.sh [--hosts N] [--link RATE] [--cpu SHARE] [--slow HOST:SHARE]...
#       [--runs R] [--build DIR] [--out DIR] [--] [strategy_comparison options...]
#
# Defaults: 4 hosts, the emulator's link (1gbit) and share (cores / N), 3 runs, build directory
# `build`, output directory `experiment`. --slow goes to `emulate up`, which applies it, and to
# strategy_comparison, which records it in the summary. Needs root: examples/cluster/emulate says
# what is missing. OUT gets:
#   runs-K.csv, summary-K.json, log-K.txt, plot-K.svg   run K (1 to R)
#   cluster.txt                                          `emulate status` after `up`
#   summary.json, summary.txt                            the setup and the medians over the runs
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
emulate="$here/emulate"
plot="$here/../plot_comparison.sh"

say() { printf 'run_experiment: %s\n' "$*" >&2; }
die() {
  say "$*"
  exit 1
}
usage() {
  sed -n '7,8s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
  exit 2
}

hosts=4 link='' cpu='' runs=3 build=build out=experiment slows=() comparison=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --hosts) hosts=${2:?--hosts needs a number}; shift 2 ;;
    --link) link=${2:?--link needs a rate}; shift 2 ;;
    --cpu) cpu=${2:?--cpu needs a share}; shift 2 ;;
    --slow) slows+=("${2:?--slow needs HOST:SHARE}"); shift 2 ;;
    --runs) runs=${2:?--runs needs a number}; shift 2 ;;
    --build) build=${2:?--build needs a directory}; shift 2 ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    --) shift; comparison=("$@"); break ;;
    -h | --help) usage ;;
    *) comparison=("$@"); break ;;
  esac
done
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "--runs is a positive whole number, not '$runs'."
for option in "${comparison[@]}"; do
  case $option in
    --csv | --csv=* | --summary | --summary=* | --slow | --slow=*)
      die "$option is this script's to set: it writes OUT/runs-K.csv and OUT/summary-K.json, and takes --slow before the comparison's options." ;;
  esac
done
binary="$build/examples/strategy_comparison"
[[ -x $binary ]] || die "$binary is not built (meson compile -C $build strategy_comparison)."
binary=$(realpath "$binary")
command -v python3 >/dev/null || die "python3 is missing: it computes the medians."
command -v gnuplot >/dev/null || die "gnuplot is missing (Debian: gnuplot-nox): it draws the plots."

up_options=()
[[ -n $link ]] && up_options+=(--link "$link")
[[ -n $cpu ]] && up_options+=(--cpu "$cpu")
slow_options=()
for slow in "${slows[@]}"; do slow_options+=(--slow "$slow"); done

# Down only what this script brought up; the job, which runs in the root namespace, first.
we_are_up=0 job=''
cleanup() {
  local status=$?
  if [[ -n $job ]] && kill -0 "$job" 2>/dev/null; then
    say "ending the job (mpirun, PID $job)"
    kill -TERM "$job" 2>/dev/null || true
    wait "$job" 2>/dev/null || true
  fi
  if [[ $we_are_up -eq 1 ]]; then "$emulate" down || status=1; fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# emulate validates the cluster's options and says why it cannot run (root, kernel, a cluster
# already up) before it changes anything.
"$emulate" up "$hosts" "${up_options[@]}" "${slow_options[@]}"
we_are_up=1
mkdir -p "$out"
out=$(realpath "$out")
"$emulate" status | tee "$out/cluster.txt"

for ((k = 1; k <= runs; ++k)); do
  say "run $k of $runs: emulate run -- strategy_comparison ${slow_options[*]} ${comparison[*]}"
  # In the background, so that INT and TERM reach the trap at once rather than after the run.
  "$emulate" run -- "$binary" --csv "$out/runs-$k.csv" --summary "$out/summary-$k.json" "${slow_options[@]}" \
    "${comparison[@]}" > >(tee "$out/log-$k.txt") 2>&1 &
  job=$!
  wait "$job" || die "run $k failed (status $?): see $out/log-$k.txt."
  job=''
  "$plot" "$out/runs-$k.csv" "$out/plot-$k.svg"
done

python3 - "$out" "$runs" "$hosts" "${link:-default}" "${cpu:-default}" "${slows[*]}" "${comparison[*]}" <<'EOF'
"""The medians per strategy over the runs' summaries. A threshold never reached counts as an
infinite time, so its median is null when half the runs or more never reached it."""
import json
import math
import os
import statistics
import sys

out, runs, hosts, link, cpu, slows, options = sys.argv[1:]
runs = int(runs)
records = [json.load(open(os.path.join(out, f"summary-{k}.json"))) for k in range(1, runs + 1)]
shares = {}
for line in open(os.path.join(out, "cluster.txt")):
    fields = line.split()
    if fields and fields[0].startswith("h") and fields[0][1:].isdigit():
        shares[fields[0]] = fields[2]


def median(values):
    m = statistics.median(math.inf if v is None else v for v in values)
    return None if math.isinf(m) else m


strategies = []
for label in dict.fromkeys(r["strategy"] for run in records for r in run):
    mine = [r for run in records for r in run if r["strategy"] == label]
    thresholds = list(mine[0]["time_to_accuracy"])
    strategies.append({
        "strategy": label,
        "runs": len(mine),
        "test_accuracy": median(r["test_accuracy"] for r in mine),
        "wall_seconds": median(r["wall_seconds"] for r in mine),
        "train_samples_per_second": median(r["train_samples_per_second"] for r in mine),
        "time_to_accuracy": {t: median(r["time_to_accuracy"][t] for r in mine) for t in thresholds},
        "reached": {t: sum(r["time_to_accuracy"][t] is not None for r in mine) for t in thresholds},
        "seconds_per_worker": {k: median(r["seconds_per_worker"][k] for r in mine)
                               for k in mine[0]["seconds_per_worker"]},
        "server_busy_fraction": median(r["server_busy_fraction"] for r in mine),
        "max_staleness": median(r["max_staleness"] for r in mine),
        "mean_staleness": median(r["mean_staleness"] for r in mine),
        "bytes_sent": median(r["bytes_sent"] for r in mine),
    })
setup = {"hosts": int(hosts), "link": link, "cpu": cpu, "shares": shares, "slow": records[0][0]["slow"],
         "ranks": records[0][0]["ranks"], "model": records[0][0]["model"], "epochs": records[0][0]["epochs"],
         "runs": runs, "comparison_options": options}
json.dump({"setup": setup, "medians": strategies}, open(os.path.join(out, "summary.json"), "w"), indent=2)

thresholds = list(strategies[0]["time_to_accuracy"]) if strategies else []
lines = [f"{hosts} hosts, link {link}, CPU shares {' '.join(f'{h}:{s}' for h, s in shares.items())}; "
         f"medians of {runs} run{'s' if runs > 1 else ''}",
         f"{'strategy':<14} {'test accuracy':>14} {'wall s':>9} {'vs allreduce':>13} {'samples/s':>10}"
         + "".join(f" {'s to ' + format(100 * float(t), 'g') + '%':>12}" for t in thresholds)]
base = next((s["wall_seconds"] for s in strategies if s["strategy"] == "allreduce"), None)
for s in strategies:
    ratio = f"{s['wall_seconds'] / base:.2f}" if base else "-"
    times = "".join(f" {'never' if s['time_to_accuracy'][t] is None else format(s['time_to_accuracy'][t], '.1f'):>12}"
                    for t in thresholds)
    lines.append(f"{s['strategy']:<14} {100 * s['test_accuracy']:>13.2f}% {s['wall_seconds']:>9.1f} {ratio:>13} "
                 f"{s['train_samples_per_second']:>10.0f}{times}")
# Where the time went: seconds per worker over the run (the comparison's seconds_per_worker), the
# wait estimated as the mean exchange time less the least (the slowest worker hardly waits in a
# synchronous stage), the servers' busy fraction and the staleness of the asynchronous updates.
lines += ["", "seconds per worker (medians): forward+backward mean and slowest, exchange mean and least, "
          "wait = exchange - least",
          f"{'strategy':<14} {'compute':>9} {'slowest':>9} {'exchange':>9} {'least':>9} {'wait':>9} "
          f"{'MB sent':>9} {'server busy':>12} {'staleness max/mean':>19}"]
for s in strategies:
    w = s["seconds_per_worker"]
    lines.append(f"{s['strategy']:<14} {w['compute']:>9.1f} {w['slowest_compute']:>9.1f} {w['exchange']:>9.1f} "
                 f"{w['least_exchange']:>9.1f} {w['exchange'] - w['least_exchange']:>9.1f} "
                 f"{s['bytes_sent'] / 1e6:>9.0f} {s['server_busy_fraction']:>12.2f} "
                 f"{s['max_staleness']:>9.0f}/{s['mean_staleness']:<9.2f}")
open(os.path.join(out, "summary.txt"), "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
EOF
say "wrote $out (summary.txt, summary.json, and each run's CSV, summary, log and plot)"
