// The doctest main of the MPI suites: MPI is initialized before any test runs and finalized after,
// and every rank runs the same test cases in the same order, so collectives match up. Multiple:
// co-located parameter servers call MPI from a serving thread while the worker calls it too (an
// overlapped all-reduce's communication thread needs only serialized).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <boost/mpi/environment.hpp>

int main(int argc, char** argv) {
  boost::mpi::environment environment(argc, argv, boost::mpi::threading::multiple);
  doctest::Context context(argc, argv);
  return context.run();
}
