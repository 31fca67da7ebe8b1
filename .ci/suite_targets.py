"""Prints the ninja targets of the tests in the given meson suites: `suite_targets.py BUILD SUITE...`."""
import json
import os
import subprocess
import sys

build, suites = sys.argv[1], set(sys.argv[2:])
tests = json.loads(subprocess.check_output(["meson", "introspect", "--tests", build]))
targets = set()
for test in tests:
    if suites & {s.split(":")[-1] for s in test["suite"]}:
        targets.add(os.path.relpath(test["cmd"][0], os.path.abspath(build)))
print(" ".join(sorted(targets)))
