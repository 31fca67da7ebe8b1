// The Strategy role: how the ranks of a run share the work of one training step. The trainer's
// loop is the same for every strategy; the strategy decides what the workers exchange after each
// backward pass and how the parameters are updated. Two members make a strategy; everything else
// has a default (strategy/traits.hpp).
#pragma once

#include <concepts>
#include <cstddef>
#include <optional>
#include <string_view>

namespace switchyard::strategy {

/// @brief What a strategy reports about one step on one rank. A `step` that returns `void`
/// reports a default-constructed outcome.
struct step_outcome {
  /// Payload bytes this rank sent for the step (the logical message sizes, not counting what an
  /// algorithm forwards on behalf of others).
  std::size_t bytes_sent = 0;
  /// For a stage that hands out batches (`hands_out_batches()` true): the batch this worker
  /// trains next; empty when the epoch has no more batches for it.
  std::optional<std::size_t> next_batch;
  /// For a stage that does not hand batches out: this worker's last step in this stage (a switch
  /// inside the epoch). Every worker of a synchronous stage says so at the same step.
  bool last = false;
};

/// @brief A Strategy policy for models `M`, optimizers `O` and transports `T`: a name and a step.
///
/// Required expressions, for `S& s`, `const S& cs`, `T& t`, `M& m`, `O& o`:
/// @code
/// std::string n{cs.name()};   // "allreduce", ...: shown in logs; anything convertible to
///                             // std::string_view, a std::string too
/// s.step(t, m, o);            // after m.forward_backward(batch) filled the gradients: exchange
///                             // them and update m; returns step_outcome or void
/// @endcode
/// By default every rank is a worker, setup gives every rank rank 0's parameters and optimizer
/// state, and a hand-over to another stage does the same; a strategy overrides any of these, and
/// adds epoch hooks, with the optional members that `strategy/traits.hpp` lists. Every rank calls
/// the members in the same order, so a step may be a collective over the workers. Strategies are
/// plain values: one per rank.
/// @code
/// struct every_rank_alone {   // trains independent replicas: the smallest strategy there is
///   std::string_view name() const { return "alone"; }
///   template <class T, class M, class O> void step(T&, M& m, O& o) { o.step(m.parameters(), m.gradients()); }
/// };
/// @endcode
template <class S, class M, class O, class T>
concept policy = requires(S& s, const S& cs, T& t, M& m, O& o) {
  { cs.name() } -> std::convertible_to<std::string_view>;
  s.step(t, m, o);
  requires std::same_as<decltype(s.step(t, m, o)), step_outcome> || std::same_as<decltype(s.step(t, m, o)), void>;
};

}  // namespace switchyard::strategy
