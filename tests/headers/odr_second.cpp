// The second translation unit of the ODR check (see odr_first.cpp).
#include <switchyard/switchyard.hpp>

int all_reduce_in_first_unit(int ranks) {
  const auto sums = switchyard::transport::run_inproc(ranks, [](switchyard::transport::inproc& t) {
    std::vector<double> one{1.0};
    switchyard::collective::allreduce(t, one, switchyard::ops::sum{}, switchyard::algorithm::ring{});
    return static_cast<int>(one[0]);
  });
  return sums.front();
}
