# shellcheck shell=bash
# shellcheck disable=SC2154 # emulate is set by the test that sources this
# Shared by the cluster emulator's tests: skip (exit 77) with the reason when the machine cannot
# emulate a cluster, bring the cluster down on every exit, and check that nothing survives `down`.
# Sourced by tests/cluster/test_*.sh, which set `emulate` to examples/cluster/emulate first.

skip() {
  echo "SKIP: $*"
  exit 77
}

fail() {
  echo "FAIL: $*"
  exit 1
}

# Skips unless the emulator can run here and the machine is the test's alone.
require_emulator() {
  [[ $(id -u) -eq 0 ]] || skip "the cluster tests need root (they create network namespaces, links and cgroups)"
  local why
  why=$("$emulate" check 2>&1) || skip "${why#emulate: }"
  command -v mpirun >/dev/null || skip "mpirun is missing (Debian: openmpi-bin)"
  if [[ -e /run/switchyard-emulate/hosts ]]; then
    skip "an emulated cluster is already up (emulate status): the tests would take it down"
  fi
  trap cleanup EXIT
  trap 'exit 130' INT TERM
}

we_are_up=0
cleanup() {
  local status=$?
  if [[ $we_are_up -eq 1 ]]; then "$emulate" down >/dev/null 2>&1 || true; fi
  exit "$status"
}

cluster_up() {
  "$emulate" up "$@"
  we_are_up=1
}

cluster_down() {
  "$emulate" down
  we_are_up=0
  assert_nothing_left
}

# Every kind of thing `up` makes: namespaces, links, the bridge, CPU groups, hosts lines, state.
assert_nothing_left() {
  local left=()
  local ns
  for ns in /run/netns/h*; do [[ -e $ns ]] && left+=("namespace ${ns##*/}"); done
  if ip -o link show | grep -qE ': sy-(br|h[0-9]+)[:@]'; then left+=("links: $(ip -o link show | grep -oE 'sy-(br|h[0-9]+)' | paste -sd' ')"); fi
  local root
  root=$(awk '$3 == "cgroup" { n = split($4, o, ","); for (i = 1; i <= n; ++i) if (o[i] == "cpu") { print $2; exit } }' /proc/mounts)
  [[ -d $root/switchyard-emulate ]] && left+=("CPU group $root/switchyard-emulate")
  grep -q 'switchyard-emulate' /etc/hosts && left+=("/etc/hosts lines: $(grep -c switchyard-emulate /etc/hosts)")
  [[ -e /run/switchyard-emulate ]] && left+=("state directory /run/switchyard-emulate")
  [[ ${#left[@]} -eq 0 ]] || fail "after 'emulate down' these remain: ${left[*]}"
  echo "ok: nothing of the cluster is left (namespaces, links, bridge, CPU groups, hosts lines, state)"
}

# The value of `key` in a probe's `key value` output.
value_of() { awk -v k="$1" '$1 == k { print $2; exit }' <<<"$2"; }

# Whether a <= b*factor, for decimals.
ratio_at_least() { awk -v a="$1" -v b="$2" -v f="$3" 'BEGIN { exit !(a >= b * f) }'; }
