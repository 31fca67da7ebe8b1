#!/bin/bash
# The Strategy Switch experiment on an emulated cluster (docs/cluster.md, "Running the
# experiment"): brings N hosts up, runs examples/strategy_comparison across them R times (one rank
# per host unless --ranks-per-host says more), writes each run's CSV, summary, log and plot and
# the medians per strategy to OUT, and brings the hosts down at the end, also when it fails or is
# interrupted.
#
#   examples/cluster/run_experiment.sh [--hosts N] [--link RATE] [--cpu SHARE] [--slow HOST:SHARE]...
#       [--slow-during HOST:SHARE:A:B] [--ranks-per-host K] [--placement round-robin|by-node]
#       [--runs R] [--build DIR] [--out DIR] [--] [strategy_comparison options...]
#
# Defaults: 4 hosts, the emulator's link (1gbit) and share (cores / N), 3 runs, build directory
# `build`, output directory `experiment`. --ranks-per-host and --placement go to `emulate run`;
# --slow goes to `emulate up`, which applies it, and to strategy_comparison, which records it in
# the summary. --slow-during makes HOST a transient straggler: from second A to second B of each
# strategy's run in the comparison it has SHARE cores (`emulate share`), before and after its
# share from `emulate up`; strategy_comparison records it too. Needs root: examples/cluster/emulate
# says what is missing. OUT gets:
#   runs-K.csv, summary-K.json, log-K.txt, plot-K.svg   run K (1 to R)
#   cluster.txt                                          `emulate status` after `up`
#   schedule.log                                         with --slow-during: each change of share
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
  sed -n '8,10s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
  exit 2
}

hosts=4 link='' cpu='' runs=3 build=build out=experiment slows=() slow_during='' comparison=() run_options=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --hosts) hosts=${2:?--hosts needs a number}; shift 2 ;;
    --link) link=${2:?--link needs a rate}; shift 2 ;;
    --cpu) cpu=${2:?--cpu needs a share}; shift 2 ;;
    --slow) slows+=("${2:?--slow needs HOST:SHARE}"); shift 2 ;;
    --slow-during) slow_during=${2:?--slow-during needs HOST:SHARE:A:B}; shift 2 ;;
    --ranks-per-host) run_options+=(--ranks-per-host "${2:?--ranks-per-host needs a number}"); shift 2 ;;
    --placement) run_options+=(--placement "${2:?--placement needs round-robin or by-node}"); shift 2 ;;
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
    --csv | --csv=* | --summary | --summary=* | --slow | --slow=* | --slow-during | --slow-during=*)
      die "$option is this script's to set: it writes OUT/runs-K.csv and OUT/summary-K.json, and takes --slow and --slow-during before the comparison's options." ;;
  esac
done

# A decimal such as 2.5 as a whole number of millionths (2500000); digits past the sixth are dropped.
millionths() {
  local whole=${1%%.*} fraction=''
  [[ $1 == *.* ]] && fraction=${1#*.}
  fraction=${fraction}000000
  echo $((10#$whole * 1000000 + 10#${fraction:0:6}))
}

# --slow-during HOST:SHARE:A:B, checked before anything changes; A and B in microseconds.
during_host='' during_share='' during_from=0 during_to=0
if [[ -n $slow_during ]]; then
  decimal='^[0-9]+(\.[0-9]+)?$'
  [[ $hosts =~ ^[1-9][0-9]*$ ]] || die "--hosts is a positive whole number, not '$hosts'."
  [[ $slow_during =~ ^([^:]*):([^:]*):([^:]*):([^:]*)$ ]] ||
    die "--slow-during takes HOST:SHARE:A:B, such as h1:0.17:10:40, not '$slow_during'."
  during_host=${BASH_REMATCH[1]} during_share=${BASH_REMATCH[2]} from_text=${BASH_REMATCH[3]} to_text=${BASH_REMATCH[4]}
  [[ $during_host =~ ^h(0|[1-9][0-9]*)$ && ${during_host#h} -lt $hosts ]] ||
    die "--slow-during names '$during_host', which is not one of the hosts h0 to h$((hosts - 1))."
  if [[ ! $during_share =~ $decimal ]] || (($(millionths "$during_share") < 100000)); then
    die "--slow-during's share is a number of cores of at least 0.1 (the emulator's least), not '$during_share'."
  fi
  [[ $from_text =~ $decimal && $to_text =~ $decimal ]] ||
    die "--slow-during's A and B are seconds such as 10 or 2.5, not '$from_text' and '$to_text'."
  during_from=$(millionths "$from_text") during_to=$(millionths "$to_text")
  ((during_from < during_to)) || die "--slow-during's window needs 0 <= A < B, not A $from_text and B $to_text."
  for slow in "${slows[@]}"; do
    [[ ${slow%%:*} != "$during_host" ]] ||
      die "--slow and --slow-during both name $during_host: a host is slow for the whole run or for a window, not both."
  done
fi
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
# What strategy_comparison records: the slow hosts, and the window of --slow-during.
record_options=("${slow_options[@]}")
[[ -n $slow_during ]] && record_options+=(--slow-during "$slow_during")

# --- the schedule of --slow-during: a watcher process per run --------------------------------

# The watcher's state, in its own process: run K, the strategy whose run started last and when
# (microseconds since the epoch), where its window is (before, during, over), when the next
# change is due, and the tail that feeds it the run's output.
schedule_run=0 label='' started=0 phase=over due=0 feeder='' stopping=0

# One line of OUT/schedule.log: the time, the run, the strategy, the second of its run, the host,
# the host's share from then on, and what happened (slow at second A, restored at second B,
# restored-early when the strategy's run ended before B, not-slowed when it ended before A).
log_change() {
  local event=$1 share=$2 t=$EPOCHREALTIME
  local elapsed=$((${t//[!0-9]/} - started))
  printf '%(%Y-%m-%dT%H:%M:%S)T.%s %s %s %d.%03d %s %s %s\n' "${t%[.,]*}" "${t: -6:3}" "$schedule_run" "$label" \
    $((elapsed / 1000000)) $((elapsed % 1000000 / 1000)) "$during_host" "$share" "$event" >>"$out/schedule.log"
}

change_share() {
  "$emulate" share "$during_host" "$1"
  log_change "$2" "$1"
}

# The change that is due: the slow share at second A, the normal share at second B.
next_change() {
  if [[ $phase == before ]]; then
    phase=during due=$((started + during_to))
    change_share "$during_share" slow
  else
    phase=over
    change_share "$normal_share" restored
  fi
}

# The strategy's run ended (the next one started, or the job ended): the host's normal share.
end_window() {
  case $phase in
    before) log_change not-slowed "$normal_share" ;;
    during) change_share "$normal_share" restored-early ;;
  esac
  phase=over
}

# Follows LOG, run K's output, in the background: strategy_comparison prints "LABEL: MODEL on
# Fashion-MNIST, ..." (or "... on Fashion-MNIST (the first N training examples), ..." under
# --train-limit; flushed) as it starts each strategy's run, and the host's window counts
# from there. TERM stops it: the tail ends, and with it the output it reads; the host gets its
# normal share back.
follow_schedule() {
  schedule_run=$1
  local log=$2 header='^([^ :]+): [^ ]+ on Fashion-MNIST[ ,]' chunk partial='' line status wait_us seconds timeout
  trap 'stopping=1; [[ -z $feeder ]] || kill "$feeder" 2>/dev/null || true' TERM
  trap '[[ -z $feeder ]] || kill "$feeder" 2>/dev/null || true' EXIT
  exec < <(exec tail -n +1 -f "$log")
  feeder=$!
  if [[ $stopping -eq 1 ]]; then kill "$feeder"; fi
  while true; do
    timeout=()
    if [[ $phase != over ]]; then
      wait_us=$((due - ${EPOCHREALTIME//[!0-9]/}))
      if [[ $wait_us -le 0 ]]; then
        next_change
        continue
      fi
      printf -v seconds '%d.%06d' $((wait_us / 1000000)) $((wait_us % 1000000))
      timeout=(-t "$seconds")
    fi
    status=0
    IFS= read -r "${timeout[@]}" chunk || status=$?
    if [[ $status -gt 128 ]]; then  # a change is due; a part of a line may have come
      partial+=$chunk
      continue
    fi
    [[ $status -eq 0 ]] || break  # the end of the output: TERM ended the tail
    line=$partial$chunk partial=''
    if [[ $line =~ $header ]]; then
      end_window
      label=${BASH_REMATCH[1]} started=${EPOCHREALTIME//[!0-9]/} phase=before
      due=$((started + during_from))
    fi
  done
  end_window
}

# Ends the watcher (which restores the host's share first); fails when the watcher failed. TERM
# before the watcher set its trap ends it at once (143): it had not started to follow.
watcher=''
stop_schedule() {
  [[ -n $watcher ]] || return 0
  local status=0
  kill -TERM "$watcher" 2>/dev/null || true
  wait "$watcher" || status=$?
  watcher=''
  [[ $status -eq 0 || $status -eq 143 ]]
}

# --- the runs -----------------------------------------------------------------------------------

# Down only what this script brought up; the job, which runs in the root namespace, first, then
# the watcher.
we_are_up=0 job=''
cleanup() {
  local status=$?
  if [[ -n $job ]] && kill -0 "$job" 2>/dev/null; then
    say "ending the job (mpirun, PID $job)"
    kill -TERM "$job" 2>/dev/null || true
    wait "$job" 2>/dev/null || true
  fi
  stop_schedule || true
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
# The host's share outside its window: the one `up` gave it.
normal_share=''
if [[ -n $slow_during ]]; then
  normal_share=$(awk -v h="$during_host" '$1 == h { print $3 }' "$out/cluster.txt")
  echo "# time run strategy second host share event" >"$out/schedule.log"
  say "$during_host: $during_share cores from second $from_text to $to_text of each strategy's run, else $normal_share"
fi

for ((k = 1; k <= runs; ++k)); do
  say "run $k of $runs: emulate run ${run_options[*]} -- strategy_comparison ${record_options[*]} ${comparison[*]}"
  # Made here, so that the watcher can follow it before tee writes to it.
  : >"$out/log-$k.txt"
  if [[ -n $slow_during ]]; then
    follow_schedule "$k" "$out/log-$k.txt" &
    watcher=$!
  fi
  # In the background, so that INT and TERM reach the trap at once rather than after the run.
  "$emulate" run "${run_options[@]}" -- "$binary" --csv "$out/runs-$k.csv" --summary "$out/summary-$k.json" "${record_options[@]}" \
    "${comparison[@]}" > >(tee "$out/log-$k.txt") 2>&1 &
  job=$!
  wait "$job" || die "run $k failed (status $?): see $out/log-$k.txt."
  job=''
  stop_schedule || die "the schedule of --slow-during failed in run $k: see the messages above and $out/schedule.log."
  "$plot" "$out/runs-$k.csv" "$out/plot-$k.svg"
done

python3 - "$out" "$runs" "$hosts" "${link:-default}" "${cpu:-default}" "${slows[*]}" "${comparison[*]}" \
  "${run_options[*]}" <<'EOF'
"""The medians per strategy over the runs' summaries. A threshold never reached counts as an
infinite time, so its median is null when half the runs or more never reached it."""
import json
import math
import os
import statistics
import sys

out, runs, hosts, link, cpu, slows, options, run_options = sys.argv[1:]
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
# --slow-during: the window as the comparison recorded it, and in how many runs of each strategy
# the host was slowed (schedule.log's `slow` lines; a run shorter than A second never was).
slow_during = records[0][0]["slow_during"]
if slow_during:
    slowed = {s["strategy"]: 0 for s in strategies}
    for line in open(os.path.join(out, "schedule.log")):
        fields = line.split()
        if not line.startswith("#") and fields[6] == "slow":
            slowed[fields[2]] += 1
    slow_during = dict(slow_during, slowed_runs=slowed)
setup = {"hosts": int(hosts), "link": link, "cpu": cpu, "shares": shares, "slow": records[0][0]["slow"],
         "slow_during": slow_during, "ranks": records[0][0]["ranks"], "model": records[0][0]["model"],
         "epochs": records[0][0]["epochs"], "runs": runs, "comparison_options": options,
         "run_options": run_options}
json.dump({"setup": setup, "medians": strategies}, open(os.path.join(out, "summary.json"), "w"), indent=2)

thresholds = list(strategies[0]["time_to_accuracy"]) if strategies else []
lines = [f"{hosts} hosts, link {link}, CPU shares {' '.join(f'{h}:{s}' for h, s in shares.items())}; "
         f"{setup['ranks']} ranks{' (' + run_options + ')' if run_options else ''}; "
         f"medians of {runs} run{'s' if runs > 1 else ''}"]
if slow_during:
    lines.append(f"{slow_during['host']} at {slow_during['share']:g} cores from second {slow_during['from_seconds']:g} "
                 f"to {slow_during['to_seconds']:g} of each strategy's run, else {shares[slow_during['host']]}; "
                 "runs slowed: " + ", ".join(f"{label} {n}/{runs}" for label, n in slow_during["slowed_runs"].items()))
lines += [f"{'strategy':<14} {'test accuracy':>14} {'wall s':>9} {'vs allreduce':>13} {'samples/s':>10}"
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
