"""The tests a sanitizer build runs: `suite_targets.py BUILD [--tests] SELECTION...`, where each
item of SELECTION is a meson suite (`strategy`) or one test's name (`train.trainer`: it has a dot),
or a test's name after a minus (`-strategy.tensor_models`): that test is left out.
Prints the ninja targets of the selected tests, or with --tests their names for `meson test`.
A test run through a launcher (mpiexec) adds the built programs among its arguments. A test whose
program is a script of the source tree (it builds what it needs itself) adds no target."""
import json
import os
import subprocess
import sys

build, arguments = sys.argv[1], sys.argv[2:]
names = "--tests" in arguments
selection = {a for a in arguments if a != "--tests" and not a.startswith("-")}
left_out = {a[1:] for a in arguments if a != "--tests" and a.startswith("-")}
tests = json.loads(subprocess.check_output(["meson", "introspect", "--tests", build]))
built = {f for t in json.loads(subprocess.check_output(["meson", "introspect", "--targets", build]))
         if t["type"] == "executable" for f in t["filename"]}
targets, selected = set(), []
for test in tests:
    if test["name"] in left_out:
        continue
    if test["name"] in selection or selection & {s.split(":")[-1] for s in test["suite"]}:
        selected.append(test["name"])
        program = os.path.relpath(test["cmd"][0], os.path.abspath(build))
        if not program.startswith(".."):
            targets.add(program)
        elif os.path.basename(test["cmd"][0]) in ("mpiexec", "mpirun"):
            arguments = [os.path.join(os.path.abspath(build), a) for a in test["cmd"][1:]]
            targets |= {os.path.relpath(a, os.path.abspath(build)) for a in arguments if a in built}
suites = {s.split(":")[-1] for test in tests for s in test["suite"]}
known = {test["name"] for test in tests}
unknown = {s for s in selection if ("." in s and s not in selected) or ("." not in s and s not in suites)}
unknown |= {"-" + s for s in left_out if s not in known}
if unknown:
    sys.exit(f"suite_targets.py: no test or suite named {', '.join(sorted(unknown))} in {build}")
print(" ".join(selected if names else sorted(targets)))
