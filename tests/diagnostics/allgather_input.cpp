// A std::list is not contiguous, so it is not a buffer, not even a read-only one.
#include <switchyard/collective/allgather.hpp>
#include <switchyard/transport/inproc.hpp>

#include <list>
#include <vector>

int main() {
  switchyard::transport::run_inproc(2, [](switchyard::transport::inproc& t) {
    const std::list<float> mine(4, 1.0f);
    std::vector<float> all(8);
    switchyard::collective::allgather(t, mine, all);
  });
}
