#!/bin/bash
# The side-by-side comparison of Open MPI settings in docs/cluster.md ("Open MPI's eager limit"):
# fashion_mnist, mlp, 2 epochs, on 4 emulated hosts x 0.5 core at 1 Gbit/s, as all-reduce, with
# co-located servers and with those pipelined, each setting in turn, RUNS times (the a1 and a2
# directories are two invocations with RUNS=3).
#
#   ab.sh BUILD_DIR OUT_DIR      (from the repository's top; root; CFGS, LAYOUTS and RUNS choose)
#
# Each run's summary is OUT_DIR/SETTING-LAYOUT-RUN.json. The settings' names: default (emulate
# run's own limits then: Open MPI's defaults), eager (1 MiB, what emulate run now sets), e300k,
# e4m, eagernomax (1 MiB eager, 128 KiB fragments), progress (the defaults and
# btl_tcp_progress_thread 1), depth (the defaults and pml_ob1_send_pipeline_depth 64).
set -euo pipefail
emulate=examples/cluster/emulate
program=$(realpath "$1/examples/fashion_mnist")
out=$2
mkdir -p "$out"
trap '"$emulate" down >/dev/null 2>&1 || true' EXIT
"$emulate" up 4 --cpu 0.5 --link 1gbit
limits() { echo --mca btl_tcp_eager_limit "$1" --mca btl_tcp_rndv_eager_limit "$1" --mca btl_tcp_max_send_size "$2"; }
for run in $(seq 1 "${RUNS:-3}"); do
  for cfg in ${CFGS:-default eager}; do
    case $cfg in
      default) read -r -a mca <<<"$(limits 65536 131072)" ;;
      eager) read -r -a mca <<<"$(limits 1048576 1048576)" ;;
      e300k) read -r -a mca <<<"$(limits 300000 300000)" ;;
      e4m) read -r -a mca <<<"$(limits 4194304 4194304)" ;;
      eagernomax) read -r -a mca <<<"$(limits 1048576 131072)" ;;
      progress) read -r -a mca <<<"$(limits 65536 131072) --mca btl_tcp_progress_thread 1" ;;
      depth) read -r -a mca <<<"$(limits 65536 131072) --mca pml_ob1_send_pipeline_depth 64" ;;
      *) echo "ab.sh: unknown setting '$cfg'" >&2; exit 2 ;;
    esac
    for layout in ${LAYOUTS:-allreduce threads pipelined}; do
      case $layout in
        allreduce) strategy=(--strategy allreduce) ;;
        threads) strategy=(--strategy ps --servers colocated) ;;
        pipelined) strategy=(--strategy ps --servers colocated --ps-pipeline) ;;
        *) echo "ab.sh: unknown layout '$layout'" >&2; exit 2 ;;
      esac
      timeout 600 "$emulate" run "${mca[@]}" -- "$program" --model mlp --epochs 2 "${strategy[@]}" \
        --quiet --summary "$out/$cfg-$layout-$run.json" >/dev/null
    done
  done
done
