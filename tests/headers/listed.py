#!/usr/bin/env python3
"""Every public header is one that tests/headers compiles alone.

listed.py INCLUDE_DIR HEADERS_MESON_BUILD

Meson has no globs, so tests/headers/meson.build lists the headers by hand; this fails on each
header under INCLUDE_DIR/switchyard that the list leaves out, and on each listed one that is gone.
"""
import os
import re
import sys


def main():
    if len(sys.argv) != 3:
        print(f'usage: {sys.argv[0]} INCLUDE_DIR HEADERS_MESON_BUILD')
        return 2
    include_dir, meson_build = sys.argv[1], sys.argv[2]
    with open(meson_build) as f:
        listed = set(re.findall(r"'(switchyard/[^']+\.hpp)'", f.read()))
    present = {os.path.relpath(os.path.join(directory, name), include_dir)
               for directory, _, names in os.walk(os.path.join(include_dir, 'switchyard'))
               for name in names if name.endswith('.hpp')}
    for header in sorted(present - listed):
        print(f'{header} is not in {meson_build}: add it to a group of header_groups')
    for header in sorted(listed - present):
        print(f'{meson_build} lists {header}, which is not under {include_dir}')
    if present != listed:
        return 1
    print(f'all {len(present)} headers are compiled alone')
    return 0


if __name__ == '__main__':
    sys.exit(main())
