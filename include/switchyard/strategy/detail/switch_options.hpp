// What a switch between two stages does to the optimizer: the options `switch_to` and `alternate`
// take, and how they apply after the hand-over. `switch_options` is public; switch_to.hpp and
// alternate.hpp include it.
#pragma once

#include <switchyard/optim/optimizer.hpp>
#include <switchyard/strategy/traits.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace switchyard::strategy {

/// @brief What happens to the optimizer state at the switch.
struct switch_options {
  /// The first slot of the optimizer state: momentum's velocity, Adam's first moment.
  enum class momentum_policy { keep, reset, scale };
  momentum_policy momentum = momentum_policy::keep;
  /// With `momentum_policy::scale`: the factor applied to that slot.
  double momentum_scale = 1.0;
  /// Multiplies every later learning rate (for instance by the ratio of the stages' effective
  /// batches).
  double learning_rate_scale = 1.0;
  /// Ramps the learning rate up again over this many optimizer steps after the switch (see
  /// `rewarm` of the optimizers): an asynchronous stage that starts at the full rate with moments
  /// estimated under another strategy can lose what it learned in its first steps.
  std::uint64_t warmup_steps = 0;
  /// Multiplies the second slot of the optimizer state (Adam's second moment v). Gradient noise
  /// variance goes with 1 / the batch an update averages, so when that batch changes from B1 to
  /// B2 at the switch, B1 / B2 keeps v where it would have been under the second stage.
  double second_moment_scale = 1.0;
  /// Adapts to the change of the batch one update averages, from B1 batches under the first stage
  /// to B2 under the second (`batches_per_update` of each; all-reduce: one per rank, an
  /// asynchronous parameter server: one): the learning rate by `learning_rate_rule`, the second
  /// moment times B1 / B2; on top of the two factors above.
  bool rescale_for_batch = false;
  /// How `rescale_for_batch` moves the learning rate with the batch.
  enum class batch_rule {
    linear,      ///< times B2 / B1: the linear scaling rule, SGD's (Goyal et al., 2017)
    square_root  ///< times sqrt(B2 / B1): the square-root rule, Adam's (Malladi et al., 2022)
  };
  batch_rule learning_rate_rule = batch_rule::linear;
};

namespace detail {

// The options of a switch, applied to the optimizer after the hand-over: `batch_ratio` is B2 / B1
// when `rescale_for_batch` is on, else 1.
template <class Optimizer>
void apply_switch_options(Optimizer& o, const switch_options& options, double batch_ratio) {
  static_assert(optim::switchable<Optimizer>,
                "an optimizer under switch_to or alternate must provide scale_learning_rate(double) and rewarm(std::uint64_t), "
                "which the switch calls for its options (optim::switchable): see optim/optimizer.hpp");
  const double first_factor = options.momentum == switch_options::momentum_policy::keep    ? 1.0
                              : options.momentum == switch_options::momentum_policy::reset ? 0.0
                                                                                           : options.momentum_scale;
  const double second_factor = options.second_moment_scale / batch_ratio;
  if (first_factor != 1.0 || second_factor != 1.0) {
    auto state = o.export_state();
    const double factors[] = {first_factor, second_factor};
    for (std::size_t k = 0; k < std::min<std::size_t>(2, state.slots.size()); ++k) {
      for (auto& v : state.slots[k]) v = static_cast<std::remove_reference_t<decltype(v)>>(v * factors[k]);
    }
    o.import_state(std::move(state));
  }
  const double rate_factor =
      options.learning_rate_rule == switch_options::batch_rule::square_root ? std::sqrt(batch_ratio) : batch_ratio;
  if (options.learning_rate_scale * rate_factor != 1.0) o.scale_learning_rate(options.learning_rate_scale * rate_factor);
  if (options.warmup_steps > 0) o.rewarm(options.warmup_steps);
}

// B2 / B1 for a switch from `from` to `to` under `options`: the change of the batch one update
// averages, or 1 when the options do not rescale for it.
template <class From, class To, class Transport>
double switch_batch_ratio(const From& from, const To& to, const Transport& t, const switch_options& options) {
  if (!options.rescale_for_batch) return 1.0;
  return static_cast<double>(traits::batches_per_update(to, t)) / static_cast<double>(traits::batches_per_update(from, t));
}

}  // namespace detail
}  // namespace switchyard::strategy
