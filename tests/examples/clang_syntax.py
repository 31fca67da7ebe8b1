#!/usr/bin/env python3
"""The examples compile under clang too: a build made with g++ reruns the compile command of each
of the examples' own source files from its compile_commands.json with CLANG -fsyntax-only.

clang_syntax.py CLANG BUILD_DIR EXAMPLES_DIR

Users build the examples with either compiler, and the two disagree on some C++20 corners (a
default argument that clang instantiates where g++ does not, say). The sanitizer builds compile the
library and the tests with clang; this covers the examples, which they leave out, at a fraction of
a clang build's cost. The commands keep every flag of the build (-Werror included), less those that
write files.
"""
import concurrent.futures
import json
import os
import shlex
import subprocess
import sys


def syntax_only(arguments, clang):
    """The compile command with clang as the compiler and no output."""
    result = [clang]
    skip = False
    for a in arguments[1:]:
        if skip:
            skip = False
        elif a in ('-o', '-MQ', '-MF'):
            skip = True
        elif a not in ('-MD', '-c'):
            result.append(a)
    return result + ['-fsyntax-only', '-fno-color-diagnostics']


def main():
    if len(sys.argv) != 4:
        print(f'usage: {sys.argv[0]} CLANG BUILD_DIR EXAMPLES_DIR')
        return 2
    clang, build_dir, examples_dir = sys.argv[1], sys.argv[2], os.path.realpath(sys.argv[3])
    with open(os.path.join(build_dir, 'compile_commands.json')) as f:
        entries = json.load(f)
    jobs = []
    for entry in entries:
        source = os.path.realpath(os.path.join(entry['directory'], entry['file']))
        if os.path.dirname(source) == examples_dir:
            arguments = entry.get('arguments') or shlex.split(entry['command'])
            jobs.append((os.path.basename(source), entry['directory'], syntax_only(arguments, clang)))
    if not jobs:
        print(f'no compile commands of {examples_dir} in {build_dir}/compile_commands.json')
        return 1

    def run(job):
        name, directory, command = job
        return name, subprocess.run(command, cwd=directory, capture_output=True, text=True)

    failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        for name, done in pool.map(run, jobs):
            if done.returncode != 0:
                failed += 1
                print(f'FAIL {name} under {clang}:')
                print('\n'.join(done.stderr.splitlines()[:30]))
    print(f'{len(jobs) - failed} of {len(jobs)} example files compile under {clang}')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
