"""Prints the ninja targets of the tests in the given meson suites: `suite_targets.py BUILD SUITE...`.
A test whose program is a script of the source tree (it builds what it needs itself) adds none."""
import json
import os
import subprocess
import sys

build, suites = sys.argv[1], set(sys.argv[2:])
tests = json.loads(subprocess.check_output(["meson", "introspect", "--tests", build]))
targets = set()
for test in tests:
    if suites & {s.split(":")[-1] for s in test["suite"]}:
        program = os.path.relpath(test["cmd"][0], os.path.abspath(build))
        if not program.startswith(".."):
            targets.add(program)
print(" ".join(sorted(targets)))
