#!/usr/bin/env python3
"""Runs an example with a bad command line: passes when it exits with a non-zero status before
any training, having used at most --within seconds of CPU (user + system time of the example and
everything it started, which load on a shared machine does not stretch as it does wall time), and
its output names what is wrong: every --contains text is in it.

usage: refuses.py [--contains TEXT]... [--within SECONDS] -- EXAMPLE ARGS..."""
import argparse
import re
import resource
import subprocess
import sys
import time

parser = argparse.ArgumentParser()
parser.add_argument("--contains", action="append", default=[], help="text the output must contain")
parser.add_argument("--within", type=float, default=2.0, help="CPU seconds the example may use to refuse")
parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the example and its arguments")
args = parser.parse_args()
command = args.command[1:] if args.command[:1] == ["--"] else args.command

started = time.monotonic()
before = resource.getrusage(resource.RUSAGE_CHILDREN)
run = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
                     timeout=60)
elapsed = time.monotonic() - started
after = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
print(run.stdout)
print(f"exit status {run.returncode} after {elapsed:.2f} s ({cpu:.2f} s of CPU)")

problems = []
if run.returncode == 0:
    problems.append("the example accepted the command line")
if cpu > args.within:
    problems.append(f"it used {cpu:.2f} s of CPU to refuse, more than {args.within} s")
if "final test accuracy" in run.stdout or re.search(r"^epoch +\d+/", run.stdout, re.M):
    problems.append("it trained before refusing")
problems += [f"the output lacks: {text}" for text in args.contains if text not in run.stdout]
for problem in problems:
    print("FAILED:", problem)
sys.exit(1 if problems else 0)
