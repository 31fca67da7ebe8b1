// What a training run records: one record per step (seen by step callbacks on the rank that took
// it) and one per epoch (agreed by all ranks), kept in a history.
#pragma once

#include <switchyard/core/sequence.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace switchyard::train {

/// @brief One training step on one worker rank.
struct step_record {
  std::size_t epoch = 0;  ///< 1-based
  std::size_t step = 0;   ///< 0-based within the epoch
  int rank = 0;
  double loss = 0.0;                 ///< mean loss over this worker's batch
  double compute_seconds = 0.0;      ///< forward and backward
  double communicate_seconds = 0.0;  ///< the strategy's step: exchange and update
  std::size_t bytes_sent = 0;
  std::string stage;                 ///< the strategy's name
  std::size_t batch = 0;             ///< the batch's place in the epoch's shuffled sequence of batches
};

/// @brief One epoch, with values every rank agrees on.
struct epoch_record {
  std::size_t epoch = 0;  ///< 1-based
  std::string stage;
  double train_loss = 0.0;     ///< mean of the workers' step losses
  double test_loss = 0.0;      ///< mean loss per test example
  double test_accuracy = 0.0;  ///< fraction in [0, 1]
  double wall_seconds = 0.0;   ///< since training started, at the end of this epoch's evaluation
  double train_seconds = 0.0;  ///< this epoch's training steps, slowest rank
  std::size_t steps = 0;       ///< worker steps, all workers together, this epoch
  std::size_t samples = 0;     ///< training examples all workers processed this epoch
  double samples_per_second = 0.0;
  std::uint64_t bytes_sent = 0;  ///< by all ranks this epoch
  /// Where the workers' time went this epoch, in seconds per worker: forward and backward
  /// (`compute_seconds`, the mean over the workers; `slowest_compute_seconds`, the worker that
  /// computed longest) and the strategy's steps, which exchange, update and wait
  /// (`exchange_seconds`, the mean; `least_exchange_seconds`, the worker that spent least in them).
  /// In a synchronous stage the slowest worker hardly waits, so `exchange_seconds -
  /// least_exchange_seconds` estimates the time the others waited for it.
  double compute_seconds = 0.0;
  double slowest_compute_seconds = 0.0;
  double exchange_seconds = 0.0;
  double least_exchange_seconds = 0.0;
  /// How fast the workers compute, per step this epoch: the median over the workers of each
  /// one's mean forward and backward time per step (the lower median for an even count of
  /// workers), and the slowest worker's. Their ratio says
  /// whether one worker is a straggler, under every strategy: a synchronous one, where every
  /// worker trains as many steps, and an asynchronous one, where a slow worker trains fewer.
  double median_step_compute_seconds = 0.0;
  double slowest_step_compute_seconds = 0.0;
};

/// @brief The epochs of a run, in order.
struct history {
  std::vector<epoch_record> epochs;

  [[nodiscard]] bool empty() const noexcept { return epochs.empty(); }
  [[nodiscard]] const epoch_record& last() const { return epochs.back(); }
};

/// Boost.Serialization hooks (found by argument-dependent lookup; strings and vectors go through
/// `serialize_sequence`): a checkpoint keeps
/// the history so that a resumed run returns every epoch.
template <class Archive>
void serialize(Archive& archive, epoch_record& e, const unsigned int /*version*/) {
  archive & e.epoch;
  serialize_sequence(archive, e.stage);
  archive & e.train_loss;
  archive & e.test_loss;
  archive & e.test_accuracy;
  archive & e.wall_seconds;
  archive & e.train_seconds;
  archive & e.steps;
  archive & e.samples;
  archive & e.samples_per_second;
  archive & e.bytes_sent;
  archive & e.compute_seconds;
  archive & e.slowest_compute_seconds;
  archive & e.exchange_seconds;
  archive & e.least_exchange_seconds;
  archive & e.median_step_compute_seconds;
  archive & e.slowest_step_compute_seconds;
}

template <class Archive>
void serialize(Archive& archive, history& h, const unsigned int /*version*/) {
  serialize_sequence(archive, h.epochs);
}

}  // namespace switchyard::train
