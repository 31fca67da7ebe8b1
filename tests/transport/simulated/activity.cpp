// transport/simulated/activity.hpp: a simulated rank's spawned activities are actors on its host
// inside the simulation (their messages cost simulated time, they have a library state of their
// own), their waits block in SimGrid instead of spinning, the mutex excludes, two activities of
// one rank can wait for messages at once, and a failing activity fails the run.
#include <switchyard/transport/simulated/activity.hpp>

#include <switchyard/core/rank_context.hpp>
#include <switchyard/transport/concurrency.hpp>
#include <switchyard/transport/faulty.hpp>
#include <switchyard/transport/simulated/handle.hpp>
#include <switchyard/transport/simulated/world.hpp>

#include <doctest/doctest.h>

#include "../../common/simulated_quiet.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Host.hpp>

#include <cmath>
#include <mutex>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace sy = switchyard;
using sy::transport::simulated;

static_assert(sy::transport::has_concurrency<simulated> && sy::transport::has_clock<simulated>);
static_assert(std::is_same_v<sy::transport::mutex_of<simulated>, sy::transport::simulated_mutex>);
static_assert(std::is_same_v<sy::transport::condition_variable_of<sy::transport::faulty<simulated>>,
                             sy::transport::simulated_condition_variable>);

namespace {

// 1 Gbit/s links of 50 us: 1 MB between two hosts takes 2 x 50 us + 8 ms.
sy::transport::simulated_options gigabit() {
  sy::transport::simulated_options o = quiet();
  o.platform.bandwidth = "1Gbps";
  o.platform.latency = "50us";
  return o;
}

constexpr double megabyte_seconds = 100e-6 + 8e-3;

}  // namespace

TEST_CASE("simulated.activity.inside: a spawned activity runs on its rank's host, in simulated time, with a library "
          "state of its own" * doctest::timeout(60)) {
  for (const int hosts : {2, 3, 4}) {
    CAPTURE(hosts);
    sy::transport::run_simulated(hosts, [](simulated& t) {
      const int right = (t.rank() + 1) % t.size();
      const int left = (t.rank() + t.size() - 1) % t.size();
      std::vector<char> out(1'000'000, static_cast<char>(t.rank()));
      std::vector<char> in(out.size());
      sy::rank_context* mine = &sy::current_rank_context();
      sy::rank_context* theirs = nullptr;
      simgrid::s4u::Host* their_host = nullptr;
      double their_end = 0;
      // The activity sends while the rank itself receives: both at once, as a communication
      // thread and its rank would.
      sy::transport::activity sender = sy::transport::spawn(t, [&] {
        theirs = &sy::current_rank_context();
        their_host = simgrid::s4u::this_actor::get_host();
        t.send(std::span<const char>(out), right, 5);
        their_end = t.now();
      });
      t.recv(std::span<char>(in), left, 5);
      sender.join();
      CHECK(&sy::current_rank_context() == mine);
      CHECK(theirs != mine);
      CHECK(their_host == simgrid::s4u::this_actor::get_host());
      CHECK(in[0] == static_cast<char>(left));
      CHECK(their_end == doctest::Approx(megabyte_seconds).epsilon(1e-6));
      CHECK(t.now() == doctest::Approx(megabyte_seconds).epsilon(1e-6));
    }, gigabit());
  }
}

TEST_CASE("simulated.activity.wait: a wait on the condition variable blocks until notified, it does not spin" *
          doctest::timeout(60)) {
  sy::transport::run_simulated(2, [](simulated& t) {
    if (t.rank() == 1) {
      std::vector<char> payload(1'000'000);
      t.send(std::span<const char>(payload), 0, 1);
      return;
    }
    sy::transport::mutex_of<simulated> m;
    sy::transport::condition_variable_of<simulated> arrived;
    bool done = false;
    int checks = 0;
    double woke_at = 0;
    sy::transport::activity receiver = sy::transport::spawn(t, [&] {
      std::vector<char> payload(1'000'000);
      t.recv(std::span<char>(payload), 1, 1);
      const std::lock_guard lock(m);
      done = true;
      arrived.notify_one();
    });
    {
      std::unique_lock lock(m);
      arrived.wait(lock, [&] {
        ++checks;
        return done;
      });
      woke_at = t.now();
    }
    receiver.join();
    // Once before the wait and once when notified: a spinning wait would check without end and
    // never let the message arrive.
    CHECK(checks == 2);
    CHECK(woke_at == doctest::Approx(megabyte_seconds).epsilon(1e-6));
  }, gigabit());
}

TEST_CASE("simulated.activity.mutex: activities that hold the mutex across a wait in simulated time exclude each "
          "other" * doctest::timeout(60)) {
  sy::transport::run_simulated(1, [](simulated& t) {
    sy::transport::simulated_mutex m;
    int inside = 0;
    int most = 0;
    std::vector<sy::transport::activity> workers;
    for (int i = 0; i < 3; ++i) {
      workers.push_back(sy::transport::spawn(t, [&] {
        const std::lock_guard lock(m);
        most = std::max(most, ++inside);
        simgrid::s4u::this_actor::sleep_for(1.0);  // others run meanwhile
        --inside;
      }));
    }
    for (auto& w : workers) w.join();
    CHECK(most == 1);
    CHECK(t.now() == doctest::Approx(3.0));
  }, quiet());
}

TEST_CASE("simulated.activity.receives: two activities of one rank waiting for messages at once both get theirs, in "
          "either order of arrival" * doctest::timeout(60)) {
  for (const bool activity_first : {true, false}) {
    CAPTURE(activity_first);
    for (const int hosts : {2, 4, 7}) {
      CAPTURE(hosts);
      sy::transport::run_simulated(hosts, [activity_first](simulated& t) {
        if (t.rank() != 0) {
          // Rank 1 sends tag 2 (the activity's) and tag 1 (the rank's) in the order asked for, a
          // simulated second apart; the others send to the rank's any-source receive.
          std::vector<int> value{t.rank()};
          if (t.rank() == 1) {
            t.send(std::span<const int>(value), 0, activity_first ? 2 : 1);
            simgrid::s4u::this_actor::sleep_for(1.0);
            t.send(std::span<const int>(value), 0, activity_first ? 1 : 2);
          } else {
            t.send(std::span<const int>(value), 0, 3);
          }
          return;
        }
        std::vector<int> got_activity(1, -1);
        std::vector<int> got_rank(1, -1);
        sy::transport::activity helper =
            sy::transport::spawn(t, [&] { t.recv(std::span<int>(got_activity), 1, 2); });
        t.recv(std::span<int>(got_rank), 1, 1);
        int others = 0;
        std::vector<int> any(1);
        for (int r = 2; r < t.size(); ++r) others += t.recv_any(std::span<int>(any), 3).count == 1 ? 1 : 0;
        helper.join();
        CHECK(got_activity[0] == 1);
        CHECK(got_rank[0] == 1);
        CHECK(others == t.size() - 2);
      }, quiet());
    }
  }
}

TEST_CASE("simulated.activity.failure: an activity that throws fails the run with its error, and its rank's wait "
          "is released" * doctest::timeout(60)) {
  const auto run = [] {
    sy::transport::run_simulated(2, [](simulated& t) {
      sy::transport::activity failing = sy::transport::spawn(t, [&] {
        if (t.rank() == 1) throw std::runtime_error("the activity of rank 1 broke");
      });
      std::vector<int> never(1);
      if (t.rank() == 1) t.recv(std::span<int>(never), 0, 9);  // nobody sends it
      failing.join();
    }, quiet());
  };
  CHECK_THROWS_WITH_AS(run(), doctest::Contains("the activity of rank 1 broke"), std::runtime_error);
}

TEST_CASE("simulated.activity.outside: a simulated mutex used outside a running world is a usage_error") {
  // Creating one needs no engine; locking needs a simulated rank.
  CHECK_THROWS_WITH_AS(sy::transport::detail::current_activity("mutex"), doctest::Contains("outside the ranks"),
                       sy::usage_error);
}
