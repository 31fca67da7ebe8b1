#!/bin/sh
# The simulated 64 x 16 cluster of docs/many-cores.md: 64 hosts of 16 ranks (1,024 ranks), 10 Gbit/s
# links, calibrated compute. For each model (mlp, cnn): the all-reduce strategy with the flat ring,
# the hierarchical all-reduce and what algorithm::automatic picks, and the synchronous co-located
# parameter server aggregating per node (one shard per host) and per rank (one shard per rank).
# Every run trains EPOCHS epochs of one step each (--batch BATCH on the first HOSTS x 16 x BATCH
# examples: one full batch per rank), writes its summary and per-epoch log to OUT_DIR and the CPU seconds the
# simulation took; the table at the end gives the simulated seconds of the last step, the
# simulated samples per second of that step and the CPU seconds of the whole run. The first step
# of a run also pays one-time setup (the hierarchical all-reduce's group splits, the servers'
# layout), which the last step of two or more epochs leaves out.
#
#   examples/many_cores_sim.sh [BUILD_DIR [OUT_DIR [EPOCHS [MODELS [HOSTS [BATCH]]]]]]
#
# HOSTS (64 unless given) shrinks the cluster: HOSTS x 16 ranks. BATCH (32 unless given) is the
# batch per rank; a smaller one shrinks each rank's activations (the cnn at 64 x 16 needs 16 to fit
# 24 GB), and the calibration measures the step at that batch. PRECISION in the environment (for
# example 1us) is SimGrid's time precision (--sim-precision; its 1 ns unless given), which makes
# the per-rank server's crowded pushes at 64 x 16 several times cheaper to simulate
# (docs/simulation.md#time-precision). COMPUTE_MLP and COMPUTE_CNN (seconds of a step at BATCH, for
# example 0.00047 and 0.0122 at 32, the figures of examples/simulation/scale.sh) fix each model's
# compute for every run (--sim-compute calibrated:SECONDS), so that the simulated figures follow
# from the inputs alone; unset, every run calibrates its own step on this CPU. RUNS picks the runs
# (default: allreduce-ring allreduce-hierarchical allreduce-automatic ps-node ps-rank).
set -eu

build=${1:-build}
out=${2:-many-cores-sim}
epochs=${3:-2}
models=${4:-mlp cnn}
hosts=${5:-64}
batch=${6:-32}
runs=${RUNS:-allreduce-ring allreduce-hierarchical allreduce-automatic ps-node ps-rank}
cluster="--simulate $hosts --ranks-per-host 16 --link 10Gbps${PRECISION:+ --sim-precision $PRECISION}"
run="$build/examples/fashion_mnist $cluster --batch $batch --train-limit $((hosts * 16 * batch)) --epochs $epochs --quiet"
mkdir -p "$out"

# One run: its name, then its options; CPU seconds (user + system) go to NAME.cpu.
measure() {
  name=$1
  shift
  # shellcheck disable=SC2086 # $run is a list of words
  nice -n 19 /usr/bin/time -f '%U %S' -o "$out/$name.cpu" $run "$@" --summary "$out/$name.json" \
    --log "$out/$name.csv" >/dev/null
}

# Names checked before anything runs.
for model in $models; do
  case $model in
    mlp | cnn) ;;
    *)
      echo "many_cores_sim.sh: unknown model '$model' (mlp cnn)" >&2
      exit 1
      ;;
  esac
done
for one in $runs; do
  case $one in
    allreduce-ring | allreduce-hierarchical | allreduce-automatic | ps-node | ps-rank) ;;
    *)
      echo "many_cores_sim.sh: unknown run '$one' (allreduce-ring allreduce-hierarchical allreduce-automatic" \
        "ps-node ps-rank)" >&2
      exit 1
      ;;
  esac
done

for model in $models; do
  compute=${COMPUTE_MLP:-}
  [ "$model" = mlp ] || compute=${COMPUTE_CNN:-}
  for one in $runs; do
    case $one in
      allreduce-*) options="--strategy allreduce --allreduce-algorithm ${one#allreduce-}" ;;
      ps-*) options="--strategy ps --servers colocated --consistency sync --ps-aggregate ${one#ps-}" ;;
    esac
    # shellcheck disable=SC2086 # the options are lists of words
    measure "$model-$one" --model "$model" --sim-compute "calibrated${compute:+:$compute}" $options
  done
done

# shellcheck disable=SC2086 # the models are a list of words
python3 - "$out" "$runs" $models <<'EOF'
import csv, sys
out, runs, models = sys.argv[1], sys.argv[2].split(), sys.argv[3:]
print("| model | run | simulated s / step (last) | samples/s (simulated) | CPU s (whole run) |")
print("|---|---|---:|---:|---:|")
for model in models:
    for run in runs:
        name = f"{out}/{model}-{run}"
        last = list(csv.DictReader(open(name + ".csv")))[-1]
        rate = float(last["samples_per_second"])
        step = int(last["samples"]) / rate  # the CSV's train_seconds has 3 decimals only
        cpu = sum(float(x) for x in open(name + ".cpu").read().split()[-2:])
        print(f"| {model} | {run} | {step:.4f} | {rate:,.0f} | {cpu:.0f} |")
EOF
