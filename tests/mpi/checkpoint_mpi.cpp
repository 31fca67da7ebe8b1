// Checkpoints under mpiexec: a run checkpointed by rank 0 and resumed by every process ends with
// the parameters of the same run uninterrupted, to the bit, on every process.
#include <switchyard/collective/allgather.hpp>
#include <switchyard/collective/barrier.hpp>
#include <switchyard/collective/broadcast.hpp>
#include <switchyard/nn/mlp.hpp>
#include <switchyard/optim/adam.hpp>
#include <switchyard/optim/cosine.hpp>
#include <switchyard/strategy/all_reduce.hpp>
#include <switchyard/strategy/parameter_server.hpp>
#include <switchyard/strategy/switch_to.hpp>
#include <switchyard/train/checkpoint.hpp>
#include <switchyard/train/trainer.hpp>
#include <switchyard/transport/mpi.hpp>
#include <switchyard/trigger/after_epochs.hpp>

#include "../collective/scenarios.hpp"
#include "../train/fixtures.hpp"

#include <doctest/doctest.h>

#include <unistd.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace sy = switchyard;
namespace fs = std::filesystem;

namespace {

// Trains for `epochs` of a 4-epoch schedule, checkpointing into `directory` at the end when given,
// resuming from it first when asked.
template <class Strategy>
std::vector<float> train(sy::transport::mpi& t, const Strategy& strategy, std::size_t epochs,
                         const std::optional<fs::path>& directory, bool resume) {
  const auto data = fixtures::quadrants(480, 7);
  sy::nn::mlp model{11, {8, 8, 1}, 4};
  sy::optim::adam optimizer{model.parameters().size(), sy::optim::cosine{0.01, 240}};
  sy::train::trainer_options options;
  options.epochs = epochs;
  options.batch_size = 8;
  options.checkpoint_every = directory ? 2 : 0;
  sy::train::trainer trainer{model, optimizer, strategy, options};
  if (directory) {
    const sy::train::model_fingerprint fingerprint = sy::train::fingerprint(model, "mlp-8-8");
    sy::train::write_checkpoints(trainer, *directory, fingerprint);
    if (resume) CHECK(sy::train::resume(trainer, sy::train::checkpoint_file(*directory), fingerprint) == 2);
  }
  trainer.fit(t, data, *data);
  return {model.parameters().begin(), model.parameters().end()};
}

// One directory for all processes (rank 0's process id), emptied first.
fs::path shared_directory(sy::transport::mpi& t, const std::string& name) {
  std::array<std::int64_t, 1> id{static_cast<std::int64_t>(::getpid())};
  sy::collective::broadcast(t, id, 0);
  const fs::path path = fs::temp_directory_path() / ("switchyard_checkpoint_mpi_" + name + "_" + std::to_string(id[0]));
  if (t.rank() == 0) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  sy::collective::barrier(t);
  return path;
}

template <class Strategy>
void check_resume(const Strategy& strategy, const std::string& name) {
  sy::transport::mpi t;
  const std::vector<float> whole = train(t, strategy, 4, std::nullopt, false);
  const fs::path directory = shared_directory(t, name);
  train(t, strategy, 2, directory, false);
  // Rank 0 wrote the checkpoint inside fit; the others read it only after that.
  sy::collective::barrier(t);
  const std::vector<float> resumed = train(t, strategy, 4, directory, true);
  CHECK(resumed == whole);
  std::vector<std::uint64_t> mine{scenarios::bit_hash(resumed)};
  std::vector<std::uint64_t> all(static_cast<std::size_t>(t.size()));
  sy::collective::allgather(t, mine, all);
  for (const std::uint64_t h : all) CHECK(h == all[0]);
  sy::collective::barrier(t);
  if (t.rank() == 0) fs::remove_all(directory);
}

}  // namespace

TEST_CASE("mpi.checkpoint.allreduce: resumed after epoch 2 of 4, the parameters of the whole run") {
  check_resume(sy::strategy::all_reduce<>{}, "allreduce");
}

TEST_CASE("mpi.checkpoint.switch: a parameter server then all-reduce, resumed in the second stage") {
  sy::transport::mpi t;
  if (t.size() < 2) return;  // a parameter server needs a worker and a server
  using sync_ps = sy::strategy::parameter_server<sy::strategy::consistency::sync>;
  check_resume(sy::strategy::switch_to{sync_ps{1}, sy::strategy::all_reduce<>{}, sy::trigger::after_epochs{1}},
               "switch");
}

TEST_CASE("mpi.checkpoint.ps_compressed: a synchronous server with bf16 pushes, resumed after epoch 2 of 4 with each "
          "worker's error-feedback residual, the parameters of the whole run") {
  sy::transport::mpi t;
  if (t.size() < 2) return;  // a parameter server needs a worker and a server
  using sync_ps = sy::strategy::parameter_server<sy::strategy::consistency::sync>;
  check_resume(sync_ps{1, {}, sy::compression::format::bf16}, "ps_bf16");
}

TEST_CASE("mpi.checkpoint.colocated: co-located synchronous servers with bf16 pushes, resumed after epoch 2 of 4, the "
          "parameters of the whole run") {
  using sync_ps = sy::strategy::parameter_server<sy::strategy::consistency::sync>;
  check_resume(sync_ps{sy::strategy::colocated, {}, sy::compression::format::bf16}, "ps_colocated");
}
