// A const handle cannot send or receive, so it is not a transport.
#include <switchyard/collective/barrier.hpp>
#include <switchyard/transport/inproc.hpp>

int main() {
  switchyard::transport::run_inproc(2, [](const switchyard::transport::inproc& t) {
    switchyard::collective::barrier(t);
  });
}
