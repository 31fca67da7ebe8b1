// The simulated-world options of the tests: compute is free, so simulated times depend on the
// network alone and runs are repeatable.
#pragma once

#include <switchyard/transport/simulated/options.hpp>

inline switchyard::transport::simulated_options quiet() {
  switchyard::transport::simulated_options o;
  o.compute = switchyard::transport::compute_model::none;
  return o;
}
