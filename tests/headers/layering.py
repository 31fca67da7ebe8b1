#!/usr/bin/env python3
"""The layering of docs/design.md, checked: every public header compiles with only its own folder
and the folders below it on the include path.

layering.py BUILD_DIR INCLUDE_DIR

For each header that tests/headers compiles alone, this reruns that compile command from
BUILD_DIR/compile_commands.json with -fsyntax-only, after replacing the library's include
directory with a tree that holds only the folders the header's folder may include. A header that
includes a folder above its own fails with the compiler's "No such file" for that include.
"""
import concurrent.futures
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

# What each folder may include besides itself: the arrows of docs/design.md, all pointing down.
BELOW = {
    'core': [],
    'tensor': ['core'],
    'transport': ['core'],
    'collective': ['core', 'transport'],
    'data': ['core'],
    'optim': ['core'],
    'nn': ['core', 'data'],
    'trigger': ['core'],
    'strategy': ['core', 'transport', 'collective', 'optim', 'trigger'],
    'train': ['core', 'tensor', 'transport', 'collective', 'data', 'optim', 'nn', 'trigger', 'strategy'],
}
TOP = sorted(set(BELOW) | {f for below in BELOW.values() for f in below})


def tree(root, include_dir, folders):
    """A directory whose switchyard/ holds links to `folders` of the real one only."""
    os.makedirs(os.path.join(root, 'switchyard'))
    for folder in folders:
        os.symlink(os.path.join(include_dir, 'switchyard', folder), os.path.join(root, 'switchyard', folder))
    return root


def syntax_only(arguments, directory, include_dir, layer_dir):
    """The compile command, run from `directory`, with the library's include directory swapped and
    no output; None when the command does not name the include directory."""
    result = []
    swapped = False
    skip = False
    for i, a in enumerate(arguments):
        if skip:
            skip = False
            continue
        if a in ('-o', '-MQ', '-MF'):
            skip = True
            continue
        if a in ('-MD', '-c'):
            continue
        if a.startswith('-I') and os.path.realpath(os.path.join(directory, a[2:])) == include_dir:
            result.append('-I' + layer_dir)
            swapped = True
            continue
        result.append(a)
    return result + ['-fsyntax-only'] if swapped else None


def main():
    build_dir, include_dir = sys.argv[1], os.path.realpath(sys.argv[2])
    with open(os.path.join(build_dir, 'compile_commands.json')) as f:
        entries = json.load(f)
    jobs = []
    with tempfile.TemporaryDirectory() as scratch:
        layers = {}
        for folder, below in BELOW.items():
            layers[folder] = tree(os.path.join(scratch, folder), include_dir, below + [folder])
        layers[''] = tree(os.path.join(scratch, 'top'), include_dir, TOP)
        # switchyard.hpp sits at the top and includes the folders; it needs its own file too.
        os.symlink(os.path.join(include_dir, 'switchyard', 'switchyard.hpp'),
                   os.path.join(layers[''], 'switchyard', 'switchyard.hpp'))
        for entry in entries:
            if not re.search(r'alone_switchyard_.*_hpp\.cpp$', entry['file']):
                continue
            source = os.path.join(entry['directory'], entry['file'])
            with open(source) as f:
                header = re.search(r'#include <switchyard/([^>]+)>', f.read()).group(1)
            folder = header.split('/')[0] if '/' in header else ''
            if folder not in layers:
                print(f'{header}: folder {folder!r} has no layer in tests/headers/layering.py; add it to BELOW')
                return 1
            arguments = entry.get('arguments') or shlex.split(entry['command'])
            command = syntax_only(arguments, entry['directory'], include_dir, layers[folder])
            if command is None:
                print(f'{header}: its compile command does not name {include_dir} with -I')
                return 1
            jobs.append((header, folder, entry['directory'], command))
        if not jobs:
            print(f'no header compile commands in {build_dir}/compile_commands.json')
            return 1

        def run(job):
            header, folder, directory, command = job
            done = subprocess.run(command, cwd=directory, capture_output=True, text=True)
            return header, folder, done

        failed = 0
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            for header, folder, done in pool.map(run, jobs):
                if done.returncode != 0:
                    failed += 1
                    allowed = ', '.join(BELOW.get(folder, TOP) + ([folder] if folder else []))
                    print(f'FAIL {header}: needs more than {allowed}')
                    print('\n'.join(done.stderr.splitlines()[:8]))
        print(f'{len(jobs) - failed} of {len(jobs)} headers compile with only the folders below their own')
        return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
