// The Fashion-MNIST runs over the simulated transport (see fashion_mnist_runs.hpp): every rank an
// actor on a host of a simulated cluster (--simulate), and the calibration of --sim-compute
// calibrated.
#include "fashion_mnist_train.hpp"

#include <switchyard/core/floating_point.hpp>
#include <switchyard/transport/simulated.hpp>

#include <time.h>

#include <algorithm>
#include <chrono>

template example::run_result example::run_rank<switchyard::transport::simulated>(
    switchyard::transport::simulated&, const example::config&, const switchyard::data::fashion_mnist&);

namespace example {

int simulated_ranks(const sy::transport::simulated_options& o) {
  sy::transport::simulated_world world(o);
  // Only loading a file tells its hosts and their cores, and whether it parses.
  if (!o.platform.file.empty()) world.run([](sy::transport::simulated&) {});
  return world.size();
}

run_result run_simulated_ranks(const sy::transport::simulated_options& o, const config& c,
                               const sy::data::fashion_mnist& data) {
  const auto started = std::chrono::steady_clock::now();
  sy::transport::simulated_world world(o);
  run_result result = world.run([&](sy::transport::simulated& t) { return run_rank(t, c, data); }).front();
  result.simulated_seconds = world.simulated_seconds();
  result.real_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

double calibrate_step(const config& c, const sy::data::fashion_mnist& data) {
  const auto cpu_seconds = [] {
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
  };
  const sy::flush_subnormals_scope flush(c.flush_subnormals);  // as the trainer runs the passes
  chosen_model model{c.model, c.seed};
  const std::size_t batches = std::max<std::size_t>(1, data.train->size() / c.batch);
  constexpr std::size_t passes = 10;
  model.forward_backward(data.train->slice(0, c.batch));  // warms the caches and the allocations up
  const double start = cpu_seconds();
  for (std::size_t k = 0; k < passes; ++k) model.forward_backward(data.train->slice((k % batches) * c.batch, c.batch));
  return (cpu_seconds() - start) / passes;
}

}  // namespace example
