// A worker that throws mid-epoch under mpiexec: the uncaught exception ends its process, and the
// launcher ends the job on every rank. The meson test expects a prompt failure, never a hang.
// With the argument `colocated`, every rank serves a shard on a thread beside its worker.
#include <switchyard/nn/mlp.hpp>
#include <switchyard/optim/sgd.hpp>
#include <switchyard/strategy/parameter_server.hpp>
#include <switchyard/train/trainer.hpp>
#include <switchyard/transport/mpi.hpp>

#include "../train/fixtures.hpp"

#include <stdexcept>
#include <string_view>

int main(int argc, char** argv) {
  namespace sy = switchyard;
  const bool colocated = argc > 1 && std::string_view(argv[1]) == "colocated";
  sy::transport::mpi::environment environment(argc, argv, boost::mpi::threading::multiple);
  sy::transport::mpi t;
  const auto data = fixtures::quadrants(480, 7);
  sy::nn::mlp model{1, {8, 8, 1}, 4};
  sy::optim::sgd optimizer{model.parameters().size(), 0.05};
  sy::train::trainer_options options;
  options.batch_size = 8;
  options.epochs = 2;
  sy::train::trainer trainer{
      model, optimizer,
      colocated ? sy::strategy::parameter_server<>(sy::strategy::colocated) : sy::strategy::parameter_server<>(1),
      options};
  trainer.on_step([](const sy::train::step_record& s) {
    if (s.rank == 1 && s.epoch == 1 && s.step == 5) throw std::runtime_error("rank 1 failed at epoch 1, step 5");
  });
  trainer.fit(t, data, *data);
  return 0;
}
