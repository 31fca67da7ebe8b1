#!/bin/bash
# The cluster emulator, part 1: 3 hosts up; every rank runs in its own network namespace and CPU
# group and MPI sees one rank per node; the MPI collective suite passes across the hosts; after
# `down` nothing of the cluster survives.
#
#   test_placement.sh EMULATE CLUSTER_PROBE TEST_TRANSPORT_MPI
set -euo pipefail
emulate=$1 probe=$(realpath "$2") suite=$(realpath "$3")
# shellcheck source-path=SCRIPTDIR
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
require_emulator

cluster_up 3
"$emulate" status

out=$(timeout 60 "$emulate" run -- "$probe" where)
echo "$out"
[[ $(grep -c '^rank ' <<<"$out") -eq 3 ]] || fail "expected 3 ranks, got: $out"
root_ns=$(stat -L -c %i /proc/self/ns/net)
for r in 0 1 2; do
  line=$(grep "^rank $r " <<<"$out")
  [[ $line == *" host h$r "* ]] || fail "rank $r is not on host h$r: $line"
  [[ $line == *" cgroup /switchyard-emulate/h$r "* ]] || fail "rank $r is not in h$r's CPU group: $line"
  [[ $line == *" node_ranks 1 "* ]] || fail "MPI sees rank $r share a node: $line"
  [[ $line != *" netns $root_ns "* ]] || fail "rank $r runs in the root network namespace: $line"
done
[[ $(awk '{ print $6 }' <<<"$out" | sort -u | wc -l) -eq 3 ]] || fail "the ranks do not have 3 distinct network namespaces"
[[ $(awk '{ print $8 }' <<<"$out" | sort -u | wc -l) -eq 3 ]] || fail "the ranks do not have 3 distinct CPU groups"
echo "ok: 3 ranks in 3 network namespaces and 3 CPU groups, one rank per node"

# A worker and a co-located server: two ranks per host share its namespace and group (vader).
out=$(timeout 60 "$emulate" run --ranks-per-host 2 -- "$probe" where)
echo "$out"
[[ $(grep -c '^rank ' <<<"$out") -eq 6 ]] || fail "expected 6 ranks, got: $out"
[[ $(grep -c ' node_ranks 2 ' <<<"$out") -eq 6 ]] || fail "MPI does not see two ranks per node"
[[ $(awk '{ print $6 }' <<<"$out" | sort -u | wc -l) -eq 3 ]] || fail "6 ranks should share 3 network namespaces"
for h in 0 1 2; do
  [[ $(grep -c " host h$h netns .* cgroup /switchyard-emulate/h$h " <<<"$out") -eq 2 ]] || fail "h$h does not hold 2 ranks"
done
# Dealt round-robin: rank r on host r mod 3, so the last 3 ranks (servers) sit beside ranks 0 to 2.
for r in 0 1 2 3 4 5; do
  grep -q "^rank $r host h$((r % 3)) " <<<"$out" || fail "rank $r is not on host h$((r % 3)): $out"
done
echo "ok: --ranks-per-host 2 puts two ranks in each host, rank r on host r mod 3"

# The MPI collective suite across the hosts (passive waits, as `run` sets them).
timeout 300 "$emulate" run -- "$suite" || fail "the MPI collective suite failed across 3 emulated hosts"

cluster_down
