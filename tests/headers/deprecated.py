#!/usr/bin/env python3
"""The old include paths and names of 0.1.0 still compile, each with a deprecation warning.

deprecated.py INCLUDE_DIR SOURCE OUTPUT HEADER... -- COMPILER...

Compiles SOURCE (a file written against 0.1.0) with -Wall -Wextra -Wpedantic, fails when it does
not compile or link, when a warning is not a deprecation, or when one of the expected deprecation
warnings is missing (so a forwarding header that lost its warning, or an alias that lost its
[[deprecated]], is caught); each HEADER is a forwarding header that must warn. Then runs the program.
"""
import subprocess
import sys

ALIASES = {
    'use switchyard::block (': 'the alias collective::block',
    'use switchyard::block_of (': 'the function collective::block_of',
    'use switchyard::strategy::step_outcome (': 'the alias train::step_outcome',
}


def main():
    if len(sys.argv) < 6 or '--' not in sys.argv[4:]:
        print(f'usage: {sys.argv[0]} INCLUDE_DIR SOURCE OUTPUT HEADER... -- COMPILER...')
        return 2
    include_dir, source, output = sys.argv[1:4]
    split = sys.argv.index('--', 4)
    headers, compiler = sys.argv[4:split], sys.argv[split + 1:]
    expected = dict(ALIASES)
    expected.update({f'{header} is deprecated': f'the forwarding header {header}' for header in headers})
    command = compiler + ['-std=c++20', '-Wall', '-Wextra', '-Wpedantic', '-pthread', '-I', include_dir,
                          source, '-o', output]
    built = subprocess.run(command, capture_output=True, text=True)
    print(built.stderr)
    if built.returncode != 0:
        print(f'{source} does not compile: {" ".join(command)}')
        return 1
    failed = False
    for line in built.stderr.splitlines():
        if 'warning:' in line and 'deprecated' not in line:
            print(f'a warning that is not a deprecation: {line}')
            failed = True
    for text, what in expected.items():
        if text not in built.stderr:
            print(f'no deprecation warning for {what} (expected "{text}")')
            failed = True
    if failed:
        return 1
    ran = subprocess.run([output])
    if ran.returncode != 0:
        print(f'{output} exited with {ran.returncode}')
        return 1
    print(f'{len(expected)} deprecations warned, and the old names work')
    return 0


if __name__ == '__main__':
    sys.exit(main())
