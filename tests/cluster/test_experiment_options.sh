#!/bin/bash
# examples/cluster/run_experiment.sh refuses a bad --slow-during before it changes anything (so
# this needs neither root nor a build): status 1 and one sentence naming the bad value.
#
#   test_experiment_options.sh RUN_EXPERIMENT
set -euo pipefail
experiment=$1

# refused EXPECTED OPTIONS...: run_experiment.sh OPTIONS fails with status 1 and says EXPECTED.
refused() {
  local expected=$1 message status=0
  shift
  message=$("$experiment" --build /nonexistent "$@" 2>&1) || status=$?
  [[ $status -eq 1 ]] || { echo "FAIL: run_experiment.sh $* ended with status $status, not 1: $message"; exit 1; }
  [[ $message == *"$expected"* ]] || { echo "FAIL: run_experiment.sh $* said '$message', not '$expected'"; exit 1; }
  echo "ok: $* is refused: $message"
}

refused "takes HOST:SHARE:A:B, such as h1:0.17:10:40, not 'h1:0.3:1'." --slow-during h1:0.3:1
refused "takes HOST:SHARE:A:B, such as h1:0.17:10:40, not 'h1:0.3:1:2:3'." --slow-during h1:0.3:1:2:3
refused "names 'h2', which is not one of the hosts h0 to h1." --hosts 2 --slow-during h2:0.3:1:2
refused "names 'node1', which is not one of the hosts h0 to h3." --slow-during node1:0.3:1:2
refused "--hosts is a positive whole number, not 'two'." --hosts two --slow-during h1:0.3:1:2
refused "share is a number of cores of at least 0.1 (the emulator's least), not '0'." --slow-during h1:0:1:2
refused "share is a number of cores of at least 0.1 (the emulator's least), not '0.05'." --slow-during h1:0.05:1:2
refused "share is a number of cores of at least 0.1 (the emulator's least), not 'none'." --slow-during h1:none:1:2
refused "A and B are seconds such as 10 or 2.5, not '-1' and '2'." --slow-during h1:0.3:-1:2
refused "A and B are seconds such as 10 or 2.5, not '1' and 'x'." --slow-during h1:0.3:1:x
refused "window needs 0 <= A < B, not A 2 and B 2." --slow-during h1:0.3:2:2
refused "window needs 0 <= A < B, not A 2.5 and B 1." --slow-during h1:0.3:2.5:1
refused "--slow and --slow-during both name h1:" --slow h1:0.17 --slow-during h1:0.3:1:2
refused "--slow-during is this script's to set:" -- --epochs 1 --slow-during h1:0.3:1:2
# A good --slow-during passes the checks: the missing build is the next refusal.
refused "/nonexistent/examples/strategy_comparison is not built" --hosts 2 --slow h0:0.5 --slow-during h1:0.1:0:2.5
