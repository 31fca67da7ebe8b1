// faulty<mpi> with rank 1 planned to fail after 25 messages, in a loop of all-reduces: the
// injected transport_error leaves main on rank 1 (std::terminate prints it), and the launcher
// ends the job on every rank, including those blocked on rank 1.
#include <switchyard/collective/allreduce.hpp>
#include <switchyard/transport/faulty.hpp>
#include <switchyard/transport/mpi.hpp>

#include <vector>

int main(int argc, char** argv) {
  namespace sy = switchyard;
  sy::transport::mpi::environment environment(argc, argv);
  sy::transport::faulty f(sy::transport::mpi{}, {.fail_rank = 1, .fail_after = 25});
  std::vector<float> gradient(1000, 1.0f);
  for (int step = 0; step < 1'000'000; ++step) sy::collective::allreduce(f, gradient);
  return 0;
}
