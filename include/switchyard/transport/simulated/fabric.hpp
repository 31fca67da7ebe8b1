// What the ranks of a simulated world share: each rank's actor, inbox and matching queues, the
// groups split from the world, and the fate of the run. Every rank is a SimGrid actor and all of
// them take turns on the thread that runs the simulation, so nothing here needs a lock; what does
// need care is that a rank gives the thread away inside every SimGrid call that blocks, and gets
// its own library state (core/rank_context.hpp) back when it resumes.
#pragma once

#include <switchyard/core/error.hpp>
#include <switchyard/core/rank_context.hpp>
#include <switchyard/transport/simulated/options.hpp>
#include <switchyard/transport/transport.hpp>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Mailbox.hpp>

#include <time.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <exception>
#include <memory>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

namespace switchyard::transport::detail {

using switchyard::detail::raise;
using switchyard::detail::str;

// Simulated flops of one second of this machine's CPU: a host of speed factor f runs
// `reference_flops * f` flops a second.
inline constexpr double reference_flops = 1e9;

// Tags below zero are the transport's own (a user's `any_tag` never matches them).
inline constexpr int native_reduce_tag = -2;
inline constexpr int native_gather_tag = -3;
inline constexpr int barrier_tag = -4;

template <class T>
inline constexpr char element_type_tag = 0;

// One message on its way: the sender's data, copied when it was sent (an eager send, as MPI sends
// small messages), and what the receiver matches it by.
struct sim_message {
  std::uint64_t group = 0;
  int source = 0;  // rank in the group
  int tag = 0;
  std::size_t element_size = 1;
  const void* element_type = nullptr;
  bool abort_notice = false;  // a failing rank's word to the others, not data
  std::vector<std::byte> data;
};

// A receive posted before its message came.
struct sim_receive {
  std::uint64_t group = 0;
  int source = any_source;
  int tag = any_tag;
  std::byte* data = nullptr;
  std::size_t bytes = 0;
  std::size_t element_size = 1;
  const void* element_type = nullptr;
  bool exact = true;
  bool done = false;
  std::string failure;
  message_status status;
};

inline bool accepts(const sim_receive& r, const sim_message& m) noexcept {
  return r.group == m.group && (r.source == any_source || r.source == m.source) &&
         (r.tag == m.tag || (r.tag == any_tag && m.tag >= 0));
}

// Copies a matched message into its receive and completes it, or records why they do not fit
// (`receiver` is the receiving rank's world rank).
inline void complete(sim_receive& r, const sim_message& m, int receiver) {
  const std::size_t count = m.data.size() / m.element_size;
  if (m.element_type != r.element_type || m.element_size != r.element_size) {
    r.failure = str("message from rank ", m.source, " to rank ", receiver, " with tag ", m.tag, " has elements of ",
                    m.element_size, " bytes but the receive expects another type of ", r.element_size, " bytes");
  } else if (m.data.size() > r.bytes || (r.exact && m.data.size() != r.bytes)) {
    r.failure = str("message from rank ", m.source, " to rank ", receiver, " with tag ", m.tag, " has ", count,
                    " elements but the receive buffer ", r.exact ? "expects " : "holds only ", r.bytes / r.element_size);
  } else {
    if (!m.data.empty()) std::memcpy(r.data, m.data.data(), m.data.size());
    r.status = {m.source, m.tag, count};
  }
  r.done = true;
}

struct sim_fabric;

// One rank: its actor's host and inbox, its library state, and the messages and receives that
// wait to be matched.
struct sim_rank {
  int world_rank = 0;
  simgrid::s4u::Host* host = nullptr;
  simgrid::s4u::Mailbox* inbox = nullptr;
  rank_context context;
  std::deque<std::unique_ptr<sim_message>> unexpected;  // arrived before their receive
  std::vector<sim_receive*> posted;                     // posted before their message, in order
  std::vector<simgrid::s4u::CommPtr> unfinished_sends;  // of requests dropped before they completed
  bool measure_cpu = false;                             // compute_model::measured
  double cpu_mark = 0;                                  // thread CPU seconds when its clock last started
  std::vector<std::byte> native_scratch;                // the native collectives' copies of its block
  bool finished = false;
  std::string waiting_for;  // what it blocks on, for the report of a deadlock
};

inline double thread_cpu_seconds() noexcept {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

// What a world and all groups split from it share.
struct sim_fabric {
  explicit sim_fabric(simulated_options opts) : options(std::move(opts)) {}
  sim_fabric(const sim_fabric&) = delete;
  sim_fabric& operator=(const sim_fabric&) = delete;
  ~sim_fabric() {
    for (sim_message* m : in_flight) delete m;
  }

  simulated_options options;
  std::vector<std::unique_ptr<sim_rank>> ranks;
  std::uint64_t next_group = 1;
  std::unordered_set<sim_message*> in_flight;  // sent, not yet taken by their receiver
  bool aborted = false;
  bool ended = false;
  std::exception_ptr first_failure;
  std::string failure_summary;

  sim_rank& rank(int world_rank) { return *ranks[static_cast<std::size_t>(world_rank)]; }
};

// Runs `f`, a SimGrid call that may block and let other ranks run on this thread, as rank `r`:
// its floating-point mode is kept across, its library state is the thread's again after, and its
// CPU clock starts again after (the thread's CPU time meanwhile was other ranks' and SimGrid's).
template <class F>
decltype(auto) blocking(sim_rank& r, F&& f) {
  switchyard::detail::suspend(r.context);
  struct resume_on_exit {
    sim_rank& r;
    ~resume_on_exit() {
      switchyard::detail::resume(r.context);
      if (r.measure_cpu) r.cpu_mark = thread_cpu_seconds();
    }
  } guard{r};
  return std::forward<F>(f)();
}

// Runs `seconds` of this machine's CPU time on rank `r`'s host (simulated::compute).
inline void charge(sim_rank& r, double seconds) {
  if (seconds > 0) blocking(r, [seconds] { simgrid::s4u::this_actor::execute(seconds * reference_flops); });
}

// Opens every transport call of a rank: the CPU time the rank used since its clock last started
// runs on its host first (compute_model::measured), as `this_actor::execute` of that many seconds
// at this machine's speed, so a host of speed factor f takes 1/f of it and ranks that share a
// host share its cores. The transport's own work (copies, folds) is charged at its next call.
// Under compute_model::calibrated nothing is measured: the program charges its compute (`charge`).
inline void enter_call(const sim_fabric& fabric, sim_rank& r, const char* what) {
  if (fabric.ended) {
    raise<usage_error>(str("rank ", r.world_rank, ": ", what, " on a simulated transport whose world has ended"));
  }
  if (r.measure_cpu) charge(r, thread_cpu_seconds() - r.cpu_mark);
}

// Hands a message that reached rank `r` to the first posted receive that accepts it, else keeps it.
inline void deliver(sim_rank& r, std::unique_ptr<sim_message> m) {
  for (auto it = r.posted.begin(); it != r.posted.end(); ++it) {
    if (accepts(**it, *m)) {
      sim_receive& receive = **it;
      r.posted.erase(it);
      complete(receive, *m, r.world_rank);
      return;
    }
  }
  r.unexpected.push_back(std::move(m));
}

// Raises on rank `r` once another rank has failed.
inline void check_not_aborted(sim_fabric& fabric, const sim_rank& r, const std::string& what) {
  if (fabric.aborted) {
    raise<transport_error>(str("rank ", r.world_rank, ": ", what, " abandoned because ", fabric.failure_summary));
  }
}

// Blocks rank `r` until the next message reaches its inbox, and delivers it.
inline void take_next(sim_fabric& fabric, sim_rank& r, const std::string& what) {
  r.waiting_for = what;
  sim_message* raw = blocking(r, [&r] { return r.inbox->get<sim_message>(); });
  r.waiting_for.clear();
  fabric.in_flight.erase(raw);
  std::unique_ptr<sim_message> m(raw);
  if (m->abort_notice) fabric.aborted = true;
  check_not_aborted(fabric, r, what);
  deliver(r, std::move(m));
}

// Posts a message from `source` (a rank of group `group`) to world rank `destination`: the
// message starts flowing at once (the inbox has its rank as permanent receiver) and costs its
// size on the links of the route (one byte at least).
inline simgrid::s4u::CommPtr post(sim_fabric& fabric, std::unique_ptr<sim_message> m, int destination) {
  sim_message* raw = m.release();
  fabric.in_flight.insert(raw);
  // SimGrid moves an empty message in no time at all: it costs one byte, so it pays the latency.
  const auto bytes = std::max<std::uint64_t>(1, raw->data.size());
  return fabric.rank(destination).inbox->put_async(raw, bytes);
}

// Tells every rank that has not finished that `world_rank` failed, so that their waits raise.
inline void abort_world(sim_fabric& fabric, int world_rank, std::exception_ptr failure, const std::string& what) {
  if (fabric.first_failure) return;
  fabric.first_failure = std::move(failure);
  fabric.failure_summary = str("rank ", world_rank, " failed: ", what);
  fabric.aborted = true;
  for (const auto& r : fabric.ranks) {
    if (r->world_rank == world_rank || r->finished) continue;
    auto notice = std::make_unique<sim_message>();
    notice->abort_notice = true;
    sim_message* raw = notice.release();
    fabric.in_flight.insert(raw);
    r->inbox->put_init(raw, 0)->detach();
  }
}

// A group of simulated ranks that talk to each other: the world, or one result of split().
struct sim_group {
  sim_group(std::shared_ptr<sim_fabric> fab, std::uint64_t group_id, std::vector<int> members)
      : fabric(std::move(fab)),
        id(group_id),
        world_ranks(std::move(members)),
        size(static_cast<int>(world_ranks.size())),
        splits(world_ranks.size()),
        split_results(world_ranks.size()),
        checks(world_ranks.size(), collective_check_state{fabric->options.check_collectives, 0}) {}

  struct split_request {
    int color = 0;
    int key = 0;
  };

  std::shared_ptr<sim_fabric> fabric;
  std::uint64_t id;
  std::vector<int> world_ranks;  // group rank -> world rank
  int size;
  std::vector<split_request> splits;
  std::vector<std::pair<std::shared_ptr<sim_group>, int>> split_results;
  std::vector<collective_check_state> checks;

  sim_rank& rank(int group_rank) const { return fabric->rank(world_ranks[static_cast<std::size_t>(group_rank)]); }
};

// Refuses a peer outside the group (`any_source` only where `allow_any`).
inline void check_peer(const sim_group& group, int rank, int peer, const char* what, bool allow_any) {
  if ((peer < 0 || peer >= group.size) && !(allow_any && peer == any_source)) {
    raise<usage_error>(str("rank ", rank, ": ", what, " names rank ", peer, " but the group has ranks 0 to ", group.size - 1));
  }
}

}  // namespace switchyard::transport::detail
