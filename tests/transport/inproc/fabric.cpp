// transport/inproc/fabric.hpp: what the rank threads share: one waker per thread, the options,
// and the fate of the run.
#include <switchyard/transport/inproc/fabric.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

namespace sy = switchyard;
using sy::transport::detail::inproc_fabric;

namespace {

std::string message_of(const std::exception_ptr& failure) {
  try {
    std::rethrow_exception(failure);
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}

}  // namespace

TEST_CASE("inproc.fabric.state: a new fabric has a waker per rank, the options, and no failure") {
  sy::transport::inproc_options options;
  options.spin = 3;
  inproc_fabric fabric(4, options);
  CHECK(fabric.size == 4);
  CHECK(fabric.options.spin == 3);
  CHECK_FALSE(fabric.aborted.load());
  CHECK_FALSE(fabric.ended.load());
  CHECK_FALSE(fabric.first_failure);
  CHECK(fabric.summary().empty());
  // Each waker is its own cache line, so that ranks waking each other do not share one.
  CHECK(alignof(sy::transport::detail::waker) == 64);
  CHECK(&fabric.wakers[1] != &fabric.wakers[0]);
}

TEST_CASE("inproc.fabric.abort: the first failure is kept and summarized, later ones are ignored") {
  inproc_fabric fabric(3, {});
  fabric.abort(2, std::make_exception_ptr(std::runtime_error("bad batch")), "bad batch");
  CHECK(fabric.aborted.load());
  CHECK(fabric.summary() == "rank 2 failed: bad batch");
  fabric.abort(0, std::make_exception_ptr(std::logic_error("later")), "later");
  CHECK(fabric.summary() == "rank 2 failed: bad batch");
  REQUIRE(fabric.first_failure);
  CHECK(message_of(fabric.first_failure) == "bad batch");
}

TEST_CASE("inproc.fabric.abort: every rank sleeping on its waker is woken") {
  inproc_fabric fabric(3, {});
  std::atomic<int> woken{0};
  std::atomic<int> asleep{0};
  {
    std::jthread sleepers[2];
    for (int r = 1; r <= 2; ++r) {
      sleepers[r - 1] = std::jthread([&fabric, &woken, &asleep, r] {
        sy::transport::detail::waker& w = fabric.wakers[static_cast<std::size_t>(r)];
        std::unique_lock lock(w.mutex);
        asleep.fetch_add(1);
        // No timeout: only abort's notify can end this wait.
        w.cv.wait(lock, [&fabric] { return fabric.aborted.load(); });
        woken.fetch_add(1);
      });
    }
    while (asleep.load() < 2) std::this_thread::yield();
    fabric.abort(0, std::make_exception_ptr(std::runtime_error("stop")), "stop");
  }
  CHECK(woken.load() == 2);
}

TEST_CASE("inproc.fabric.waker: notify wakes a thread that waits on the waker") {
  sy::transport::detail::waker w;
  bool ready = false;
  std::jthread sleeper([&] {
    std::unique_lock lock(w.mutex);
    w.cv.wait(lock, [&] { return ready; });
  });
  {
    std::lock_guard lock(w.mutex);
    ready = true;
  }
  w.notify();
  sleeper.join();
  CHECK(ready);
}
