#!/bin/sh
# The simulated scaling study of docs/simulation.md: fashion_mnist --simulate H over a grid of
# models, link rates, host counts, strategies and a slow host, one process at a time under nice 19.
# Every run is one epoch of STEPS steps per worker (--batch BATCH on the first
# workers x BATCH x STEPS training examples) with a fixed calibrated cost per step
# (--sim-compute calibrated:SECONDS, no calibration per run), so a run's simulated figures follow
# from its inputs alone. Each run NAME = MODEL-LINK-hH-SLOW-STRATEGY writes OUT/NAME.json
# (--summary), OUT/NAME.csv (--log) and OUT/NAME.cpu (user and system CPU seconds, /usr/bin/time);
# a run whose NAME.json exists is skipped, so an interrupted grid resumes where it stopped (one
# simulated at another PRECISION stops the script: give that grid an OUT of its own). A run
# that fails stops the script, its partial files removed. examples/simulation/scale_table.py OUT
# makes the table, examples/simulation/scale.gp the figure.
#
#   examples/simulation/scale.sh
#   BUILD=build OUT=scale HOSTS="4 16" MODELS=mlp LINKS=10Gbps STRATEGIES="ring automatic" examples/simulation/scale.sh
#
# Knobs (environment, defaults in brackets):
#   BUILD [build]  OUT [scale]  MODELS [mlp cnn]  HOSTS [4 16 64]  LINKS [10Gbps 1Gbps]
#   STRATEGIES [ring rd automatic ps1 psN8 colocated ps-ar ar-ps adaptive]; also psN8-ar ar-psN8 adaptiveN8:
#     ring, rd, automatic   --strategy allreduce --allreduce-algorithm ring | recursive-doubling | automatic
#     ps1                   --strategy ps --servers 1 (asynchronous; the last host serves, H - 1 workers)
#     psN8                  --strategy ps --servers H/8, at least 1 (asynchronous; H - H/8 workers)
#     colocated             --strategy ps --servers colocated (asynchronous; every host works and serves)
#     ps-ar, ar-ps          --strategy switch, co-located asynchronous servers, switching half way
#                           through the epoch (--trigger steps:H x STEPS / 2)
#     adaptive              --strategy adaptive with the dedicated hosts' settings of docs/training.md,
#                           sampling every 2 steps instead of 5 so that a switch fits in the epoch
#     psN8-ar, ar-psN8,     ps-ar, ar-ps and adaptive with psN8's dedicated servers instead of co-located
#     adaptiveN8            ones (H/8 hosts serve, H - H/8 work; --trigger steps:workers x STEPS / 2)
#   SLOW ["none 1:0.25"]: none, or HOST:FACTOR for --slow (host 1 at a quarter speed)
#   STEPS [20]  BATCH [32]: each run trains on the first workers x BATCH x STEPS training
#     examples; above the 60,000 of Fashion-MNIST (1,024 hosts), on the training set repeated
#     (--train-repeat), so that every size keeps the same batch and steps
#   COMPUTE_MLP [0.00047]  COMPUTE_CNN [0.0122]: seconds of a step at --batch 32, from
#     fashion_mnist --sim-compute calibrated on the machine of docs/simulation.md (calibrate again
#     for another BATCH)
#   LATENCY [50us]  EXTRA [nothing]: more fashion_mnist options for every run
#   PRECISION [1ns]: SimGrid's time precision (--sim-precision); 1us simulates the parameter
#     servers' crowded pushes many times faster at 1,024 hosts (docs/simulation.md#time-precision)
#   FASHION_MNIST [$BUILD/examples/fashion_mnist]: the program
set -eu

BUILD=${BUILD:-build}
OUT=${OUT:-scale}
MODELS=${MODELS:-mlp cnn}
HOSTS=${HOSTS:-4 16 64}
LINKS=${LINKS:-10Gbps 1Gbps}
STRATEGIES=${STRATEGIES:-ring rd automatic ps1 psN8 colocated ps-ar ar-ps adaptive}
SLOW=${SLOW:-none 1:0.25}
STEPS=${STEPS:-20}
BATCH=${BATCH:-32}
COMPUTE_MLP=${COMPUTE_MLP:-0.00047}
COMPUTE_CNN=${COMPUTE_CNN:-0.0122}
LATENCY=${LATENCY:-50us}
PRECISION=${PRECISION:-1ns}
TRAIN_EXAMPLES=60000  # Fashion-MNIST's training set
EXTRA=${EXTRA:-}

binary=${FASHION_MNIST:-$BUILD/examples/fashion_mnist}
if [ ! -x "$binary" ]; then
  echo "scale.sh: $binary not found: build it (ninja -C $BUILD examples/fashion_mnist) or set BUILD" >&2
  exit 1
fi
mkdir -p "$OUT"

# The options of strategy $1 on $2 hosts; sets `workers`, the ranks that train.
strategy_options() {
  workers=$2
  case $1 in
    ring) options="--strategy allreduce --allreduce-algorithm ring" ;;
    rd) options="--strategy allreduce --allreduce-algorithm recursive-doubling" ;;
    automatic) options="--strategy allreduce --allreduce-algorithm automatic" ;;
    ps1)
      options="--strategy ps --servers 1"
      workers=$(($2 - 1))
      ;;
    psN8 | psN8-ar | ar-psN8 | adaptiveN8)
      servers=$(($2 / 8))
      [ "$servers" -ge 1 ] || servers=1
      workers=$(($2 - servers))
      ;;
    colocated | ps-ar | ar-ps | adaptive) servers=colocated ;;
  esac
  half="--trigger steps:$((workers * STEPS / 2))"
  case $1 in
    ring | rd | automatic | ps1) ;;
    psN8 | colocated) options="--strategy ps --servers $servers" ;;
    ps-ar | psN8-ar) options="--strategy switch --first ps --second allreduce --servers $servers $half" ;;
    ar-ps | ar-psN8) options="--strategy switch --first allreduce --second ps --servers $servers $half" ;;
    adaptive | adaptiveN8)
      options="--strategy adaptive --servers $servers --consistency backups:1 --straggler-every 2 --straggler-dwell 3"
      options="$options --straggler-min-wait 0.25"
      ;;
    *)
      echo "scale.sh: unknown strategy '$1' (ring rd automatic ps1 psN8 colocated ps-ar ar-ps adaptive" \
        "psN8-ar ar-psN8 adaptiveN8)" >&2
      exit 1
      ;;
  esac
}

for model in $MODELS; do
  case $model in
    mlp) compute=$COMPUTE_MLP ;;
    cnn) compute=$COMPUTE_CNN ;;
    *)
      echo "scale.sh: unknown model '$model' (mlp cnn)" >&2
      exit 1
      ;;
  esac
  for link in $LINKS; do
    for hosts in $HOSTS; do
      for slow in $SLOW; do
        slow_option=""
        [ "$slow" = none ] || slow_option="--slow $slow"
        for strategy in $STRATEGIES; do
          name=$model-$link-h$hosts-$(echo "$slow" | tr ':' '_')-$strategy
          if [ -e "$OUT/$name.json" ]; then
            made=$(sed -n 's/.*"time_precision": *"\([^"]*\)".*/\1/p' "$OUT/$name.json")
            if [ "${made:-1ns}" != "$PRECISION" ]; then
              echo "scale.sh: $OUT/$name.json was simulated at time precision ${made:-1ns}, not PRECISION=$PRECISION:" \
                "give this grid an OUT of its own" >&2
              exit 1
            fi
            continue
          fi
          strategy_options "$strategy" "$hosts"
          examples=$((workers * BATCH * STEPS))
          repeat=$(((examples + TRAIN_EXAMPLES - 1) / TRAIN_EXAMPLES))
          echo "scale.sh: $name"
          # shellcheck disable=SC2086 # the options are lists of words
          if ! nice -n 19 /usr/bin/time -f '%U %S' -o "$OUT/$name.cpu" "$binary" --simulate "$hosts" --link "$link" \
            --latency "$LATENCY" --sim-precision "$PRECISION" --sim-compute "calibrated:$compute" $slow_option \
            --model "$model" --epochs 1 \
            --batch "$BATCH" --train-limit "$examples" --train-repeat "$repeat" --quiet $options $EXTRA \
            --summary "$OUT/$name.tmp.json" --log "$OUT/$name.csv" >"$OUT/$name.out" 2>&1; then
            echo "scale.sh: $name failed:" >&2
            cat "$OUT/$name.out" >&2
            rm -f "$OUT/$name.tmp.json" "$OUT/$name.csv" "$OUT/$name.cpu"
            exit 1
          fi
          mv "$OUT/$name.tmp.json" "$OUT/$name.json"
        done
      done
    done
  done
done
