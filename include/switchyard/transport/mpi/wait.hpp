// How an MPI wait completes: MPI_Wait when nothing needs the clock, else a loop of MPI_Test that
// yields (spin) or sleeps with a backoff (passive), under the stall watchdog.
#pragma once

#include <switchyard/transport/mpi/options.hpp>
#include <switchyard/transport/mpi/site.hpp>
#include <switchyard/transport/mpi/watchdog.hpp>
#include <switchyard/transport/transport.hpp>

#include <boost/mpi/config.hpp>  // <mpi.h>, without Open MPI's deprecated C++ bindings
#if defined(__linux__)
#include <sys/prctl.h>
#endif

#include <algorithm>
#include <chrono>
#include <optional>
#include <thread>

namespace switchyard::transport::detail {

// The passive policy's sleeps between two tests: 20 us at first, since most waits end within
// microseconds of a message, doubling to 100 us; once a wait has slept 5 ms, doubling on to 1 ms.
// MPI progresses only inside a test (an MPI-3 collective advances one round per test; a sleeping
// rank neither answers a rendezvous nor refills its sockets), so the waits inside a collective
// want short sleeps: on 4 emulated hosts at 1 Gbit/s, 64 KiB, a native all-reduce took 12.4 ms
// with 1 ms sleeps, 2.7 ms with 100 us. But a sleep costs about 27 us of CPU on these machines, so
// 100 us sleeps cost a waiting rank 20% of a core; a long idle wait (a straggler's peers) drops to
// 3-7%.
inline constexpr std::chrono::microseconds passive_first_sleep{20};
inline constexpr std::chrono::microseconds passive_short_sleep{100};
inline constexpr std::chrono::microseconds passive_short_phase{5000};
inline constexpr std::chrono::microseconds passive_longest_sleep{1000};

// While a passive wait sleeps, the thread's timer slack is 1 us instead of Linux's default 50 us,
// which would add that much to every short sleep (measured here: a 20 us sleep took 104 us at the
// default slack, 53 us at 1 us); restored when the wait ends. A no-op elsewhere.
class fine_timer_slack {
 public:
  fine_timer_slack() noexcept {
#if defined(__linux__) && defined(PR_SET_TIMERSLACK)
    saved_ = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    if (saved_ > 1000) prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
#endif
  }
  fine_timer_slack(const fine_timer_slack&) = delete;
  fine_timer_slack& operator=(const fine_timer_slack&) = delete;
  ~fine_timer_slack() {
#if defined(__linux__) && defined(PR_SET_TIMERSLACK)
    if (saved_ > 1000) prctl(PR_SET_TIMERSLACK, static_cast<unsigned long>(saved_), 0, 0, 0);
#endif
  }

 private:
  [[maybe_unused]] int saved_ = 0;
};

// Completes `request` as MPI_Wait does. When it must poll, it tests with MPI_Test (which also
// drives MPI's progress), then yields (spin) or sleeps with a backoff (passive), and with the
// watchdog on reports the stall once the timeout has passed. Returns MPI's error code.
inline int watched_wait(MPI_Request& request, MPI_Status* status, const watchdog& watch,
                        const wait_site& site) noexcept {
  if (!watch.polls()) return MPI_Wait(&request, status);
  const bool timed = watch.timeout.count() != 0;
  const auto started = std::chrono::steady_clock::now();
  const auto deadline = timed ? deadline_after(watch.timeout) : std::chrono::steady_clock::time_point::max();
  std::chrono::microseconds pause = passive_first_sleep;
  std::chrono::microseconds slept{0};
  std::optional<fine_timer_slack> slack;  // set at the first sleep: most waits never sleep
  for (;;) {
    int done = 0;
    if (const int code = MPI_Test(&request, &done, status); code != MPI_SUCCESS || done != 0) return code;
    if (timed && std::chrono::steady_clock::now() >= deadline) report_stall(watch, site, started);
    if (watch.policy == mpi_wait::passive) {
      if (!slack) slack.emplace();
      std::this_thread::sleep_for(pause);
      slept += pause;
      pause = std::min(pause * 2, slept < passive_short_phase ? passive_short_sleep : passive_longest_sleep);
    } else {
      std::this_thread::yield();
    }
  }
}

}  // namespace switchyard::transport::detail
