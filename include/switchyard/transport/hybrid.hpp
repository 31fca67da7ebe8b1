// The hybrid transport: one process per node, whose threads are the node's ranks. Threads of one
// process exchange messages over the in-process fabric; processes talk over MPI, each thread on a
// communicator of its own. The pieces live in transport/hybrid/: options.hpp (hybrid_options),
// process.hpp (what a process's threads share: communicators, tag layout), group.hpp (a group as a
// thread holds it), request.hpp (hybrid_request), handle.hpp (hybrid) and world.hpp (hybrid_world,
// run_hybrid).
#pragma once

#include <switchyard/transport/hybrid/group.hpp>
#include <switchyard/transport/hybrid/handle.hpp>
#include <switchyard/transport/hybrid/options.hpp>
#include <switchyard/transport/hybrid/process.hpp>
#include <switchyard/transport/hybrid/request.hpp>
#include <switchyard/transport/hybrid/world.hpp>
