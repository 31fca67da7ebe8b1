#!/usr/bin/env python3
"""Runs clang-tidy's readability-function-size, at LineThreshold 100, over every examples/*.cpp
and every library header: the translation units are those of examples/*.cpp in the build's
compile_commands.json, plus tests/headers/odr_first.cpp, which includes every public header
(switchyard.hpp with every part the build has), plus the doctest file of any header that unit
does not reach; a header filter on include/switchyard/ and examples/ checks the headers they
include. A function body over 100 lines (lambdas count inside their function) fails the test,
and each is printed.

usage: function_size.py CLANG_TIDY BUILD_DIR SOURCE_DIR"""
import concurrent.futures
import json
import os
import re
import shlex
import subprocess
import sys
import time

clang_tidy, build_dir, source_dir = sys.argv[1:4]
source_dir = os.path.realpath(source_dir)
with open(os.path.join(build_dir, "compile_commands.json")) as f:
    entries = json.load(f)


def relative(entry):
    path = os.path.realpath(os.path.join(entry["directory"], entry["file"]))
    return os.path.relpath(path, source_dir)


units = sorted({relative(e) for e in entries if re.fullmatch(r"examples/[^/]+\.cpp", relative(e))})
units.append("tests/headers/odr_first.cpp")
if not any(relative(e) == units[-1] for e in entries):
    sys.exit(f"no compile command for {units[-1]} in {build_dir}/compile_commands.json")


def reached(unit):
    """The library headers that `unit` includes, from the compiler's list of dependencies."""
    entry = next(e for e in entries if relative(e) == unit)
    words = entry.get("arguments") or shlex.split(entry["command"])
    command, skip = [], False
    for word in words:
        if skip:
            skip = False
        elif word in ("-o", "-MQ", "-MF", "-MT"):
            skip = True
        elif word not in ("-c", "-MD", "-MMD"):
            command.append(word)
    run = subprocess.run(command + ["-M"], cwd=entry["directory"], capture_output=True, text=True, check=True)
    paths = (os.path.realpath(os.path.join(entry["directory"], p)) for p in run.stdout.replace("\\\n", " ").split())
    return {os.path.relpath(p, source_dir) for p in paths if p.startswith(os.path.join(source_dir, "include", ""))}


# A header the all-including unit does not reach (a part this build leaves out of the umbrella
# header, a forwarding header) is checked through its own doctest file, where the build has one.
headers = {os.path.relpath(os.path.join(d, f), source_dir)
           for d, _, files in os.walk(os.path.join(source_dir, "include", "switchyard")) for f in files
           if f.endswith(".hpp")}
compiled = {relative(e) for e in entries}
for header in sorted(headers - reached(units[-1])):
    test = "tests/" + header[len("include/switchyard/"):-len(".hpp")] + ".cpp"
    if test in compiled:
        units.append(test)
    else:
        print(f"{header}: no translation unit of this build includes it")


def tidy(unit):
    started = time.monotonic()
    run = subprocess.run(
        [clang_tidy, "-p", build_dir, "--quiet", "--checks=-*,readability-function-size",
         "--config={CheckOptions: [{key: readability-function-size.LineThreshold, value: 100}]}",
         "--header-filter=(^|/)(include/switchyard|examples)/",
         "--extra-arg=-Wno-unknown-warning-option", "--extra-arg=-Wno-error", os.path.join(source_dir, unit)],
        capture_output=True, text=True)
    return unit, run, time.monotonic() - started


started = time.monotonic()
with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
    results = list(pool.map(tidy, units))
flagged = {}  # (path, function) -> "path:line: lines"
failed = False
for unit, run, seconds in results:
    print(f"{unit}: {seconds:.1f} s")
    for match in re.finditer(r"^(\S+?):(\d+):\d+: warning: function '([^']+)' exceeds recommended size", run.stdout,
                             re.M):
        path = os.path.relpath(os.path.realpath(os.path.join(entries[0]["directory"], match.group(1))), source_dir)
        lines = re.search(r"(\d+) lines including whitespace and comments", run.stdout[match.end():])
        flagged[(path, match.group(3))] = f"{path}:{match.group(2)}: {match.group(3)}, {lines.group(1) if lines else '?'} lines"
    if run.returncode != 0 and "error:" in run.stdout + run.stderr:
        print(run.stdout[-3000:], run.stderr[-3000:])
        failed = True
print(f"clang-tidy over {len(units)} translation units in {time.monotonic() - started:.0f} s")
for text in sorted(flagged.values()):
    print("OVER 100 LINES: " + text)
sys.exit(1 if flagged or failed else 0)
