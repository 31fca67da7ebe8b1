// The concurrency of a simulated rank (transport/concurrency.hpp): an activity it spawns is a
// SimGrid actor on its host, and its mutex and condition variable are SimGrid's, so a rank that
// waits for its activity lets every other actor run, and the activity's time is simulated time.
#pragma once

#include <switchyard/core/error.hpp>
#include <switchyard/core/floating_point.hpp>
#include <switchyard/core/rank_context.hpp>
#include <switchyard/transport/simulated/fabric.hpp>

#include <simgrid/Exception.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/ConditionVariable.hpp>
#include <simgrid/s4u/Mutex.hpp>

#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

namespace switchyard::transport {

namespace detail {

// The calling actor's activity; a simulated mutex or condition variable used outside a simulated
// rank is a mistake.
inline sim_activity& current_activity(const char* what) {
  sim_activity* current = current_sim_activity();
  if (current == nullptr) {
    raise<usage_error>(str("a simulated ", what, " was used outside the ranks of a running simulated world"));
  }
  return *current;
}

// What a spawned activity owns: its library state, fresh as a new thread's.
struct sim_spawned {
  rank_context context;
  sim_activity activity;
};

}  // namespace detail

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

/// @brief A mutex of simulated activities (`simulated::mutex_type`): SimGrid's, so a rank that
/// waits for it lets the other actors run. BasicLockable and Lockable; made and used inside a
/// running simulated world. Locking first charges the compute the activity did since its last
/// transport call (`compute_model::measured`).
class simulated_mutex {
 public:
  simulated_mutex() : mutex_(simgrid::s4u::Mutex::create()) {}
  simulated_mutex(const simulated_mutex&) = delete;
  simulated_mutex& operator=(const simulated_mutex&) = delete;

  void lock();
  void unlock();
  bool try_lock();
  /// SimGrid's mutex.
  [[nodiscard]] const simgrid::s4u::MutexPtr& native_handle() const noexcept { return mutex_; }

 private:
  simgrid::s4u::MutexPtr mutex_;
};

/// @brief A condition variable of simulated activities (`simulated::condition_variable_type`):
/// SimGrid's, waited on with a `std::unique_lock<simulated_mutex>`. A wait blocks the actor in
/// simulated time; it never spins.
class simulated_condition_variable {
 public:
  simulated_condition_variable() : condition_(simgrid::s4u::ConditionVariable::create()) {}
  simulated_condition_variable(const simulated_condition_variable&) = delete;
  simulated_condition_variable& operator=(const simulated_condition_variable&) = delete;

  void wait(std::unique_lock<simulated_mutex>& lock);
  template <class Predicate>
  void wait(std::unique_lock<simulated_mutex>& lock, Predicate ready) {
    while (!ready()) wait(lock);
  }
  void notify_one();
  void notify_all();

 private:
  simgrid::s4u::ConditionVariablePtr condition_;
};

/// @brief An activity a simulated rank spawned (`simulated::spawn`): an actor on the rank's host,
/// with a library state of its own (core/rank_context.hpp) as a new thread has, and the spawning
/// activity's floating-point mode. `join` blocks in simulated time until it returned. A function
/// that throws fails the run as a rank's would.
class simulated_activity {
 public:
  simulated_activity() = default;
  void join();
  [[nodiscard]] bool joinable() const noexcept { return actor_ != nullptr; }

 private:
  friend class simulated;
  simulated_activity(simgrid::s4u::ActorPtr actor, detail::sim_rank& rank) : actor_(std::move(actor)), rank_(&rank) {}

  simgrid::s4u::ActorPtr actor_;
  detail::sim_rank* rank_ = nullptr;
};

// ---------------------------------------------------------------------------------------------
// Implementation
// ---------------------------------------------------------------------------------------------

inline void simulated_mutex::lock() {
  detail::sim_activity& me = detail::current_activity("mutex");
  detail::charge_compute(me);
  detail::blocking(me, [this] { mutex_->lock(); });
}

inline void simulated_mutex::unlock() {
  detail::blocking(detail::current_activity("mutex"), [this] { mutex_->unlock(); });
}

inline bool simulated_mutex::try_lock() {
  detail::sim_activity& me = detail::current_activity("mutex");
  detail::charge_compute(me);
  return detail::blocking(me, [this] { return mutex_->try_lock(); });
}

inline void simulated_condition_variable::wait(std::unique_lock<simulated_mutex>& lock) {
  detail::sim_activity& me = detail::current_activity("condition variable");
  detail::charge_compute(me);
  detail::blocking(me, [&] { condition_->wait(lock.mutex()->native_handle()); });
}

inline void simulated_condition_variable::notify_one() {
  detail::sim_activity& me = detail::current_activity("condition variable");
  detail::charge_compute(me);
  detail::blocking(me, [this] { condition_->notify_one(); });
}

inline void simulated_condition_variable::notify_all() {
  detail::sim_activity& me = detail::current_activity("condition variable");
  detail::charge_compute(me);
  detail::blocking(me, [this] { condition_->notify_all(); });
}

inline void simulated_activity::join() {
  if (!actor_) return;
  detail::sim_activity& me = detail::activity_of(*rank_);
  detail::charge_compute(me);
  rank_->waiting_for = {detail::sim_operation::kind::join, 0, static_cast<int>(actor_->get_pid()), 0};
  detail::blocking(me, [this] { actor_->join(); });
  rank_->waiting_for = {};
  actor_ = nullptr;
}

}  // namespace switchyard::transport
