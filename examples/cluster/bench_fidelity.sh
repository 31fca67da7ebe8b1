#!/bin/bash
# The simulated cluster against the emulated one (docs/simulation.md, "Fidelity against the
# emulated cluster"): fashion_mnist on HOSTS emulated hosts of CPU cores at LINK, as all-reduce, as
# the parameter server with one dedicated server rank (`--servers 1`) and with a serving thread in
# every worker (`--servers colocated`), mlp and cnn, with every host at CPU and with h1 at SLOW_SHARE;
# RUNS rounds of every case taken in turn. Then the same cases on `--simulate HOSTS` with every host
# at speed factor CPU (h1 at SLOW_SHARE), once each, and the table: each case's emulated median time
# per epoch (train_seconds / epochs), each simulation's, and their ratio.
#
#   examples/cluster/bench_fidelity.sh [BUILD_DIR [OUT_DIR]]
#
# BUILD_DIR defaults to build, OUT_DIR to bench-fidelity. WHAT ("emulated simulated", the default,
# or one of them; "table" prints the table of what OUT_DIR holds), HOSTS (4), CPU (0.5), LINK
# (1gbit, simulated as Gbps), SLOW_SHARE (0.17), SLOWS ("none h1"), MODELS ("mlp cnn"), LAYOUTS
# ("allreduce dedicated colocated"), RUNS (3), LIMIT_MLP (60000) and LIMIT_CNN (20000) (each run's
# --train-limit, one epoch) choose the runs; EXTRA holds more fashion_mnist options for every run,
# SIM_EXTRA more for the simulations only (e.g. "--sim-byte-cost 2.5ns/B --sim-network lv08") and
# SIM_NAME (sim) names those simulations' column. The emulated runs need root
# (examples/cluster/emulate); the simulations run at nice 19 and need a build with SimGrid.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR
# shellcheck source=bench_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench_common.sh" bench-fidelity "$@"
program=$(realpath "$build/examples/fashion_mnist")
what=${WHAT:-emulated simulated}
cpu=${CPU:-0.5}
slow_share=${SLOW_SHARE:-0.17}
read -r -a sim_extra <<<"${SIM_EXTRA:-}"
sim_name=${SIM_NAME:-sim}

# The options of one case: its model's epoch and its layout's strategy.
case_options() {
  local model=$1 layout=$2
  options=(--model "$model" --epochs 1 --train-limit "$(if [[ $model == mlp ]]; then echo "${LIMIT_MLP:-60000}"; else echo "${LIMIT_CNN:-20000}"; fi)")
  case $layout in
    allreduce) options+=(--strategy allreduce) ;;
    dedicated) options+=(--strategy ps --servers 1) ;;
    colocated) options+=(--strategy ps --servers colocated) ;;
    *) echo "bench_fidelity.sh: unknown layout '$layout'" >&2 && exit 2 ;;
  esac
}

if [[ " $what " == *" emulated "* ]]; then
  cluster_up
  "$emulate" status >"$out/cluster.txt"
  for run in $(seq 1 "${RUNS:-3}"); do
    for slow in ${SLOWS:-none h1}; do
      "$emulate" share h1 "$(if [[ $slow == none ]]; then echo "$cpu"; else echo "$slow_share"; fi)"
      for model in ${MODELS:-mlp cnn}; do
        for layout in ${LAYOUTS:-allreduce dedicated colocated}; do
          case_options "$model" "$layout"
          name="$out/emu-$slow-$model-$layout-$run"
          echo "+ emulate run -- fashion_mnist ${options[*]} ${extra[*]} (h1: $slow, run $run)"
          timeout 600 "$emulate" run -- "$program" "${options[@]}" "${extra[@]}" --quiet --summary "$name.json" \
            >"$name.txt"
        done
      done
    done
  done
  "$emulate" down
fi

if [[ " $what " == *" simulated "* ]]; then
  # tc's rates (1gbit, 100mbit) in the simulation's units (1Gbps, 100Mbps)
  link=$(sed -e 's/gbit$/Gbps/' -e 's/mbit$/Mbps/' -e 's/kbit$/kbps/' -e 's/bit$/bps/' <<<"${LINK:-1gbit}")
  for slow in ${SLOWS:-none h1}; do
    speeds=()
    for ((h = 0; h < hosts; ++h)); do
      speeds+=(--slow "$h:$(if [[ $slow == h$h ]]; then echo "$slow_share"; else echo "$cpu"; fi)")
    done
    for model in ${MODELS:-mlp cnn}; do
      for layout in ${LAYOUTS:-allreduce dedicated colocated}; do
        case_options "$model" "$layout"
        name="$out/$sim_name-$slow-$model-$layout"
        echo "+ fashion_mnist --simulate $hosts --link $link ${speeds[*]} ${options[*]} ${extra[*]} ${sim_extra[*]}"
        nice -n 19 "$program" --simulate "$hosts" --link "$link" "${speeds[@]}" "${options[@]}" "${extra[@]}" \
          "${sim_extra[@]}" --quiet --summary "$name.json" >"$name.txt"
      done
    done
  done
fi

python3 - "$out" <<'EOF_PY'
import glob, json, os, statistics, sys

out = sys.argv[1]
def per_epoch(path):
    r = json.load(open(path))
    return r["train_seconds"] / r["epochs"]
emulated, simulated = {}, {}
for path in glob.glob(os.path.join(out, "*.json")):
    parts = os.path.basename(path)[:-5].split("-")
    if parts[0] == "emu" and len(parts) == 5:
        emulated.setdefault(tuple(parts[1:4]), []).append(per_epoch(path))
    elif len(parts) == 4:
        simulated.setdefault(parts[0], {})[tuple(parts[1:4])] = per_epoch(path)
names = sorted(simulated)
print("\ncase (h1, model, layout)       emulated s/epoch (median; runs)  " + "  ".join(f"{n:>20}" for n in names))
for case in sorted(set(emulated) | {c for s in simulated.values() for c in s}):
    runs = emulated.get(case, [])
    median = statistics.median(runs) if runs else None
    line = f"{' '.join(case):29}  " + (f"{median:7.2f} (" + ", ".join(f"{x:.2f}" for x in runs) + ")" if runs else "n/a")
    line = f"{line:62}"
    for n in names:
        s = simulated[n].get(case)
        line += "  " + (f"{s:8.2f} ({s / median:5.2f}x)" if s is not None and median else f"{s if s is not None else 'n/a':>20}")
    print(line)
EOF_PY
