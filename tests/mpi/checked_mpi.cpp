// Checked collectives under MPI: rank 1 passes 999 elements to an all-reduce where the others pass
// 1000. With SWITCHYARD_CHECK_COLLECTIVES=1 (set by the meson test, no code asks for it) every
// rank raises usage_error before any data moves; each prints its message and the job exits 3.
#include <switchyard/collective/allreduce.hpp>
#include <switchyard/core/error.hpp>
#include <switchyard/transport/mpi.hpp>

#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  namespace sy = switchyard;
  sy::transport::mpi::environment environment(argc, argv);
  sy::transport::mpi t;
  std::vector<float> gradient(t.rank() == 1 ? 999 : 1000, 1.0f);
  try {
    sy::collective::allreduce(t, gradient);
  } catch (const sy::usage_error& e) {
    std::fprintf(stderr, "caught: %s\n", e.what());
    return 3;
  }
  std::fprintf(stderr, "rank %d: no mismatch reported\n", t.rank());
  return 0;
}
