// One of two translation units that include every header: linking them proves that nothing
// defined in a header breaks the one-definition rule.
#include <switchyard/switchyard.hpp>

#include <doctest/doctest.h>

int all_reduce_in_first_unit(int ranks);

TEST_CASE("headers.odr: two translation units with every header link and run together") {
  const int from_second = all_reduce_in_first_unit(3);
  const auto sums = switchyard::transport::run_inproc(3, [](switchyard::transport::inproc& t) {
    std::vector<int> one{1};
    switchyard::collective::allreduce(t, one, switchyard::ops::sum{});
    return one[0];
  });
  CHECK(from_second == 3);
  CHECK(sums == std::vector<int>{3, 3, 3});
}
