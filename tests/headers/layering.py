#!/usr/bin/env python3
"""The layering of docs/design.md, checked: every public header includes only headers of its own
folder and of the folders below it.

layering.py INCLUDE_DIR

Each header under INCLUDE_DIR/switchyard is read, and each of its #include lines that names a
library header (<switchyard/...> or "switchyard/...", or a quoted path relative to the header) must
name one in the header's folder or in a folder that BELOW allows it. Every include is checked
wherever it stands, inside #if blocks too. The map is closed under its own arrows (a folder may
include everything its allowed folders may), so checking each header's own includes checks what
it includes through others.
"""
import os
import re
import sys

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
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def open_arrows():
    """(folder, allowed, what allowed may include and folder may not) wherever BELOW is not closed:
    checking each header's own includes checks what it includes through others only if it is."""
    return [(folder, allowed, sorted(set(BELOW[allowed]) - set(below)))
            for folder, below in BELOW.items() for allowed in below if not set(BELOW[allowed]) <= set(below)]


def folder_of(path):
    """The folder of a header given relative to the include directory ('switchyard/core/x.hpp' ->
    'core'; '' for switchyard/switchyard.hpp)."""
    parts = path.split('/')
    return parts[1] if len(parts) > 2 else ''


def included(header, include_dir):
    """(line number, library header relative to the include directory) for each #include of a
    library header in `header`."""
    here = os.path.dirname(header)
    with open(header) as f:
        for number, line in enumerate(f, start=1):
            match = INCLUDE.match(line)
            if not match:
                continue
            quote, name = match.groups()
            if name.startswith('switchyard/'):
                yield number, name
            elif quote == '"':
                target = os.path.relpath(os.path.normpath(os.path.join(here, name)), include_dir)
                if target.startswith('switchyard/'):
                    yield number, target


def main():
    if len(sys.argv) != 2:
        print(f'usage: {sys.argv[0]} INCLUDE_DIR')
        return 2
    for folder, allowed, missing in open_arrows():
        print(f'BELOW is not closed: {folder} may include {allowed}, which may include {", ".join(missing)}')
        return 1
    include_dir = os.path.realpath(sys.argv[1])
    root = os.path.join(include_dir, 'switchyard')
    headers = sorted(os.path.join(directory, name) for directory, _, names in os.walk(root)
                     for name in names if name.endswith('.hpp'))
    if not headers:
        print(f'no headers under {root}')
        return 1
    failed = 0
    for header in headers:
        relative = os.path.relpath(header, include_dir)
        folder = folder_of(relative)
        if folder and folder not in BELOW:
            print(f'{relative}: folder {folder!r} has no layer in tests/headers/layering.py; add it to BELOW')
            failed += 1
            continue
        allowed = BELOW[folder] + [folder] if folder else list(BELOW)
        for number, name in included(header, include_dir):
            if folder_of(name) not in allowed:
                failed += 1
                print(f'FAIL {relative}:{number} includes {name}: {folder or "the top"} may include only '
                      f'{", ".join(allowed)}')
    if failed:
        print(f'{failed} includes of {len(headers)} headers point up or out of the layers')
    else:
        print(f'all {len(headers)} headers include only their own folder and the folders below it')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
