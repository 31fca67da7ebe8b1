// The cost of simulating: wall time per simulated message of transport::simulated, for the ring
// all-reduce, the automatic all-reduce and the parameter server with dedicated servers, on
// buffers of the mlp's gradient size and with compute free (compute_model::none), so that the
// figure is the simulator's and the transport's alone. It prints wall time and the process's CPU
// time, each per message: on a shared machine the CPU time is the steadier of the two.
// docs/simulation.md records the results.
#include "allocator.hpp"

#include <switchyard/collective/allreduce.hpp>
#include <switchyard/core/operations.hpp>
#include <switchyard/data/dataset.hpp>
#include <switchyard/nn/evaluation.hpp>
#include <switchyard/optim/sgd.hpp>
#include <switchyard/strategy/parameter_server.hpp>
#include <switchyard/train/trainer.hpp>
#include <switchyard/transport/simulated.hpp>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace {

namespace sy = switchyard;

// The mlp's parameters for 28x28 images and 10 classes (nn/mlp.hpp).
constexpr std::size_t mlp_parameters = 784 * 256 + 256 + 256 * 128 + 128 + 128 * 10 + 10;

struct settings {
  std::string mode = "ring";
  int hosts = 256;
  int steps = 20;
  std::size_t elements = mlp_parameters;
  int servers = 128;
  std::string precision = "1ns";  // SimGrid's time precision (simulated_options::time_precision)
};

// A model of `elements` parameters whose gradient costs nothing to compute: the exchange is all
// that a step of the parameter server then simulates.
class free_gradient {
 public:
  explicit free_gradient(std::size_t elements) : parameters_(elements, 0.5F), gradients_(elements, 0.0F) {}
  std::span<float> parameters() { return parameters_; }
  std::span<float> gradients() { return gradients_; }
  double forward_backward(const sy::data::batch_view& batch) {
    std::fill(gradients_.begin(), gradients_.end(), 1e-3F * static_cast<float>(batch.size()));
    return 1.0;
  }
  sy::nn::evaluation evaluate(const sy::data::batch_view& batch) {
    return sy::nn::evaluation{static_cast<double>(batch.size()), 0, batch.size()};
  }

 private:
  std::vector<float> parameters_;
  std::vector<float> gradients_;
};

// One 1x1 image per example: every worker gets one example a step.
std::shared_ptr<const sy::data::dataset> tiny_examples(std::size_t count) {
  std::vector<std::uint8_t> images(count, 7);
  std::vector<std::uint8_t> labels(count, 0);
  return std::make_shared<const sy::data::dataset>(std::move(images), std::move(labels), 1, 1, 2);
}

void run(const settings& s) {
  sy::transport::simulated_options options;
  options.platform.hosts = s.hosts;
  options.compute = sy::transport::compute_model::none;
  options.time_precision = s.precision;
  sy::transport::simulated_world world(options);
  const auto begin = std::chrono::steady_clock::now();
  const std::clock_t cpu_begin = std::clock();
  if (s.mode == "ps") {
    const int workers = s.hosts - s.servers;
    const auto data = tiny_examples(static_cast<std::size_t>(workers) * static_cast<std::size_t>(s.steps));
    const auto test = tiny_examples(1);
    world.run([&](sy::transport::simulated& t) {
      free_gradient model(s.elements);
      sy::optim::sgd optimizer{s.elements, 0.01};
      sy::train::trainer_options train;
      train.epochs = 1;
      train.batch_size = 1;
      sy::train::trainer trainer{model, optimizer, sy::strategy::parameter_server<>{static_cast<std::size_t>(s.servers)}, train};
      static_cast<void>(trainer.fit(t, data, *test));
    });
  } else {
    world.run([&](sy::transport::simulated& t) {
      std::vector<float> gradient(s.elements, 1.0F);
      for (int step = 0; step < s.steps; ++step) {
        if (s.mode == "ring") {
          sy::collective::allreduce(t, gradient, sy::ops::sum{}, sy::algorithm::ring{});
        } else if (s.mode == "native") {
          sy::collective::allreduce(t, gradient, sy::ops::sum{}, sy::algorithm::native{});
        } else if (s.mode == "halving-doubling") {
          sy::collective::allreduce(t, gradient, sy::ops::sum{}, sy::algorithm::halving_doubling{});
        } else {
          sy::collective::allreduce(t, gradient, sy::ops::sum{}, sy::algorithm::automatic{});
        }
      }
    });
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  const double cpu = static_cast<double>(std::clock() - cpu_begin) / CLOCKS_PER_SEC;
  const auto messages = static_cast<double>(world.messages());
  const auto per_message = [messages](double seconds) { return messages > 0 ? seconds / messages * 1e6 : 0.0; };
  fmt::print("mode {} hosts {} steps {} elements {}{} precision {} allocator {}: {:.0f} messages, {:.6f} simulated s, "
             "{:.2f} wall s ({:.2f} us a message), {:.2f} CPU s ({:.2f} us a message)\n",
             s.mode, s.hosts, s.steps, s.elements, s.mode == "ps" ? fmt::format(" servers {}", s.servers) : "", s.precision,
             example::allocator_name(), messages, world.simulated_seconds(), wall, per_message(wall), cpu, per_message(cpu));
}

}  // namespace

int main(int argc, char** argv) {
  settings s;
  CLI::App app{"Wall time per simulated message of transport::simulated (compute free)"};
  app.add_option("--mode", s.mode,
                 "ring, halving-doubling or native (the algorithm pinned), automatic, or ps (dedicated servers)")
      ->check(CLI::IsMember({"ring", "halving-doubling", "native", "automatic", "ps"}));
  app.add_option("--hosts", s.hosts, "simulated hosts, one rank each")->check(CLI::Range(1, 1 << 16));
  app.add_option("--steps", s.steps, "all-reduces, or parameter-server steps")->check(CLI::Range(1, 1 << 20));
  app.add_option("--elements", s.elements, "floats per buffer (default: the mlp's parameters)");
  app.add_option("--servers", s.servers, "dedicated servers of --mode ps")->check(CLI::Range(1, 1 << 16));
  app.add_option("--precision", s.precision,
                 "SimGrid's time precision, with a unit: events within it of the earliest happen with it")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (s.mode == "ps" && s.servers >= s.hosts) {
    fmt::print(stderr, "--servers {} leaves no worker among {} hosts\n", s.servers, s.hosts);
    return 2;
  }
  try {
    run(s);
  } catch (const std::exception& e) {
    fmt::print(stderr, "simulation_cost: {}\n", e.what());
    return 1;
  }
  return 0;
}
