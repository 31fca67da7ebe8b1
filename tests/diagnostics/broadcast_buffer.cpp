// A std::list is not contiguous, so it is not a buffer.
#include <switchyard/collective/broadcast.hpp>
#include <switchyard/transport/inproc.hpp>

#include <list>

int main() {
  switchyard::transport::run_inproc(2, [](switchyard::transport::inproc& t) {
    std::list<float> values(8, 1.0f);
    switchyard::collective::broadcast(t, values, 0);
  });
}
