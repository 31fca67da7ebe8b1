// transport/simulated/request.hpp: a default request is complete, test() takes only what has
// arrived, a dropped receive is cancelled and a dropped send still arrives.
#include <switchyard/transport/simulated/request.hpp>

#include <switchyard/transport/simulated/world.hpp>

#include <doctest/doctest.h>

#include "../../common/simulated_quiet.hpp"

#include <span>
#include <vector>

namespace sy = switchyard;
using sy::transport::simulated;

TEST_CASE("simulated.request.default: complete, received nothing") {
  sy::transport::simulated_request r;
  CHECK(r.test());
  r.wait();
  CHECK(r.status().source == -1);
}

TEST_CASE("simulated.request.test: false until the message has arrived in simulated time, then true" *
          doctest::timeout(60)) {
  sy::transport::run_simulated(2, [](simulated& t) {
    std::vector<int> value{t.rank()};
    if (t.rank() == 1) {
      t.send(std::span<const int>(value), 0, 1);
      return;
    }
    auto r = t.irecv(std::span<int>(value), 1, 1);
    CHECK_FALSE(r.test());  // at time 0 nothing has crossed the link yet
    r.wait();
    CHECK(r.test());
    CHECK(value[0] == 1);
    CHECK(r.status().count == 1);
  }, quiet());
}

TEST_CASE("simulated.request.dropped: a dropped receive is cancelled, a dropped send still arrives" *
          doctest::timeout(60)) {
  sy::transport::run_simulated(2, [](simulated& t) {
    std::vector<int> value{7};
    if (t.rank() == 0) {
      { auto dropped = t.isend(std::span<const int>(value), 1, 2); }
      return;
    }
    { auto cancelled = t.irecv(std::span<int>(value), 0, 3); }
    std::vector<int> got(1);
    t.recv(std::span<int>(got), 0, 2);
    CHECK(got[0] == 7);
  }, quiet());
}
