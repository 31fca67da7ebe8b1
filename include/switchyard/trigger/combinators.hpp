// Triggers made of triggers: the first of several, or all of them.
#pragma once

#include <switchyard/core/history.hpp>
#include <switchyard/trigger/trigger.hpp>

#include <cstddef>
#include <tuple>
#include <utility>

namespace switchyard::trigger {

namespace detail {
template <class Trigger>
bool fires_at(Trigger& t, const progress& p) {
  if constexpr (within_epoch<Trigger>) {
    return static_cast<bool>(t.fire_at(p));
  } else {
    return false;
  }
}

// Asks every trigger of `triggers` with `ask`, in order and without a short circuit (stateful
// triggers must each see the record), and counts the ones that fired.
template <class Tuple, class Ask>
std::size_t count_fired(Tuple& triggers, Ask ask) {
  std::size_t fired = 0;
  std::apply([&](auto&... t) { ((fired += ask(t) ? 1 : 0), ...); }, triggers);
  return fired;
}
}  // namespace detail

/// @brief Fires when any of its triggers fires. Every trigger sees every record (so stateful
/// ones stay current).
/// @code
/// switchyard::trigger::any_of t{after_epochs{8}, loss_plateau{0.01, 2}};
/// @endcode
template <class... Triggers>
struct any_of {
  static_assert((trigger<Triggers> && ...),
                "every part of any_of must be a trigger: copyable, with fire(const train::epoch_record&) returning "
                "bool: see trigger/trigger.hpp");
  std::tuple<Triggers...> triggers;
  constexpr any_of() = default;
  constexpr explicit any_of(Triggers... t) : triggers(std::move(t)...) {}
  bool fire(const train::epoch_record& record) {
    return detail::count_fired(triggers, [&](auto& t) { return static_cast<bool>(t.fire(record)); }) > 0;
  }
  /// Inside an epoch: any of those triggers that can fire there.
  bool fire_at(const progress& p)
    requires(within_epoch<Triggers> || ...)
  {
    return detail::count_fired(triggers, [&](auto& t) { return detail::fires_at(t, p); }) > 0;
  }
};
template <class... Triggers>
any_of(Triggers...) -> any_of<Triggers...>;

/// Checkpoints: each trigger's state in order.
template <class Archive, class... Triggers>
void serialize(Archive& archive, any_of<Triggers...>& t, const unsigned int /*version*/) {
  std::apply([&](auto&... each) { ((archive & each), ...); }, t.triggers);
}

/// @brief Fires when all of its triggers fire on the same record.
template <class... Triggers>
struct all_of {
  static_assert((trigger<Triggers> && ...),
                "every part of all_of must be a trigger: copyable, with fire(const train::epoch_record&) returning "
                "bool: see trigger/trigger.hpp");
  std::tuple<Triggers...> triggers;
  constexpr all_of() = default;
  constexpr explicit all_of(Triggers... t) : triggers(std::move(t)...) {}
  bool fire(const train::epoch_record& record) {
    return detail::count_fired(triggers, [&](auto& t) { return static_cast<bool>(t.fire(record)); }) ==
           sizeof...(Triggers);
  }
  /// Inside an epoch, when every one of those triggers can fire there: all of them.
  bool fire_at(const progress& p)
    requires(within_epoch<Triggers> && ...)
  {
    return detail::count_fired(triggers, [&](auto& t) { return static_cast<bool>(t.fire_at(p)); }) ==
           sizeof...(Triggers);
  }
};
template <class... Triggers>
all_of(Triggers...) -> all_of<Triggers...>;

/// Checkpoints: each trigger's state in order.
template <class Archive, class... Triggers>
void serialize(Archive& archive, all_of<Triggers...>& t, const unsigned int /*version*/) {
  std::apply([&](auto&... each) { ((archive & each), ...); }, t.triggers);
}

}  // namespace switchyard::trigger
