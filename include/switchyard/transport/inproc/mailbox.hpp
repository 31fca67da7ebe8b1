// In-process point-to-point matching: a posted send or receive, the FIFO queues of a rank's
// mailbox, the per-thread pool that recycles posted operations, and the one copy that completes a
// matched pair.
#pragma once

#include <switchyard/transport/inproc/fabric.hpp>
#include <switchyard/transport/transport.hpp>

#include <atomic>
#include <cstddef>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace switchyard::transport::detail {

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

}  // namespace switchyard::transport::detail
