// Replicated training state: every rank's parameters and optimizer state made identical from one
// rank, and, in checked mode, verified identical with a fingerprint exchanged by every rank.
#pragma once

#include <switchyard/collective/allgather.hpp>
#include <switchyard/collective/broadcast.hpp>
#include <switchyard/core/buffer.hpp>
#include <switchyard/core/error.hpp>
#include <switchyard/transport/transport.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace switchyard::strategy {

/// @brief Collective: gives every rank `root`'s parameters and whole optimizer state (step count,
/// schedule clock and every slot), so that the replicas are identical from here on.
///
/// What a replicated stage (`all_reduce`) does when it sets up: at the start of a run, after a
/// switch whatever the stage before it handed over, and after a resume. Every rank must hold an
/// optimizer of the same type over the same number of parameters.
/// @code
/// switchyard::strategy::replicate_training_state(t, model, optimizer);
/// @endcode
template <class Transport, class Model, class Optimizer>
void replicate_training_state(Transport& t, Model& model, Optimizer& optimizer, int root = 0) {
  collective::broadcast(t, as_span(model.parameters()), root);
  auto state = optimizer.export_state();
  std::array<std::uint64_t, 2> counters{state.step, state.clock};
  collective::broadcast(t, counters, root);
  state.step = counters[0];
  state.clock = counters[1];
  for (auto& slot : state.slots) collective::broadcast(t, slot, root);
  optimizer.import_state(std::move(state));
}

/// @brief A 64-bit fingerprint (FNV-1a) of the bits of the parameters and of the optimizer state
/// (step count, clock, every slot): equal on two ranks when their replicas are, different with
/// overwhelming probability when they are not.
template <class Model, class Optimizer>
[[nodiscard]] std::uint64_t training_state_fingerprint(Model& model, const Optimizer& optimizer) {
  std::uint64_t hash = 14695981039346656037ull;
  const auto mix = [&hash](std::span<const std::byte> bytes) {
    for (const std::byte b : bytes) hash = (hash ^ static_cast<std::uint64_t>(b)) * 1099511628211ull;
  };
  const auto parameters = as_span(model.parameters());
  mix(std::as_bytes(std::span(parameters.data(), parameters.size())));
  const auto& state = optimizer.export_state();
  const std::array<std::uint64_t, 2> counters{state.step, state.clock};
  mix(std::as_bytes(std::span(counters)));
  for (const auto& slot : state.slots) mix(std::as_bytes(std::span(slot.data(), slot.size())));
  return hash;
}

/// @brief Collective: checks that every rank holds the same parameters and optimizer state as
/// rank 0 (by `training_state_fingerprint`) and raises the same `usage_error` on every rank when
/// they differ, naming the ranks that differ and `when` (e.g. "after the switch to 'allreduce'").
/// `switch_to` calls it after every switch to a replicated stage in checked mode
/// (`SWITCHYARD_CHECK_COLLECTIVES=1`).
template <class Transport, class Model, class Optimizer>
void verify_replicas(Transport& t, Model& model, const Optimizer& optimizer, std::string_view when) {
  const std::array<std::uint64_t, 1> mine{training_state_fingerprint(model, optimizer)};
  std::vector<std::uint64_t> all(static_cast<std::size_t>(t.size()));
  collective::allgather(t, mine, all);
  std::string differing;
  for (std::size_t r = 1; r < all.size(); ++r) {
    if (all[r] != all[0]) differing += (differing.empty() ? "" : ", ") + std::to_string(r);
  }
  if (!differing.empty()) {
    switchyard::detail::raise<usage_error>(switchyard::detail::str(
        "replicas differ ", when, ": rank(s) ", differing,
        " hold other parameters or optimizer state than rank 0 (a replicated stage must start from identical "
        "replicas: replicate_training_state in its setup)"));
  }
}

/// Whether the transport runs checked collectives (`SWITCHYARD_CHECK_COLLECTIVES=1`, or the
/// transport's option).
template <class Transport>
[[nodiscard]] bool checks_collectives(Transport& t) {
  if constexpr (transport::has_collective_checks<Transport>) {
    return t.collective_checks().enabled;
  } else {
    return false;
  }
}

}  // namespace switchyard::strategy
