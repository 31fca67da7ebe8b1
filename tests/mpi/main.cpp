// The doctest main of the MPI suites: MPI is initialized before any test runs and finalized after,
// and every rank runs the same test cases in the same order, so collectives match up. Serialized,
// as an overlapped all-reduce needs (it calls MPI from its communication thread).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <boost/mpi/environment.hpp>

int main(int argc, char** argv) {
  boost::mpi::environment environment(argc, argv, boost::mpi::threading::serialized);
  doctest::Context context(argc, argv);
  return context.run();
}
