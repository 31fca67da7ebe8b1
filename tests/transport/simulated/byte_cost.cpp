// simulated_options::byte_cost: a message between two hosts costs its sender and its receiver
// bytes x byte_cost of CPU on their hosts, slowed by a host's speed factor; a message inside one
// host costs nothing; a bad cost is refused.
#include <switchyard/transport/simulated/world.hpp>

#include <doctest/doctest.h>

#include "../../common/simulated_quiet.hpp"

#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <vector>

namespace sy = switchyard;
using sy::transport::simulated;

namespace {

constexpr std::size_t floats = 250000;  // 1 MB
constexpr double bytes = floats * sizeof(float);

// The simulated time of one message of `floats` floats from rank 0 to rank `to`, on hosts of
// `speeds`, with `cost` seconds per byte and compute free otherwise.
double one_message(double cost, int to, int ranks_per_host, std::vector<sy::transport::host_speed> speeds) {
  sy::transport::simulated_options o = quiet();
  o.compute = sy::transport::compute_model::none;
  o.byte_cost = cost;
  o.platform.hosts = 2;
  o.platform.cores = ranks_per_host;
  o.ranks_per_host = ranks_per_host;
  o.platform.speeds = std::move(speeds);
  sy::transport::simulated_world world(o);
  world.run([to](simulated& t) {
    std::vector<float> data(floats, 1.0F);
    if (t.rank() == 0) t.send(std::span<const float>(data), to, 1);
    if (t.rank() == to) t.recv(std::span<float>(data), 0, 1);
  });
  return world.simulated_seconds();
}

}  // namespace

TEST_CASE("simulated.byte_cost: a message between hosts costs bytes x cost at the sender and at the receiver" *
          doctest::timeout(60)) {
  const double cost = 4e-9;  // 4 ms for 1 MB, against 8 ms on the wire at 1 Gbit/s
  const double free = one_message(0, 1, 1, {});
  const double charged = one_message(cost, 1, 1, {});
  // The sender's work overlaps the flow (the wire is slower); the receiver's follows the arrival.
  CHECK(charged - free == doctest::Approx(bytes * cost).epsilon(1e-6));
  // A receiver at half speed takes twice as long for its part; a sender at half speed still works
  // while its message flows (8 ms against 8.1 ms), so the run ends as with a full-speed one.
  const double slow_receiver = one_message(cost, 1, 1, {{1, 0.5}});
  CHECK(slow_receiver - free == doctest::Approx(2 * bytes * cost).epsilon(1e-6));
  const double slow_sender = one_message(cost, 1, 1, {{0, 0.5}});
  CHECK(slow_sender - free == doctest::Approx(bytes * cost).epsilon(1e-6));
}

TEST_CASE("simulated.byte_cost: a slow sender's own clock carries its part" * doctest::timeout(60)) {
  sy::transport::simulated_options o = quiet();
  o.compute = sy::transport::compute_model::none;
  o.byte_cost = 4e-9;
  o.platform.hosts = 2;
  o.platform.speeds = {{0, 0.25}};
  const std::vector<double> ends = sy::transport::run_simulated(o, [](simulated& t) {
    std::vector<float> data(floats, 1.0F);
    if (t.rank() == 0) {
      sy::transport::simulated_request r = t.isend(std::span<const float>(data), 1, 1);
      const double posted = t.now();  // the isend returned after the sender's CPU work
      r.wait();
      return posted;
    }
    t.recv(std::span<float>(data), 0, 1);
    return t.now();
  });
  // The sender at a quarter speed: 16 ms of CPU. The receiver: two links' latency and 8 ms on the
  // wire (CM02), then its own 4 ms.
  CHECK(ends[0] == doctest::Approx(bytes * 4e-9 / 0.25).epsilon(1e-6));
  CHECK(ends[1] == doctest::Approx(100e-6 + bytes / 125e6 + bytes * 4e-9).epsilon(1e-6));
}

TEST_CASE("simulated.byte_cost: messages inside one host cost no CPU" * doctest::timeout(60)) {
  CHECK(one_message(4e-9, 1, 2, {}) == doctest::Approx(one_message(0, 1, 2, {})).epsilon(1e-12));
}

TEST_CASE("simulated.byte_cost: a negative or non-finite cost is refused" * doctest::timeout(60)) {
  for (const double bad : {-1e-9, std::numeric_limits<double>::infinity(), std::nan("")}) {
    sy::transport::simulated_options o = quiet();
    o.byte_cost = bad;
    CHECK_THROWS_WITH_AS(sy::transport::run_simulated(o, [](simulated&) {}), doctest::Contains("byte_cost"),
                         sy::usage_error);
  }
}
