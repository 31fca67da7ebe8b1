// A non-blocking send or receive on the simulated transport: a send is a SimGrid communication
// already under way, a receive a posted entry of its rank's matching queue.
#pragma once

#include <switchyard/core/error.hpp>
#include <switchyard/transport/simulated/fabric.hpp>
#include <switchyard/transport/transport.hpp>

#include <simgrid/s4u/Comm.hpp>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

namespace switchyard::transport {

class simulated;

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

/// @brief A non-blocking send or receive on the simulated transport.
///
/// Movable, not copyable; a default-constructed request is complete. A send copied its data when
/// it was posted; waiting for it lasts until the data has crossed the simulated network.
/// Destroying a receive before it completed cancels it; destroying a send lets it finish (its
/// rank waits for it before its function returns).
class simulated_request {
 public:
  simulated_request() = default;
  simulated_request(simulated_request&& other) noexcept { *this = std::move(other); }
  simulated_request& operator=(simulated_request&& other) noexcept {
    if (this != &other) {
      retire();
      group_ = std::move(other.group_);
      rank_ = other.rank_;
      send_ = std::move(other.send_);
      receive_ = std::move(other.receive_);
      what_ = other.what_;
    }
    return *this;
  }
  ~simulated_request() { retire(); }

  /// Blocks (in simulated time) until the operation completes; throws `transport_error` if it
  /// failed (sizes or types that do not match) or another rank failed.
  void wait();
  /// Whether the operation completed, without blocking: it takes the messages that have arrived.
  /// Simulated time does not pass while a rank only tests, so a loop must end in a wait.
  bool test();
  /// What a completed receive got.
  [[nodiscard]] message_status status() const noexcept { return receive_ ? receive_->status : message_status{}; }

 private:
  friend class simulated;
  simulated_request(std::shared_ptr<detail::sim_group> group, int rank, simgrid::s4u::CommPtr send,
                    detail::sim_operation what)
      : group_(std::move(group)), rank_(rank), send_(std::move(send)), what_(what) {}
  simulated_request(std::shared_ptr<detail::sim_group> group, int rank, std::unique_ptr<detail::sim_receive> receive,
                    detail::sim_operation what)
      : group_(std::move(group)), rank_(rank), receive_(std::move(receive)), what_(what) {}

  void check_failure() const;
  void retire() noexcept;

  std::shared_ptr<detail::sim_group> group_;
  int rank_ = 0;
  simgrid::s4u::CommPtr send_;
  std::unique_ptr<detail::sim_receive> receive_;
  detail::sim_operation what_;  // for the errors: "send of 10 elements to rank 2 with tag 7"
};

// ---------------------------------------------------------------------------------------------
// Implementation
// ---------------------------------------------------------------------------------------------

inline void simulated_request::check_failure() const {
  if (receive_ && !receive_->failure.empty()) {
    detail::raise<transport_error>(detail::str("rank ", rank_, ": ", receive_->failure));
  }
}

inline void simulated_request::wait() {
  if (!group_) return;
  detail::sim_fabric& fabric = *group_->fabric;
  detail::sim_rank& self = group_->rank(rank_);
  detail::enter_call(fabric, self, "wait");
  if (send_) {
    self.waiting_for = what_;
    detail::blocking(self, [this] { send_->wait(); });
    self.waiting_for = {};
    send_ = nullptr;
    group_ = nullptr;
    return;
  }
  while (!receive_->done) {
    detail::check_not_aborted(fabric, self, what_);
    detail::await_delivery(fabric, self, what_, [this] { return receive_->done; });
  }
  group_ = nullptr;
  check_failure();
}

inline bool simulated_request::test() {
  if (!group_) {
    check_failure();
    return true;
  }
  detail::sim_fabric& fabric = *group_->fabric;
  detail::sim_rank& self = group_->rank(rank_);
  detail::enter_call(fabric, self, "test");
  if (send_) {
    if (!detail::blocking(self, [this] { return send_->test(); })) return false;
    send_ = nullptr;
    group_ = nullptr;
    return true;
  }
  const auto arrived = [&self] { return detail::blocking(self, [&self] { return self.inbox->ready(); }); };
  // While another activity of the rank takes from the inbox, what arrives is its to deliver (it
  // may have begun while this one asked).
  while (!receive_->done && !self.pulling && arrived() && !self.pulling) detail::pull_next(fabric, self, what_);
  if (!receive_->done) return false;
  group_ = nullptr;
  check_failure();
  return true;
}

inline void simulated_request::retire() noexcept {
  if (!group_) return;
  detail::sim_rank& self = group_->rank(rank_);
  if (send_) {
    self.unfinished_sends.push_back(std::move(send_));
  } else if (receive_ && !receive_->done) {
    auto& posted = self.posted;
    posted.erase(std::remove(posted.begin(), posted.end(), receive_.get()), posted.end());
  }
  group_ = nullptr;
}

namespace detail {

// Most sends, and most receives, a rank of a simulated world has under way in a native
// collective. SimGrid 3.32 walks an actor's whole list of unfinished activities each time one of
// them completes, so p - 1 sends posted at once would cost O(p) each: O(p^3) for a collective of
// p ranks (one mlp step at 1,024 ranks ran over 18 CPU minutes).
inline constexpr std::size_t native_window = 32;

// The requests of one direction of a native collective, at most `native_window` under way: with
// the window full, the oldest completes before the next is posted.
class request_window {
 public:
  request_window() { slots_.reserve(native_window); }
  // Posts the request `post()` returns.
  template <class Post>
  void push(Post post) {
    if (slots_.size() < native_window) {
      slots_.push_back(post());
      return;
    }
    slots_[oldest_].wait();
    slots_[oldest_] = post();
    oldest_ = (oldest_ + 1) % native_window;
  }
  void wait_all() {
    for (simulated_request& r : slots_) r.wait();
  }

 private:
  std::vector<simulated_request> slots_;
  std::size_t oldest_ = 0;
};

}  // namespace detail

}  // namespace switchyard::transport
