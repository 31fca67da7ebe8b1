#!/bin/sh
# Compiles a source that must not compile and checks that the compiler says why in the words of
# the library's static_assert: expect_error.sh MESSAGE SOURCE COMPILER [ARGS...]
set -u
message=$1
source=$2
shift 2
if output=$("$@" "$source" 2>&1); then
  echo "$source compiled, but it must fail with: $message"
  exit 1
fi
# GCC writes "static assertion failed: MESSAGE"; Clang 14 "static_assert failed "MESSAGE"" (or
# "static_assert failed due to requirement '...' "MESSAGE""), later Clangs "static assertion failed".
if ! printf '%s\n' "$output" | grep -F -e "$message" | grep -q -E "static assertion failed|static_assert failed"; then
  printf '%s\n' "$output" | head -40
  echo "$source failed to compile, but without the static_assert: $message"
  exit 1
fi
echo "$source: static assertion failed: $message"
