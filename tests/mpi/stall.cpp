// A job in which one rank waits for a peer that never comes, under the stall watchdog
// (SWITCHYARD_TIMEOUT, set by the test definition): the watchdog must report the wait and end the
// job. `stall receive|barrier|allreduce` picks what rank 1 waits in (`allreduce`: MPI's native
// all-reduce); every other rank sleeps far longer than the timeout outside MPI, so the report can
// only come from the waiting rank(s).
#include <switchyard/collective/allreduce.hpp>
#include <switchyard/transport/mpi.hpp>

#include <chrono>
#include <cstdio>
#include <span>
#include <string_view>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  namespace sy = switchyard;
  sy::transport::mpi::environment environment(argc, argv);
  sy::transport::mpi t;
  const std::string_view wait = argc > 1 ? argv[1] : "receive";
  if (t.options().timeout.count() == 0) {
    std::fprintf(stderr, "stall: SWITCHYARD_TIMEOUT is not set, the watchdog is off\n");
    return 2;
  }
  std::vector<int> data(4, t.rank());
  if (wait == "receive" && t.rank() == 1) {
    t.recv(std::span<int>(data), 0, 42);
  } else if (wait == "barrier" && t.rank() != 0) {
    t.barrier();
  } else if (wait == "allreduce" && t.rank() != 0) {
    // MPI's own all-reduce, which the passive policy would not choose by itself.
    sy::collective::allreduce(t, data, sy::ops::sum{}, sy::algorithm::native{});
  } else {
    std::this_thread::sleep_for(std::chrono::seconds(120));
  }
  return 0;
}
