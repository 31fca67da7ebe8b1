// A worker that throws mid-epoch under mpiexec: the uncaught exception ends its process, and the
// launcher ends the job on every rank. The meson tests expect a prompt failure with the worker's
// message, never a hang.
//
//   ps_failure [dedicated|colocated|pipelined [RANK]]
//
// `dedicated`: the last rank serves; `colocated`: every rank serves a shard on a thread beside its
// worker; `pipelined`: co-located, and each worker's exchange is on the wire while it computes,
// so the failing worker throws with its receives posted. RANK (default 1) is the worker that fails.
#include <switchyard/nn/mlp.hpp>
#include <switchyard/optim/sgd.hpp>
#include <switchyard/strategy/parameter_server.hpp>
#include <switchyard/train/trainer.hpp>
#include <switchyard/transport/mpi.hpp>

#include "../train/fixtures.hpp"

#include <stdexcept>
#include <string>
#include <string_view>

int main(int argc, char** argv) {
  namespace sy = switchyard;
  const std::string_view layout = argc > 1 ? argv[1] : "dedicated";
  const int failing = argc > 2 ? std::stoi(argv[2]) : 1;
  sy::transport::mpi::environment environment(argc, argv, boost::mpi::threading::multiple);
  sy::transport::mpi t;
  const auto data = fixtures::quadrants(480, 7);
  sy::nn::mlp model{1, {8, 8, 1}, 4};
  sy::optim::sgd optimizer{model.parameters().size(), 0.05};
  sy::train::trainer_options options;
  options.batch_size = 8;
  options.epochs = 2;
  const auto pipeline = layout == "pipelined" ? sy::strategy::pipelining::one_ahead : sy::strategy::pipelining::off;
  sy::train::trainer trainer{model, optimizer,
                             layout == "dedicated"
                                 ? sy::strategy::parameter_server<>(1)
                                 : sy::strategy::parameter_server<>(sy::strategy::colocated, {},
                                                                    sy::compression::format::none, pipeline),
                             options};
  trainer.on_step([failing](const sy::train::step_record& s) {
    if (s.rank == failing && s.epoch == 1 && s.step == 5) {
      throw std::runtime_error("rank " + std::to_string(failing) + " failed at epoch 1, step 5");
    }
  });
  trainer.fit(t, data, *data);
  return 0;
}
