// The simulated transport: every rank is a SimGrid (S4U) actor on a simulated host, and every
// message carries the real data through a mailbox while costing its real size on the simulated
// links, so the library's collectives, strategies and trainer run unchanged on clusters of
// hundreds of hosts (docs/simulation.md). Needs SimGrid (Meson dependency `switchyard-sim`).
// The pieces live in transport/simulated/: options.hpp (simulated_options, the platform, rates),
// fabric.hpp (what the ranks share, matching), activity.hpp (a rank's spawned actors, SimGrid's
// mutex and condition variable), platform.hpp (building the platform),
// request.hpp (simulated_request), handle.hpp (simulated) and world.hpp (simulated_world,
// run_simulated).
#pragma once

#include <switchyard/transport/simulated/activity.hpp>
#include <switchyard/transport/simulated/fabric.hpp>
#include <switchyard/transport/simulated/handle.hpp>
#include <switchyard/transport/simulated/options.hpp>
#include <switchyard/transport/simulated/platform.hpp>
#include <switchyard/transport/simulated/request.hpp>
#include <switchyard/transport/simulated/world.hpp>
