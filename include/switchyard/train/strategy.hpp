// The Strategy role: how the ranks of a run share the work of one training step. The trainer's
// loop is the same for every strategy; the strategy decides which ranks train, what they
// exchange after each backward pass, and how the parameters are updated.
#pragma once

#include <concepts>
#include <cstddef>
#include <optional>
#include <string_view>

namespace switchyard::train {

/// @brief What a strategy reports about one step on one rank.
struct step_outcome {
  /// Payload bytes this rank sent for the step (the logical message sizes, not counting what an
  /// algorithm forwards on behalf of others).
  std::size_t bytes_sent = 0;
  /// The batch this worker trains next, for strategies that hand batches out (`assigns_batches()`
  /// true); empty when the epoch has no more batches for it.
  std::optional<std::size_t> next_batch;
  /// For strategies that do not hand batches out: this worker's last step in this stage (a switch
  /// inside the epoch). Every worker of a synchronous stage says so at the same step.
  bool last = false;
};

/// @brief A Strategy for models `M`, optimizers `O` and transports `T`.
///
/// Required expressions, for `S& s`, `T& t`, `M& m`, `O& o`:
/// @code
/// std::string n{s.name()};                    // "allreduce", ...: shown in logs; anything
///                                             // convertible to std::string_view, a std::string too
/// s.setup(t, m, o);                           // collective, once before the first step:
///                                             // e.g. make every replica start from rank 0's model
/// std::size_t w = s.worker_count(t);          // how many ranks train (draw batches)
/// std::optional<std::size_t> i = s.worker_index(t);   // this rank's index among them
/// step_outcome r = s.step(t, m, o);           // after m.forward_backward(batch) filled the
///                                             // gradients: exchange them and update m
/// s.finish(t, m, o);                          // collective, after the last step: every rank
///                                             // ends holding the trained parameters
/// @endcode
/// Every rank of `t` calls `setup`, `finish` and (on workers) `step` in the same order; a step
/// may be a collective over the workers. Strategies are plain values: one per rank.
///
/// These members are optional, and the trainer calls them when present:
/// @code
/// bool a = s.assigns_batches();  // true: after a worker's first batch (batch w of the epoch's
///                                // sequence), step() says which batch it trains next, so fast
///                                // workers take more batches (an asynchronous parameter server);
///                                // false or absent: worker w trains batches w, w + W, w + 2W, ...
/// s.begin_epoch(t, batches);     // before each epoch (or the rest of one, after a switch inside
///                                // it): the number of batches it holds
/// s.serve(t, m, o);       // on ranks without a worker index, during each epoch: returns when
///                         // the workers have finished the epoch (a parameter server's loop)
/// s.end_epoch(t, m, o);   // collective, after each epoch's steps and before its evaluation:
///                         // afterwards every rank holds the current parameters
/// s.after_epoch(t, m, o, record);   // after each epoch, with the record every rank agrees on
/// s.hand_over(t, m, o);   // collective: afterwards every rank holds the whole training state
///                         // (parameters and optimizer state), ready for another strategy
/// std::optional<std::size_t> k = s.resume_at();   // after end_epoch: set when the stage changed
///                         // inside the epoch, after k of the batches given to begin_epoch; the
///                         // trainer then trains the rest of the epoch, from begin_epoch on, under
///                         // the strategy's new stage (a `strategy::switch_to` at a step trigger)
/// auto state = s.assembled_state(t, o);   // collective: the whole optimizer state on every rank,
///                         // for a strategy that shards it (a parameter server); a checkpoint's
/// s.serialize_progress(archive);   // Boost.Serialization style, saves or loads what the strategy
///                         // keeps across epochs (a switch: its stage and trigger state); absent:
///                         // nothing to keep (train/checkpoint.hpp)
/// s.stop_when(rule);      // a strategy that hands out batches: stop handing them out once
///                         // rule(n) is true, n the batches of this part of the epoch handed out
///                         // so far (`std::function<bool(std::size_t)>`); then on the rank that
///                         // decided, s.stopped_after() gives that n (else it is empty)
/// @endcode
template <class S, class M, class O, class T>
concept strategy = requires(S& s, T& t, M& m, O& o) {
  { s.name() } -> std::convertible_to<std::string_view>;
  s.setup(t, m, o);
  { s.worker_count(t) } -> std::convertible_to<std::size_t>;
  { s.worker_index(t) } -> std::same_as<std::optional<std::size_t>>;
  { s.step(t, m, o) } -> std::same_as<step_outcome>;
  s.finish(t, m, o);
};

}  // namespace switchyard::train
