// strategy/parameter_server/serving_thread.hpp: the thread a co-located server serves on, joined
// when its loop ends, alerting its worker when the loop fails, and stopped when the rank fails.
#include <switchyard/strategy/parameter_server/serving_thread.hpp>

#include <switchyard/core/floating_point.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace sy = switchyard;
using sy::strategy::detail::serving_thread;

namespace {

// What a server loop or a worker waits on in these tests: a message that `post` delivers.
struct mailbox {
  std::mutex mutex;
  std::condition_variable arrived;
  bool message = false;

  std::shared_ptr<void> post() {
    {
      const std::lock_guard lock(mutex);
      message = true;
    }
    arrived.notify_all();
    return nullptr;
  }
  void wait() {
    std::unique_lock lock(mutex);
    arrived.wait(lock, [&] { return message; });
    message = false;
  }
};

// A transport without the concurrency hook: the serving loop runs on a std::thread.
struct threads_only {};
threads_only threads;

std::shared_ptr<void> nothing() { return nullptr; }

std::shared_ptr<void> unexpected() {
  FAIL("a loop that ends by itself is neither interrupted nor alerted");
  return nullptr;
}

}  // namespace

TEST_CASE("serving_thread: join waits for the loop and rethrows what it threw") {
  serving_thread serving;
  CHECK_FALSE(serving.running());
  std::atomic<int> served{0};
  serving.start(threads, [&] { served = 7; }, unexpected, unexpected);
  CHECK(serving.running());
  serving.join();
  CHECK_FALSE(serving.running());
  CHECK_FALSE(serving.failed());
  CHECK(served == 7);

  serving.start(threads, [] { throw std::runtime_error("shard 2: push of 5 elements"); }, nothing, nothing);
  CHECK_THROWS_WITH_AS(serving.join(), "shard 2: push of 5 elements", std::runtime_error);
  // The failure was reported once: the next part starts clean.
  serving.start(threads, [] {}, nothing, nothing);
  CHECK_NOTHROW(serving.join());
  CHECK_FALSE(serving.failed());
}

TEST_CASE("serving_thread: a loop that throws alerts the worker, which sees failed() and joins for the cause") {
  mailbox worker;
  serving_thread serving;
  auto kept = std::make_shared<int>(5);
  std::weak_ptr<int> alive = kept;
  std::atomic<bool> failed_before_alert{false};
  serving.start(threads, [] { throw std::runtime_error("the server's update failed"); }, unexpected,
                [&, kept = std::move(kept)] {
                  failed_before_alert = serving.failed();
                  worker.post();
                  return std::shared_ptr<void>(kept);  // what keeps the alert's message alive
                });
  worker.wait();  // released by the alert, as a failed receive releases the rank's worker
  // The worker woken by the alert finds the failure at once: it must not report its own failed
  // receive instead of the cause.
  CHECK(failed_before_alert);
  CHECK(serving.failed());
  CHECK_FALSE(alive.expired());  // held until the join
  CHECK_THROWS_WITH_AS(serving.join(), "the server's update failed", std::runtime_error);
  CHECK(alive.expired());
}

TEST_CASE("serving_thread: stop sets stopping, interrupts the loop's wait, joins and drops its failure") {
  mailbox box;
  std::atomic<bool> saw_stopping{false};
  serving_thread serving;
  serving.start(threads,
      [&] {
        box.wait();
        saw_stopping = serving.stopping();
        throw std::runtime_error("released by the interrupt");
      },
      [&] { return box.post(); }, unexpected);  // a stopped loop does not alert
  CHECK_FALSE(serving.stopping());
  serving.stop();
  CHECK_FALSE(serving.running());
  CHECK(saw_stopping);
  serving.stop();  // stopping a stopped thread does nothing
}

TEST_CASE("serving_thread: the destructor stops a running loop") {
  mailbox box;
  std::atomic<int> interrupts{0};
  {
    serving_thread serving;
    serving.start(threads, [&] { box.wait(); },
                  [&] {
                    ++interrupts;
                    return box.post();
                  },
                  unexpected);
  }
  CHECK(interrupts == 1);
}

TEST_CASE("serving_thread: a copy starts without a thread") {
  serving_thread serving;
  serving.start(threads, [] {}, nothing, nothing);
  const serving_thread copy = serving;
  CHECK_FALSE(copy.running());
  serving.join();
}

TEST_CASE("serving_thread: the loop runs with the starting thread's flush mode") {
  if constexpr (!sy::can_flush_subnormals) return;
  std::atomic<bool> flushed_inside{false};
  serving_thread serving;
  {
    const sy::flush_subnormals_scope flush;
    serving.start(threads, [&] { flushed_inside = sy::subnormals_flushed(); }, nothing, nothing);
  }
  serving.join();
  CHECK(flushed_inside);
  // And without: a thread started outside the scope does not flush.
  serving.start(threads, [&] { flushed_inside = sy::subnormals_flushed(); }, nothing, nothing);
  serving.join();
  CHECK_FALSE(flushed_inside);
}
