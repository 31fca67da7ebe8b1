#!/usr/bin/env python3
"""Runs a command that must fail: passes when it exits with a non-zero status (or the one given
with --status), its combined output contains every --contains text, and it ran at least
--at-least seconds. Meson's test timeout catches a command that hangs instead."""
import argparse
import subprocess
import sys
import time

parser = argparse.ArgumentParser()
parser.add_argument("--contains", action="append", default=[], help="text the output must contain")
parser.add_argument("--status", type=int, help="the exit status the command must end with")
parser.add_argument("--at-least", type=float, default=0.0, help="seconds the command must run, at least")
parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command")
args = parser.parse_args()
command = args.command[1:] if args.command[:1] == ["--"] else args.command

started = time.monotonic()
run = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
elapsed = time.monotonic() - started
print(run.stdout)
print(f"exit status {run.returncode} after {elapsed:.1f} s")

problems = []
if run.returncode == 0:
    problems.append("the command succeeded but was expected to fail")
if args.status is not None and run.returncode != args.status:
    problems.append(f"exit status {run.returncode}, expected {args.status}")
problems += [f"the output lacks: {text}" for text in args.contains if text not in run.stdout]
if elapsed < args.at_least:
    problems.append(f"ended after {elapsed:.2f} s, before the {args.at_least} s it must wait")
for problem in problems:
    print("FAILED:", problem)
sys.exit(1 if problems else 0)
