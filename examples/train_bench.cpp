// The training speed benchmark: samples per second of one worker against the bound its GEMMs
// alone set (OpenBLAS timed on the same shapes, interleaved in the same run), the scaling of
// all-reduce training from 1 to 2 in-process ranks (also with the exchange overlapped with the
// backward pass, and with bf16 gradients), the cost of subnormal floats (an Adam step on
// subnormal moments, and a long 4-rank Adam run whose moments decay), and the peak resident memory
// of a 4-rank run. docs/performance.md ("Training speed", "Subnormal floats") describes the method
// and records the results.
//
//   build/examples/train_bench --trials 11 --json train.json
//   build/examples/train_bench --memory        # only the 4-rank run and its peak RSS
//   build/examples/train_bench --no-flush-subnormals   # everything with subnormal floats kept
#include "json_output.hpp"
#include "startup_checks.hpp"

#include <switchyard/core/compression.hpp>
#include <switchyard/core/floating_point.hpp>
#include <switchyard/data/batch_loader.hpp>
#include <switchyard/data/dataset.hpp>
#include <switchyard/data/fashion_mnist.hpp>
#include <switchyard/data/shard_plan.hpp>
#include <switchyard/nn/blas_threads.hpp>
#include <switchyard/nn/cnn.hpp>
#include <switchyard/nn/conv2d.hpp>
#include <switchyard/nn/dense.hpp>
#include <switchyard/nn/mlp.hpp>
#include <switchyard/nn/sequential.hpp>
#include <switchyard/optim/adam.hpp>
#include <switchyard/optim/sgd.hpp>
#include <switchyard/strategy/all_reduce.hpp>
#include <switchyard/train/trainer.hpp>
#include <switchyard/transport/inproc.hpp>

#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <xtensor-blas/xblas.hpp>
#include <xtensor/xadapt.hpp>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

// Declared here for the same reason as in nn/blas_threads.hpp: <cblas.h> clashes with xtensor-blas.
extern "C" char* openblas_get_config(void);

namespace {

namespace sy = switchyard;
using bench_clock = std::chrono::steady_clock;

constexpr double sgd_rate = 0.01;
constexpr double adam_rate = 1e-3;
constexpr int memory_ranks = 4;
// Timed Adam steps per trial and kind of moments: a step on kept subnormals takes about 100 times
// as long as one on normal moments on an Intel core, so fewer than the training steps.
constexpr std::size_t adam_steps_per_trial = 20;

// The targets.
constexpr double target_gemm_fraction = 0.70;
constexpr double target_scaling = 1.7;
constexpr double target_peak_megabytes = 300.0;
constexpr double target_adam_gemm_fraction = 0.6;
constexpr double target_subnormal_step_ratio = 0.9;
constexpr double target_last_epoch_ratio = 0.9;

// What the command line sets.
struct settings {
  std::string model = "mlp";
  std::size_t batch = 64;
  std::size_t steps = 200;
  int trials = 11;
  std::uint64_t seed = 42;
  std::string data_dir;
  std::string json;
  bool memory = false;
  bool flush_subnormals = true;  // as trainer_options::flush_subnormals, for every figure but the Adam step's
  std::size_t long_epochs = 15;  // the 4-rank Adam run whose last epoch is compared with its second
};

// One reported figure. Measured figures carry their range over trials; checks against the issue's
// targets carry the target and the verdict.
struct record {
  std::string metric;
  double value = 0;
  std::string unit;
  std::optional<double> min;
  std::optional<double> max;
  std::string target;
  std::optional<bool> met;
};

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

record measured(std::string metric, const std::vector<double>& trials, std::string unit) {
  return {std::move(metric), median(trials), std::move(unit), *std::min_element(trials.begin(), trials.end()),
          *std::max_element(trials.begin(), trials.end()), {}, {}};
}

// Peak resident set of this process so far, in KiB: VmHWM of /proc/self/status. Not
// getrusage's ru_maxrss, which survives execve (getrusage(2)) and so would report the peak of the
// benchmark process that spawned the --memory run.
long peak_rss_kib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with("VmHWM:")) return std::stol(line.substr(6));
  }
  throw std::runtime_error("no VmHWM in /proc/self/status");
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return fmt::format("{} {} {}", one, five, fifteen);
}

// The first `count` examples of `from` as a data set of their own (the trainer runs whole epochs,
// so a short timed run needs a small training set).
std::shared_ptr<const sy::data::dataset> first_examples(const sy::data::dataset& from, std::size_t count) {
  count = std::min(count, from.size());
  const auto images = from.images().first(count * from.pixels());
  const auto labels = from.labels().first(count);
  return std::make_shared<const sy::data::dataset>(std::vector<std::uint8_t>(images.begin(), images.end()),
                                                   std::vector<std::uint8_t>(labels.begin(), labels.end()),
                                                   from.rows(), from.cols(), from.classes());
}

// ---------------------------------------------------------------------------------------------
// The GEMMs of one training step
// ---------------------------------------------------------------------------------------------

// One C = op(A) op(B) + beta C of a step, row-major as the layers store their matrices: op(A) is
// m x k, op(B) is k x n.
struct gemm_shape {
  std::string name;
  std::size_t m = 0;
  std::size_t n = 0;
  std::size_t k = 0;
  bool transpose_a = false;
  bool transpose_b = false;
  float beta = 0;
};

template <class L>
inline constexpr bool is_dense = false;
template <class T>
inline constexpr bool is_dense<sy::nn::dense<T>> = true;
template <class L>
inline constexpr bool is_conv2d = false;
template <class T>
inline constexpr bool is_conv2d<sy::nn::conv2d<T>> = true;

// The three GEMMs of a layer computing `rows x outputs = (rows x inner) W` (dense.hpp, conv2d.hpp):
// forward onto the broadcast bias (beta 1), weight gradient x^T dy, input gradient dy W^T.
void add_layer_gemms(std::vector<gemm_shape>& plan, const std::string& layer, std::size_t rows, std::size_t inner,
                     std::size_t outputs, bool propagate) {
  plan.push_back({fmt::format("{} forward", layer), rows, outputs, inner, false, false, 1.0F});
  plan.push_back({fmt::format("{} weight gradient", layer), inner, outputs, rows, true, false, 0.0F});
  if (propagate) plan.push_back({fmt::format("{} input gradient", layer), rows, inner, outputs, false, true, 0.0F});
}

// Walks the model's layers as nn::sequential runs them: each layer's shapes come from configuring
// a copy of it, and a layer computes its input gradient exactly when a layer before it has
// parameters (sequential.hpp).
template <class... Layers>
std::vector<gemm_shape> gemm_plan(const sy::nn::sequential<Layers...>& model, std::size_t batch) {
  std::vector<gemm_shape> plan;
  sy::nn::feature_shape shape = model.input_shape();
  bool parameters_below = false;  // an earlier layer has parameters, so this one's input gradient is read
  const auto visit = [&](std::size_t index, auto layer) {
    using layer_type = decltype(layer);
    const std::size_t inputs = shape.size();
    shape = layer.configure(shape);
    const std::string name = fmt::format("layer {} {}", index, is_dense<layer_type> ? "dense" : "conv2d");
    if constexpr (is_dense<layer_type>) {
      add_layer_gemms(plan, name, batch, inputs, shape.size(), parameters_below);
    } else if constexpr (is_conv2d<layer_type>) {
      add_layer_gemms(plan, name, batch * shape.height * shape.width, layer.weights().shape()[0], shape.channels,
                      parameters_below);
    }
    parameters_below = parameters_below || layer.parameter_count() > 0;
  };
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (visit(I, model.template layer<I>()), ...);
  }(std::index_sequence_for<Layers...>{});
  return plan;
}

// A row-major `rows x cols` view of `data`, built as nn::detail::matrix builds the layers' operands.
template <class T>
auto matrix(T* data, std::size_t rows, std::size_t cols) {
  return xt::adapt(data, rows * cols, xt::no_ownership(), std::array<std::size_t, 2>{rows, cols});
}

// Preallocated, filled operands of one GEMM, timed with the call the layers make.
class gemm_runner {
 public:
  explicit gemm_runner(gemm_shape shape)
      : shape_(std::move(shape)), a_(shape_.m * shape_.k), b_(shape_.k * shape_.n), c_(shape_.m * shape_.n) {
    std::mt19937 engine(7);
    std::uniform_real_distribution<float> uniform(-1.0F, 1.0F);
    for (auto* buffer : {&a_, &b_, &c_}) std::generate(buffer->begin(), buffer->end(), [&] { return uniform(engine); });
  }

  // Seconds per call over `calls` back-to-back calls.
  double seconds_per_call(std::size_t calls) {
    const auto a = matrix(static_cast<const float*>(a_.data()), shape_.transpose_a ? shape_.k : shape_.m,
                          shape_.transpose_a ? shape_.m : shape_.k);
    const auto b = matrix(static_cast<const float*>(b_.data()), shape_.transpose_b ? shape_.n : shape_.k,
                          shape_.transpose_b ? shape_.k : shape_.n);
    auto c = matrix(c_.data(), shape_.m, shape_.n);
    const auto start = bench_clock::now();
    for (std::size_t call = 0; call < calls; ++call) {
      xt::blas::gemm(a, b, c, shape_.transpose_a, shape_.transpose_b, 1.0F, shape_.beta);
    }
    return std::chrono::duration<double>(bench_clock::now() - start).count() / static_cast<double>(calls);
  }

  [[nodiscard]] const gemm_shape& shape() const noexcept { return shape_; }

 private:
  gemm_shape shape_;
  std::vector<float> a_;
  std::vector<float> b_;
  std::vector<float> c_;
};

// ---------------------------------------------------------------------------------------------
// Training runs
// ---------------------------------------------------------------------------------------------

// One worker stepping as the trainer does (gather the batch, forward_backward, optimizer step),
// without a transport: the single-worker figure. It walks the batches of epoch 1 round and round.
template <class Model, class Optimizer>
class direct_worker {
 public:
  template <class MakeOptimizer>
  direct_worker(const settings& s, std::shared_ptr<const sy::data::dataset> train, MakeOptimizer make_optimizer)
      : model_(s.seed), optimizer_(make_optimizer(model_.parameters().size())), loader_(train, s.batch),
        plan_(train->size(), 1, s.batch, s.seed, 1) {}

  // Seconds for `steps` steps, under the flush mode the trainer would use.
  double run(std::size_t steps, bool flush_subnormals) {
    const sy::flush_subnormals_scope flush(flush_subnormals);
    double loss = 0;
    const auto start = bench_clock::now();
    for (std::size_t step = 0; step < steps; ++step) {
      const sy::data::batch_view batch = loader_.gather(plan_.batch(0, next_));
      next_ = (next_ + 1) % plan_.steps();
      loss = model_.forward_backward(batch);
      optimizer_.step(model_.parameters(), model_.gradients());
    }
    const double seconds = std::chrono::duration<double>(bench_clock::now() - start).count();
    if (!std::isfinite(loss)) throw std::runtime_error(fmt::format("the single worker's loss diverged to {}", loss));
    return seconds;
  }

 private:
  Model model_;
  Optimizer optimizer_;
  sy::data::batch_loader loader_;
  sy::data::shard_plan plan_;
  std::size_t next_ = 0;
};

// Where a trainer step's time goes: medians over one rank's steps, in seconds.
struct step_times {
  double compute = 0;      // forward and backward
  double communicate = 0;  // the strategy's step: all-reduce and optimizer update
};

// One epoch of `train::trainer` with `strategy::all_reduce` (with `exchange`'s options) and SGD
// over `ranks` in-process ranks: the history of rank 0 and each rank's step times.
template <class Model>
std::pair<sy::train::history, std::vector<step_times>> train_one_epoch(
    int ranks, const settings& s, const std::shared_ptr<const sy::data::dataset>& train, const sy::data::dataset& test,
    const sy::strategy::all_reduce_options& exchange) {
  std::vector<step_times> times(static_cast<std::size_t>(ranks));
  std::vector<sy::train::history> histories = sy::transport::run_inproc(ranks, [&](sy::transport::inproc& t) {
    Model model{s.seed};
    sy::optim::sgd optimizer{model.parameters().size(), sgd_rate};
    sy::train::trainer_options options;
    options.epochs = 1;
    options.batch_size = s.batch;
    options.seed = s.seed;
    options.flush_subnormals = s.flush_subnormals;
    sy::train::trainer trainer{model, optimizer, sy::strategy::all_reduce<>{exchange}, options};
    std::vector<double> compute, communicate;
    trainer.on_step([&](const sy::train::step_record& step) {
      compute.push_back(step.compute_seconds);
      communicate.push_back(step.communicate_seconds);
    });
    sy::train::history history = trainer.fit(t, train, test);
    times[static_cast<std::size_t>(t.rank())] = {median(compute), median(communicate)};
    return history;
  });
  return {std::move(histories.front()), std::move(times)};
}

// The gradient exchanges measured beside the plain one at 2 ranks: where the step's time goes
// when the all-reduce overlaps the backward pass, and when it sends bf16.
struct exchange_variant {
  const char* name;
  sy::strategy::all_reduce_options options;
};
const std::array<exchange_variant, 2> exchange_variants{{
    {"overlapped exchange", {.exchange = sy::strategy::exchange::overlapped}},
    {"bf16 gradients", {.compression = sy::compression::format::bf16}},
}};

// One trainer trial: the samples per second the trainer reports for one epoch (slowest rank's
// training time, evaluation excluded) and the step times of the rank slowest to compute.
struct trainer_trial {
  double samples_per_second = 0;
  step_times step;
};

template <class Model>
trainer_trial run_trainer(int ranks, const settings& s, const std::shared_ptr<const sy::data::dataset>& train,
                          const sy::data::dataset& test, const sy::strategy::all_reduce_options& exchange = {}) {
  const auto [history, times] = train_one_epoch<Model>(ranks, s, train, test, exchange);
  const sy::train::epoch_record& epoch = history.last();
  if (!std::isfinite(epoch.train_loss)) {
    throw std::runtime_error(fmt::format("the {}-rank training loss diverged to {}", ranks, epoch.train_loss));
  }
  return {epoch.samples_per_second, *std::max_element(times.begin(), times.end(), [](step_times a, step_times b) {
            return a.compute < b.compute;
          })};
}

// ---------------------------------------------------------------------------------------------
// Subnormal floats
// ---------------------------------------------------------------------------------------------

// One Adam step over `size` parameters with zero gradients (a border pixel's weights, a dead
// unit's) from a state whose two moments all hold `moment`: the state is imported again before
// each step, outside the timed part, so every timed step reads the same moments. Seconds per step,
// median of `steps`.
double adam_step_seconds(std::size_t size, float moment, bool flush_subnormals, std::size_t steps) {
  sy::optim::adam optimizer{size, adam_rate};
  std::vector<float> parameters(size, 0.5F);
  const std::vector<float> gradients(size, 0.0F);
  const sy::optim::optimizer_state<float> seeded{1000, size, {std::vector<float>(size, moment),
                                                              std::vector<float>(size, moment)}, 1000};
  std::vector<double> seconds;
  seconds.reserve(steps);
  const sy::flush_subnormals_scope flush(flush_subnormals);
  for (std::size_t step = 0; step < steps; ++step) {
    optimizer.import_state(seeded);
    const auto start = bench_clock::now();
    optimizer.step(parameters, gradients);
    seconds.push_back(std::chrono::duration<double>(bench_clock::now() - start).count());
  }
  return median(std::move(seconds));
}

// `s.long_epochs` epochs of `memory_ranks` in-process ranks under all_reduce with Adam on the whole
// training set: the samples/s of every epoch, from the trainer's records.
template <class Model>
std::vector<double> long_adam_run(const settings& s, const sy::data::fashion_mnist& fashion) {
  const std::vector<sy::train::history> histories = sy::transport::run_inproc(memory_ranks, [&](sy::transport::inproc& t) {
    Model model{s.seed};
    sy::optim::adam optimizer{model.parameters().size(), adam_rate};
    sy::train::trainer_options options;
    options.epochs = s.long_epochs;
    options.batch_size = s.batch;
    options.seed = s.seed;
    options.flush_subnormals = s.flush_subnormals;
    sy::train::trainer trainer{model, optimizer, sy::strategy::all_reduce<>{}, options};
    return trainer.fit(t, fashion.train, *fashion.test);
  });
  std::vector<double> rates;
  for (const sy::train::epoch_record& e : histories.front().epochs) rates.push_back(e.samples_per_second);
  return rates;
}

// ---------------------------------------------------------------------------------------------
// Peak memory, in a process of its own
// ---------------------------------------------------------------------------------------------

constexpr std::string_view peak_line = "peak_rss_kib ";

// The --memory mode: one epoch of `memory_ranks` in-process ranks on the full data, then the
// process's peak RSS, last line `peak_rss_kib N` for the parent to read.
template <class Model>
void run_memory(const settings& s, const sy::data::fashion_mnist& fashion) {
  const long loaded = peak_rss_kib();
  const auto started = bench_clock::now();
  const sy::train::history history = train_one_epoch<Model>(memory_ranks, s, fashion.train, *fashion.test, {}).first;
  const double seconds = std::chrono::duration<double>(bench_clock::now() - started).count();
  const long peak = peak_rss_kib();
  fmt::print("memory: {} in-process ranks x {} BLAS thread(s), {}, batch {} per rank, 1 epoch of {} examples, "
             "test accuracy {:.2f}%, {:.1f} s\n",
             memory_ranks, sy::nn::blas_threads(), s.model, s.batch, fashion.train->size(),
             100.0 * history.last().test_accuracy, seconds);
  fmt::print("memory: peak RSS {:.1f} MB after loading the data, {:.1f} MB after training\n", loaded * 1024 / 1e6,
             peak * 1024 / 1e6);
  fmt::print("{}{}\n", peak_line, peak);
}

// Runs this executable again in --memory mode and returns the peak RSS it reports, in KiB: the
// peak is process-wide, so the 4-rank run needs a fresh process to be measured alone.
long peak_rss_of_memory_run(const settings& s) {
  std::vector<std::string> args{"/proc/self/exe", "--memory", "--model", s.model, "--batch",
                                std::to_string(s.batch), "--seed", std::to_string(s.seed)};
  if (!s.flush_subnormals) args.emplace_back("--no-flush-subnormals");
  if (!s.data_dir.empty()) {
    args.emplace_back("--data");
    args.push_back(s.data_dir);
  }
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);

  std::array<int, 2> pipe_ends{};
  if (pipe(pipe_ends.data()) != 0) throw std::runtime_error("memory run: pipe() failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_ends[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_ends[0]);
  posix_spawn_file_actions_addclose(&actions, pipe_ends[1]);
  pid_t child = 0;
  const int spawned = posix_spawn(&child, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_ends[1]);
  if (spawned != 0) {
    close(pipe_ends[0]);
    throw std::runtime_error(fmt::format("memory run: cannot start {} (error {})", argv[0], spawned));
  }
  std::string output;
  std::array<char, 4096> chunk{};
  for (ssize_t got; (got = read(pipe_ends[0], chunk.data(), chunk.size())) > 0;) {
    output.append(chunk.data(), static_cast<std::size_t>(got));
  }
  close(pipe_ends[0]);
  int status = 0;
  waitpid(child, &status, 0);

  std::istringstream lines(output);
  long peak = -1;
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with(peak_line)) {
      peak = std::stol(line.substr(peak_line.size()));
    } else {
      fmt::print("{}\n", line);
    }
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || peak < 0) {
    throw std::runtime_error("memory run: the --memory process failed (its output is above)");
  }
  return peak;
}

// ---------------------------------------------------------------------------------------------
// The benchmark
// ---------------------------------------------------------------------------------------------

void print_records(const std::vector<record>& records) {
  fmt::print("\n{:<62} {:>12} {:<10} {:>8}\n", "figure", "median", "unit", "spread");
  for (const record& r : records) {
    if (r.met) continue;
    const std::string spread = r.min && r.max ? fmt::format("{:.1f}%", 100 * (*r.max - *r.min) / r.value) : "";
    fmt::print("{:<62} {:>12.6g} {:<10} {:>8}\n", r.metric, r.value, r.unit, spread);
  }
  fmt::print("\n{:<62} {:>12} {:<10} {}\n", "target", "measured", "", "verdict");
  for (const record& r : records) {
    if (!r.met) continue;
    fmt::print("{:<62} {:>12.4g} {:<10} {}\n", r.target, r.value, r.unit, *r.met ? "met" : "NOT MET");
  }
}

void write_json(const std::string& path, const std::vector<record>& records, const settings& s) {
  example::json list = example::json::array();
  for (const record& r : records) {
    example::json entry{{"metric", r.metric}, {"value", r.value}, {"unit", r.unit}, {"model", s.model},
                        {"batch", s.batch}};
    if (r.min && r.max) {
      entry["min"] = *r.min;
      entry["max"] = *r.max;
      entry["trials"] = s.trials;
    }
    if (r.met) {
      entry["target"] = r.target;
      entry["met"] = *r.met;
    }
    list.push_back(std::move(entry));
  }
  example::write_json_file(path, list);
}

// Every timed figure, one entry per trial.
struct trial_figures {
  std::vector<double> sgd_rates, adam_rates, one_rank, two_ranks;  // samples/s
  std::size_t parameter_count = 0;
  // An Adam step over the model's parameters on subnormal and on normal moments, flushed (as the
  // trainer runs by default) and kept: four figures per trial, in us.
  std::array<std::array<std::vector<double>, 2>, 2> adam_step_us;  // [flushed][subnormal]
  // Per rank count: the median step's forward-backward and all-reduce-plus-update, in us.
  std::array<std::vector<double>, 2> compute_us, communicate_us;
  // The same at 2 ranks for each variant of the gradient exchange: samples/s, compute, communication.
  std::vector<std::array<std::vector<double>, 3>> variant_figures;
  std::vector<gemm_shape> gemms;
  std::vector<std::vector<double>> gemm_seconds;  // per GEMM, per trial
};

// The trainer's trials of one round: 1 and 2 ranks, then 2 ranks with each exchange variant.
template <class Model>
void trainer_trials(const settings& s, const std::shared_ptr<const sy::data::dataset>& train,
                    const sy::data::dataset& test, trial_figures& f) {
  for (const int ranks : {1, 2}) {
    const trainer_trial result = run_trainer<Model>(ranks, s, train, test);
    (ranks == 1 ? f.one_rank : f.two_ranks).push_back(result.samples_per_second);
    f.compute_us[static_cast<std::size_t>(ranks - 1)].push_back(result.step.compute * 1e6);
    f.communicate_us[static_cast<std::size_t>(ranks - 1)].push_back(result.step.communicate * 1e6);
  }
  for (std::size_t v = 0; v < exchange_variants.size(); ++v) {
    const trainer_trial result = run_trainer<Model>(2, s, train, test, exchange_variants[v].options);
    f.variant_figures[v][0].push_back(result.samples_per_second);
    f.variant_figures[v][1].push_back(result.step.compute * 1e6);
    f.variant_figures[v][2].push_back(result.step.communicate * 1e6);
  }
}

// Adam steps on subnormal and on normal moments, flushed and kept.
void adam_step_trial(std::size_t parameter_count, trial_figures& f) {
  constexpr std::array<float, 2> moments{1e-39F, 1e-3F};  // subnormal, normal
  for (const bool flushed : {true, false}) {
    for (std::size_t kind = 0; kind < moments.size(); ++kind) {
      f.adam_step_us[flushed ? 0 : 1][kind].push_back(
          1e6 * adam_step_seconds(parameter_count, moments[kind], flushed, adam_steps_per_trial));
    }
  }
}

template <class Model>
trial_figures run_trials(const settings& s, const sy::data::fashion_mnist& fashion) {
  const auto samples = static_cast<double>(s.steps * s.batch);
  // The trainer runs whole epochs: 2 x steps batches, so each of 2 ranks runs `steps` steps.
  const auto trainer_train = first_examples(*fashion.train, 2 * s.steps * s.batch);
  const auto trainer_test = first_examples(*fashion.test, s.batch);

  // Everything is built, allocated and touched here, before any timing.
  direct_worker<Model, sy::optim::sgd<>> sgd_worker(s, fashion.train, [](std::size_t size) {
    return sy::optim::sgd{size, sgd_rate};
  });
  direct_worker<Model, sy::optim::adam<>> adam_worker(s, fashion.train, [](std::size_t size) {
    return sy::optim::adam{size, adam_rate};
  });
  std::vector<gemm_runner> gemms;
  for (gemm_shape& shape : gemm_plan(Model{s.seed}, s.batch)) gemms.emplace_back(std::move(shape));
  trial_figures f;
  f.parameter_count = Model{s.seed}.parameters().size();
  f.variant_figures.resize(exchange_variants.size());
  f.gemm_seconds.resize(gemms.size());

  // Warm-up: one trial's worth of everything, not recorded.
  sgd_worker.run(s.steps, s.flush_subnormals);
  adam_worker.run(s.steps, s.flush_subnormals);
  for (gemm_runner& g : gemms) g.seconds_per_call(s.steps);
  trial_figures discarded = f;
  trainer_trials<Model>(s, trainer_train, *trainer_test, discarded);

  // Trial k of every figure runs before trial k + 1 of any, so drift in the load hits all alike.
  for (int trial = 0; trial < s.trials; ++trial) {
    f.sgd_rates.push_back(samples / sgd_worker.run(s.steps, s.flush_subnormals));
    f.adam_rates.push_back(samples / adam_worker.run(s.steps, s.flush_subnormals));
    adam_step_trial(f.parameter_count, f);
    for (std::size_t i = 0; i < gemms.size(); ++i) f.gemm_seconds[i].push_back(gemms[i].seconds_per_call(s.steps));
    trainer_trials<Model>(s, trainer_train, *trainer_test, f);
  }
  for (const gemm_runner& g : gemms) f.gemms.push_back(g.shape());
  return f;
}

// Prints each GEMM's median time; returns their sum, the time of one batch's GEMMs.
double print_gemms(const settings& s, const trial_figures& f) {
  double total_seconds = 0;
  fmt::print("\nGEMMs of one {} step at batch {} (xt::blas::gemm on OpenBLAS sgemm, row-major, median per call):\n",
             s.model, s.batch);
  fmt::print("{:<34} {:>6} {:>6} {:>6} {:>4} {:>5} {:>10} {:>8} {:>8}\n", "GEMM", "m", "n", "k", "op", "beta", "us",
             "spread", "GFLOP/s");
  for (std::size_t i = 0; i < f.gemms.size(); ++i) {
    const gemm_shape& g = f.gemms[i];
    const double seconds = median(f.gemm_seconds[i]);
    total_seconds += seconds;
    const auto [fastest, slowest] = std::minmax_element(f.gemm_seconds[i].begin(), f.gemm_seconds[i].end());
    fmt::print("{:<34} {:>6} {:>6} {:>6} {:>3}{} {:>5} {:>10.2f} {:>7.1f}% {:>8.1f}\n", g.name, g.m, g.n, g.k,
               g.transpose_a ? 'T' : 'N', g.transpose_b ? 'T' : 'N', g.beta, seconds * 1e6,
               100 * (*slowest - *fastest) / seconds, 2.0 * static_cast<double>(g.m * g.n * g.k) / seconds / 1e9);
  }
  return total_seconds;
}

// The measured speeds and times, and the GEMM bound: `batch` samples per `gemm_seconds`.
std::vector<record> speed_records(const trial_figures& f, double gemm_bound) {
  std::vector<record> records;
  records.push_back(measured("single worker, direct loop, sgd", f.sgd_rates, "samples/s"));
  records.push_back(measured("single worker, direct loop, adam", f.adam_rates, "samples/s"));
  records.push_back(measured("trainer + all_reduce, 1 in-process rank, sgd", f.one_rank, "samples/s"));
  records.push_back(measured("trainer + all_reduce, 2 in-process ranks, sgd", f.two_ranks, "samples/s"));
  for (const int ranks : {1, 2}) {
    const auto at = static_cast<std::size_t>(ranks - 1);
    records.push_back(measured(fmt::format("{} rank(s): forward+backward per step", ranks), f.compute_us[at], "us"));
    records.push_back(
        measured(fmt::format("{} rank(s): all-reduce + update per step", ranks), f.communicate_us[at], "us"));
  }
  for (std::size_t v = 0; v < exchange_variants.size(); ++v) {
    const std::string name = exchange_variants[v].name;
    const auto& figures = f.variant_figures[v];
    records.push_back(measured(fmt::format("2 ranks, {}: trainer", name), figures[0], "samples/s"));
    records.push_back(measured(fmt::format("2 ranks, {}: forward+backward per step", name), figures[1], "us"));
    records.push_back(measured(fmt::format("2 ranks, {}: all-reduce + update per step", name), figures[2], "us"));
    records.push_back({fmt::format("2 ranks, {} / plain exchange, samples/s", name),
                       median(figures[0]) / median(f.two_ranks), "ratio", {}, {}, {}, {}});
  }
  records.push_back({fmt::format("GEMM bound, the {} GEMMs of the step", f.gemms.size()), gemm_bound, "samples/s", {},
                     {}, {}, {}});
  return records;
}

// The Adam step's times, and the subnormal moments' speed against the normal ones' target.
void add_adam_step_records(const trial_figures& f, std::vector<record>& records) {
  for (const bool flushed : {true, false}) {
    const auto& times = f.adam_step_us[flushed ? 0 : 1];
    const char* mode = flushed ? "flushed" : "kept";
    records.push_back(measured(fmt::format("adam step, {} params, subnormal moments, {}", f.parameter_count, mode),
                               times[0], "us"));
    records.push_back(
        measured(fmt::format("adam step, {} params, normal moments, {}", f.parameter_count, mode), times[1], "us"));
    const double ratio = median(times[1]) / median(times[0]);
    if (flushed) {
      records.push_back({"adam step speed, subnormal / normal moments, flushed", ratio, "ratio", {}, {},
                         fmt::format("adam step on subnormal moments >= {:.1f}x the speed on normal ones (default "
                                     "options)",
                                     target_subnormal_step_ratio),
                         ratio >= target_subnormal_step_ratio});
    } else {
      records.push_back({"adam step speed, subnormal / normal moments, kept", ratio, "ratio", {}, {}, {}, {}});
    }
  }
}

// The fractions of the GEMM bound, the scaling to 2 ranks and the threads, against their targets.
void add_target_records(const trial_figures& f, double gemm_bound, std::vector<record>& records) {
  const double sgd_rate_median = median(f.sgd_rates);
  const double fraction = sgd_rate_median / gemm_bound;
  records.push_back({"fraction of the GEMM bound, sgd", fraction, "ratio", {}, {},
                     fmt::format("single worker >= {:.0f}% of the GEMM bound", 100 * target_gemm_fraction),
                     fraction >= target_gemm_fraction});
  const double adam_fraction = median(f.adam_rates) / gemm_bound;
  records.push_back({"fraction of the GEMM bound, adam", adam_fraction, "ratio", {}, {},
                     fmt::format("single worker with adam >= {:.0f}% of the GEMM bound", 100 * target_adam_gemm_fraction),
                     adam_fraction >= target_adam_gemm_fraction});
  add_adam_step_records(f, records);
  records.push_back({"trainer (1 rank) / direct loop, sgd", median(f.one_rank) / sgd_rate_median, "ratio", {}, {}, {},
                     {}});
  const double scaling = median(f.two_ranks) / median(f.one_rank);
  records.push_back({"scaling, 2 ranks / 1 rank", scaling, "ratio", {}, {},
                     fmt::format("2 ranks >= {:.1f}x the samples/s of 1 rank", target_scaling),
                     scaling >= target_scaling});
  records.push_back({"2 ranks / single worker direct loop, sgd", median(f.two_ranks) / sgd_rate_median, "ratio", {},
                     {}, {}, {}});
  const int blas = sy::nn::blas_threads();
  const unsigned cores = std::thread::hardware_concurrency();
  for (const int ranks : {1, 2}) {
    records.push_back({fmt::format("threads, {} rank(s) x BLAS threads", ranks), static_cast<double>(ranks * blas),
                       "threads", {}, {}, fmt::format("{} rank(s) x {} BLAS thread(s) <= {} cores", ranks, blas, cores),
                       ranks * blas <= static_cast<int>(cores)});
  }
}

// The 4-rank runs: the long Adam run's last epoch against its second, and the peak memory.
template <class Model>
void add_four_rank_records(const settings& s, const sy::data::fashion_mnist& fashion, std::vector<record>& records) {
  if (s.long_epochs >= 2) {
    const std::vector<double> rates = long_adam_run<Model>(s, fashion);
    for (std::size_t e = 0; e < rates.size(); ++e) {
      fmt::print("long run: epoch {:2} of {} ({} ranks, all_reduce, adam): {:8.0f} samples/s\n", e + 1, rates.size(),
                 memory_ranks, rates[e]);
    }
    const double ratio = rates.back() / rates[1];
    records.push_back({fmt::format("{}-rank adam run, epoch {} / epoch 2 samples/s", memory_ranks, rates.size()),
                       ratio, "ratio", {}, {},
                       fmt::format("last of {} epochs >= {:.1f}x the samples/s of the second", rates.size(),
                                   target_last_epoch_ratio),
                       ratio >= target_last_epoch_ratio});
  }
  const long peak = peak_rss_of_memory_run(s);
  const double megabytes = static_cast<double>(peak) * 1024 / 1e6;
  records.push_back({fmt::format("peak RSS, {} in-process ranks, 1 epoch", memory_ranks), megabytes, "MB", {}, {},
                     fmt::format("peak RSS of {} ranks < {:.0f} MB", memory_ranks, target_peak_megabytes),
                     megabytes < target_peak_megabytes});
  const int blas = sy::nn::blas_threads();
  records.push_back({fmt::format("BLAS threads per rank in the {}-rank run", memory_ranks), static_cast<double>(blas),
                     "threads", {}, {}, "1 BLAS thread per in-process rank", blas == 1});
}

template <class Model>
void run_benchmark(const settings& s, const sy::data::fashion_mnist& fashion) {
  const trial_figures f = run_trials<Model>(s, fashion);
  // The bound: one batch per sum of the per-GEMM medians.
  const double gemm_bound = static_cast<double>(s.batch) / print_gemms(s, f);
  std::vector<record> records = speed_records(f, gemm_bound);
  add_target_records(f, gemm_bound, records);
  add_four_rank_records<Model>(s, fashion, records);
  print_records(records);
  if (!s.json.empty()) write_json(s.json, records, s);
}

}  // namespace

int main(int argc, char** argv) {
  settings s;
  CLI::App app{"switchyard training speed: samples/s of one worker against its GEMM bound, scaling to 2 "
               "in-process ranks, peak memory of 4"};
  app.add_option("--model", s.model, "Model")->check(CLI::IsMember({"mlp", "cnn"}))->capture_default_str();
  app.add_option("--batch", s.batch, "Batch size per worker")->check(CLI::Range(1, 4096))->capture_default_str();
  app.add_option("--steps", s.steps, "Training steps (and calls of each GEMM) per trial; default 200, 20 for cnn")
      ->check(CLI::Range(1, 100000));
  app.add_option("--trials", s.trials, "Timed trials; the median is reported")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--seed", s.seed, "Seed of the models and the data order")
      ->check(example::whole_number())
      ->capture_default_str();
  app.add_option("--data", s.data_dir, "Directory of the Fashion-MNIST .gz files (default: Debian's)");
  app.add_option("--json", s.json, "Write the figures as JSON records (metric, value, unit, ...) to this file");
  app.add_flag("--memory", s.memory,
               "Only train 4 in-process ranks for 1 epoch and print the process's peak RSS (the main mode runs "
               "this in a child process)");
  app.add_flag("--no-flush-subnormals{false}", s.flush_subnormals,
               "Keep subnormal floats in every figure but the Adam step's, which measures both modes");
  app.add_option("--long-epochs", s.long_epochs,
                 "Epochs of the 4-rank Adam run on the whole training set (last epoch against the second); 0 or 1: "
                 "skip it")
      ->check(example::whole_number())
      ->capture_default_str();
  bool quick = false;
  app.add_flag("--quick", quick, "Short run: 20 steps (5 for cnn), 3 trials and a 2-epoch long run unless set explicitly");
  CLI11_PARSE(app, argc, argv);
  if (app.count("--steps") == 0) s.steps = quick ? (s.model == "cnn" ? 5 : 20) : (s.model == "cnn" ? 20 : 200);
  if (quick && app.count("--trials") == 0) s.trials = 3;
  if (quick && app.count("--long-epochs") == 0) s.long_epochs = 2;

  try {
    const int default_blas_threads = sy::nn::blas_threads();
    const sy::nn::blas_threads_scope blas{1};
    const auto fashion = s.data_dir.empty() ? sy::data::fashion_mnist::load() : sy::data::fashion_mnist::load(s.data_dir);
    if (s.memory) {
      if (s.model == "cnn") {
        run_memory<sy::nn::cnn<>>(s, fashion);
      } else {
        run_memory<sy::nn::mlp<>>(s, fashion);
      }
      return EXIT_SUCCESS;
    }
    fmt::print("training speed: {}, batch {} per worker, {} steps per trial, {} trials (median, spread = "
               "(max - min) / median)\n",
               s.model, s.batch, s.steps, s.trials);
    fmt::print("OpenBLAS: {}; {} threads by default, set to {} per rank; {} hardware threads\n", openblas_get_config(),
               default_blas_threads, sy::nn::blas_threads(), std::thread::hardware_concurrency());
    fmt::print("subnormal floats: {} (trainer_options::flush_subnormals = {})\n",
               s.flush_subnormals ? "flushed to zero" : "kept", s.flush_subnormals);
    fmt::print("load average at start: {}\n", load_average());
    example::warn_of_blas_kernels("train_bench");
    if (s.model == "cnn") {
      run_benchmark<sy::nn::cnn<>>(s, fashion);
    } else {
      run_benchmark<sy::nn::mlp<>>(s, fashion);
    }
    fmt::print("load average at end: {}\n", load_average());
  } catch (const std::exception& e) {
    fmt::print(stderr, "train_bench: {}\n", e.what());
    return EXIT_FAILURE;
  }
  return EXIT_SUCCESS;
}
