// The switch from one stage to another, the same in `switch_to` and `alternate`: the stage it
// leaves stops and hands over, the switch's options apply, the stage it enters sets up.
#pragma once

#include <switchyard/core/error.hpp>
#include <switchyard/strategy/detail/switch_options.hpp>
#include <switchyard/strategy/replicas.hpp>
#include <switchyard/strategy/traits.hpp>

#include <string_view>

namespace switchyard::strategy::detail {

// Collective: leaves `from` for `to`. Afterwards every rank holds the whole training state, with
// the options applied, and `to` is entered from it (`traits::enter`: without a broadcast of what
// every rank holds already); with checked collectives, a replicated `to` is verified to start
// from identical replicas.
template <class From, class To, class Transport, class Model, class Optimizer>
void switch_stages(From& from, To& to, const switch_options& options, Transport& t, Model& m, Optimizer& o) {
  traits::stop_when(from, stop_rule{});
  traits::hand_over(from, t, m, o);
  apply_switch_options(o, options, switch_batch_ratio(from, to, t, options));
  traits::enter(to, t, m, o);
  if (traits::replicated(to) && checks_collectives(t)) {
    verify_replicas(t, m, o, switchyard::detail::str("after the switch to '", std::string_view(to.name()), "'"));
  }
}

}  // namespace switchyard::strategy::detail
