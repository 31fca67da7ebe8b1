// The thread a co-located parameter server serves its shard on, beside the worker on the rank's
// own thread, for one part of an epoch at a time.
#pragma once

#include <switchyard/core/floating_point.hpp>

#include <atomic>
#include <exception>
#include <functional>
#include <thread>
#include <utility>

namespace switchyard::strategy::detail {

/// @brief Runs a server loop on a thread of its own, with the starting thread's floating-point
/// mode (flushing of subnormals, rounding), and stops it when the rank fails.
///
/// `join` returns once the loop returned by itself (every worker said it finished) and rethrows
/// what the loop threw. `stop`, also called by the destructor, is the failure path: it sets
/// `stopping()`, calls the `interrupt` given to `start`, which must release the loop from its wait
/// for the next message (a message to itself), joins, and drops the loop's failure: the rank's own
/// is the one to report. A copy starts without a thread: each copy of a strategy gets its own.
class serving_thread {
 public:
  serving_thread() = default;
  serving_thread(const serving_thread&) noexcept {}
  serving_thread& operator=(const serving_thread&) noexcept { return *this; }
  ~serving_thread() { stop(); }

  /// Starts `serve` on a new thread. `interrupt` is called, from another thread, only by `stop`.
  void start(std::function<void()> serve, std::function<void()> interrupt) {
    stopping_.store(false, std::memory_order_relaxed);
    failure_ = nullptr;
    interrupt_ = std::move(interrupt);
    thread_ = std::thread([this, serve = std::move(serve), mode = switchyard::detail::read_fp_control()] {
      switchyard::detail::write_fp_control(mode);
      try {
        serve();
      } catch (...) {
        failure_ = std::current_exception();
      }
    });
  }
  [[nodiscard]] bool running() const noexcept { return thread_.joinable(); }
  /// Whether `stop` asked the loop to return: the loop checks it after each message it receives.
  [[nodiscard]] bool stopping() const noexcept { return stopping_.load(std::memory_order_acquire); }

  /// Waits for the loop to return by itself; rethrows what it threw.
  void join() {
    thread_.join();
    interrupt_ = nullptr;
    if (std::exception_ptr failure = std::exchange(failure_, nullptr)) std::rethrow_exception(failure);
  }

  /// Interrupts the loop and waits for it, dropping its failure.
  void stop() noexcept {
    if (!thread_.joinable()) return;
    stopping_.store(true, std::memory_order_release);
    try {
      interrupt_();
    } catch (...) {
      // The transport failed: the loop's wait fails with it.
    }
    thread_.join();
    interrupt_ = nullptr;  // after the join: it may own the interrupting message
    failure_ = nullptr;
  }

 private:
  std::thread thread_;
  std::function<void()> interrupt_;
  std::atomic<bool> stopping_{false};
  std::exception_ptr failure_;
};

}  // namespace switchyard::strategy::detail
