// The one training loop of switchyard: per epoch, per batch, forward and backward on this rank's
// shard, then the strategy's step; evaluation on the test set at the end of each epoch, spread
// over all ranks; callbacks, a history, progress lines on rank 0.
#pragma once

#include <switchyard/collective/allgather.hpp>
#include <switchyard/collective/allreduce.hpp>
#include <switchyard/core/partition.hpp>
#include <switchyard/core/buffer.hpp>
#include <switchyard/core/error.hpp>
#include <switchyard/core/floating_point.hpp>
#include <switchyard/core/operations.hpp>
#include <switchyard/data/batch_loader.hpp>
#include <switchyard/data/labelled_dataset.hpp>
#include <switchyard/data/shard_plan.hpp>
#include <switchyard/nn/evaluation.hpp>
#include <switchyard/nn/model.hpp>
#include <switchyard/optim/optimizer.hpp>
#include <switchyard/strategy/policy.hpp>
#include <switchyard/strategy/traits.hpp>
#include <switchyard/train/batch_source.hpp>
#include <switchyard/core/history.hpp>
#include <switchyard/train/training_state.hpp>
#include <switchyard/transport/concurrency.hpp>
#include <switchyard/transport/topology.hpp>
#include <switchyard/transport/transport.hpp>
#include <switchyard/trigger/trigger.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace switchyard::detail {

/// Fills the epoch record's time breakdown from every rank's (compute seconds, exchange seconds,
/// steps), three values per rank in rank order. Only ranks that trained a step count: a server's
/// zeros would lower the means and the least exchange time. With `groups` (one value per rank, its
/// node, when the strategy compares nodes), the compute times per step compare groups, each as
/// slow as its slowest rank.
inline void add_time_breakdown(train::epoch_record& record, std::span<const double> per_rank,
                               std::span<const double> groups = {}) {
  double compute = 0.0, exchange = 0.0, workers = 0.0;
  double slowest_compute = 0.0, least_exchange = std::numeric_limits<double>::infinity();
  std::vector<double> step_compute;
  std::vector<double> seen;  // the groups of step_compute's entries
  for (std::size_t r = 0; r + 2 < per_rank.size(); r += 3) {
    const double steps = per_rank[r + 2];
    if (steps <= 0.0) continue;
    workers += 1.0;
    compute += per_rank[r];
    exchange += per_rank[r + 1];
    slowest_compute = std::max(slowest_compute, per_rank[r]);
    least_exchange = std::min(least_exchange, per_rank[r + 1]);
    const double per_step = per_rank[r] / steps;
    if (groups.empty()) {
      step_compute.push_back(per_step);
      continue;
    }
    const double group = groups[r / 3];
    const auto at = std::find(seen.begin(), seen.end(), group);
    if (at == seen.end()) {
      seen.push_back(group);
      step_compute.push_back(per_step);
    } else {
      double& slowest = step_compute[static_cast<std::size_t>(at - seen.begin())];
      slowest = std::max(slowest, per_step);
    }
  }
  if (step_compute.empty()) return;
  record.compute_seconds = compute / workers;
  record.exchange_seconds = exchange / workers;
  record.slowest_compute_seconds = slowest_compute;
  record.least_exchange_seconds = least_exchange;
  const trigger::step_sample per_step = trigger::summarize_steps(step_compute);
  record.median_step_compute_seconds = per_step.median_seconds;
  record.slowest_step_compute_seconds = per_step.slowest_seconds;
}

/// Whether no element is NaN or infinite. Compares exponent bits without branching, so the loop
/// vectorizes: about 20 us over the reference mlp's 235,146 gradients, 3 times faster than
/// `std::all_of` with `std::isfinite`.
template <std::floating_point T>
[[nodiscard]] bool all_finite(std::span<const T> values) {
  if constexpr (sizeof(T) == 4 || sizeof(T) == 8) {
    using bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
    // The exponent field: the bits of infinity.
    constexpr bits exponent = std::bit_cast<bits>(std::numeric_limits<T>::infinity());
    bits infinite_or_nan = 0;
    for (const T v : values) infinite_or_nan |= static_cast<bits>((std::bit_cast<bits>(v) & exponent) == exponent);
    return infinite_or_nan == 0;
  } else {
    return std::all_of(values.begin(), values.end(), [](T v) { return std::isfinite(v); });
  }
}

}  // namespace switchyard::detail

namespace switchyard::train {

/// @brief Settings of a training run; the same on every rank.
struct trainer_options {
  std::size_t epochs = 10;
  std::size_t batch_size = 64;  ///< per worker: a step of W workers trains on W * batch_size examples
  std::uint64_t seed = 1;       ///< the data order (shuffled anew each epoch from it)
  std::size_t eval_batch_size = 0;  ///< 0: the training batch size (models size buffers by batch)
  std::ostream* progress = nullptr;  ///< where rank 0 prints a line per epoch; nullptr: silent
  /// Flush subnormal floats to zero on every rank while `fit` runs (forward, backward, the
  /// strategy's steps, the servers' loops, evaluation): FTZ and DAZ on x86-64, FZ on AArch64,
  /// through `flush_subnormals_scope`, so the caller's mode is back when `fit` returns or throws.
  /// Optimizer state that decays towards zero otherwise turns subnormal, and an Intel core pays
  /// about 100 cycles for every subnormal operand (docs/training.md, "Subnormal floats"). false
  /// leaves each rank thread's mode as it is. A checkpoint records the setting, and a resume under
  /// the other setting is refused (the arithmetic would differ).
  bool flush_subnormals = true;
  /// Take a checkpoint (call the `on_checkpoint` callbacks on rank 0) after every this many epochs
  /// and after the last one; 0: never. Checkpoints are taken between epochs, where every rank
  /// holds the parameters (docs/training.md, "Checkpoints and resume").
  std::size_t checkpoint_every = 0;
  /// Also scan the gradient arena for NaN and infinity after each step (the loss is always
  /// checked): a few percent of a step of the reference mlp at batch 64 (docs/training.md).
  bool check_gradients = true;
};

/// @brief Trains `Model` with `Optimizer` under `Strategy`, over any transport given to `fit`.
///
/// Every rank builds its own trainer (its own model replica, optimizer and strategy value) and
/// calls `fit` with its transport handle, in process or under MPI alike. The model and optimizer
/// are held by reference and hold the trained state afterwards.
/// @tparam Model a `nn::model`; @tparam Optimizer an `optim::optimizer` over the model's floats;
/// @tparam Strategy a `strategy::policy`, e.g. `strategy::all_reduce<>`: a `name()` and a `step`,
/// and optional members with the defaults of `strategy/traits.hpp`.
/// @code
/// switchyard::transport::run_inproc(4, [&](switchyard::transport::inproc& t) {
///   switchyard::nn::mlp model{42};
///   switchyard::optim::adam optimizer{model.parameters().size(), 1e-3};
///   switchyard::train::trainer trainer{model, optimizer, switchyard::strategy::all_reduce<>{}, options};
///   switchyard::train::history h = trainer.fit(t, data.train, *data.test);
/// });
/// @endcode
template <class Model, class Optimizer, class Strategy>
class trainer {
  static_assert(nn::model<Model>,
                "the model must provide parameters() and gradients() returning the same type, a std::span<E> "
                "or a reference to a Buffer of non-const floating-point E, forward_backward(const data::batch_view&) returning the mean loss "
                "as a double and evaluate(const data::batch_view&) returning nn::evaluation: see nn/model.hpp");
  static_assert(optim::optimizer<Optimizer>,
                "the optimizer must name its element type T as value_type and provide step(std::span<T>, "
                "std::span<const T>), export_state() returning const optim::optimizer_state<T>& and "
                "import_state(optim::optimizer_state<T>): see optim/optimizer.hpp");
  static_assert(!nn::model<Model> || !optim::optimizer<Optimizer> ||
                    requires(Model& m) {
                      requires std::same_as<nn::parameter_t<Model>, typename Optimizer::value_type>;
                    },
                "the optimizer's value_type must be the element type of the model's parameters() "
                "(an nn::mlp<double> needs an optimizer over double)");

 public:
  /// The element type of the parameters and of the optimizer's state.
  using parameter_type = typename Optimizer::value_type;

  trainer(Model& model, Optimizer& optimizer, Strategy strategy, trainer_options options = {})
      : model_(model), optimizer_(optimizer), strategy_(std::move(strategy)), options_(options) {
    if (options_.batch_size == 0) detail::raise<usage_error>("trainer: the batch size must be at least 1");
    if (options_.eval_batch_size == 0) options_.eval_batch_size = options_.batch_size;
  }

  /// Adds a callback run on each worker after each of its steps.
  void on_step(std::function<void(const step_record&)> callback) { step_callbacks_.push_back(std::move(callback)); }
  /// Adds a callback run on every rank after each epoch's evaluation, with the agreed record.
  void on_epoch(std::function<void(const epoch_record&)> callback) {
    epoch_callbacks_.push_back(std::move(callback));
  }

  /// Adds a callback run on rank 0 with the training state after every `options.checkpoint_every`
  /// epochs and after the last (`train::write_checkpoints` installs one that writes files). Every
  /// rank takes part in assembling the state, so the setting must be the same on every rank.
  void on_checkpoint(std::function<void(const training_state<parameter_type>&)> callback) {
    checkpoint_callbacks_.push_back(std::move(callback));
  }

  /// Makes the next `fit` continue from `state` (taken after its epoch `state.epoch`) instead of
  /// starting: the model, the optimizer and the history are restored, the strategy sets up its
  /// active stage, and training goes on with epoch `state.epoch + 1` of `options.epochs`. A
  /// strategy with progress of its own (a switch) must have it restored first, through
  /// `strategy()`; `train::resume` does both from a checkpoint file.
  void resume_from(training_state<parameter_type> state) { resumed_ = std::move(state); }

  /// Trains for `options.epochs` epochs on `train` and evaluates on `test` after each; collective
  /// over every rank of `t`. Returns the epoch records (the same on every rank).
  /// @tparam TrainData, TestData `data::labelled_dataset`s: `data::dataset` or a type of one's
  /// own (`size()`, `rows()`, `cols()`, `image(i)`, `label(i)`). Training batches are gathered
  /// into a `data::basic_batch_loader<TrainData>`; the test set is read in place through its
  /// `slice(first, count)` when it has one (`data::sliced_dataset`), else gathered likewise.
  template <class Transport, class TrainData, class TestData>
  history fit(Transport& t, std::shared_ptr<TrainData> train, const TestData& test);

  [[nodiscard]] const Strategy& strategy() const noexcept { return strategy_; }
  /// The strategy value, to restore its progress before `fit` (see `resume_from`).
  [[nodiscard]] Strategy& strategy() noexcept { return strategy_; }
  [[nodiscard]] const trainer_options& options() const noexcept { return options_; }

 private:
  // What this rank's steps of one epoch add up to.
  struct epoch_totals {
    double loss_sum = 0.0;
    std::uint64_t bytes = 0;
    std::size_t steps = 0;
    double compute_seconds = 0.0;   // this rank's forward and backward passes
    double exchange_seconds = 0.0;  // this rank's strategy steps
    std::string stage;  // the stages of the epoch's parts, joined by '>'
  };

  template <transport::transport Transport, class Loader>
  epoch_totals train_epoch(Transport& t, Loader& loader, std::size_t epoch);
  // Trains one part of an epoch (all of it, or what is left after a switch inside it) from its
  // batch `from` on; returns the batches of the plan the part trained, or empty when the stage
  // trained all that was left.
  template <transport::transport Transport, class Loader>
  std::optional<std::size_t> train_part(Transport& t, Loader& loader, const data::shard_plan& plan,
                                        std::size_t from, std::size_t epoch, epoch_totals& totals);
  // The record every rank agrees on: one sum and one max over all ranks, and an all-gather of each
  // rank's compute and exchange seconds and steps for the time breakdown.
  template <transport::transport Transport>
  epoch_record agree(Transport& t, std::size_t epoch, const epoch_totals& totals, const nn::evaluation& tested,
                     double train_seconds, double wall_seconds);
  template <transport::transport Transport, class TestData>
  nn::evaluation evaluate(Transport& t, const TestData& test);
  void print(const epoch_record& e) const;
  // Restores a resumed state into the model, the optimizer and `result`; returns the first epoch.
  std::size_t restore(history& result, std::size_t train_examples);
  template <transport::transport Transport>
  void take_checkpoint(Transport& t, const history& result, std::size_t epoch, std::size_t train_examples);
  void check_step(double loss, std::size_t epoch, std::size_t step, int rank) const;

  Model& model_;
  Optimizer& optimizer_;
  Strategy strategy_;
  trainer_options options_;
  std::vector<std::function<void(const step_record&)>> step_callbacks_;
  std::vector<std::function<void(const epoch_record&)>> epoch_callbacks_;
  std::vector<std::function<void(const training_state<parameter_type>&)>> checkpoint_callbacks_;
  std::optional<training_state<parameter_type>> resumed_;
  std::vector<double> per_rank_;  // agree()'s buffer: every rank's compute and exchange seconds and steps
  std::vector<double> node_of_;   // agree()'s buffer: every rank's node, when the strategy compares nodes
};

// ---------------------------------------------------------------------------------------------
// Implementation
// ---------------------------------------------------------------------------------------------

template <class Model, class Optimizer, class Strategy>
template <class Transport, class TrainData, class TestData>
history trainer<Model, Optimizer, Strategy>::fit(Transport& t, std::shared_ptr<TrainData> train,
                                                 const TestData& test) {
  static_assert(transport::transport<Transport>,
                "the transport must be a copyable, non-const handle with rank(), size(), send, recv, isend, irecv, "
                "recv_any, barrier() and split(color, key): see transport/transport.hpp");
  static_assert(requires(const Strategy& s) {
    { s.name() } -> std::convertible_to<std::string_view>;
  }, "the strategy must provide name() const, returning its name as something convertible to std::string_view: "
     "see strategy/policy.hpp");
  static_assert(requires(Strategy& s, Transport& tr, Model& m, Optimizer& o) { s.step(tr, m, o); },
                "the strategy must provide step(t, m, o) for this transport, model and optimizer: see "
                "strategy/policy.hpp");
  static_assert(strategy::policy<Strategy, Model, Optimizer, Transport>,
                "the strategy's step(t, m, o) must return strategy::step_outcome or void: see strategy/policy.hpp");
  using train_data = std::remove_const_t<TrainData>;
  static_assert(data::check_labelled_dataset<train_data>() && data::check_labelled_dataset<TestData>());
  if (!train) detail::raise<usage_error>(detail::str("trainer on rank ", t.rank(), ": no training data set"));
  const flush_subnormals_scope flush(options_.flush_subnormals);
  history result;
  // A resumed run's clock goes on from the checkpoint's, so records and time triggers continue.
  const double earlier_seconds = resumed_ ? resumed_->wall_seconds : 0.0;
  const std::size_t first_epoch = restore(result, static_cast<std::size_t>(train->size()));
  strategy::traits::setup(strategy_, t, model_, optimizer_);
  data::basic_batch_loader<train_data> loader(std::shared_ptr<const train_data>(std::move(train)),
                                             options_.batch_size);
  // Times are read from the transport's clock (transport/concurrency.hpp): simulated seconds on a
  // simulated transport, the steady clock elsewhere.
  const double started = transport::seconds_now(t) - earlier_seconds;
  for (std::size_t epoch = first_epoch; epoch <= options_.epochs; ++epoch) {
    const double epoch_started = transport::seconds_now(t);
    const epoch_totals totals = train_epoch(t, loader, epoch);
    const double train_seconds = transport::seconds_now(t) - epoch_started;
    const nn::evaluation tested = evaluate(t, test);
    const epoch_record record = agree(t, epoch, totals, tested, train_seconds, transport::seconds_now(t) - started);
    result.epochs.push_back(record);
    for (auto& callback : epoch_callbacks_) callback(record);
    if (t.rank() == 0) print(record);
    strategy::traits::after_epoch(strategy_, t, model_, optimizer_, record);
    // After the switch decision, so that a checkpoint holds the stage the next epoch trains in.
    if (options_.checkpoint_every > 0 && (epoch % options_.checkpoint_every == 0 || epoch == options_.epochs)) {
      take_checkpoint(t, result, epoch, static_cast<std::size_t>(loader.data().size()));
    }
  }
  strategy::traits::finish(strategy_, t, model_, optimizer_);
  return result;
}

template <class Model, class Optimizer, class Strategy>
template <transport::transport Transport, class Loader>
auto trainer<Model, Optimizer, Strategy>::train_epoch(Transport& t, Loader& loader, std::size_t epoch)
    -> epoch_totals {
  // The epoch's batches in order, as one sequence, shuffled from the seed and the epoch.
  const data::shard_plan plan(static_cast<std::size_t>(loader.data().size()), 1, options_.batch_size, options_.seed, epoch);
  epoch_totals totals;
  // A switch inside the epoch leaves the rest of the sequence to the next stage, which trains it
  // as the next part of the epoch.
  std::size_t from = 0;
  do {
    const std::optional<std::size_t> trained = train_part(t, loader, plan, from, epoch, totals);
    if (!trained) break;
    from += *trained;
  } while (from < plan.steps());
  return totals;
}

template <class Model, class Optimizer, class Strategy>
template <transport::transport Transport, class Loader>
std::optional<std::size_t> trainer<Model, Optimizer, Strategy>::train_part(Transport& t, Loader& loader,
                                                                          const data::shard_plan& plan,
                                                                          std::size_t from, std::size_t epoch,
                                                                          epoch_totals& totals) {
  // Asked for each part: a strategy that switches changes its workers and its name.
  const std::size_t workers = strategy::traits::worker_count(strategy_, t);
  const std::optional<std::size_t> worker = strategy::traits::worker_index(strategy_, t);
  const std::string stage = strategy::traits::name(strategy_);
  if (!totals.stage.empty()) totals.stage += '>';
  totals.stage += stage;
  const auto examples = static_cast<std::size_t>(loader.data().size());
  if (workers * options_.batch_size > examples) {
    detail::raise<usage_error>(detail::str("trainer on rank ", t.rank(), ": ", workers, " workers x batch ",
                                           options_.batch_size, " need more than the ", examples,
                                           " training examples"));
  }
  const batch_source source(plan.steps() - from, workers, worker, strategy::traits::hands_out_batches(strategy_));
  strategy::traits::begin_epoch(strategy_, t, source.batches());
  if (worker) {
    std::optional<std::size_t> next = source.first();
    for (std::size_t s = 0; next; ++s) {
      const std::size_t index = from + *next;
      const data::batch_view batch = loader.gather(plan.batch(0, index));
      const double before = transport::seconds_now(t);
      const double loss = strategy::traits::forward_backward(strategy_, t, model_, batch);
      const double computed = transport::seconds_now(t);
      const strategy::step_outcome outcome = strategy::traits::step(strategy_, t, model_, optimizer_);
      const double stepped = transport::seconds_now(t);
      next = source.next(s, outcome);
      check_step(loss, epoch, totals.steps, t.rank());
      const double compute_seconds = computed - before;
      const double exchange_seconds = stepped - computed;
      totals.loss_sum += loss;
      totals.bytes += outcome.bytes_sent;
      totals.compute_seconds += compute_seconds;
      totals.exchange_seconds += exchange_seconds;
      ++totals.steps;
      if (!step_callbacks_.empty()) {
        const step_record record{epoch,           totals.steps - 1,   t.rank(), loss, compute_seconds,
                                 exchange_seconds, outcome.bytes_sent, stage, index};
        for (auto& callback : step_callbacks_) callback(record);
      }
    }
  } else {
    strategy::traits::serve(strategy_, t, model_, optimizer_);
  }
  strategy::traits::end_epoch(strategy_, t, model_, optimizer_);
  return strategy::traits::resume_at(strategy_);
}

template <class Model, class Optimizer, class Strategy>
template <transport::transport Transport>
epoch_record trainer<Model, Optimizer, Strategy>::agree(Transport& t, std::size_t epoch, const epoch_totals& totals,
                                                        const nn::evaluation& tested, double train_seconds,
                                                        double wall_seconds) {
  std::array<double, 6> sums{totals.loss_sum, static_cast<double>(totals.steps), static_cast<double>(totals.bytes),
                             tested.loss_sum, static_cast<double>(tested.correct), static_cast<double>(tested.count)};
  collective::allreduce(t, sums, ops::sum{});
  std::array<double, 2> slowest{train_seconds, wall_seconds};
  collective::allreduce(t, slowest, ops::max{});
  // Every rank's compute seconds, exchange seconds and steps, for the time breakdown.
  const std::array<double, 3> mine{totals.compute_seconds, totals.exchange_seconds, static_cast<double>(totals.steps)};
  per_rank_.assign(3 * static_cast<std::size_t>(t.size()), 0.0);
  collective::allgather(t, mine, per_rank_);
  // A strategy that compares nodes: each rank's node, so that a slow node counts once.
  const bool by_node = strategy::traits::compares_nodes(strategy_);
  if (by_node) {
    const std::array<double, 1> node{static_cast<double>(transport::topology_of(t).node)};
    node_of_.assign(static_cast<std::size_t>(t.size()), 0.0);
    collective::allgather(t, node, node_of_);
  }
  epoch_record record;
  record.epoch = epoch;
  record.stage = totals.stage;
  record.train_loss = sums[1] > 0 ? sums[0] / sums[1] : 0.0;
  record.test_loss = sums[5] > 0 ? sums[3] / sums[5] : 0.0;
  record.test_accuracy = sums[5] > 0 ? sums[4] / sums[5] : 0.0;
  record.train_seconds = slowest[0];
  record.wall_seconds = slowest[1];
  record.steps = static_cast<std::size_t>(sums[1]);
  record.samples = record.steps * options_.batch_size;
  record.samples_per_second = slowest[0] > 0 ? static_cast<double>(record.samples) / slowest[0] : 0.0;
  record.bytes_sent = static_cast<std::uint64_t>(sums[2]);
  detail::add_time_breakdown(record, per_rank_, by_node ? std::span<const double>(node_of_) : std::span<const double>());
  return record;
}

template <class Model, class Optimizer, class Strategy>
std::size_t trainer<Model, Optimizer, Strategy>::restore(history& result, std::size_t train_examples) {
  if (!resumed_) return 1;
  training_state<parameter_type> state = std::move(*resumed_);
  resumed_.reset();
  const std::span<parameter_type> parameters = as_span(model_.parameters());
  if (state.parameters.size() != parameters.size() || state.optimizer.size != parameters.size()) {
    detail::raise<usage_error>(detail::str("trainer: the state to resume from has ", state.parameters.size(),
                                           " parameters and an optimizer state of ", state.optimizer.size,
                                           ", the model has ", parameters.size()));
  }
  if (state.seed != options_.seed) {
    detail::raise<usage_error>(detail::str("trainer: the state to resume from was trained with data seed ",
                                           state.seed, ", this run has seed ", options_.seed));
  }
  // The data order of every epoch follows from the seed, the training set's size and the batch size.
  if (state.train_examples != 0 && state.train_examples != train_examples) {
    detail::raise<usage_error>(detail::str("trainer: the state to resume from was trained on ", state.train_examples,
                                           " training examples, this run has ", train_examples,
                                           "; resume with the same training set"));
  }
  if (state.batch_size != 0 && state.batch_size != options_.batch_size) {
    detail::raise<usage_error>(detail::str("trainer: the state to resume from was trained with batches of ",
                                           state.batch_size, " per worker, this run has batches of ",
                                           options_.batch_size, " (trainer_options::batch_size)"));
  }
  if (state.flush_subnormals != options_.flush_subnormals) {
    detail::raise<usage_error>(detail::str("trainer: the state to resume from was trained ",
                                           detail::subnormal_mode(state.flush_subnormals), ", this run is set to ",
                                           detail::subnormal_mode(options_.flush_subnormals),
                                           " (trainer_options::flush_subnormals); resume with the same setting"));
  }
  std::copy(state.parameters.begin(), state.parameters.end(), parameters.begin());
  optimizer_.import_state(std::move(state.optimizer));
  if constexpr (requires { optimizer_.import_adjustments(state.adjustments); }) {
    optimizer_.import_adjustments(state.adjustments);
  }
  result = std::move(state.epochs);
  return static_cast<std::size_t>(state.epoch) + 1;
}

template <class Model, class Optimizer, class Strategy>
template <transport::transport Transport>
void trainer<Model, Optimizer, Strategy>::take_checkpoint(Transport& t, const history& result, std::size_t epoch,
                                                          std::size_t train_examples) {
  // Collective: a parameter server's servers hold the optimizer state in shards, and its workers
  // their error-feedback residuals, which the strategy's progress saves on rank 0.
  strategy::traits::prepare_checkpoint(strategy_, t);
  training_state<parameter_type> state;
  state.optimizer = strategy::traits::assembled_state(strategy_, t, optimizer_);
  if (t.rank() != 0) return;
  const std::span<parameter_type> parameters = as_span(model_.parameters());
  // Finite losses and gradients can still step into infinity: never save such a state.
  if (!detail::all_finite(std::span<const parameter_type>(parameters))) {
    detail::raise<divergence_error>(detail::str("trainer on rank 0: the parameters are not finite after epoch ",
                                                epoch, "; no checkpoint is taken"));
  }
  state.epoch = epoch;
  state.seed = options_.seed;
  state.flush_subnormals = options_.flush_subnormals;
  state.train_examples = train_examples;
  state.batch_size = options_.batch_size;
  state.wall_seconds = result.last().wall_seconds;
  state.parameters.assign(parameters.begin(), parameters.end());
  if constexpr (requires { optimizer_.export_adjustments(); }) state.adjustments = optimizer_.export_adjustments();
  state.epochs = result;
  for (auto& callback : checkpoint_callbacks_) callback(state);
}

template <class Model, class Optimizer, class Strategy>
void trainer<Model, Optimizer, Strategy>::check_step(double loss, std::size_t epoch, std::size_t step,
                                                     int rank) const {
  const char* what = nullptr;
  if (std::isnan(loss)) {
    what = "the loss is NaN";
  } else if (std::isinf(loss)) {
    what = "the loss is infinite";
  } else if (options_.check_gradients) {
    if (!detail::all_finite(std::span<const parameter_type>(as_span(model_.gradients())))) {
      what = "a gradient element is NaN or infinite";
    }
  }
  if (what != nullptr) {
    detail::raise<divergence_error>(detail::str("trainer on rank ", rank, ": training diverged at epoch ", epoch,
                                                ", step ", step, " (0-based, this worker's): ", what));
  }
}

template <class Model, class Optimizer, class Strategy>
template <transport::transport Transport, class TestData>
nn::evaluation trainer<Model, Optimizer, Strategy>::evaluate(Transport& t, const TestData& test) {
  // Replicas agree at the end of an epoch, so each rank evaluates its own block of the test set.
  const block mine = block_of(static_cast<std::size_t>(test.size()), static_cast<std::size_t>(t.size()),
                              static_cast<std::size_t>(t.rank()));
  const std::size_t end = mine.offset + mine.size;
  nn::evaluation total;
  if constexpr (data::sliced_dataset<TestData>) {
    for (std::size_t first = mine.offset; first < end; first += options_.eval_batch_size) {
      total += model_.evaluate(test.slice(first, std::min(options_.eval_batch_size, end - first)));
    }
  } else {
    // Gathered batch by batch into one buffer; the loader borrows `test` (no owner to share).
    data::basic_batch_loader<TestData> loader(std::shared_ptr<const TestData>(std::shared_ptr<const TestData>(), &test),
                                              options_.eval_batch_size);
    std::vector<std::size_t> indices;
    indices.reserve(options_.eval_batch_size);
    for (std::size_t first = mine.offset; first < end; first += options_.eval_batch_size) {
      indices.clear();
      for (std::size_t i = first; i < std::min(first + options_.eval_batch_size, end); ++i) indices.push_back(i);
      total += model_.evaluate(loader.gather(indices));
    }
  }
  return total;
}

template <class Model, class Optimizer, class Strategy>
void trainer<Model, Optimizer, Strategy>::print(const epoch_record& e) const {
  if (options_.progress == nullptr) return;
  char line[256];
  std::snprintf(line, sizeof line,
                "epoch %3zu/%zu  %-12s train loss %.4f  test loss %.4f  test accuracy %6.2f%%  %8.0f samples/s  "
                "%7.1f s\n",
                e.epoch, options_.epochs, e.stage.c_str(), e.train_loss, e.test_loss, 100.0 * e.test_accuracy,
                e.samples_per_second, e.wall_seconds);
  *options_.progress << line << std::flush;
}

}  // namespace switchyard::train
