// transport/mpi/wait.hpp: a wait completes under every policy (blocking, timed, passive), the
// passive backoff's bounds, and the finer timer slack while a passive wait sleeps.
#include <switchyard/transport/mpi/wait.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <thread>
#include <vector>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

namespace sy = switchyard;
using sy::transport::mpi_wait;
using sy::transport::detail::wait_site;
using sy::transport::detail::watchdog;
using sy::transport::detail::watched_wait;
using namespace std::chrono_literals;

namespace detail = sy::transport::detail;
static_assert(detail::passive_first_sleep < detail::passive_short_sleep);
static_assert(detail::passive_short_sleep < detail::passive_longest_sleep);
static_assert(detail::passive_longest_sleep < detail::passive_short_phase);

namespace {

// Every way a wait can wait: MPI_Wait, a timed spin, a passive wait, and a timed passive one.
const watchdog policies[] = {
    {.timeout = 0ms, .policy = mpi_wait::spin},
    {.timeout = 60s, .policy = mpi_wait::spin},
    {.timeout = 0ms, .policy = mpi_wait::passive},
    {.timeout = 60s, .policy = mpi_wait::passive},
};

// A communicator of its own, so that these messages never meet another suite's.
class duplicate_world {
 public:
  duplicate_world() { MPI_Comm_dup(MPI_COMM_WORLD, &comm_); }
  duplicate_world(const duplicate_world&) = delete;
  duplicate_world& operator=(const duplicate_world&) = delete;
  ~duplicate_world() { MPI_Comm_free(&comm_); }
  [[nodiscard]] MPI_Comm get() const noexcept { return comm_; }
  [[nodiscard]] int rank() const {
    int rank = 0;
    MPI_Comm_rank(comm_, &rank);
    return rank;
  }
  [[nodiscard]] int size() const {
    int size = 0;
    MPI_Comm_size(comm_, &size);
    return size;
  }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

}  // namespace

TEST_CASE("mpi.wait.null_request: a request that is already complete returns at once under every policy") {
  for (const watchdog& watch : policies) {
    MPI_Request request = MPI_REQUEST_NULL;
    CHECK(watched_wait(request, MPI_STATUS_IGNORE, watch, wait_site{}) == MPI_SUCCESS);
    CHECK(request == MPI_REQUEST_NULL);
  }
}

TEST_CASE("mpi.wait.self_message: a message to this rank arrives whole under every policy") {
  const duplicate_world world;
  for (const watchdog& watch : policies) {
    CAPTURE(watch.timeout.count());
    CAPTURE(static_cast<int>(watch.policy));
    const std::vector<int> sent{1, 2, 3, world.rank()};
    std::vector<int> received(4, -1);
    MPI_Request receive = MPI_REQUEST_NULL;
    MPI_Request send = MPI_REQUEST_NULL;
    MPI_Irecv(received.data(), 4, MPI_INT, world.rank(), 6, world.get(), &receive);
    MPI_Isend(sent.data(), 4, MPI_INT, world.rank(), 6, world.get(), &send);
    MPI_Status status;
    CHECK(watched_wait(receive, &status, watch, {"receive", world.rank(), 6, 4, world.size()}) == MPI_SUCCESS);
    CHECK(watched_wait(send, MPI_STATUS_IGNORE, watch, {"send", world.rank(), 6, 4, world.size()}) == MPI_SUCCESS);
    CHECK(receive == MPI_REQUEST_NULL);
    CHECK(status.MPI_SOURCE == world.rank());
    CHECK(status.MPI_TAG == 6);
    CHECK(received == sent);
  }
}

TEST_CASE("mpi.wait.late_message: a passive wait sleeps through a late sender and still gets its message") {
  const duplicate_world world;
  if (world.size() < 2 || world.rank() > 1) {
    MPI_Barrier(world.get());
    return;
  }
  const watchdog passive{.timeout = 60s, .rank = world.rank(), .world_rank = world.rank(), .policy = mpi_wait::passive};
  std::vector<double> data(1000, world.rank() == 0 ? 0.5 : 0.0);
  MPI_Request request = MPI_REQUEST_NULL;
  if (world.rank() == 0) {
    std::this_thread::sleep_for(30ms);  // rank 1's wait reaches its longest sleeps meanwhile
    MPI_Isend(data.data(), 1000, MPI_DOUBLE, 1, 2, world.get(), &request);
  } else {
    MPI_Irecv(data.data(), 1000, MPI_DOUBLE, 0, 2, world.get(), &request);
  }
  CHECK(watched_wait(request, MPI_STATUS_IGNORE, passive, {"receive", 1 - world.rank(), 2, 1000, 2}) == MPI_SUCCESS);
  CHECK(data.back() == 0.5);
  MPI_Barrier(world.get());
}

#if defined(__linux__) && defined(PR_SET_TIMERSLACK)
TEST_CASE("mpi.wait.fine_timer_slack: 1 us while it lives, the thread's own slack after") {
  const int before = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
  {
    const detail::fine_timer_slack slack;
    CHECK(prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0) == (before > 1000 ? 1000 : before));
  }
  CHECK(prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0) == before);
}
#endif
