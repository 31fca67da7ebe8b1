// The in-process transport: a world of N ranks as threads in one process, the embedded default.
// Messages are copied once, straight from the sender's span into the receiver's; the native
// collectives read and write peers' buffers directly.
#pragma once

#include <switchyard/collective/partition.hpp>
#include <switchyard/core/buffer.hpp>
#include <switchyard/core/error.hpp>
#include <switchyard/core/operations.hpp>
#include <switchyard/transport/transport.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace switchyard::transport {

/// @brief Settings of an in-process world.
struct inproc_options {
  /// A wait (receive, send, barrier, collective) that has not completed after this long ends in
  /// `timeout_error` naming the rank, the peer and the tag. Must be positive;
  /// `std::chrono::milliseconds::max()` waits forever.
  std::chrono::milliseconds timeout = std::chrono::minutes(2);
  /// How many times a waiting rank yields before it sleeps; spinning wins for short waits when
  /// ranks have cores of their own, sleeping wins when they share them.
  int spin = 64;
  /// Every collective first exchanges a fingerprint of the call with the other ranks and raises
  /// `usage_error` on every rank when they differ (docs/collectives.md#checked-collectives).
  /// Default: the environment variable `SWITCHYARD_CHECK_COLLECTIVES`.
  bool check_collectives = check_collectives_from_environment();
};

class inproc;
class inproc_request;

namespace detail {

using switchyard::detail::raise;
using switchyard::detail::str;

// One rank thread's alarm clock: every wait of that thread sleeps on it.
struct alignas(64) waker {
  std::mutex mutex;
  std::condition_variable cv;

  void notify() {
    { std::lock_guard lock(mutex); }
    cv.notify_all();
  }
};

// What a world and all groups split from it share: the threads' wakers, the options, and the
// fate of the run (aborted by a failing rank, ended when the launcher returned).
struct inproc_fabric {
  inproc_fabric(int ranks, inproc_options opts)
      : wakers(std::make_unique<waker[]>(static_cast<std::size_t>(ranks))), size(ranks), options(opts) {}

  std::unique_ptr<waker[]> wakers;
  int size;
  inproc_options options;
  std::atomic<bool> aborted{false};
  std::atomic<bool> ended{false};
  std::mutex failure_mutex;
  std::exception_ptr first_failure;
  std::string failure_summary;

  // Records the first failure and releases every rank that waits.
  void abort(int world_rank, std::exception_ptr failure, const std::string& what) {
    {
      std::lock_guard lock(failure_mutex);
      if (first_failure) return;
      first_failure = std::move(failure);
      failure_summary = detail::str("rank ", world_rank, " failed: ", what);
      aborted.store(true, std::memory_order_release);
    }
    for (int r = 0; r < size; ++r) wakers[static_cast<std::size_t>(r)].notify();
  }

  std::string summary() {
    std::lock_guard lock(failure_mutex);
    return failure_summary;
  }
};

template <class T>
inline constexpr char type_identity_tag = 0;

enum class op_state : int { posted, claimed, done, failed, cancelled };

// A posted send or receive, owned by the inproc_request that posted it and recycled through a
// per-thread pool (op_pool); queues link ops intrusively.
struct pending_op {
  pending_op* next = nullptr;
  const std::byte* send_data = nullptr;
  std::byte* recv_data = nullptr;
  std::size_t bytes = 0;  // a send's size, a receive's capacity
  std::size_t element_size = 0;
  const void* element_type = nullptr;
  int source = 0;          // a send's sender; a receive's wanted source or any_source
  int destination = 0;     // a send's receiver; a receive's owner
  int tag = 0;
  bool exact = true;       // a receive that requires exactly `bytes`
  std::atomic<op_state> state{op_state::posted};
  message_status status;
  std::string failure;
};

// A FIFO of pending ops, linked through pending_op::next.
class op_queue {
 public:
  void push(pending_op* op) noexcept {
    op->next = nullptr;
    (tail_ ? tail_->next : head_) = op;
    tail_ = op;
  }

  // Removes and returns the first op that `match` accepts, or nullptr.
  template <class Match>
  pending_op* take_first(Match match) noexcept {
    pending_op* previous = nullptr;
    for (pending_op* op = head_; op != nullptr; previous = op, op = op->next) {
      if (match(*op)) {
        unlink(previous, op);
        return op;
      }
    }
    return nullptr;
  }

  bool remove(pending_op* target) noexcept {
    return take_first([target](const pending_op& op) { return &op == target; }) != nullptr;
  }

 private:
  void unlink(pending_op* previous, pending_op* op) noexcept {
    (previous ? previous->next : head_) = op->next;
    if (tail_ == op) tail_ = previous;
    op->next = nullptr;
  }

  pending_op* head_ = nullptr;
  pending_op* tail_ = nullptr;
};

// Posted ops are recycled per thread, so posting allocates only while the pool warms up.
class op_pool {
 public:
  pending_op* acquire() {
    if (free_.empty()) return new pending_op;
    pending_op* op = free_.back().release();
    free_.pop_back();
    return op;
  }
  void release(pending_op* op) noexcept {
    op->next = nullptr;
    op->state.store(op_state::posted, std::memory_order_relaxed);
    op->status = {};
    op->failure.clear();
    try {
      free_.emplace_back(op);
    } catch (...) {
      delete op;
    }
  }

 private:
  std::vector<std::unique_ptr<pending_op>> free_;
};

inline op_pool& thread_op_pool() {
  thread_local op_pool pool;
  return pool;
}

struct alignas(64) mailbox {
  std::mutex mutex;
  op_queue sends;  // sends that arrived before their receive was posted
  op_queue recvs;  // receives posted before their send arrived
};

// What a rank shows its peers during a native collective.
struct alignas(64) window_slot {
  std::byte* data = nullptr;
  const std::byte* input = nullptr;
  std::size_t count = 0;
  const void* element_type = nullptr;
  int root = 0;
};

struct split_request {
  int color = 0;
  int key = 0;
};

// A group of ranks that talk to each other: the world, or one result of split().
struct inproc_group {
  inproc_group(std::shared_ptr<inproc_fabric> fab, std::vector<int> members)
      : fabric(std::move(fab)),
        world_ranks(std::move(members)),
        size(static_cast<int>(world_ranks.size())),
        mailboxes(std::make_unique<mailbox[]>(world_ranks.size())),
        arrivals(std::make_unique<std::atomic<std::uint64_t>[]>(world_ranks.size())),
        window(world_ranks.size()),
        splits(world_ranks.size()),
        split_results(world_ranks.size()),
        checks(world_ranks.size(), collective_check_state{fabric->options.check_collectives, 0}) {}

  std::shared_ptr<inproc_fabric> fabric;
  std::vector<int> world_ranks;  // group rank -> world rank (the thread that plays it)
  int size;
  std::unique_ptr<mailbox[]> mailboxes;

  std::mutex barrier_mutex;
  int barrier_count = 0;
  std::atomic<std::uint64_t> barrier_generation{0};
  std::unique_ptr<std::atomic<std::uint64_t>[]> arrivals;  // last generation each rank reached

  std::vector<window_slot> window;
  std::vector<split_request> splits;
  std::vector<std::pair<std::shared_ptr<inproc_group>, int>> split_results;
  std::vector<collective_check_state> checks;  // each rank's, touched by its thread only

  waker& waker_of(int rank) const { return fabric->wakers[static_cast<std::size_t>(world_ranks[static_cast<std::size_t>(rank)])]; }
};

}  // namespace detail

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

/// @brief A non-blocking send or receive on the in-process transport.
///
/// Movable, not copyable. Destroying one before it completed cancels the operation, or waits for
/// a copy already under way. A default-constructed request is complete.
class inproc_request {
 public:
  inproc_request() = default;
  inproc_request(inproc_request&& other) noexcept
      : group_(std::move(other.group_)), rank_(other.rank_), kind_(other.kind_), op_(std::exchange(other.op_, nullptr)) {}
  inproc_request& operator=(inproc_request&& other) noexcept {
    if (this != &other) {
      retire();
      group_ = std::move(other.group_);
      rank_ = other.rank_;
      kind_ = other.kind_;
      op_ = std::exchange(other.op_, nullptr);
    }
    return *this;
  }
  ~inproc_request() { retire(); }

  /// Blocks until the operation completes; throws `transport_error` if it failed (sizes that do
  /// not match, the world aborted) and `timeout_error` when the world's timeout passes first.
  void wait();
  /// Whether the operation completed (throws as `wait` does if it failed).
  bool test();
  /// What a completed receive got.
  [[nodiscard]] message_status status() const noexcept { return op_ ? op_->status : message_status{}; }

 private:
  friend class inproc;
  enum class kind { send, recv };
  inproc_request(std::shared_ptr<detail::inproc_group> group, int rank, kind k, std::byte* recv_data,
                 const std::byte* send_data, std::size_t bytes, std::size_t element_size,
                 const void* element_type, int peer, int tag, bool exact);

  [[nodiscard]] bool finished() const noexcept;
  void check_failure();
  std::string describe() const;
  bool cancel() noexcept;
  void retire() noexcept;

  std::shared_ptr<detail::inproc_group> group_;
  int rank_ = 0;
  kind kind_ = kind::send;
  detail::pending_op* op_ = nullptr;  // from the thread's pool, back to it when retired
};

/// @brief One rank's handle on an in-process world (or a group split from it).
///
/// A small value: copies refer to the same rank of the same group. Made by `inproc_world::run`,
/// which calls a function on every rank; using a handle after `run` returned throws
/// `usage_error`.
/// @code
/// switchyard::transport::run_inproc(4, [](switchyard::transport::inproc& t) {
///   std::vector<float> grad(1000, float(t.rank()));
///   switchyard::collective::allreduce(t, grad, switchyard::ops::sum{});
/// });
/// @endcode
class inproc {
 public:
  using request = inproc_request;

  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int size() const noexcept { return group_->size; }

  template <arithmetic T>
  void send(std::span<const T> data, int destination, int tag) {
    isend(data, destination, tag).wait();
  }
  template <arithmetic T>
  void recv(std::span<T> data, int source, int tag) {
    irecv(data, source, tag).wait();
  }
  template <arithmetic T>
  [[nodiscard]] inproc_request isend(std::span<const T> data, int destination, int tag);
  template <arithmetic T>
  [[nodiscard]] inproc_request irecv(std::span<T> data, int source, int tag);
  /// Receives the next message with `tag` (or any tag, with `any_tag`) from any rank; it may hold
  /// fewer elements than `data`, never more.
  template <arithmetic T>
  message_status recv_any(std::span<T> data, int tag);

  void barrier();
  /// Collective over the group: ranks that pass the same `color` (>= 0) form a new group, ranked
  /// by (`key`, old rank).
  [[nodiscard]] inproc split(int color, int key);

  // Native collectives: every rank reads its peers' buffers directly (see collective/native.hpp).
  template <arithmetic T, class Op>
  void native_allreduce(std::span<T> data, Op op);
  template <arithmetic T>
  void native_broadcast(std::span<T> data, int root);
  template <arithmetic T>
  void native_allgather(std::span<const T> mine, std::span<T> all);
  template <arithmetic T, class Op>
  std::span<T> native_reduce_scatter(std::span<T> data, Op op);

  /// This rank's collective checks on this group, on when `inproc_options::check_collectives` is.
  [[nodiscard]] collective_check_state& collective_checks() noexcept {
    return group_->checks[static_cast<std::size_t>(rank_)];
  }

 private:
  friend class inproc_world;
  inproc(std::shared_ptr<detail::inproc_group> group, int rank) : group_(std::move(group)), rank_(rank) {}

  void check_usable(const char* what) const;
  void check_peer(int peer, const char* what, bool allow_any) const;
  template <arithmetic T>
  void publish_and_check(const char* name, std::byte* data, const std::byte* input, std::size_t count, int root);

  std::shared_ptr<detail::inproc_group> group_;
  int rank_;
};

/// @brief An in-process world of `ranks` ranks: `run(f)` calls `f(inproc&)` on every rank, each on
/// its own thread (rank 0 on the caller's), joins them, and rethrows the first exception any rank
/// raised; the other ranks are released from their waits with a `transport_error`.
/// Returns nothing if `f` returns nothing, else a `std::vector` of the results by rank.
class inproc_world {
 public:
  explicit inproc_world(int ranks, inproc_options options = {});

  template <class F>
  auto run(F&& f);

  [[nodiscard]] int size() const noexcept { return ranks_; }

 private:
  int ranks_;
  inproc_options options_;
};

/// @brief Shorthand for `inproc_world(ranks, options).run(f)`.
template <class F>
auto run_inproc(int ranks, F&& f, inproc_options options = {}) {
  return inproc_world(ranks, options).run(std::forward<F>(f));
}

// ---------------------------------------------------------------------------------------------
// Implementation
// ---------------------------------------------------------------------------------------------

namespace detail {

// Copies a matched send into its receive and completes both ops.
inline void transfer(pending_op& send, pending_op& recv, const std::vector<int>& world_ranks,
                     inproc_fabric& fabric) {
  const std::size_t send_count = send.bytes / send.element_size;
  const std::size_t recv_count = recv.bytes / recv.element_size;
  std::string problem;
  if (send.element_type != recv.element_type || send.element_size != recv.element_size) {
    problem = detail::str("message from rank ", send.source, " to rank ", send.destination, " with tag ", send.tag,
                  " has elements of ", send.element_size, " bytes but the receive expects another type of ",
                  recv.element_size, " bytes");
  } else if (send.bytes > recv.bytes || (recv.exact && send.bytes != recv.bytes)) {
    problem = detail::str("message from rank ", send.source, " to rank ", send.destination, " with tag ", send.tag,
                  " has ", send_count, " elements but the receive buffer ", recv.exact ? "expects " : "holds only ",
                  recv_count);
  }
  op_state outcome = op_state::done;
  if (problem.empty()) {
    if (send.bytes != 0) std::memcpy(recv.recv_data, send.send_data, send.bytes);
    recv.status = {send.source, send.tag, send_count};
  } else {
    send.failure = problem;
    recv.failure = std::move(problem);
    outcome = op_state::failed;
  }
  const int send_owner = world_ranks[static_cast<std::size_t>(send.source)];
  const int recv_owner = world_ranks[static_cast<std::size_t>(recv.destination)];
  // Once an op is done its owner may return and destroy it: touch nothing after the store.
  send.state.store(outcome, std::memory_order_release);
  fabric.wakers[static_cast<std::size_t>(send_owner)].notify();
  recv.state.store(outcome, std::memory_order_release);
  fabric.wakers[static_cast<std::size_t>(recv_owner)].notify();
}

inline bool accepts(const pending_op& recv, const pending_op& send) noexcept {
  return (recv.source == any_source || recv.source == send.source) &&
         (recv.tag == any_tag || recv.tag == send.tag);
}

// Blocks `rank` of `group` until `done()`; `describe()` names what it waits for in the errors
// raised when the world aborts or the timeout passes.
template <class Done, class Describe>
void wait_until(const inproc_group& group, int rank, Done done, Describe describe) {
  inproc_fabric& fabric = *group.fabric;
  for (int i = 0; i < fabric.options.spin; ++i) {
    if (done()) return;
    std::this_thread::yield();
  }
  waker& w = group.waker_of(rank);
  const auto deadline = deadline_after(fabric.options.timeout);
  std::unique_lock lock(w.mutex);
  while (!done()) {
    if (fabric.aborted.load(std::memory_order_acquire)) {
      lock.unlock();
      raise<transport_error>(detail::str("rank ", rank, ": ", describe(), " abandoned because ", fabric.summary()));
    }
    if (w.cv.wait_until(lock, deadline) == std::cv_status::timeout && !done()) {
      lock.unlock();
      raise<timeout_error>(detail::str("rank ", rank, ": ", describe(), " did not complete within ",
                               fabric.options.timeout.count(), " ms (inproc_options::timeout)"));
    }
  }
}

// The native collectives reduce in tiles that stay in L1 while every rank's block is folded in.
inline constexpr std::size_t reduce_tile_bytes = 8192;

}  // namespace detail

inline inproc_request::inproc_request(std::shared_ptr<detail::inproc_group> group, int rank, kind k,
                                      std::byte* recv_data, const std::byte* send_data, std::size_t bytes,
                                      std::size_t element_size, const void* element_type, int peer, int tag,
                                      bool exact)
    : group_(std::move(group)), rank_(rank), kind_(k), op_(detail::thread_op_pool().acquire()) {
  op_->recv_data = recv_data;
  op_->send_data = send_data;
  op_->bytes = bytes;
  op_->element_size = element_size;
  op_->element_type = element_type;
  op_->tag = tag;
  op_->exact = exact;
  detail::inproc_group& g = *group_;
  detail::pending_op* partner = nullptr;
  if (k == kind::send) {
    op_->source = rank;
    op_->destination = peer;
    detail::mailbox& box = g.mailboxes[static_cast<std::size_t>(peer)];
    std::lock_guard lock(box.mutex);
    partner = box.recvs.take_first([this](const detail::pending_op& r) { return detail::accepts(r, *op_); });
    if (partner == nullptr) {
      box.sends.push(op_);
      return;
    }
    partner->state.store(detail::op_state::claimed, std::memory_order_relaxed);
  } else {
    op_->source = peer;
    op_->destination = rank;
    detail::mailbox& box = g.mailboxes[static_cast<std::size_t>(rank)];
    std::lock_guard lock(box.mutex);
    partner = box.sends.take_first([this](const detail::pending_op& s) { return detail::accepts(*op_, s); });
    if (partner == nullptr) {
      box.recvs.push(op_);
      return;
    }
    partner->state.store(detail::op_state::claimed, std::memory_order_relaxed);
  }
  op_->state.store(detail::op_state::claimed, std::memory_order_relaxed);
  if (k == kind::send) {
    detail::transfer(*op_, *partner, g.world_ranks, *g.fabric);
  } else {
    detail::transfer(*partner, *op_, g.world_ranks, *g.fabric);
  }
}

inline bool inproc_request::finished() const noexcept {
  if (op_ == nullptr) return true;
  const auto s = op_->state.load(std::memory_order_acquire);
  return s == detail::op_state::done || s == detail::op_state::failed || s == detail::op_state::cancelled;
}

inline void inproc_request::check_failure() {
  if (op_ != nullptr && op_->state.load(std::memory_order_acquire) == detail::op_state::failed) {
    detail::raise<transport_error>(detail::str("rank ", rank_, ": ", op_->failure));
  }
}

inline std::string inproc_request::describe() const {
  const std::size_t count = op_->bytes / op_->element_size;
  if (kind_ == kind::send) {
    return detail::str("send of ", count, " elements to rank ", op_->destination, " with tag ", op_->tag);
  }
  return detail::str("receive of ", count, " elements from ",
             op_->source == any_source ? std::string("any rank") : detail::str("rank ", op_->source), " with tag ",
             op_->tag == any_tag ? std::string("any") : std::to_string(op_->tag));
}

inline bool inproc_request::cancel() noexcept {
  // A send waits in its receiver's mailbox, a receive in its owner's.
  detail::mailbox& box = group_->mailboxes[static_cast<std::size_t>(kind_ == kind::send ? op_->destination : rank_)];
  std::lock_guard lock(box.mutex);
  if (op_->state.load(std::memory_order_acquire) != detail::op_state::posted) return false;
  if (kind_ == kind::send ? box.sends.remove(op_) : box.recvs.remove(op_)) {
    op_->state.store(detail::op_state::cancelled, std::memory_order_relaxed);
  }
  return true;
}

inline void inproc_request::wait() {
  try {
    detail::wait_until(*group_, rank_, [this] { return finished(); }, [this] { return describe(); });
  } catch (...) {
    // The op must leave every queue before it can be reported and destroyed.
    if (!cancel()) {
      while (!finished()) std::this_thread::yield();
    }
    throw;
  }
  check_failure();
}

inline bool inproc_request::test() {
  if (!finished()) return false;
  check_failure();
  return true;
}

inline void inproc_request::retire() noexcept {
  if (op_ == nullptr) return;
  if (!finished() && !cancel()) {
    // A peer claimed the op and is copying: the copy is bounded, so wait for it.
    while (!finished()) std::this_thread::yield();
  }
  detail::thread_op_pool().release(std::exchange(op_, nullptr));
}

inline void inproc::check_usable(const char* what) const {
  if (group_->fabric->ended.load(std::memory_order_acquire)) {
    detail::raise<usage_error>(detail::str("rank ", rank_, ": ", what, " on an in-process transport whose world has ended"));
  }
}

inline void inproc::check_peer(int peer, const char* what, bool allow_any) const {
  check_usable(what);
  if ((peer < 0 || peer >= size()) && !(allow_any && peer == any_source)) {
    detail::raise<usage_error>(
        detail::str("rank ", rank_, ": ", what, " names rank ", peer, " but the group has ranks 0 to ", size() - 1));
  }
}



template <arithmetic T>
inproc_request inproc::isend(std::span<const T> data, int destination, int tag) {
  check_peer(destination, "send", false);
  return inproc_request(group_, rank_, inproc_request::kind::send, nullptr,
                        reinterpret_cast<const std::byte*>(data.data()), data.size_bytes(), sizeof(T),
                        &detail::type_identity_tag<T>, destination, tag, true);
}

template <arithmetic T>
inproc_request inproc::irecv(std::span<T> data, int source, int tag) {
  check_peer(source, "receive", true);
  return inproc_request(group_, rank_, inproc_request::kind::recv, reinterpret_cast<std::byte*>(data.data()),
                        nullptr, data.size_bytes(), sizeof(T), &detail::type_identity_tag<T>, source, tag,
                        true);
}

template <arithmetic T>
message_status inproc::recv_any(std::span<T> data, int tag) {
  check_usable("receive from any rank");
  inproc_request r(group_, rank_, inproc_request::kind::recv, reinterpret_cast<std::byte*>(data.data()), nullptr,
                   data.size_bytes(), sizeof(T), &detail::type_identity_tag<T>, any_source, tag, false);
  r.wait();
  return r.status();
}

inline void inproc::barrier() {
  check_usable("barrier");
  detail::inproc_group& g = *group_;
  std::uint64_t generation = 0;
  {
    std::lock_guard lock(g.barrier_mutex);
    generation = g.barrier_generation.load(std::memory_order_relaxed);
    g.arrivals[static_cast<std::size_t>(rank_)].store(generation + 1, std::memory_order_relaxed);
    if (++g.barrier_count == g.size) {
      g.barrier_count = 0;
      g.barrier_generation.store(generation + 1, std::memory_order_release);
      for (int r = 0; r < g.size; ++r) {
        if (r != rank_) g.waker_of(r).notify();
      }
      return;
    }
  }
  detail::wait_until(g, rank_, [&g, generation] { return g.barrier_generation.load(std::memory_order_acquire) != generation; },
             [&g, generation] {
               std::string missing;
               for (int r = 0; r < g.size; ++r) {
                 if (g.arrivals[static_cast<std::size_t>(r)].load(std::memory_order_relaxed) <= generation) {
                   missing += (missing.empty() ? "" : ", ") + std::to_string(r);
                 }
               }
               return detail::str("barrier of ", g.size, " ranks (waiting for rank ", missing, ")");
             });
}

inline inproc inproc::split(int color, int key) {
  check_usable("split");
  if (color < 0) {
    detail::raise<usage_error>(detail::str("rank ", rank_, ": split color must be >= 0, got ", color));
  }
  detail::inproc_group& g = *group_;
  g.splits[static_cast<std::size_t>(rank_)] = {color, key};
  barrier();
  // The lowest rank of each color builds that color's group; everyone then picks up their own.
  bool leader = true;
  for (int r = 0; r < rank_; ++r) {
    if (g.splits[static_cast<std::size_t>(r)].color == color) leader = false;
  }
  if (leader) {
    std::vector<int> members;
    for (int r = 0; r < g.size; ++r) {
      if (g.splits[static_cast<std::size_t>(r)].color == color) members.push_back(r);
    }
    std::stable_sort(members.begin(), members.end(), [&g](int a, int b) {
      return g.splits[static_cast<std::size_t>(a)].key < g.splits[static_cast<std::size_t>(b)].key;
    });
    std::vector<int> world;
    world.reserve(members.size());
    for (int m : members) world.push_back(g.world_ranks[static_cast<std::size_t>(m)]);
    auto child = std::make_shared<detail::inproc_group>(g.fabric, std::move(world));
    for (std::size_t i = 0; i < members.size(); ++i) {
      g.split_results[static_cast<std::size_t>(members[i])] = {child, static_cast<int>(i)};
    }
  }
  barrier();
  auto [child, child_rank] = std::move(g.split_results[static_cast<std::size_t>(rank_)]);
  barrier();
  return inproc(std::move(child), child_rank);
}

template <arithmetic T>
void inproc::publish_and_check(const char* name, std::byte* data, const std::byte* input, std::size_t count,
                               int root) {
  check_usable(name);
  detail::inproc_group& g = *group_;
  g.window[static_cast<std::size_t>(rank_)] = {data, input, count, &detail::type_identity_tag<T>, root};
  barrier();
  // Every rank sees the same slots, so every rank raises the same error: nobody is left waiting.
  bool agree = true;
  for (const detail::window_slot& slot : g.window) {
    agree = agree && slot.count == count && slot.element_type == &detail::type_identity_tag<T> && slot.root == root;
  }
  if (!agree) {
    std::string table;
    for (int r = 0; r < g.size; ++r) {
      const detail::window_slot& slot = g.window[static_cast<std::size_t>(r)];
      table += detail::str(r == 0 ? "" : ", ", "rank ", r, ": ", slot.count,
                   slot.element_type == &detail::type_identity_tag<T> ? "" : " (other element type)");
      if (slot.root != root) table += detail::str(" root ", slot.root);
    }
    detail::raise<usage_error>(detail::str("rank ", rank_, ": ", name, " called with mismatched arguments across ranks (",
                                   table, ")"));
  }
}

namespace detail {

// Folds block [offset, offset + size) of every rank's buffer, in rank order, and hands each
// finished tile to `emit(tile_offset, tile)`.
template <class T, class Op, class Emit>
void fold_block(const std::vector<window_slot>& window, std::size_t offset, std::size_t size, Op op,
                Emit emit) {
  constexpr std::size_t tile_elements = std::max<std::size_t>(1, reduce_tile_bytes / sizeof(T));
  alignas(64) std::array<T, tile_elements> tile;
  const int ranks = static_cast<int>(window.size());
  for (std::size_t begin = offset; begin < offset + size; begin += tile_elements) {
    const std::size_t n = std::min(tile_elements, offset + size - begin);
    const T* first = reinterpret_cast<const T*>(window[0].input) + begin;
    std::copy_n(first, n, tile.data());
    for (int r = 1; r < ranks; ++r) {
      const T* other = reinterpret_cast<const T*>(window[static_cast<std::size_t>(r)].input) + begin;
      for (std::size_t i = 0; i < n; ++i) tile[i] = op(tile[i], other[i]);
    }
    finalize_all<Op>(std::span<T>(tile.data(), n), ranks);
    emit(begin, std::span<const T>(tile.data(), n));
  }
}

}  // namespace detail

template <arithmetic T, class Op>
void inproc::native_allreduce(std::span<T> data, Op op) {
  if (size() == 1) {
    check_usable("allreduce");
    finalize_all<Op>(data, 1);
    return;
  }
  auto* bytes = reinterpret_cast<std::byte*>(data.data());
  publish_and_check<T>("allreduce", bytes, bytes, data.size(), 0);
  detail::inproc_group& g = *group_;
  // Rank r alone reads and writes block r of every buffer: no locks, one result per element,
  // written to every rank, so replicas hold identical bits.
  const collective::block mine = collective::block_of(data.size(), static_cast<std::size_t>(g.size),
                                                      static_cast<std::size_t>(rank_));
  detail::fold_block<T>(g.window, mine.offset, mine.size, op, [&g](std::size_t at, std::span<const T> tile) {
    for (const detail::window_slot& slot : g.window) {
      std::copy(tile.begin(), tile.end(), reinterpret_cast<T*>(slot.data) + at);
    }
  });
  barrier();
}

template <arithmetic T>
void inproc::native_broadcast(std::span<T> data, int root) {
  check_peer(root, "broadcast", false);
  auto* bytes = reinterpret_cast<std::byte*>(data.data());
  publish_and_check<T>("broadcast", bytes, bytes, data.size(), root);
  if (rank_ != root) {
    const T* source = reinterpret_cast<const T*>(group_->window[static_cast<std::size_t>(root)].input);
    std::copy_n(source, data.size(), data.data());
  }
  barrier();
}

template <arithmetic T>
void inproc::native_allgather(std::span<const T> mine, std::span<T> all) {
  if (all.size() != mine.size() * static_cast<std::size_t>(size())) {
    detail::raise<usage_error>(detail::str("rank ", rank_, ": allgather of ", mine.size(), " elements per rank over ", size(),
                                   " ranks needs an output of ", mine.size() * static_cast<std::size_t>(size()),
                                   " elements, got ", all.size()));
  }
  publish_and_check<T>("allgather", reinterpret_cast<std::byte*>(all.data()),
                       reinterpret_cast<const std::byte*>(mine.data()), mine.size(), 0);
  for (int r = 0; r < size(); ++r) {
    const T* source = reinterpret_cast<const T*>(group_->window[static_cast<std::size_t>(r)].input);
    std::copy_n(source, mine.size(), all.data() + static_cast<std::size_t>(r) * mine.size());
  }
  barrier();
}

template <arithmetic T, class Op>
std::span<T> inproc::native_reduce_scatter(std::span<T> data, Op op) {
  auto* bytes = reinterpret_cast<std::byte*>(data.data());
  publish_and_check<T>("reduce_scatter", bytes, bytes, data.size(), 0);
  const collective::block mine = collective::block_of(data.size(), static_cast<std::size_t>(size()),
                                                      static_cast<std::size_t>(rank_));
  detail::fold_block<T>(group_->window, mine.offset, mine.size, op, [data](std::size_t at, std::span<const T> tile) {
    std::copy(tile.begin(), tile.end(), data.data() + at);
  });
  barrier();
  return data.subspan(mine.offset, mine.size);
}

inline inproc_world::inproc_world(int ranks, inproc_options options) : ranks_(ranks), options_(options) {
  if (ranks < 1) {
    detail::raise<usage_error>(detail::str("an in-process world needs at least 1 rank, got ", ranks));
  }
  if (options.timeout <= std::chrono::milliseconds::zero()) {
    detail::raise<usage_error>(detail::str("inproc_options::timeout must be positive, got ", options.timeout.count(),
                                           " ms (std::chrono::milliseconds::max() waits forever)"));
  }
}

template <class F>
auto inproc_world::run(F&& f) {
  using result = std::invoke_result_t<F&, inproc&>;
  auto fabric = std::make_shared<detail::inproc_fabric>(ranks_, options_);
  std::vector<int> members(static_cast<std::size_t>(ranks_));
  for (int r = 0; r < ranks_; ++r) members[static_cast<std::size_t>(r)] = r;
  auto world = std::make_shared<detail::inproc_group>(fabric, std::move(members));

  constexpr bool returns_value = !std::is_void_v<result>;
  using stored = std::conditional_t<returns_value, result, char>;
  std::vector<std::optional<stored>> results(static_cast<std::size_t>(ranks_));

  auto play = [&](int rank) {
    inproc handle(world, rank);
    try {
      if constexpr (returns_value) {
        results[static_cast<std::size_t>(rank)].emplace(std::invoke(f, handle));
      } else {
        std::invoke(f, handle);
      }
    } catch (const std::exception& e) {
      fabric->abort(rank, std::current_exception(), e.what());
    } catch (...) {
      fabric->abort(rank, std::current_exception(), "an exception not derived from std::exception");
    }
  };

  {
    std::vector<std::jthread> threads;
    threads.reserve(static_cast<std::size_t>(ranks_ - 1));
    for (int r = 1; r < ranks_; ++r) threads.emplace_back(play, r);
    play(0);
  }
  fabric->ended.store(true, std::memory_order_release);
  if (fabric->first_failure) std::rethrow_exception(fabric->first_failure);
  if constexpr (returns_value) {
    std::vector<result> out;
    out.reserve(results.size());
    for (auto& r : results) out.push_back(std::move(*r));
    return out;
  }
}

}  // namespace switchyard::transport
