// Fault injection: a transport decorator that delays messages, slows one rank down, or kills one
// rank after a set number of messages, so that every recovery path can be tested deterministically.
#pragma once

#include <switchyard/core/error.hpp>
#include <switchyard/transport/topology.hpp>
#include <switchyard/transport/concurrency.hpp>
#include <switchyard/transport/transport.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <utility>

namespace switchyard::transport {

/// @brief What `faulty<T>` does to each rank's messages. Every field defaults to "no fault", so a
/// default plan forwards everything unchanged.
///
/// Ranks are ranks of the group the decorator was first built over; handles made by `split`
/// apply the plan to the same ranks. A *message* is one call of `send`, `recv`, `isend`, `irecv`
/// or `recv_any` on that rank (a non-blocking one counts, and is delayed, when it is posted).
/// @code
/// using namespace std::chrono_literals;
/// switchyard::transport::fault_plan plan{.delay = 200us, .slow_rank = 1, .slow_delay = 2ms,
///                                        .fail_rank = 2, .fail_after = 100};
/// @endcode
struct fault_plan {
  /// Slept before every message of every rank.
  std::chrono::microseconds delay{0};
  /// The straggler: this rank sleeps `slow_delay` more before each of its messages.
  std::optional<int> slow_rank{};
  std::chrono::microseconds slow_delay{0};
  /// This rank passes its first `fail_after` messages; after that it is dead: its next message,
  /// `barrier` or `split` throws `transport_error` naming the rank and `fail_after`, and so does
  /// every later one.
  std::optional<int> fail_rank{};
  std::size_t fail_after = 0;
};

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

/// @brief A transport that forwards to `Inner` after applying a `fault_plan`: delays, a slow rank,
/// a rank that fails after K messages. It satisfies `transport::transport` itself.
///
/// It hides the inner transport's native collectives on purpose: the collectives then run
/// switchyard's ring, recursive-doubling and broadcast algorithms over its point-to-point messages,
/// so every delay and failure reaches them (`algorithm::native` over it does not compile). The
/// faults depend only on each rank's sequence of calls, never on timing, so a failure happens at
/// the same point of the program on every run.
///
/// Copies and the results of `split` share one message count per rank. A handle is used by one
/// thread at a time, as any transport.
/// @tparam Inner the transport to wrap, held by value (`transport::inproc`, `transport::mpi`, ...).
/// @code
/// switchyard::transport::run_inproc(4, [](switchyard::transport::inproc& t) {
///   switchyard::transport::faulty f(t, {.fail_rank = 2, .fail_after = 10});
///   std::vector<float> grad(1000, 1.0f);
///   for (;;) switchyard::collective::allreduce(f, grad);   // rank 2 throws at its 11th message
/// });                                                       // run_inproc rethrows it
/// @endcode
template <transport Inner>
class faulty {
 public:
  /// Wraps `inner`; throws `usage_error` if the plan names a rank outside the group or a negative
  /// delay.
  explicit faulty(Inner inner, fault_plan plan = {});

  [[nodiscard]] int rank() const { return inner_.rank(); }
  [[nodiscard]] int size() const { return inner_.size(); }
  /// Whether the inner transport's ranks take turns on one thread (`transport::simulated`).
  static constexpr bool ranks_share_a_thread = transport::ranks_share_a_thread<Inner>;
  /// The inner transport's answer, where it has one (`transport::mpi`, `transport::simulated`).
  [[nodiscard]] bool serves_other_threads() const
    requires requires(const Inner& i) { i.serves_other_threads(); }
  {
    return inner_.serves_other_threads();
  }
  /// The inner transport's concurrency and clock (transport/concurrency.hpp), or their defaults.
  using mutex_type = mutex_of<Inner>;
  using condition_variable_type = condition_variable_of<Inner>;
  template <class F>
  [[nodiscard]] activity spawn(F&& f) {
    return transport::spawn(inner_, std::forward<F>(f));
  }
  [[nodiscard]] double now() const { return seconds_now(inner_); }
  /// The inner transport's answer, where it has one (`transport::mpi`).
  [[nodiscard]] bool serves_concurrent_threads() const
    requires requires(const Inner& i) { i.serves_concurrent_threads(); }
  {
    return inner_.serves_concurrent_threads();
  }

  template <class T>
  void send(std::span<const T> data, int destination, int tag) {
    before_message(true, destination, tag);
    inner_.send(data, destination, tag);
  }
  template <class T>
  void recv(std::span<T> data, int source, int tag) {
    before_message(false, source, tag);
    inner_.recv(data, source, tag);
  }
  template <class T>
  [[nodiscard]] auto isend(std::span<const T> data, int destination, int tag) {
    before_message(true, destination, tag);
    return inner_.isend(data, destination, tag);
  }
  template <class T>
  [[nodiscard]] auto irecv(std::span<T> data, int source, int tag) {
    before_message(false, source, tag);
    return inner_.irecv(data, source, tag);
  }
  template <class T>
  message_status recv_any(std::span<T> data, int tag) {
    before_message(false, any_source, tag);
    return inner_.recv_any(data, tag);
  }

  void barrier() {
    check_alive("barrier");
    inner_.barrier();
  }
  /// Collective, as the inner transport's; the new handle keeps this rank's plan and count.
  [[nodiscard]] faulty split(int color, int key) {
    check_alive("split");
    return faulty(inner_.split(color, key), state_);
  }

  /// The inner transport's collective checks: the fingerprint exchange goes through this
  /// decorator's messages, so its delays and failures reach it too.
  [[nodiscard]] collective_check_state& collective_checks()
    requires has_collective_checks<Inner>
  {
    return inner_.collective_checks();
  }

  /// The inner transport's topology: faults change how ranks behave, not where they are.
  [[nodiscard]] node_topology topology() const
    requires has_node_topology<Inner>
  {
    return inner_.topology();
  }

  /// The inner transport's cache; the groups kept there are `faulty` handles, so the hierarchical
  /// all-reduce over this decorator passes its messages through it too.
  [[nodiscard]] transport::group_cache& group_cache()
    requires has_group_cache<Inner>
  {
    return inner_.group_cache();
  }

  /// The wrapped transport.
  [[nodiscard]] Inner& inner() noexcept { return inner_; }
  [[nodiscard]] const Inner& inner() const noexcept { return inner_; }
  [[nodiscard]] const fault_plan& plan() const noexcept { return state_->plan; }
  /// How many messages this rank has passed on (over all copies and splits of this handle).
  [[nodiscard]] std::size_t messages() const noexcept { return state_->messages.load(std::memory_order_relaxed); }

 private:
  // One rank's plan and count, shared by the copies and splits of its handle.
  struct rank_state {
    fault_plan plan;
    int rank;  // in the group the plan refers to
    std::atomic<std::size_t> messages{0};
  };

  faulty(Inner inner, std::shared_ptr<rank_state> state) : inner_(std::move(inner)), state_(std::move(state)) {}

  [[nodiscard]] bool dead() const noexcept;
  void check_alive(const char* operation) const;
  void before_message(bool outgoing, int peer, int tag);
  [[noreturn]] void fail(const std::string& operation) const;

  Inner inner_;
  std::shared_ptr<rank_state> state_;
};

// ---------------------------------------------------------------------------------------------
// Implementation
// ---------------------------------------------------------------------------------------------

template <transport Inner>
faulty<Inner>::faulty(Inner inner, fault_plan plan) : inner_(std::move(inner)) {
  using switchyard::detail::raise;
  using switchyard::detail::str;
  const int ranks = inner_.size();
  auto check_rank = [&](const char* field, std::optional<int> named) {
    if (named && (*named < 0 || *named >= ranks)) {
      raise<usage_error>(str("rank ", inner_.rank(), ": fault_plan::", field, " names rank ", *named,
                             " but the group has ranks 0 to ", ranks - 1));
    }
  };
  check_rank("slow_rank", plan.slow_rank);
  check_rank("fail_rank", plan.fail_rank);
  if (plan.delay.count() < 0 || plan.slow_delay.count() < 0) {
    raise<usage_error>(str("rank ", inner_.rank(), ": fault_plan delays must not be negative, got delay ",
                           plan.delay.count(), " us and slow_delay ", plan.slow_delay.count(), " us"));
  }
  state_ = std::make_shared<rank_state>();
  state_->plan = plan;
  state_->rank = inner_.rank();
}

template <transport Inner>
bool faulty<Inner>::dead() const noexcept {
  const fault_plan& p = state_->plan;
  return p.fail_rank == state_->rank && messages() >= p.fail_after;
}

template <transport Inner>
void faulty<Inner>::check_alive(const char* operation) const {
  if (dead()) fail(operation);
}

template <transport Inner>
void faulty<Inner>::before_message(bool outgoing, int peer, int tag) {
  using switchyard::detail::str;
  if (dead()) {
    fail(str(outgoing ? "send to " : "receive from ", peer == any_source ? std::string("any rank") : str("rank ", peer),
             " with tag ", tag == any_tag ? std::string("any") : std::to_string(tag)));
  }
  const fault_plan& p = state_->plan;
  const std::chrono::microseconds pause =
      p.delay + (p.slow_rank == state_->rank ? p.slow_delay : std::chrono::microseconds(0));
  state_->messages.fetch_add(1, std::memory_order_relaxed);
  if (pause.count() > 0) std::this_thread::sleep_for(pause);
}

template <transport Inner>
void faulty<Inner>::fail(const std::string& operation) const {
  using switchyard::detail::str;
  // The plan names ranks of the original group; a split handle also says where it is now.
  const std::string now = rank() == state_->rank ? std::string() : str(" (rank ", rank(), " of its group)");
  switchyard::detail::raise<transport_error>(str("rank ", state_->rank, now, ": injected failure after ",
                                                 state_->plan.fail_after, " messages (fault_plan::fail_rank ",
                                                 state_->rank, ", fail_after ", state_->plan.fail_after, "), at its ",
                                                 operation));
}

}  // namespace switchyard::transport
