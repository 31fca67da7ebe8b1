// The in-process transport: a world of N ranks as threads in one process, the embedded default.
// Messages are copied once, straight from the sender's span into the receiver's; the native
// collectives read and write peers' buffers directly. The pieces live in transport/inproc/:
// options.hpp (inproc_options), fabric.hpp (what the threads share), mailbox.hpp (point-to-point
// matching), group.hpp (a group, its barrier and waits), request.hpp (inproc_request),
// collectives.hpp (the native collectives), handle.hpp (inproc) and world.hpp (inproc_world,
// run_inproc).
#pragma once

#include <switchyard/transport/inproc/collectives.hpp>
#include <switchyard/transport/inproc/fabric.hpp>
#include <switchyard/transport/inproc/group.hpp>
#include <switchyard/transport/inproc/handle.hpp>
#include <switchyard/transport/inproc/mailbox.hpp>
#include <switchyard/transport/inproc/options.hpp>
#include <switchyard/transport/inproc/request.hpp>
#include <switchyard/transport/inproc/world.hpp>
