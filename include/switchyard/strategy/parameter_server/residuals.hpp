// A compressed parameter server's checkpoint residuals: what each worker's pushes still owe its
// gradients, gathered on rank 0 for a checkpoint and given back to each worker when a run resumes.
#pragma once

#include <switchyard/core/compression.hpp>
#include <switchyard/core/error.hpp>
#include <switchyard/core/sequence.hpp>
#include <switchyard/strategy/parameter_server/protocol.hpp>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace switchyard::strategy::detail {

/// @brief The workers' error-feedback residuals a checkpoint holds, one float per parameter each:
/// on rank 0 from `gather` until the next part of an epoch (`clear`), on every rank from a loaded
/// checkpoint until `restore` hands each worker its own.
/// @code
/// residuals.gather(t, worker.feedback().residual(), arena, workers);  // every worker; rank 0 keeps them
/// residuals.serialize(archive);                                        // rank 0 saves, every rank loads
/// residuals.restore(t.rank(), arena, workers, worker_index, worker.feedback());
/// @endcode
class ps_residuals {
 public:
  /// Collective over the `workers` ranks 0 to `workers - 1`, each a worker: each sends rank 0 its
  /// `residual`, zero-padded to `arena` elements (a worker that has not pushed yet owes nothing, as
  /// zeros encode), and rank 0 keeps them in worker order.
  template <class Transport>
  void gather(Transport& t, std::span<const float> residual, std::size_t arena, std::size_t workers) {
    saved_.clear();
    std::vector<float> mine(arena, 0.0f);
    std::copy(residual.begin(), residual.end(), mine.begin());
    if (t.rank() != 0) {
      t.send(std::span<const float>(mine), 0, ps_tags::residual);
      return;
    }
    saved_.resize(workers);
    saved_[0] = std::move(mine);
    for (std::size_t w = 1; w < workers; ++w) {
      saved_[w].resize(arena);
      t.recv(std::span<float>(saved_[w]), static_cast<int>(w), ps_tags::residual);
    }
  }

  /// Saves or loads the residuals held; a loaded set waits for `restore`.
  template <class Archive>
  void serialize(Archive& archive) {
    switchyard::serialize_sequence(archive, saved_);
    if constexpr (Archive::is_loading::value) restore_pending_ = true;
  }

  /// After a load: `feedback` continues from worker `worker`'s residual, when this rank works
  /// (`worker` is its index) and the checkpoint holds one per worker of `workers`. Resumed on
  /// another number of workers, the residuals have no owners, and every worker starts without one.
  /// Forgets the residuals either way.
  /// @throws data_error for a residual of another size than the model's `arena` parameters.
  void restore(int rank, std::size_t arena, std::size_t workers, std::optional<std::size_t> worker,
               compression::error_feedback& feedback) {
    if (std::exchange(restore_pending_, false)) {
      for (const std::vector<float>& r : saved_) {
        if (r.size() != arena) {
          switchyard::detail::raise<data_error>(switchyard::detail::str(
              "parameter_server on rank ", rank, ": the checkpoint holds an error-feedback residual of ", r.size(),
              " elements for a model of ", arena, " parameters"));
        }
      }
      if (worker && saved_.size() == workers) feedback.restore(saved_[*worker]);
    }
    saved_.clear();
  }

  /// Forgets the residuals held (rank 0 wrote the last checkpoint's by the next part of an epoch).
  void clear() noexcept { saved_.clear(); }

  /// The residuals held, in worker order.
  [[nodiscard]] const std::vector<std::vector<float>>& saved() const noexcept { return saved_; }

 private:
  std::vector<std::vector<float>> saved_;
  bool restore_pending_ = false;
};

}  // namespace switchyard::strategy::detail
