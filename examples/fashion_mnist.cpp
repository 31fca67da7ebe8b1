// Trains an mlp or a cnn on Fashion-MNIST with a switchyard strategy: in process with --ranks N,
// or over MPI when started by mpirun (the same binary).
//
//   build/examples/fashion_mnist --model mlp --ranks 4 --epochs 15 --summary run.json
//   mpirun -n 4 build/examples/fashion_mnist --model cnn
#include <switchyard/data/fashion_mnist.hpp>
#include <switchyard/nn/blas_threads.hpp>
#include <switchyard/nn/cnn.hpp>
#include <switchyard/nn/mlp.hpp>
#include <switchyard/optim/adam.hpp>
#include <switchyard/optim/cosine.hpp>
#include <switchyard/optim/momentum.hpp>
#include <switchyard/optim/sgd.hpp>
#include <switchyard/optim/warmup.hpp>
#include <switchyard/strategy/all_reduce.hpp>
#include <switchyard/train/epoch_log.hpp>
#include <switchyard/train/trainer.hpp>
#include <switchyard/transport/inproc.hpp>
#if SWITCHYARD_HAS_MPI
#include <switchyard/transport/mpi.hpp>
#endif

#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <fmt/os.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>

namespace sy = switchyard;

namespace {

struct config {
  std::string model = "mlp";
  std::string strategy = "allreduce";
  std::string optimizer = "adam";
  int ranks = 2;
  std::size_t epochs = 15;
  std::size_t batch = 64;
  double lr = 1e-3;
  std::size_t warmup_steps = 200;
  std::uint64_t seed = 42;
  int blas_threads = 1;
  std::string data_dir;
  std::string log;
  std::string summary;
};

// Adam or SGD (plain or with momentum) under a linear warm-up then a cosine decay to zero over the
// whole run: the schedule every rank derives from the same steps, so replicas agree.
template <class Transport, class Model>
sy::train::history train_model(Transport& t, Model& model, const config& c, const sy::data::fashion_mnist& data,
                               std::size_t workers) {
  const std::size_t steps = c.epochs * (data.train->size() / (workers * c.batch));
  const std::size_t warm = std::min(c.warmup_steps, steps / 2);
  const sy::optim::warmup schedule{warm, sy::optim::cosine{c.lr, std::max<std::size_t>(1, steps - warm)}};
  const std::size_t size = model.parameters().size();

  sy::train::trainer_options options;
  options.epochs = c.epochs;
  options.batch_size = c.batch;
  options.seed = c.seed;
  options.progress = t.rank() == 0 ? &std::cout : nullptr;
  std::optional<sy::train::epoch_log> log;
  if (t.rank() == 0 && !c.log.empty()) log.emplace(c.log);

  auto fit = [&](auto& optimizer) {
    sy::train::trainer trainer{model, optimizer, sy::strategy::all_reduce<>{}, options};
    if (log) trainer.on_epoch([&](const sy::train::epoch_record& e) { log->write(e); });
    return trainer.fit(t, data.train, *data.test);
  };
  if (c.optimizer == "adam") {
    sy::optim::adam optimizer{size, schedule};
    return fit(optimizer);
  }
  if (c.optimizer == "momentum") {
    sy::optim::momentum optimizer{size, schedule, 0.9};
    return fit(optimizer);
  }
  sy::optim::sgd optimizer{size, schedule};
  return fit(optimizer);
}

template <class Transport>
sy::train::history run_rank(Transport& t, const config& c, const sy::data::fashion_mnist& data) {
  const auto workers = static_cast<std::size_t>(t.size());
  if (c.model == "cnn") {
    sy::nn::cnn model{c.seed};
    return train_model(t, model, c, data, workers);
  }
  sy::nn::mlp model{c.seed};
  return train_model(t, model, c, data, workers);
}

void write_summary(const config& c, int ranks, const sy::train::history& h) {
  double train_seconds = 0;
  std::size_t samples = 0;
  for (const auto& e : h.epochs) {
    train_seconds += e.train_seconds;
    samples += e.samples;
  }
  auto out = fmt::output_file(c.summary);
  out.print(
      "{{\"strategy\": \"{}\", \"model\": \"{}\", \"optimizer\": \"{}\", \"ranks\": {}, \"epochs\": {}, "
      "\"batch_per_worker\": {}, \"test_accuracy\": {:.6f}, \"test_loss\": {:.6f}, \"wall_seconds\": {:.3f}, "
      "\"train_seconds\": {:.3f}, \"train_samples_per_second\": {:.1f}}}\n",
      c.strategy, c.model, c.optimizer, ranks, h.epochs.size(), c.batch, h.last().test_accuracy,
      h.last().test_loss, h.last().wall_seconds, train_seconds, train_seconds > 0 ? samples / train_seconds : 0.0);
}

}  // namespace

int main(int argc, char** argv) {
  config c;
  CLI::App app{"Train on Fashion-MNIST with a switchyard strategy (in process, or under mpirun)"};
  app.add_option("--model", c.model, "Model")->check(CLI::IsMember({"mlp", "cnn"}))->capture_default_str();
  app.add_option("--ranks", c.ranks, "In-process ranks (ignored under mpirun, which sets the world)")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_option("--strategy", c.strategy, "Training strategy")
      ->check(CLI::IsMember({"allreduce"}))
      ->capture_default_str();
  app.add_option("--epochs", c.epochs, "Epochs")->check(CLI::Range(1, 100000))->capture_default_str();
  app.add_option("--batch", c.batch, "Batch size per worker")->check(CLI::Range(1, 60000))->capture_default_str();
  app.add_option("--lr", c.lr, "Peak learning rate")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--warmup", c.warmup_steps, "Linear warm-up steps before the cosine decay")->capture_default_str();
  app.add_option("--optimizer", c.optimizer, "Optimizer")
      ->check(CLI::IsMember({"sgd", "momentum", "adam"}))
      ->capture_default_str();
  app.add_option("--seed", c.seed, "Seed of the initial model and the data order")->capture_default_str();
  app.add_option("--blas-threads", c.blas_threads, "OpenBLAS threads per rank")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_option("--data", c.data_dir, "Directory of the Fashion-MNIST .gz files (default: Debian's)");
  app.add_option("--log", c.log, "Per-epoch log: CSV if the name ends in .csv, else JSON lines");
  app.add_option("--summary", c.summary, "Write a JSON summary of the run here");
  CLI11_PARSE(app, argc, argv);

#if SWITCHYARD_HAS_MPI
  const bool under_mpi = sy::transport::mpi::launched();
  std::optional<sy::transport::mpi::environment> environment;
  if (under_mpi) environment.emplace(argc, argv);
#else
  const bool under_mpi = false;
#endif
  try {
    sy::nn::set_blas_threads(c.blas_threads);
    const auto data = c.data_dir.empty() ? sy::data::fashion_mnist::load() : sy::data::fashion_mnist::load(c.data_dir);
    sy::train::history history;
    int ranks = c.ranks;
    int rank = 0;
#if SWITCHYARD_HAS_MPI
    if (under_mpi) {
      sy::transport::mpi t;
      ranks = t.size();
      rank = t.rank();
      if (rank == 0) fmt::print("{} on Fashion-MNIST, {} MPI ranks, {}\n", c.model, ranks, c.strategy);
      history = run_rank(t, c, data);
    }
#endif
    if (!under_mpi) {
      fmt::print("{} on Fashion-MNIST, {} in-process ranks, {}\n", c.model, ranks, c.strategy);
      history = sy::transport::run_inproc(ranks, [&](sy::transport::inproc& t) { return run_rank(t, c, data); })
                    .front();
    }
    if (rank == 0) {
      fmt::print("final test accuracy {:.2f}% after {:.1f} s\n", 100.0 * history.last().test_accuracy,
                 history.last().wall_seconds);
      if (!c.summary.empty()) write_summary(c, ranks, history);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fashion_mnist: %s\n", e.what());
#if SWITCHYARD_HAS_MPI
    if (under_mpi) environment->abort(EXIT_FAILURE);
#endif
    return EXIT_FAILURE;
  }
  return EXIT_SUCCESS;
}
