#!/bin/bash
# What the emulator benchmarks share (bench_colocated.sh, bench_placement.sh, bench_aggregate.sh,
# bench_fidelity.sh), sourced after `set -euo pipefail`:
#
#   source "$(dirname "${BASH_SOURCE[0]}")/bench_common.sh" DEFAULT_OUT_DIR "$@"
#
# It reads the benchmark's arguments [BUILD_DIR [OUT_DIR]] (BUILD_DIR defaults to build) and sets
# `emulate` (the emulator), `build` (BUILD_DIR), `out` (OUT_DIR, made and absolute), `hosts`
# (HOSTS, default 4) and the array `extra` (the words of EXTRA: more options for every run).
# `cluster_up` brings up `hosts` hosts of CPU (default 0.5) cores at LINK (1gbit), with SLOW
# (HOST:SHARE, default none) slowed, and tears them down when the script ends, however it ends.

# shellcheck disable=SC2034  # the variables are for the script that sources this file
emulate="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/emulate"
build=${2:-build}
out=${3:-$1}
hosts=${HOSTS:-4}
read -r -a extra <<<"${EXTRA:-}"
mkdir -p "$out"
out=$(realpath "$out")

cluster_up() {
  trap '"$emulate" down >/dev/null 2>&1 || true' EXIT
  trap 'exit 130' INT TERM
  local slow=()
  if [[ -n ${SLOW:-} ]]; then slow=(--slow "$SLOW"); fi
  "$emulate" up "$hosts" --cpu "${CPU:-0.5}" --link "${LINK:-1gbit}" "${slow[@]}"
}
