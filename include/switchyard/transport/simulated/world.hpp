// The simulated launcher: builds a SimGrid engine and platform, runs a function on every rank as
// an actor on its host, and rethrows the first failure, or reports the ranks of a deadlock.
#pragma once

#include <switchyard/core/error.hpp>
#include <switchyard/core/floating_point.hpp>
#include <switchyard/core/rank_context.hpp>
#include <switchyard/transport/simulated/fabric.hpp>
#include <switchyard/transport/simulated/handle.hpp>
#include <switchyard/transport/simulated/options.hpp>
#include <switchyard/transport/simulated/platform.hpp>

#include <simgrid/Exception.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Mailbox.hpp>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace switchyard::transport {

namespace detail {

// AddressSanitizer cannot follow the stacks that SimGrid's default contexts switch between on one
// thread (it reports a stack-buffer-underflow at the first exception an actor throws), so an
// address-sanitized build runs every actor on a thread context of its own: slower, the same
// simulation.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool address_sanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool address_sanitized = true;
#else
inline constexpr bool address_sanitized = false;
#endif
#else
inline constexpr bool address_sanitized = false;
#endif

}  // namespace detail

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

/// @brief A simulated cluster: `run(f)` calls `f(simulated&)` on every rank, each an S4U actor on
/// its simulated host, all taking turns on the calling thread; it returns when the simulation
/// ends and rethrows the first exception a rank raised (the other ranks' waits raise
/// `transport_error` meanwhile). Returns nothing if `f` returns nothing, else a `std::vector` of
/// the results by rank.
///
/// The options are checked when the world is made: `usage_error` before anything runs for 0
/// hosts, a rate without a unit or below zero, more ranks per host than cores, a speed factor for
/// a host that does not exist; and at the start of `run` for a platform file that does not load,
/// names no hosts or has a link faster than the time precision. Ranks that all wait for messages
/// that never come end the run with a `transport_error` that says what each one waited for.
/// Each run makes a SimGrid engine of its own, and first disconnects every callback on SimGrid's
/// `Engine::on_platform_created` (an earlier engine's would crash the loading of a platform
/// file), the caller's among them.
/// @code
/// switchyard::transport::simulated_options options;
/// options.platform.hosts = 64;
/// options.platform.bandwidth = "10Gbps";
/// switchyard::transport::simulated_world world(options);
/// world.run([](switchyard::transport::simulated& t) { ... });
/// double seconds = world.simulated_seconds();
/// @endcode
class simulated_world {
 public:
  explicit simulated_world(simulated_options options = {});

  template <class F>
  auto run(F&& f);

  /// Ranks of the world: hosts x ranks per host (for a platform file, known once a run began).
  [[nodiscard]] int size() const noexcept { return ranks_; }
  /// Simulated seconds the last run took, from its start to its last rank's end.
  [[nodiscard]] double simulated_seconds() const noexcept { return simulated_seconds_; }
  /// Messages the ranks sent in the last run (every point-to-point message, the barriers' and the
  /// native collectives' included): the unit of the simulation's cost.
  [[nodiscard]] std::uint64_t messages() const noexcept { return messages_; }
  [[nodiscard]] const simulated_options& options() const noexcept { return options_; }

 private:
  simulated_options options_;
  int ranks_ = 0;
  double simulated_seconds_ = 0;
  std::uint64_t messages_ = 0;
};

/// @brief Shorthand for `simulated_world(options).run(f)`.
template <class F>
auto run_simulated(simulated_options options, F&& f) {
  return simulated_world(std::move(options)).run(std::forward<F>(f));
}

/// @brief Runs `f` on `hosts` simulated hosts of `options` (whose `platform.hosts` it sets).
template <class F>
auto run_simulated(int hosts, F&& f, simulated_options options = {}) {
  options.platform.hosts = hosts;
  return simulated_world(std::move(options)).run(std::forward<F>(f));
}

// ---------------------------------------------------------------------------------------------
// Implementation
// ---------------------------------------------------------------------------------------------

inline simulated_world::simulated_world(simulated_options options) : options_(std::move(options)) {
  detail::check_options(options_);
  if (options_.platform.file.empty()) ranks_ = options_.platform.hosts * options_.ranks_per_host;
}

namespace detail {

// What each rank that did not finish waited for, "" when every rank finished.
inline std::string unfinished_ranks(const sim_fabric& fabric) {
  std::string stuck;
  for (const auto& r : fabric.ranks) {
    if (!r->finished) {
      stuck += str(stuck.empty() ? "" : "; ", "rank ", r->world_rank, " waited for ", describe(r->waiting_for));
    }
  }
  return stuck;
}

// A SimGrid engine for one run, its network configured as `options` ask. SimGrid 3.32's engine
// connects its presolve to a static signal and never disconnects it, so a later world's platform
// file would call the destroyed engine of an earlier world: the signal's slots are dropped first.
inline std::unique_ptr<simgrid::s4u::Engine> make_engine(const simulated_options& options) {
  namespace sg4 = simgrid::s4u;
  char program[] = "switchyard";
  char thread_contexts[] = "--cfg=contexts/factory:thread";
  char* argv[] = {program, address_sanitized ? thread_contexts : nullptr, nullptr};
  int argc = address_sanitized ? 2 : 1;
  sg4::Engine::on_platform_created.disconnect_slots();
  auto engine = std::make_unique<sg4::Engine>(&argc, argv);
  configure_network(*engine, options);
  return engine;
}

}  // namespace detail

template <class F>
auto simulated_world::run(F&& f) {
  namespace sg4 = simgrid::s4u;
  using result = std::invoke_result_t<F&, simulated&>;
  if (sg4::Engine::is_initialized()) {
    detail::raise<usage_error>("a simulated world cannot run while another one runs in this process");
  }
  // The ranks install their own library state on this thread; the caller's comes back after.
  struct caller_state {
    rank_context* context = switchyard::detail::current_rank_context_pointer();
    switchyard::detail::fp_control mode = switchyard::detail::read_fp_control();
    ~caller_state() {
      detail::current_sim_activity() = nullptr;
      switchyard::detail::current_rank_context_pointer() = context;
      switchyard::detail::write_fp_control(mode);
    }
  } const caller;

  std::unique_ptr<sg4::Engine> engine = detail::make_engine(options_);
  const std::vector<sg4::Host*> hosts = detail::build_platform(*engine, options_);
  const int per_host = options_.ranks_per_host;
  ranks_ = static_cast<int>(hosts.size()) * per_host;

  auto fabric = std::make_shared<detail::sim_fabric>(options_);
  std::vector<int> members(static_cast<std::size_t>(ranks_));
  for (int w = 0; w < ranks_; ++w) {
    members[static_cast<std::size_t>(w)] = w;
    auto r = std::make_unique<detail::sim_rank>();
    r->world_rank = w;
    r->host_index = w / per_host;
    r->host = hosts[static_cast<std::size_t>(r->host_index)];
    r->inbox = sg4::Mailbox::by_name(detail::str("rank-", w));
    r->measure_cpu = options_.compute == compute_model::measured;
    r->pull_mutex = sg4::Mutex::create();
    r->delivered = sg4::ConditionVariable::create();
    fabric->ranks.push_back(std::move(r));
  }
  auto world = std::make_shared<detail::sim_group>(fabric, 0, std::move(members));

  constexpr bool returns_value = !std::is_void_v<result>;
  using stored = std::conditional_t<returns_value, result, char>;
  std::vector<std::optional<stored>> results(static_cast<std::size_t>(ranks_));
  const double start = sg4::Engine::get_clock();

  auto play = [&](int w) {
    detail::sim_rank& me = fabric->rank(w);
    detail::start_activity(me.own);
    try {
      simulated handle(world, w, start);
      if constexpr (returns_value) {
        results[static_cast<std::size_t>(w)].emplace(std::invoke(f, handle));
      } else {
        std::invoke(f, handle);
      }
    } catch (const simgrid::ForcefulKillException&) {
      throw;  // SimGrid ends a deadlocked rank this way; the report comes after the run
    } catch (const std::exception& e) {
      detail::abort_world(*fabric, w, std::current_exception(), e.what());
    } catch (...) {
      detail::abort_world(*fabric, w, std::current_exception(), "an exception not derived from std::exception");
    }
    for (const sg4::CommPtr& send : me.unfinished_sends) {
      me.waiting_for = {detail::sim_operation::kind::dropped_sends};
      detail::blocking(me, [&send] { send->wait(); });
    }
    me.unfinished_sends.clear();
    me.waiting_for = {};
    me.finished = true;
  };
  for (int w = 0; w < ranks_; ++w) {
    detail::sim_rank& r = fabric->rank(w);
    const sg4::ActorPtr actor = sg4::Actor::create(detail::str("rank-", w), r.host, [&play, w] { play(w); });
    // Messages start flowing to their rank as soon as they are sent (eager), as MPI's small ones do.
    r.inbox->set_receiver(actor);
  }
  detail::start_speed_windows(hosts, options_.platform, start);
  engine->run();
  simulated_seconds_ = sg4::Engine::get_clock() - start;
  fabric->ended = true;
  messages_ = fabric->messages;
  const std::string stuck = detail::unfinished_ranks(*fabric);
  engine.reset();
  if (fabric->first_failure) std::rethrow_exception(fabric->first_failure);
  if (!stuck.empty()) {
    detail::raise<transport_error>(detail::str("the simulated ranks deadlocked after ", simulated_seconds_,
                                               " simulated seconds: ", stuck));
  }
  if constexpr (returns_value) {
    std::vector<result> out;
    out.reserve(results.size());
    for (auto& r : results) out.push_back(std::move(*r));
    return out;
  }
}

}  // namespace switchyard::transport
