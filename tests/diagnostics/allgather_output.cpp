// A std::list is not contiguous, so it cannot receive an all-gather either.
#include <switchyard/collective/allgather.hpp>
#include <switchyard/transport/inproc.hpp>

#include <list>
#include <vector>

int main() {
  switchyard::transport::run_inproc(2, [](switchyard::transport::inproc& t) {
    const std::vector<float> mine(4, 1.0f);
    std::list<float> all(8);
    switchyard::collective::allgather(t, mine, all);
  });
}
