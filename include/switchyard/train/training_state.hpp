// The state a training run can be continued from, taken between two epochs: what a checkpoint
// holds besides the strategy's progress, as plain data the trainer fills and reads.
#pragma once

#include <switchyard/core/sequence.hpp>
#include <switchyard/optim/optimizer.hpp>
#include <switchyard/optim/optimizer_state.hpp>
#include <switchyard/core/history.hpp>

#include <cstdint>
#include <vector>

namespace switchyard::detail {

// The words for a `flush_subnormals` setting in the messages that refuse a resume under the other one.
[[nodiscard]] constexpr const char* subnormal_mode(bool flush) noexcept {
  return flush ? "flushing subnormal floats to zero" : "keeping subnormal floats";
}

}  // namespace switchyard::detail

namespace switchyard::train {

/// @brief Everything the trainer needs to continue a run after epoch `epoch` exactly as it would
/// have continued: the parameters, the whole optimizer state (assembled from a parameter server's
/// shards), the learning-rate adjustments, the data-order seed, the wall clock and the history.
///
/// The trainer hands one to its checkpoint callbacks (`trainer::on_checkpoint`) and continues from
/// one (`trainer::resume_from`); `train/checkpoint.hpp` writes and reads them with the strategy's
/// progress. Serializable with Boost.Serialization (the free `serialize` below).
/// @tparam T the element type of the parameters (default `float`).
/// @code
/// trainer.on_checkpoint([](const switchyard::train::training_state<float>& s) { keep(s); });
/// @endcode
template <class T = float>
struct training_state {
  std::uint64_t epoch = 0;         ///< epochs completed; a resumed run trains epoch + 1 next
  std::uint64_t seed = 0;          ///< `trainer_options::seed`: the data order of every epoch
  bool flush_subnormals = true;    ///< `trainer_options::flush_subnormals`: the arithmetic it ran with
  double wall_seconds = 0.0;       ///< the run's clock at the end of `epoch` (slowest rank)
  std::vector<T> parameters;
  optim::optimizer_state<T> optimizer;
  optim::rate_adjustments adjustments;  ///< defaults when the optimizer has none
  history epochs;                  ///< the records of epochs 1 .. epoch
  /// The training set's size and `trainer_options::batch_size`: with `seed`, the data order of
  /// every epoch. 0: not recorded (a state made by hand), and then not checked on resume.
  std::uint64_t train_examples = 0;
  std::uint64_t batch_size = 0;
};

template <class Archive, class T>
void serialize(Archive& archive, training_state<T>& s, const unsigned int /*version*/) {
  archive & s.epoch;
  archive & s.seed;
  serialize_flag(archive, s.flush_subnormals);
  archive & s.wall_seconds;
  serialize_sequence(archive, s.parameters);
  archive & s.optimizer;
  archive & s.adjustments;
  archive & s.epochs;
  archive & s.train_examples;
  archive & s.batch_size;
}

}  // namespace switchyard::train
