// transport/concurrency.hpp: the defaults of a transport without the hooks (a std::thread, the
// standard mutex and condition variable, the steady clock), a transport's own hooks taking their
// place, and the activity handle.
#include <switchyard/transport/concurrency.hpp>

#include <switchyard/transport/faulty.hpp>
#include <switchyard/transport/inproc.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace sy = switchyard;
using sy::transport::inproc;

namespace {

// A transport with the hooks: its spawn runs the function at once, on the calling thread, and
// counts; its clock is a number the test sets.
struct hooked {
  struct mutex_type {
    void lock() {}
    void unlock() {}
    bool try_lock() { return true; }
  };
  struct condition_variable_type {
    void wait(std::unique_lock<mutex_type>&) {}
    void notify_one() {}
    void notify_all() {}
  };
  struct done {
    void join() { ++*joins; }
    int* joins;
  };
  template <class F>
  done spawn(F&& f) {
    ++spawns;
    std::forward<F>(f)();
    return done{&joins};
  }
  [[nodiscard]] double now() const { return clock; }

  int spawns = 0;
  int joins = 0;
  double clock = 0;
};

// Rank and size only.
struct bare {
  [[nodiscard]] int rank() const { return 0; }
  [[nodiscard]] int size() const { return 1; }
};

}  // namespace

static_assert(sy::transport::has_concurrency<hooked> && sy::transport::has_clock<hooked>);
static_assert(!sy::transport::has_concurrency<bare> && !sy::transport::has_clock<bare>);
static_assert(!sy::transport::has_concurrency<inproc> && !sy::transport::has_clock<inproc>);
static_assert(std::is_same_v<sy::transport::mutex_of<inproc>, std::mutex>);
static_assert(std::is_same_v<sy::transport::condition_variable_of<inproc>, std::condition_variable>);
static_assert(std::is_same_v<sy::transport::mutex_of<hooked>, hooked::mutex_type>);
static_assert(std::is_same_v<sy::transport::condition_variable_of<hooked>, hooked::condition_variable_type>);
// faulty<T> forwards whatever its inner transport has, or the defaults.
static_assert(std::is_same_v<sy::transport::mutex_of<sy::transport::faulty<inproc>>, std::mutex>);
static_assert(sy::transport::has_clock<sy::transport::faulty<inproc>>);

TEST_CASE("concurrency.default: without the hook an activity is a thread of its own, joined by join()" *
          doctest::timeout(30)) {
  bare t;
  std::thread::id ran_on;
  sy::transport::activity a = sy::transport::spawn(t, [&] { ran_on = std::this_thread::get_id(); });
  CHECK(a.joinable());
  a.join();
  CHECK_FALSE(a.joinable());
  CHECK(ran_on != std::thread::id{});
  CHECK(ran_on != std::this_thread::get_id());
}

TEST_CASE("concurrency.default: the standard mutex and condition variable hand a value between two activities" *
          doctest::timeout(30)) {
  sy::transport::run_inproc(3, [](inproc& t) {
    sy::transport::mutex_of<inproc> m;
    sy::transport::condition_variable_of<inproc> cv;
    int value = 0;
    sy::transport::activity helper = sy::transport::spawn(t, [&] {
      const std::lock_guard lock(m);
      value = t.rank() + 1;
      cv.notify_one();
    });
    {
      std::unique_lock lock(m);
      cv.wait(lock, [&] { return value != 0; });
    }
    helper.join();
    CHECK(value == t.rank() + 1);
  });
}

TEST_CASE("concurrency.activity: destroying or overwriting one that was not joined joins it" * doctest::timeout(30)) {
  bare t;
  std::atomic<int> finished{0};
  const auto slow = [&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ++finished;
  };
  {
    sy::transport::activity a = sy::transport::spawn(t, slow);
    a = sy::transport::spawn(t, slow);  // joins the first
    CHECK(finished.load() >= 1);
  }
  CHECK(finished.load() == 2);
  sy::transport::activity empty;
  CHECK_FALSE(empty.joinable());
  empty.join();  // nothing to wait for
}

TEST_CASE("concurrency.hook: a transport's spawn and clock take the place of the defaults") {
  hooked t;
  bool ran = false;
  sy::transport::activity a = sy::transport::spawn(t, [&] { ran = true; });
  CHECK(ran);
  CHECK(t.spawns == 1);
  a.join();
  CHECK(t.joins == 1);
  t.clock = 42.5;
  CHECK(sy::transport::seconds_now(t) == 42.5);
}

TEST_CASE("concurrency.clock: without the hook, seconds of the steady clock") {
  const bare t;
  const double before = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  const double now = sy::transport::seconds_now(t);
  const double after = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  CHECK(before <= now);
  CHECK(now <= after);
}
