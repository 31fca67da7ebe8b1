#!/bin/sh
# Builds and runs tests/consumer/project against this source tree as a Meson subproject, in a
# fresh temporary directory: proof that the wrap file and dependency('switchyard') are all a user
# needs, and that the dependency names resolve in any order.
set -eu
source_root=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$source_root/tests/consumer/project" "$work/project"
mkdir -p "$work/project/subprojects"
ln -s "$source_root" "$work/project/subprojects/switchyard"
meson setup --wrap-mode=nodownload "$work/build" "$work/project" -Dswitchyard:mpi=disabled -Dswitchyard:xtensor=disabled >"$work/setup.log" 2>&1 || { cat "$work/setup.log"; exit 1; }
ninja -C "$work/build" >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
"$work/build/consumer"
"$work/build/consumer_train"
"$work/build/consumer_train_checkpoint"
