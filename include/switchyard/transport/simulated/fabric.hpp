// What the ranks of a simulated world share: each rank's actor, inbox and matching queues, the
// groups split from the world, and the fate of the run. Every rank is a SimGrid actor and all of
// them take turns on the thread that runs the simulation, so nothing here needs a lock; what does
// need care is that a rank gives the thread away inside every SimGrid call that blocks, and gets
// its own library state (core/rank_context.hpp) back when it resumes.
#pragma once

#include <switchyard/core/error.hpp>
#include <switchyard/core/rank_context.hpp>
#include <switchyard/transport/simulated/options.hpp>
#include <switchyard/transport/topology.hpp>
#include <switchyard/transport/transport.hpp>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/Exception.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/ConditionVariable.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Mailbox.hpp>
#include <simgrid/s4u/Mutex.hpp>

#include <time.h>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
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
// small messages), and what the receiver matches it by. Messages and their payload buffers come
// from the fabric's `sim_message_pool` and go back to it once their receiver took them.
struct sim_message {
  std::uint64_t group = 0;
  int source = 0;  // rank in the group
  int tag = 0;
  std::size_t element_size = 1;
  const void* element_type = nullptr;
  bool abort_notice = false;  // a failing rank's word to the others, not data
  bool remote = false;        // between two hosts: its bytes cost CPU at both ends (byte_cost)
  std::size_t bytes = 0;
  std::size_t capacity = 0;
  std::unique_ptr<std::byte[]> payload;

  [[nodiscard]] std::byte* data() noexcept { return payload.get(); }
  [[nodiscard]] const std::byte* data() const noexcept { return payload.get(); }
};

// The messages of a world, with their payload buffers, kept for reuse: a buffer is allocated once
// for the largest number of messages of its size class in flight at once, then taken again, so the
// run pays neither an allocation nor the first touch of fresh pages (about 10 us per 4 KiB page
// here) per message. Size classes are powers of two from 64 bytes, so a buffer holds at most twice
// its message. Every message a world made stays owned here until the world ends, which also frees
// the ones a receiver never took.
class sim_message_pool {
 public:
  // A message with room for `bytes` bytes (`bytes` set, other fields as the last user left them).
  sim_message* acquire(std::size_t bytes) {
    const std::size_t size_class = class_of(bytes);
    if (size_class >= free_.size()) free_.resize(size_class + 1);
    std::vector<sim_message*>& spare = free_[size_class];
    sim_message* m = nullptr;
    if (spare.empty()) {
      owned_.push_back(std::make_unique<sim_message>());
      m = owned_.back().get();
      m->capacity = std::size_t{1} << size_class;
      m->payload = std::make_unique_for_overwrite<std::byte[]>(m->capacity);
    } else {
      m = spare.back();
      spare.pop_back();
    }
    m->bytes = bytes;
    return m;
  }
  // Takes back a message its receiver is done with.
  void release(sim_message* m) { free_[class_of(m->capacity)].push_back(m); }
  // Messages made so far (in flight, waiting to be matched, or spare).
  [[nodiscard]] std::size_t made() const noexcept { return owned_.size(); }

 private:
  static constexpr std::size_t smallest_class = 6;
  static std::size_t class_of(std::size_t bytes) noexcept {
    return std::max<std::size_t>(smallest_class, static_cast<std::size_t>(std::bit_width(bytes - (bytes > 0 ? 1 : 0))));
  }

  std::vector<std::unique_ptr<sim_message>> owned_;
  std::vector<std::vector<sim_message*>> free_;  // by size class
};

// What a rank's request does, kept as numbers and put into words only for an error or the report
// of a deadlock (formatting it for every message cost more than sending it).
struct sim_operation {
  enum class kind : unsigned char { nothing, send, receive, dropped_sends, join };
  kind what = kind::nothing;
  std::size_t count = 0;
  int peer = 0;
  int tag = 0;
};

inline std::string describe(const sim_operation& op) {
  switch (op.what) {
    case sim_operation::kind::send:
      return str("send of ", op.count, " elements to rank ", op.peer, " with tag ", op.tag);
    case sim_operation::kind::receive:
      return str("receive of ", op.count, " elements from ",
                 op.peer == any_source ? std::string("any rank") : str("rank ", op.peer), " with tag ",
                 op.tag == any_tag ? std::string("any") : std::to_string(op.tag));
    case sim_operation::kind::dropped_sends:
      return "the sends it dropped before they completed";
    case sim_operation::kind::join:
      return str("its spawned activity (actor ", op.peer, ") to return");
    case sim_operation::kind::nothing:
      break;
  }
  return "nothing the transport knows of";
}

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
  const std::size_t count = m.bytes / m.element_size;
  if (m.element_type != r.element_type || m.element_size != r.element_size) {
    r.failure = str("message from rank ", m.source, " to rank ", receiver, " with tag ", m.tag, " has elements of ",
                    m.element_size, " bytes but the receive expects another type of ", r.element_size, " bytes");
  } else if (m.bytes > r.bytes || (r.exact && m.bytes != r.bytes)) {
    r.failure = str("message from rank ", m.source, " to rank ", receiver, " with tag ", m.tag, " has ", count,
                    " elements but the receive buffer ", r.exact ? "expects " : "holds only ", r.bytes / r.element_size);
  } else {
    if (m.bytes > 0) std::memcpy(r.data, m.data(), m.bytes);
    r.status = {m.source, m.tag, count};
  }
  r.done = true;
}

struct sim_fabric;
struct sim_rank;

// One activity of a rank, an actor: the rank's own (its function), or one it spawned
// (`simulated::spawn`), which has a library state of its own as a thread would. Whichever runs
// on the thread is `current_sim_activity()`: an actor sets it when it starts and whenever it
// resumes after a SimGrid call.
struct sim_activity {
  sim_rank* rank = nullptr;
  rank_context* context = nullptr;
  double cpu_mark = 0;  // thread CPU seconds when its clock last started
};

inline sim_activity*& current_sim_activity() noexcept {
  thread_local sim_activity* current = nullptr;
  return current;
}

// One rank: its actor's host and inbox, its library state, and the messages and receives that
// wait to be matched.
struct sim_rank {
  int world_rank = 0;
  simgrid::s4u::Host* host = nullptr;
  int host_index = 0;  // its host's place among the platform's hosts: its node (topology())
  simgrid::s4u::Mailbox* inbox = nullptr;
  rank_context context;
  std::deque<sim_message*> unexpected;                  // arrived before their receive
  std::vector<sim_receive*> posted;                     // posted before their message, in order
  std::vector<simgrid::s4u::CommPtr> unfinished_sends;  // of requests dropped before they completed
  bool measure_cpu = false;                             // compute_model::measured
  sim_activity own{this, &context, 0};                  // the rank's function
  int spawned = 0;                                      // activities it started, to name their actors
  // With several activities waiting, one takes messages from the inbox at a time (`pulling`) and
  // wakes the others after each one it delivered.
  bool pulling = false;
  int waiters = 0;  // activities waiting for the puller's deliveries
  simgrid::s4u::MutexPtr pull_mutex;
  simgrid::s4u::ConditionVariablePtr delivered;
  std::vector<std::byte> native_scratch;                // the native collectives' copies of its block
  bool finished = false;
  sim_operation waiting_for;  // what it blocks on, for the report of a deadlock
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
  ~sim_fabric() = default;

  simulated_options options;
  std::vector<std::unique_ptr<sim_rank>> ranks;
  std::uint64_t next_group = 1;
  sim_message_pool message_pool;
  std::uint64_t messages = 0;  // posted since the world began, barriers' included
  bool aborted = false;
  bool ended = false;
  std::exception_ptr first_failure;
  std::string failure_summary;

  sim_rank& rank(int world_rank) { return *ranks[static_cast<std::size_t>(world_rank)]; }
};

// The activity of rank `r` that runs now: the current one if it belongs to `r`, else the rank's own.
inline sim_activity& activity_of(sim_rank& r) noexcept {
  sim_activity* current = current_sim_activity();
  return current != nullptr && current->rank == &r ? *current : r.own;
}

// Runs `f`, a SimGrid call that may block and let other actors run on this thread, as activity
// `a`: its floating-point mode is kept across, its library state is the thread's again after, and
// its CPU clock starts again after (the thread's CPU time meanwhile was other actors' and SimGrid's).
template <class F>
decltype(auto) blocking(sim_activity& a, F&& f) {
  switchyard::detail::suspend(*a.context);
  struct resume_on_exit {
    sim_activity& a;
    ~resume_on_exit() {
      current_sim_activity() = &a;
      switchyard::detail::resume(*a.context);
      if (a.rank->measure_cpu) a.cpu_mark = thread_cpu_seconds();
    }
  } guard{a};
  return std::forward<F>(f)();
}

template <class F>
decltype(auto) blocking(sim_rank& r, F&& f) {
  return blocking(activity_of(r), std::forward<F>(f));
}

// Makes `a` the thread's activity when its actor starts.
inline void start_activity(sim_activity& a) noexcept {
  current_sim_activity() = &a;
  switchyard::detail::resume(*a.context);
  if (a.rank->measure_cpu) a.cpu_mark = thread_cpu_seconds();
}

// Runs `seconds` of this machine's CPU time on the host of activity `a`, as `this_actor::execute`.
inline void execute_seconds(sim_activity& a, double seconds) {
  if (seconds > 0) blocking(a, [seconds] { simgrid::s4u::this_actor::execute(seconds * reference_flops); });
}

// The CPU time activity `a` used since its clock last started runs on its host
// (compute_model::measured).
inline void charge_compute(sim_activity& a) {
  if (a.rank->measure_cpu) execute_seconds(a, thread_cpu_seconds() - a.cpu_mark);
}

// Runs `seconds` of this machine's CPU time on the host of rank `r` (simulated::compute), from the
// rank's calling activity.
inline void charge(sim_rank& r, double seconds) { execute_seconds(activity_of(r), seconds); }

// Runs the CPU time that sending or receiving a message of `bytes` between two hosts costs
// (simulated_options::byte_cost) on the host of the calling activity of rank `r`.
inline void charge_bytes(const sim_fabric& fabric, sim_rank& r, std::size_t bytes, bool remote) {
  if (remote) execute_seconds(activity_of(r), fabric.options.byte_cost * static_cast<double>(bytes));
}

// Opens every transport call of a rank: the CPU time the calling activity used since its clock
// last started runs on its host first (compute_model::measured), as `this_actor::execute` of that many seconds
// at this machine's speed, so a host of speed factor f takes 1/f of it and ranks that share a
// host share its cores. The transport's own work (copies, folds) is charged at its next call.
// Under compute_model::calibrated nothing is measured: the program charges its compute (`charge`).
inline void enter_call(const sim_fabric& fabric, sim_rank& r, const char* what) {
  if (fabric.ended) {
    raise<usage_error>(str("rank ", r.world_rank, ": ", what, " on a simulated transport whose world has ended"));
  }
  charge_compute(activity_of(r));
}

// Hands a message that reached rank `r` to the first posted receive that accepts it (and the
// message back to the pool), else keeps it.
inline void deliver(sim_fabric& fabric, sim_rank& r, sim_message* m) {
  for (auto it = r.posted.begin(); it != r.posted.end(); ++it) {
    if (accepts(**it, *m)) {
      sim_receive& receive = **it;
      r.posted.erase(it);
      complete(receive, *m, r.world_rank);
      fabric.message_pool.release(m);
      return;
    }
  }
  r.unexpected.push_back(m);
}

// Raises on rank `r` once another rank has failed.
inline void check_not_aborted(sim_fabric& fabric, const sim_rank& r, const sim_operation& what) {
  if (fabric.aborted) {
    raise<transport_error>(str("rank ", r.world_rank, ": ", describe(what), " abandoned because ", fabric.failure_summary));
  }
}

// Blocks rank `r` until the next message reaches its inbox, and delivers it.
inline void take_next(sim_fabric& fabric, sim_rank& r, const sim_operation& what) {
  r.waiting_for = what;
  sim_message* m = blocking(r, [&r] { return r.inbox->get<sim_message>(); });
  r.waiting_for = {};
  if (m->abort_notice) {
    fabric.aborted = true;
    fabric.message_pool.release(m);
  }
  check_not_aborted(fabric, r, what);
  charge_bytes(fabric, r, m->bytes, m->remote);
  deliver(fabric, r, m);
}

// Ends the calling activity's turn at the inbox of rank `r` and wakes the activities that wait for
// its deliveries. The actors take turns on one thread, so one that waits counts itself before its
// first SimGrid call: with none counted, no lock is needed (one message costs no SimGrid call more).
inline void wake_waiters(sim_rank& r) {
  if (r.waiters == 0) {
    r.pulling = false;
    return;
  }
  blocking(r, [&r] {
    const std::lock_guard lock(*r.pull_mutex);
    r.pulling = false;
    r.delivered->notify_all();
  });
}

// Takes the next message from the inbox of rank `r` as the rank's one activity that does so now,
// delivers it and wakes the activities that wait for it.
inline void pull_next(sim_fabric& fabric, sim_rank& r, const sim_operation& what) {
  r.pulling = true;
  try {
    take_next(fabric, r, what);
  } catch (const simgrid::ForcefulKillException&) {
    r.pulling = false;  // SimGrid ends a deadlocked run: no SimGrid call any more
    throw;
  } catch (...) {
    wake_waiters(r);
    throw;
  }
  wake_waiters(r);
}

// Blocks the calling activity of rank `r` until `done()` may have changed: it takes the next
// message from the inbox and delivers it, or, while another activity of the rank does that, waits
// until that one delivered a message. One activity at a time takes from the inbox: a message it
// takes may complete another's receive.
template <class Done>
void await_delivery(sim_fabric& fabric, sim_rank& r, const sim_operation& what, Done done) {
  if (r.pulling) {
    r.waiting_for = what;
    ++r.waiters;
    struct uncount {
      int& waiters;
      ~uncount() { --waiters; }
    } const counted{r.waiters};
    blocking(r, [&] {
      std::unique_lock lock(*r.pull_mutex);
      while (r.pulling && !done() && !fabric.aborted) r.delivered->wait(lock);
    });
    return;
  }
  pull_next(fabric, r, what);
}

// A message from `source` (a rank of group `group`) with room for `bytes` bytes, from the pool.
inline sim_message* new_message(sim_fabric& fabric, std::uint64_t group, int source, int tag, std::size_t bytes) {
  sim_message* m = fabric.message_pool.acquire(bytes);
  m->group = group;
  m->source = source;
  m->tag = tag;
  m->abort_notice = false;
  m->remote = false;
  return m;
}

// Posts message `m` to world rank `destination`: it starts flowing at once (the inbox has its
// rank as permanent receiver) and costs its size on the links of the route (one byte at least).
inline simgrid::s4u::CommPtr post(sim_fabric& fabric, sim_message* m, int destination) {
  ++fabric.messages;
  // SimGrid moves an empty message in no time at all: it costs one byte, so it pays the latency.
  const auto bytes = std::max<std::uint64_t>(1, m->bytes);
  return fabric.rank(destination).inbox->put_async(m, bytes);
}

// Tells every rank that has not finished that `world_rank` failed, so that their waits raise; the
// failing rank itself too when the failure came from an activity it spawned (`own_rank_too`).
inline void abort_world(sim_fabric& fabric, int world_rank, std::exception_ptr failure, const std::string& what,
                        bool own_rank_too = false) {
  if (fabric.first_failure) return;
  fabric.first_failure = std::move(failure);
  fabric.failure_summary = str("rank ", world_rank, " failed: ", what);
  fabric.aborted = true;
  for (const auto& r : fabric.ranks) {
    if ((r->world_rank == world_rank && !own_rank_too) || r->finished) continue;
    sim_message* notice = new_message(fabric, 0, world_rank, 0, 0);
    notice->abort_notice = true;
    r->inbox->put_init(notice, 0)->detach();
  }
}

// A group of simulated ranks that talk to each other: the world, or one result of split().
// The topology of each rank of the group of world ranks `members`: a node is a simulated host.
inline std::vector<node_topology> host_topologies(const sim_fabric& fabric, const std::vector<int>& members) {
  std::vector<int> node_of(fabric.ranks.size());
  for (std::size_t w = 0; w < node_of.size(); ++w) node_of[w] = fabric.ranks[w]->host_index;
  return topologies(members, node_of);
}

struct sim_group {
  sim_group(std::shared_ptr<sim_fabric> fab, std::uint64_t group_id, std::vector<int> members)
      : fabric(std::move(fab)),
        id(group_id),
        world_ranks(std::move(members)),
        size(static_cast<int>(world_ranks.size())),
        splits(world_ranks.size()),
        split_results(world_ranks.size()),
        checks(world_ranks.size(), collective_check_state{fabric->options.check_collectives, 0}),
        topology(host_topologies(*fabric, world_ranks)),
        caches(world_ranks.size()) {}

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
  std::vector<node_topology> topology;  // each rank's: the ranks of one host form a node
  std::vector<group_cache> caches;      // each rank's

  sim_rank& rank(int group_rank) const { return fabric->rank(world_ranks[static_cast<std::size_t>(group_rank)]); }
};

// Refuses a peer outside the group (`any_source` only where `allow_any`).
inline void check_peer(const sim_group& group, int rank, int peer, const char* what, bool allow_any) {
  if ((peer < 0 || peer >= group.size) && !(allow_any && peer == any_source)) {
    raise<usage_error>(str("rank ", rank, ": ", what, " names rank ", peer, " but the group has ranks 0 to ", group.size - 1));
  }
}

}  // namespace switchyard::transport::detail
