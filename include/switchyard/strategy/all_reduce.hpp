// Synchronous data parallelism: every rank trains a replica on its own shard, the gradient arena
// is averaged by all-reduce every step (whole, or in buckets that may overlap the backward pass),
// and every rank applies the same update.
#pragma once

#include <switchyard/collective/algorithm.hpp>
#include <switchyard/collective/allreduce.hpp>
#include <switchyard/collective/compressed.hpp>
#include <switchyard/collective/stage.hpp>
#include <switchyard/core/compression.hpp>
#include <switchyard/core/buffer.hpp>
#include <switchyard/core/error.hpp>
#include <switchyard/core/floating_point.hpp>
#include <switchyard/core/operations.hpp>
#include <switchyard/strategy/policy.hpp>
#include <switchyard/transport/concurrency.hpp>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace switchyard::strategy {

/// @brief How an `all_reduce` stage exchanges a step's gradients.
enum class exchange {
  /// One all-reduce of the whole gradient arena after the backward pass (the default).
  whole,
  /// The buckets of `overlapped`, reduced one after the other after the pass on the rank's own
  /// thread: the same bits as `overlapped`, without the overlap, to measure it against.
  buckets,
  /// Each bucket reduced on a communication thread as soon as the backward pass has finished it,
  /// while the pass computes the layers before it (what PyTorch DDP and Horovod do).
  overlapped,
};

/// @brief The options of an `all_reduce` stage.
struct all_reduce_options {
  /// The gradients' encoding on the wire (collective/compressed.hpp): `none` sends floats; `fp16`
  /// and `bf16` send half the bytes, each partial sum rounded to the format. Replicas stay
  /// bitwise identical either way. Each stage of a switch has its own.
  compression::format compression = compression::format::none;
  /// Whole arena, buckets after the pass, or buckets overlapped with it. Buckets need a model with
  /// gradient hooks (nn/model.hpp, `gradient_hooks`: `nn::sequential`, `nn::mlp`, `nn::cnn`); a
  /// model without them reports its whole arena at the end of its pass, which is `whole`.
  strategy::exchange exchange = strategy::exchange::whole;
  /// A bucket closes once it holds at least this many bytes of gradients (in the model's element
  /// type) or when the next range the model reports does not end where the bucket begins (ranges
  /// join downwards, as a backward pass finishes them). 0 (the default): every
  /// range the model reports is a bucket of its own, one per layer with parameters for
  /// `nn::sequential`.
  std::size_t bucket_bytes = 0;
};

namespace detail {

/// What a model with gradient hooks is asked to call: any callable of (first, count) will do.
struct ready_callback {
  void operator()(std::size_t, std::size_t) const noexcept {}
};

/// @brief The activity an overlapped all-reduce reduces its buckets on (a thread, or what the
/// transport runs concurrent activities of a rank on: transport/concurrency.hpp), one at a time,
/// in the order the rank submits them, with the rank's floating-point mode (flushing of
/// subnormals, rounding). `wait` returns once every submitted bucket is reduced and rethrows the
/// first failure. A copy starts without an activity: each copy of a strategy gets its own.
class bucket_thread {
 public:
  using reduce_fn = std::function<void(std::size_t, std::size_t)>;

  bucket_thread() = default;
  bucket_thread(const bucket_thread&) noexcept {}
  bucket_thread& operator=(const bucket_thread&) noexcept { return *this; }
  bucket_thread(bucket_thread&&) noexcept = default;

  /// Starts a step: later buckets go to `reduce`, run with the calling activity's floating-point
  /// mode and collective stage label, on an activity `t` spawned (the first time, or when `t` is
  /// of another type than the last).
  template <class Transport>
  void begin(Transport& t, reduce_fn reduce) {
    if (!worker_ || worker_->transport_type() != &transport_type_key<Transport>) {
      worker_.reset();
      worker_ = std::make_unique<worker<Transport>>(t);
    }
    worker_->begin(std::move(reduce), switchyard::detail::read_fp_control(), collective::current_stage());
  }
  void submit(std::size_t first, std::size_t count) { worker_->submit(first, count); }
  /// After a failed pass: waits for every bucket it submitted, so that nothing touches the
  /// transport or the gradients any more. Dropping those not started would leave the ranks apart:
  /// whether a peer's thread had started one is a matter of timing. Failures of the thread are
  /// dropped: the pass's own is the one to report.
  void abandon() noexcept {
    if (worker_) static_cast<void>(worker_->drain());
  }
  /// Blocks until every bucket submitted since `begin` is reduced; rethrows the first failure.
  void wait() {
    if (std::exception_ptr failure = worker_->drain()) std::rethrow_exception(failure);
  }

 private:
  template <class Transport>
  static constexpr char transport_type_key = 0;

  struct worker_base {
    virtual ~worker_base() = default;
    [[nodiscard]] virtual const void* transport_type() const noexcept = 0;
    virtual void begin(reduce_fn reduce, switchyard::detail::fp_control mode, std::string_view stage) = 0;
    virtual void submit(std::size_t first, std::size_t count) = 0;
    /// Waits until every submitted bucket is reduced, empties the queue and returns (and
    /// forgets) the first failure.
    virtual std::exception_ptr drain() = 0;
  };

  /// The queue and its activity, with the mutex and condition variables of `Transport`.
  template <class Transport>
  struct worker final : worker_base {
    using mutex = transport::mutex_of<Transport>;

    explicit worker(Transport& t) { thread = transport::spawn(t, [this] { run(); }); }
    worker(const worker&) = delete;
    worker& operator=(const worker&) = delete;
    ~worker() override {
      {
        const std::lock_guard lock(guard);
        stop = true;  // nothing is pending: every pass ends in `wait` or `abandon`
      }
      wake.notify_one();
      thread.join();
    }

    [[nodiscard]] const void* transport_type() const noexcept override { return &transport_type_key<Transport>; }

    void begin(reduce_fn next_reduce, switchyard::detail::fp_control next_mode, std::string_view next_stage) override {
      std::unique_lock lock(guard);
      static_cast<void>(drain(lock));  // a pass whose step never came: its buckets finish, forgotten
      reduce = std::move(next_reduce);
      mode = next_mode;
      stage.assign(next_stage);  // keeps its capacity: no allocation per step
    }
    void submit(std::size_t first, std::size_t count) override {
      {
        const std::lock_guard lock(guard);
        queue.emplace_back(first, count);
      }
      wake.notify_one();
    }
    std::exception_ptr drain() override {
      std::unique_lock lock(guard);
      return drain(lock);
    }
    std::exception_ptr drain(std::unique_lock<mutex>& lock) {
      idle.wait(lock, [&] { return next == queue.size() && !busy; });
      queue.clear();
      next = 0;
      return std::exchange(failure, nullptr);
    }

    void run() {
      std::unique_lock lock(guard);
      for (;;) {
        wake.wait(lock, [&] { return stop || next < queue.size(); });
        if (stop) return;
        const auto [first, count] = queue[next++];
        busy = true;
        const bool failed = failure != nullptr;  // after a failure the step is lost: skip the rest
        lock.unlock();
        if (!failed) {
          try {
            switchyard::detail::write_fp_control(mode);
            const collective::stage_scope label{stage};
            reduce(first, count);
          } catch (...) {
            const std::lock_guard relock(guard);
            failure = std::current_exception();
          }
        }
        lock.lock();
        busy = false;
        if (next == queue.size()) idle.notify_all();
      }
    }

    mutex guard;
    transport::condition_variable_of<Transport> wake;  // a bucket or the stop
    transport::condition_variable_of<Transport> idle;  // every bucket reduced
    reduce_fn reduce;
    switchyard::detail::fp_control mode{};
    std::string stage;
    std::vector<std::pair<std::size_t, std::size_t>> queue;  // this step's buckets, kept for their capacity
    std::size_t next = 0;                                     // the first not started
    bool busy = false;
    bool stop = false;
    std::exception_ptr failure;
    transport::activity thread;  // last: started once the state it uses is there
  };

  std::unique_ptr<worker_base> worker_;
};

}  // namespace detail

/// @brief All-reduce strategy (what Horovod, PyTorch DDP and MultiWorkerMirroredStrategy do).
///
/// Every rank is a worker. Setup is the default one: rank 0's parameters and whole optimizer state
/// reach every rank (`replicate_training_state`), and each update trains one batch per rank, which
/// the optimizer's schedule counts. Each step averages the gradient arena, in one all-reduce
/// after the backward pass or in buckets after it or overlapped with it (`all_reduce_options::
/// exchange`), and applies the optimizer locally. The all-reduce gives
/// every rank the same bits and the optimizers are deterministic, so replicas stay bitwise
/// identical for the whole run, also when the stage starts after a switch from a stage that left
/// the ranks with different optimizer states.
/// @tparam Algorithm the all-reduce algorithm; default `algorithm::automatic`.
/// @code
/// switchyard::train::trainer trainer{model, optimizer, switchyard::strategy::all_reduce<>{}};
/// // bf16 gradients on the wire:
/// switchyard::strategy::all_reduce<> compressed{{.compression = switchyard::compression::format::bf16}};
/// // each layer's gradients reduced while the backward pass computes the layers before it:
/// switchyard::strategy::all_reduce<> overlapped{{.exchange = switchyard::strategy::exchange::overlapped}};
/// @endcode
template <class Algorithm = algorithm::automatic>
class all_reduce {
 public:
  all_reduce() = default;
  explicit all_reduce(all_reduce_options options) : options_(options) {}

  [[nodiscard]] const all_reduce_options& options() const noexcept { return options_; }
  [[nodiscard]] std::string_view name() const noexcept { return "allreduce"; }
  /// Every rank holds the whole model and optimizer state, identical on every rank, so `setup`
  /// (the default: `replicate_training_state`) is all a hand-over needs.
  [[nodiscard]] static constexpr bool replicated() noexcept { return true; }

  /// The backward pass, with buckets closed as the model finishes them (and, overlapped, reduced
  /// while it goes on); `whole`, one rank or a model without gradient hooks: the model's pass.
  template <class Transport, class Model, class Batch>
  double forward_backward(Transport& t, Model& model, const Batch& batch) {
    check_element(model);
    buckets_.clear();
    bucketed_ = false;
    constexpr bool hooks = requires(detail::ready_callback ready) { model.forward_backward(batch, ready); };
    if constexpr (hooks) {
      if (options_.exchange != exchange::whole && t.size() > 1) return bucketed_pass(t, model, batch);
    }
    return model.forward_backward(batch);
  }

  /// Averages the gradients of the pass just made and applies the optimizer. After a pass made
  /// through this strategy's `forward_backward`, the buckets it closed; after any other (the
  /// model's own `forward_backward`), the whole arena.
  template <class Transport, class Model, class Optimizer>
  step_outcome step(Transport& t, Model& model, Optimizer& optimizer) {
    check_element(model);
    const auto gradients = as_span(model.gradients());
    using element = std::remove_cvref_t<decltype(gradients[0])>;
    const bool compressed = options_.compression != compression::format::none;
    const bool bucketed = std::exchange(bucketed_, false);
    if (!bucketed) {
      buckets_.clear();
      reduce(t, gradients);
    } else if (options_.exchange == exchange::overlapped) {
      thread_.wait();
    } else {
      for (const auto& [first, count] : buckets_) reduce(t, gradients.subspan(first, count));
    }
    optimizer.step(as_span(model.parameters()), gradients);
    const std::size_t element_bytes = compressed ? sizeof(std::uint16_t) : sizeof(element);
    return {t.size() > 1 ? gradients.size() * element_bytes : 0, std::nullopt};
  }

  /// The buckets of the last step, in the order they were reduced: (first, count) in the arena;
  /// empty when it reduced the whole arena at once.
  [[nodiscard]] const std::vector<std::pair<std::size_t, std::size_t>>& last_buckets() const noexcept {
    return buckets_;
  }

 private:
  /// Compression encodes floats: a model of other gradients is refused before anything moves.
  template <class Model>
  void check_element(Model& model) const {
    using element = std::remove_cvref_t<decltype(as_span(model.gradients())[0])>;
    if constexpr (!std::is_same_v<element, float>) {
      if (options_.compression != compression::format::none) {
        throw usage_error(switchyard::detail::str("all_reduce: ", compression::name(options_.compression),
                                                  " compression encodes float gradients; this model's are ",
                                                  sizeof(element) * 8, "-bit"));
      }
    }
  }

  /// Averages `part` of the gradients over the ranks, encoded on the wire if the options say so.
  template <class Transport, class Element>
  void reduce(Transport& t, std::span<Element> part) {
    if constexpr (std::is_same_v<Element, float>) {
      collective::compressed_allreduce(options_.compression, t, part, words_, ops::average{}, Algorithm{});
    } else {
      collective::allreduce(t, part, ops::average{}, Algorithm{});
    }
  }

  template <class Transport, class Model, class Batch>
  double bucketed_pass(Transport& t, Model& model, const Batch& batch) {
    const auto gradients = as_span(model.gradients());
    using element = std::remove_cvref_t<decltype(gradients[0])>;
    const bool overlapped = options_.exchange == exchange::overlapped;
    if (overlapped) {
      if constexpr (requires { t.serves_other_threads(); }) {
        if (!t.serves_other_threads()) {
          switchyard::detail::raise<usage_error>(
              "all_reduce: the overlapped exchange calls the transport from a communication thread, and this "
              "transport does not allow calls from other threads (under MPI, initialize the environment with "
              "boost::mpi::threading::serialized or above)");
        }
      }
      // The arena is found through a member, so the function is small enough for std::function to
      // keep without allocating: a step allocates nothing.
      bucket_arena_ = gradients.data();
      thread_.begin(t, [this, &t](std::size_t first, std::size_t count) {
        reduce(t, std::span<element>(static_cast<element*>(bucket_arena_) + first, count));
      });
    }
    const std::size_t limit = options_.bucket_bytes / sizeof(element);
    std::size_t low = 0;
    std::size_t high = 0;      // the open bucket: [low, high)
    std::size_t reported = 0;  // values the model has reported ready
    const auto close = [&] {
      if (high == low) return;
      buckets_.emplace_back(low, high - low);
      if (overlapped) thread_.submit(low, high - low);
      low = high = 0;
    };
    const auto ready = [&](std::size_t first, std::size_t count) {
      if (first > gradients.size() || count > gradients.size() - first) {
        switchyard::detail::raise<usage_error>(switchyard::detail::str(
            "all_reduce: the model reported gradients [", first, ", ", first + count, ") ready, beyond its arena of ",
            gradients.size()));
      }
      if (count == 0) return;
      reported += count;
      if (high != low && first + count != low) close();  // it does not end where the bucket begins
      if (high == low) high = first + count;
      low = first;
      if (high - low >= limit) close();
    };
    double loss = 0;
    try {
      loss = model.forward_backward(batch, ready);
      if (reported != gradients.size()) {
        switchyard::detail::raise<usage_error>(switchyard::detail::str(
            "all_reduce: the model reported ", reported, " gradients ready in its pass, its arena has ",
            gradients.size(), " (the ranges must cover the arena once)"));
      }
    } catch (...) {
      // Nothing may touch the transport or the gradients once the exception leaves: the buckets
      // already submitted are reduced first, as every rank that submitted them does.
      if (overlapped) thread_.abandon();
      buckets_.clear();
      throw;
    }
    close();
    bucketed_ = true;
    return loss;
  }

  all_reduce_options options_;
  std::vector<std::uint16_t> words_;  // the encoded gradients, kept from step to step
  std::vector<std::pair<std::size_t, std::size_t>> buckets_;  // this step's buckets
  bool bucketed_ = false;                                      // the last pass closed buckets_
  void* bucket_arena_ = nullptr;                               // the gradients the thread reduces
  detail::bucket_thread thread_;
};

}  // namespace switchyard::strategy
