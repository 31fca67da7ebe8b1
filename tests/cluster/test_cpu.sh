#!/bin/bash
# The cluster emulator, part 3: the CPU share holds. A compute loop at share 0.5 takes at least
# 1.7 times its uncapped time; on 4 hosts at 0.5 core, a rank that computes while the other three
# sleep still takes at least 1.7 times the uncapped time: the sleepers' cores do not go to it
# (without shares it would run as fast as uncapped). The uncapped time is the least of the loop's
# wall time and its CPU times: other load on the machine can slow an uncapped loop, never a
# capped one below its quota, and the host's own speed drifts between runs. The time with all four computing is printed, not asserted, since
# other load slows four groups more than one (each weighs like one process).
#
#   test_cpu.sh EMULATE CLUSTER_PROBE [ITERATIONS]
set -euo pipefail
emulate=$1 probe=$(realpath "$2") iterations=${3:-200000000}
# shellcheck source-path=SCRIPTDIR
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
require_emulator

seconds_of_rank() { awk -v r="$1" '$1 == "rank" && $2 == r && $3 == "seconds" { print $4 }' <<<"$2"; }
loop_cpu_of_rank() { awk -v r="$1" '$1 == "rank" && $2 == r && $5 == "loop_cpu_s" { print $6 }' <<<"$2"; }
least() { awk -v a="$1" -v b="$2" 'BEGIN { print (b > 0 && b < a) ? b : a }'; }

cluster_up 1 --cpu none
out=$(timeout 60 "$emulate" run -- "$probe" compute "$iterations")
echo "$out"
free=$(awk -v w="$(seconds_of_rank 0 "$out")" -v c="$(loop_cpu_of_rank 0 "$out")" 'BEGIN { print (c > 0 && c < w) ? c : w }')
"$emulate" share h0 0.5
out=$(timeout 60 "$emulate" run -- "$probe" compute "$iterations")
echo "$out"
half=$(seconds_of_rank 0 "$out")
# The same loop's CPU time in the capped run is its uncapped time too, measured at the host's speed
# of that moment: the least of the two references keeps a change of the host's speed between the
# runs from passing for a broken cap.
free=$(least "$free" "$(loop_cpu_of_rank 0 "$out")")
echo "compute loop: uncapped ${free} s, at share 0.5 ${half} s (must be >= 1.7x)"
ratio_at_least "$half" "$free" 1.7 || fail "share 0.5 is not holding: ${half} s against ${free} s uncapped"
echo "ok: share 0.5 takes $(awk -v a="$half" -v b="$free" 'BEGIN { printf "%.2f", a / b }')x the uncapped time"
cluster_down

cluster_up 4 --cpu 0.5
out=$(timeout 60 "$emulate" run -- "$probe" compute "$iterations")
echo "$out"
all=$(awk '$3 == "seconds" { print $4 }' <<<"$out" | sort -g | awk '{ v[NR] = $1 } END { print (v[2] + v[3]) / 2 }')
out=$(timeout 60 "$emulate" run -- "$probe" compute "$iterations" --sleep 1,2,3)
echo "$out"
alone=$(seconds_of_rank 0 "$out")
free=$(least "$free" "$(loop_cpu_of_rank 0 "$out")")
echo "4 hosts at 0.5 core: ${alone} s with three hosts asleep (must be >= 1.7x the uncapped ${free} s)," \
  "median ${all} s with all four computing"
ratio_at_least "$alone" "$free" 1.7 || fail "a sleeping rank gives its CPU to the others: ${alone} s against ${free} s uncapped"
echo "ok: a sleeping rank does not speed up the others"
cluster_down
