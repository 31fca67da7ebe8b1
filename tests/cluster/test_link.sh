#!/bin/bash
# The cluster emulator, part 2: the link cap holds. 16 MiB from h0 to h1 at 100 Mbit/s takes
# between 0.9 and 1.4 times the ideal 16 MiB / 100 Mbit/s (median of 3 trials). And a send posted
# before 50 ms of compute moves during it, as a pipelined worker's push must: under `run`'s eager
# limit the receiver of 240 kB or 1 MB waits under half the compute; with Open MPI's own 64 KiB
# limit (a rendezvous, whose handshake waits for the sender's next MPI call) it waits the whole
# compute, which shows that the check can fail.
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

# 240 kB, a quarter of the mlp (what a worker pushes to each of 4 co-located servers), and 1 MB,
# a whole mlp (what a worker pushes to one server), at 1 Gbit/s (8 ms for 1 MB).
cluster_down
cluster_up 2 --link 1gbit --cpu 1
# Sets `waited` to the receiver's median wait for BYTES posted before 50 ms of compute.
overlap() {
  local bytes=$1 out
  shift
  out=$(timeout 60 "$emulate" run "$@" -- "$probe" overlap "$bytes" 50 5) ||
    fail "cluster_probe overlap $bytes did not end cleanly: $out"
  echo "$out"
  waited=$(value_of median_waited_s "$out")
  [[ -n $waited ]] || fail "cluster_probe overlap $bytes printed no median wait"
}
for bytes in 240000 1000000; do
  overlap "$bytes"
  echo "$bytes bytes posted before 50 ms of compute: the receiver waited $waited s (run's eager limit)"
  awk -v w="$waited" 'BEGIN { exit !(w < 0.025) }' ||
    fail "a posted send of $bytes bytes did not move while its sender computed: waited $waited s"
done
overlap 240000 --mca btl_tcp_eager_limit 65536 --mca btl_tcp_rndv_eager_limit 65536 --mca btl_tcp_max_send_size 131072
echo "240000 bytes with Open MPI's limits (a rendezvous): the receiver waited $waited s"
awk -v w="$waited" 'BEGIN { exit !(w >= 0.045) }' ||
  fail "with a rendezvous the receiver waited only $waited s: the checks above would not catch a lost eager limit"
echo "ok: a posted send moves while its sender computes"
cluster_down
