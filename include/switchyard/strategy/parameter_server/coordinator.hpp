// Which batch of an epoch a parameter server hands out next: server 0's first come, first served
// hand-out, and the rule that can stop it inside an epoch.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <optional>
#include <utility>

namespace switchyard::strategy {

/// @brief The hand-out of an epoch's batches to a parameter server's workers, first come, first
/// served: worker w starts the epoch with batch w, and each reply to a worker carries `next()`.
///
/// A rule (`stop_when`) can stop the hand-out inside an epoch: before batch n is handed out,
/// `rule(n)` is asked with the n batches handed out so far in this epoch, and once it holds no
/// batch is handed out until the next epoch (what a `switch_to` with a step trigger installs). The
/// rule stays from epoch to epoch; an empty rule never stops.
/// @code
/// batch_coordinator c;
/// c.begin_epoch(10, 3);   // workers hold batches 0, 1, 2
/// c.next();               // 3, then 4, ..., 9, then empty
/// @endcode
class batch_coordinator {
 public:
  /// A new epoch of `batches` batches among `workers` workers, who start with batches 0 to
  /// `workers - 1`; forgets where the last epoch stopped.
  void begin_epoch(std::size_t batches, std::size_t workers) noexcept {
    batches_ = batches;
    next_ = std::min(workers, batches);
    stopped_after_.reset();
  }

  void stop_when(std::function<bool(std::size_t)> rule) { rule_ = std::move(rule); }

  /// The batch to hand out now, or empty when the epoch's batches are all handed out or the rule
  /// stopped the hand-out.
  [[nodiscard]] std::optional<std::size_t> next() {
    if (!stopped_after_ && next_ < batches_ && rule_ && rule_(next_)) stopped_after_ = next_;
    if (stopped_after_ || next_ >= batches_) return std::nullopt;
    return next_++;
  }

  /// After the rule stopped this epoch's hand-out: the batches handed out by then.
  [[nodiscard]] std::optional<std::size_t> stopped_after() const noexcept { return stopped_after_; }

  /// The batches of this epoch.
  [[nodiscard]] std::size_t batches() const noexcept { return batches_; }

 private:
  std::size_t batches_ = 0;
  std::size_t next_ = 0;
  std::function<bool(std::size_t)> rule_;
  std::optional<std::size_t> stopped_after_;
};

}  // namespace switchyard::strategy
