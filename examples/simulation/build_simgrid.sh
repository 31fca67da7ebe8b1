#!/bin/sh
# Builds SimGrid 3.32 from Debian's source package with two containers changed for the ones later
# SimGrid releases use, and installs it in PREFIX:
# - an actor's unfinished activities in a std::set instead of a std::list (SimGrid 3.34): 3.32
#   removes a finished communication from its actor's list with a walk of the whole list, so an
#   actor with n sends under way pays O(n) for each;
# - a mailbox's queues in a std::deque instead of a boost::circular_buffer (SimGrid 3.35): taking
#   the first of n queued messages shifts the n - 1 behind it, an atomic reference count each.
# The co-located parameter servers at 1,024 hosts (every rank pushing to every shard, into one
# mailbox per rank) spend most of their simulation in those two
# (docs/simulation.md#a-simgrid-with-later-containers). Neither touches a model: a run gives the
# same simulated figures with either library, only sooner.
#
#   examples/simulation/build_simgrid.sh [PREFIX [WORK_DIR]]
#
# PREFIX [/opt/simgrid-3.32-set] receives the library, its headers and simgrid.pc; WORK_DIR
# [simgrid-build] the source and the build (about 1 GB). Needs Debian's source entries
# (deb-src) for `apt-get source`, cmake and g++; 5 to 13 minutes on 2 cores. Then build the
# examples against it, in a build directory of their own:
#
#   PKG_CONFIG_PATH=PREFIX/lib/pkgconfig meson setup build-set --buildtype=release -Dsimgrid=enabled
#   ninja -C build-set examples/fashion_mnist
#   BUILD=build-set examples/simulation/scale.sh ...
set -eu

prefix=${1:-/opt/simgrid-3.32-set}
work=${2:-simgrid-build}
version=3.32

for tool in apt-get cmake g++ make; do
  if ! command -v "$tool" >/dev/null; then
    echo "build_simgrid.sh: $tool not found" >&2
    exit 1
  fi
done
mkdir -p "$work"
work=$(cd "$work" && pwd)
source_dir=$work/simgrid-$version
if [ ! -d "$source_dir" ]; then
  if ! (cd "$work" && apt-get source -q "simgrid=$version-2" >"$work/apt-source.log" 2>&1); then
    echo "build_simgrid.sh: apt-get source simgrid=$version-2 failed ($work/apt-source.log): it needs a" \
      "deb-src entry, for example /etc/apt/sources.list.d/debian-src.sources with 'Types: deb-src'" \
      "and the URIs, Suites and Components of Debian's deb entry, then apt-get update" >&2
    exit 1
  fi
fi

# The changes, checked: one list in ActorImpl.hpp and every insertion and removal of it, and the
# two queues of MailboxImpl.hpp.
actor_header=$source_dir/src/kernel/actor/ActorImpl.hpp
list_uses="src/kernel/activity/CommImpl.cpp src/kernel/activity/ExecImpl.cpp src/kernel/activity/IoImpl.cpp
src/kernel/actor/ActorImpl.cpp"
if grep -q 'std::list<activity::ActivityImplPtr> activities_;' "$actor_header"; then
  sed -i 's/std::list<activity::ActivityImplPtr> activities_;/std::set<activity::ActivityImplPtr> activities_;/;
          s/#include <list>/#include <list>\n#include <set>/' "$actor_header"
  for file in $list_uses; do
    sed -i 's/activities_\.emplace_back(/activities_.insert(/g; s/activities_\.remove(/activities_.erase(/g' \
      "$source_dir/$file"
  done
fi
mailbox_header=$source_dir/src/kernel/activity/MailboxImpl.hpp
if [ -f "$mailbox_header" ] && grep -q 'boost::circular_buffer_space_optimized<CommImplPtr> comm_queue_' "$mailbox_header"; then
  sed -i 's/boost::circular_buffer_space_optimized<CommImplPtr> \(done_comm_queue_\|comm_queue_\){MAX_MAILBOX_SIZE};/std::deque<CommImplPtr> \1;/;
          s/#include <boost\/circular_buffer.hpp>/#include <deque>/' "$mailbox_header"
fi
if ! grep -q 'std::set<activity::ActivityImplPtr> activities_;' "$actor_header" ||
  grep -rqE 'activities_\.(emplace_back|push_back|remove|front|back)\(' "$source_dir/src" ||
  [ "$(grep -cE '^  std::deque<CommImplPtr> (done_)?comm_queue_;$' "$mailbox_header" 2>/dev/null)" != 2 ] ||
  grep -q circular_buffer "$mailbox_header"; then
  echo "build_simgrid.sh: $source_dir is not the SimGrid $version this script changes" >&2
  exit 1
fi

# Debian's configuration (upstream's optimizations, no build type) without what the library does
# not use: SMPI, the model checker, MSG, the bindings and the documentation.
# Each step's output goes to its log in WORK_DIR.
step() {
  log=$1
  shift
  if ! "$@" >"$work/$log" 2>&1; then
    echo "build_simgrid.sh: $1 failed: see $work/$log" >&2
    exit 1
  fi
}
step cmake.log cmake -S "$source_dir" -B "$work/build" -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_BUILD_TYPE= \
  -Denable_documentation=OFF -Denable_smpi=OFF -Denable_model-checking=OFF -Denable_msg=OFF \
  -Denable_java=OFF -Denable_python=OFF -Denable_ns3=OFF -Denable_lib_in_jar=OFF
step make.log make -C "$work/build" -j "$(nproc)" simgrid
step install.log make -C "$work/build" install
echo "build_simgrid.sh: SimGrid $version with later containers in $prefix" \
  "(PKG_CONFIG_PATH=$prefix/lib/pkgconfig meson setup ...)"
