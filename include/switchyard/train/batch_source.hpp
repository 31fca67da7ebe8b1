// Which batches of an epoch each worker trains. The trainer owns the hand-out; a stage that hands
// batches out itself (an asynchronous parameter server) plugs in through step_outcome::next_batch.
#pragma once

#include <switchyard/strategy/policy.hpp>

#include <cstddef>
#include <optional>

namespace switchyard::train {

/// @brief The batches one worker trains in one part of an epoch (the whole epoch, or what is left
/// of it after a switch inside it), as positions in the epoch's sequence of batches counted from
/// the part's first.
///
/// Strided (the default): worker w of W trains w, w + W, w + 2W, ..., the same number of batches
/// as every other worker, so a synchronous stage's workers step together; the last
/// `remaining % W` batches are left out. Handed out (`hands_out_batches()` true): worker w starts
/// with batch w and then trains whatever `step_outcome::next_batch` names, so fast workers train
/// more of the part's batches; every batch of the part is handed out once.
class batch_source {
 public:
  /// `remaining` batches are left in the epoch; `worker` is this rank's index among `workers`
  /// (empty: this rank does not train).
  batch_source(std::size_t remaining, std::size_t workers, std::optional<std::size_t> worker, bool handed_out)
      : workers_(workers),
        per_worker_(workers > 0 ? remaining / workers : 0),
        batches_(handed_out ? remaining : per_worker_ * workers),
        worker_(worker),
        handed_out_(handed_out) {}

  /// The batches the part trains, all workers together.
  [[nodiscard]] std::size_t batches() const noexcept { return batches_; }

  /// This worker's first batch; empty when it trains none.
  [[nodiscard]] std::optional<std::size_t> first() const noexcept {
    if (!worker_ || *worker_ >= batches_) return std::nullopt;
    return *worker_;
  }

  /// The batch after the worker's `step`-th (0-based) of the part, given that step's outcome;
  /// empty when the worker is done with the part.
  [[nodiscard]] std::optional<std::size_t> next(std::size_t step, const strategy::step_outcome& outcome) const {
    if (handed_out_) return outcome.next_batch;
    if (outcome.last || step + 1 >= per_worker_) return std::nullopt;
    return (step + 1) * workers_ + *worker_;
  }

 private:
  std::size_t workers_;
  std::size_t per_worker_;
  std::size_t batches_;
  std::optional<std::size_t> worker_;
  bool handed_out_;
};

}  // namespace switchyard::train
