#!/bin/bash
# The cluster emulator, part 1: 3 hosts up; every rank runs in its own network namespace and CPU
# group and MPI sees one rank per node, as does the MPI handle's topology(); two ranks per host,
# placed round-robin and by node, share their host's namespace, group and node; the MPI collective
# suite passes across the hosts, and the hierarchical all-reduce across the nodes of both
# placements; after `down` nothing of the cluster survives.
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
  [[ $line == *" node $r local_rank 0 local_size 1 nodes 3" ]] || fail "the handle's topology() is not node $r of 3: $line"
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
# Dealt round-robin: rank r on host r mod 3, so the last 3 ranks (servers) sit beside ranks 0 to 2;
# the handle's nodes are numbered by their lowest rank, so host r mod 3 is node r mod 3.
for r in 0 1 2 3 4 5; do
  grep -q "^rank $r host h$((r % 3)) .* node $((r % 3)) local_rank $((r / 3)) local_size 2 nodes 3$" <<<"$out" ||
    fail "rank $r is not on host h$((r % 3)), node $((r % 3)), local rank $((r / 3)) of 2: $out"
done
echo "ok: --ranks-per-host 2 puts two ranks in each host, rank r on host r mod 3, and topology() agrees"

# By node: ranks 2h and 2h + 1 on host h, its node h.
out=$(timeout 60 "$emulate" run --ranks-per-host 2 --placement by-node -- "$probe" where)
echo "$out"
[[ $(grep -c '^rank ' <<<"$out") -eq 6 ]] || fail "expected 6 ranks by node, got: $out"
[[ $(grep -c ' node_ranks 2 ' <<<"$out") -eq 6 ]] || fail "MPI does not see two ranks per node by node"
for r in 0 1 2 3 4 5; do
  grep -q "^rank $r host h$((r / 2)) netns .* cgroup /switchyard-emulate/h$((r / 2)) .* node $((r / 2)) local_rank $((r % 2)) local_size 2 nodes 3$" <<<"$out" ||
    fail "by node, rank $r is not on host h$((r / 2)), node $((r / 2)), local rank $((r % 2)) of 2: $out"
done
echo "ok: --placement by-node puts ranks 2h and 2h + 1 on host h, and topology() agrees"
if refusal=$("$emulate" run --placement by-rack -- "$probe" where 2>&1); then fail "--placement by-rack was accepted"; fi
grep -q "placement is round-robin .* or by-node .*, not 'by-rack'" <<<"$refusal" ||
  fail "a bad --placement is not named: $refusal"
echo "ok: a bad --placement is refused, naming it"

# The hierarchical all-reduce across 3 nodes of 2 ranks, whose ranks interleave (round-robin) or
# follow each other (by node).
for placement in round-robin by-node; do
  timeout 300 "$emulate" run --ranks-per-host 2 --placement "$placement" -- "$suite" \
    --test-case='mpi.allreduce.hierarchical*' || fail "the hierarchical all-reduce failed across 3 hosts x 2 ranks, $placement"
done
echo "ok: the hierarchical all-reduce across 3 hosts x 2 ranks, round-robin and by node"

# The MPI collective suite across the hosts (passive waits, as `run` sets them).
timeout 300 "$emulate" run -- "$suite" || fail "the MPI collective suite failed across 3 emulated hosts"

cluster_down
