// A non-blocking send or receive on the in-process transport: posting it matches it against the
// peer's mailbox, waiting for it sleeps on the rank thread's waker, destroying it cancels it.
#pragma once

#include <switchyard/core/error.hpp>
#include <switchyard/transport/inproc/group.hpp>
#include <switchyard/transport/inproc/mailbox.hpp>
#include <switchyard/transport/transport.hpp>

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

namespace switchyard::transport {

class inproc;

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
  /// Withdraws the operation if no peer has matched it yet, and says whether it did; once a peer
  /// has matched it, it completes as usual. A receive that waits for one of several sources (the
  /// hybrid transport's, whose other sources are MPI's) takes back its in-process half this way.
  bool cancel_unmatched() noexcept { return op_ != nullptr && !finished() && cancel(); }
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

// ---------------------------------------------------------------------------------------------
// Implementation
// ---------------------------------------------------------------------------------------------

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
  if (op_ == nullptr) return;  // default-constructed or moved from: complete
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

}  // namespace switchyard::transport
