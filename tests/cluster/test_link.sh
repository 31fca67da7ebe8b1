#!/bin/bash
# The cluster emulator, part 2: the link cap holds. 16 MiB from h0 to h1 at 100 Mbit/s takes
# between 0.9 and 1.4 times the ideal 16 MiB / 100 Mbit/s (median of 3 trials).
#
#   test_link.sh EMULATE CLUSTER_PROBE
set -euo pipefail
emulate=$1 probe=$(realpath "$2")
# shellcheck source-path=SCRIPTDIR
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
require_emulator

cluster_up 2 --link 100mbit --cpu 1
bytes=$((16 << 20))
out=$(timeout 90 "$emulate" run -- "$probe" ping "$bytes" 3)
echo "$out"
median=$(value_of median_s "$out")
[[ -n $median ]] || fail "the probe printed no median"
ideal=$(awk -v b="$bytes" 'BEGIN { printf "%.6f\n", b * 8 / 100e6 }')
ratio=$(awk -v m="$median" -v i="$ideal" 'BEGIN { printf "%.3f\n", m / i }')
echo "16 MiB at 100 Mbit/s: median ${median} s, ideal ${ideal} s, ratio ${ratio} (must be 0.9 to 1.4)"
awk -v r="$ratio" 'BEGIN { exit !(r >= 0.9 && r <= 1.4) }' || fail "the link cap does not hold: ratio $ratio"
echo "ok: the link cap holds"
cluster_down
