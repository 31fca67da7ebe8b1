// The thread a co-located parameter server serves its shard on, beside the worker on the rank's
// own thread (or the activity the transport runs beside it: transport/concurrency.hpp), for one
// part of an epoch at a time.
#pragma once

#include <switchyard/core/floating_point.hpp>
#include <switchyard/transport/concurrency.hpp>

#include <atomic>
#include <exception>
#include <functional>
#include <memory>
#include <utility>

namespace switchyard::strategy::detail {

/// @brief Runs a server loop on a thread of its own (an activity the rank's transport spawns,
/// `transport::spawn`), with the starting thread's floating-point mode (flushing of subnormals,
/// rounding), and ends it when either side fails.
///
/// `join` returns once the loop returned by itself (every worker said it finished) and rethrows
/// what the loop threw. When the loop throws, the thread sets `failed()`, then calls the `alert`
/// given to `start`, which must release the rank's worker from its waits for this server (a message
/// the worker cannot accept); the worker then joins and reports the server's failure. `stop`,
/// also called by the destructor, is the path for the worker's own failure: it sets `stopping()`,
/// calls `interrupt`, which must release the loop from its wait for the next message (a message
/// to itself), joins, and drops the loop's failure: the rank's own is the one to report. `alert`
/// and `interrupt` return what keeps their message alive (a posted request), held until the join.
/// A copy starts without a thread: each copy of a strategy gets its own.
class serving_thread {
 public:
  using message = std::function<std::shared_ptr<void>()>;

  serving_thread() = default;
  serving_thread(const serving_thread&) noexcept {}
  serving_thread& operator=(const serving_thread&) noexcept { return *this; }
  ~serving_thread() { stop(); }

  /// Starts `serve` on a new activity of `t`'s rank.
  template <class Transport>
  void start(Transport& t, std::function<void()> serve, message interrupt, message alert) {
    stopping_.store(false, std::memory_order_relaxed);
    failed_.store(false, std::memory_order_relaxed);
    failure_ = nullptr;
    interrupt_ = std::move(interrupt);
    thread_ = transport::spawn(t, [this, serve = std::move(serve), alert = std::move(alert),
                                   mode = switchyard::detail::read_fp_control()] {
      switchyard::detail::write_fp_control(mode);
      try {
        serve();
      } catch (...) {
        failure_ = std::current_exception();
        // Marked before the alert goes out: the worker it wakes must find the failure to report.
        failed_.store(true, std::memory_order_release);
        if (!stopping()) {
          try {
            alerted_ = alert();
          } catch (...) {
            // The transport failed: the worker's waits fail with it.
          }
        }
      }
    });
  }
  [[nodiscard]] bool running() const noexcept { return thread_.joinable(); }
  /// Whether `stop` asked the loop to return: the loop checks it after each message it receives.
  [[nodiscard]] bool stopping() const noexcept { return stopping_.load(std::memory_order_acquire); }
  /// Whether the loop threw (and alerted the worker): `join` rethrows it.
  [[nodiscard]] bool failed() const noexcept { return failed_.load(std::memory_order_acquire); }

  /// Waits for the loop to return by itself; rethrows what it threw.
  void join() {
    thread_.join();
    release();
    if (std::exception_ptr failure = std::exchange(failure_, nullptr)) std::rethrow_exception(failure);
  }

  /// Interrupts the loop and waits for it, dropping its failure.
  void stop() noexcept {
    if (!thread_.joinable()) return;
    stopping_.store(true, std::memory_order_release);
    std::shared_ptr<void> interrupting;
    try {
      interrupting = interrupt_();
    } catch (...) {
      // The transport failed: the loop's wait fails with it.
    }
    thread_.join();
    release();
    failure_ = nullptr;
  }

 private:
  // After the join: the messages may be destroyed (a posted one nobody took is cancelled).
  void release() noexcept {
    interrupt_ = nullptr;
    alerted_.reset();
  }

  transport::activity thread_;
  message interrupt_;
  std::shared_ptr<void> alerted_;  // written by the thread, released after the join
  std::atomic<bool> stopping_{false};
  std::atomic<bool> failed_{false};
  std::exception_ptr failure_;
};

}  // namespace switchyard::strategy::detail
