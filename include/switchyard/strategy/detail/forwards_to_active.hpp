// The members a strategy of stages (`switch_to`, `alternate`) forwards to whichever stage is
// active, written once for both.
#pragma once

#include <switchyard/optim/optimizer_state.hpp>
#include <switchyard/strategy/traits.hpp>

#include <cstddef>
#include <optional>
#include <string>

namespace switchyard::strategy::detail {

// The members a strategy of stages forwards to its active stage, shared by switch_to and
// alternate: Derived provides active(f), const and not, which calls f with the active stage.
template <class Derived>
class forwards_to_active {
 public:
  /// The active stage's name (a copy: a stage's `name()` may return a temporary string).
  [[nodiscard]] std::string name() const {
    return self().active([](const auto& s) { return traits::name(s); });
  }
  /// Whether the active stage keeps replicas identical (`traits::replicated`).
  [[nodiscard]] bool replicated() const {
    return self().active([](const auto& s) { return traits::replicated(s); });
  }
  template <class Transport>
  [[nodiscard]] std::size_t worker_count(const Transport& t) const {
    return self().active([&](const auto& s) { return traits::worker_count(s, t); });
  }
  template <class Transport>
  [[nodiscard]] std::optional<std::size_t> worker_index(const Transport& t) const {
    return self().active([&](const auto& s) { return traits::worker_index(s, t); });
  }
  template <class Transport>
  [[nodiscard]] std::size_t batches_per_update(const Transport& t) const {
    return self().active([&](const auto& s) { return traits::batches_per_update(s, t); });
  }
  [[nodiscard]] bool hands_out_batches() const {
    return self().active([](const auto& s) { return traits::hands_out_batches(s); });
  }
  [[nodiscard]] bool compares_nodes() const {
    return self().active([](const auto& s) { return traits::compares_nodes(s); });
  }
  template <class Transport, class Model, class Optimizer>
  void serve(Transport& t, Model& m, Optimizer& o) {
    self().active([&](auto& s) { traits::serve(s, t, m, o); });
  }
  template <class Transport, class Model, class Optimizer>
  void hand_over(Transport& t, Model& m, Optimizer& o) {
    self().active([&](auto& s) { traits::hand_over(s, t, m, o); });
  }
  /// Collective: the whole optimizer state, from the active stage when it shards it (a parameter
  /// server), else this rank's.
  template <class Transport, class Optimizer>
  [[nodiscard]] optim::optimizer_state<typename Optimizer::value_type> assembled_state(Transport& t,
                                                                                      const Optimizer& o) const {
    return self().active([&](const auto& s) { return traits::assembled_state(s, t, o); });
  }
  /// Collective: what the active stage's progress needs from the other ranks, to rank 0.
  template <class Transport>
  void prepare_checkpoint(Transport& t) {
    self().active([&](auto& s) { traits::prepare_checkpoint(s, t); });
  }
  template <class Transport, class Model, class Optimizer>
  void finish(Transport& t, Model& m, Optimizer& o) {
    self().active([&](auto& s) { traits::finish(s, t, m, o); });
  }

 private:
  const Derived& self() const { return static_cast<const Derived&>(*this); }
  Derived& self() { return static_cast<Derived&>(*this); }
};

}  // namespace switchyard::strategy::detail
