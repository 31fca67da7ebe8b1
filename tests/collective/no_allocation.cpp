// The hot path allocates nothing after warm-up: this binary counts every operator new.
#include <switchyard/collective/allgather.hpp>
#include <switchyard/collective/allreduce.hpp>
#include <switchyard/collective/broadcast.hpp>
#include <switchyard/collective/reduce_scatter.hpp>
#include <switchyard/transport/inproc.hpp>

#include <doctest/doctest.h>

#include "../common/counting_new.hpp"

#include <vector>

using counting_new::allocations;

namespace sy = switchyard;

template <class Algorithm>
void steps(sy::transport::inproc& t, std::vector<float>& grad, std::vector<float>& all) {
  sy::collective::allreduce(t, grad, sy::ops::average{}, Algorithm{});
  std::span<float> first(grad.data(), 1000);
  sy::collective::allgather(t, std::span<const float>(first), all);
  sy::collective::broadcast(t, grad, t.size() - 1);
  sy::collective::reduce_scatter(t, grad, sy::ops::sum{});
}

TEST_CASE_TEMPLATE("no_allocation.inproc: collectives allocate nothing after warm-up", Algorithm,
                   sy::algorithm::ring, sy::algorithm::recursive_doubling, sy::algorithm::halving_doubling,
                   sy::algorithm::native) {
  for (int ranks : {1, 2, 3, 4}) {
    CAPTURE(ranks);
    const std::vector<std::size_t> during = sy::transport::run_inproc(ranks, [](sy::transport::inproc& t) {
      std::vector<float> grad(300007, 1.0f);
      std::vector<float> all(1000 * static_cast<std::size_t>(t.size()));
      for (int i = 0; i < 3; ++i) steps<Algorithm>(t, grad, all);
      t.barrier();
      const std::size_t before = allocations.load();
      for (int i = 0; i < 20; ++i) steps<Algorithm>(t, grad, all);
      t.barrier();
      return allocations.load() - before;
    });
    CHECK(during[0] == 0);
  }
}
