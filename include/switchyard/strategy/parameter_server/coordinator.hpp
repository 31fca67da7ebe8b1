// Which batch of an epoch a parameter server hands out next: server 0's first come, first served
// hand-out, and the rule that can stop it inside an epoch.
#pragma once

#include <switchyard/strategy/traits.hpp>
#include <switchyard/trigger/trigger.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

namespace switchyard::strategy {

/// @brief The hand-out of an epoch's batches to a parameter server's workers, first come, first
/// served: worker w starts the epoch with batch w, and each reply to a worker carries `next()`.
///
/// A rule (`stop_when`) can stop the hand-out inside an epoch: before batch n is handed out,
/// `rule.fire` is asked with the n batches handed out so far in this epoch, and once it holds no
/// batch is handed out until the next epoch (what a `switch_to` or an `alternate` with a step
/// trigger installs). The rule stays from epoch to epoch; an empty rule never stops.
///
/// With `rule.sample_every` = K, every K x W requests (W workers) the rule is also given a sample
/// of the workers' times per step: each worker's mean time between two of its requests since the
/// last sample (for a worker that asked no second time since, the last such time it took), or the
/// time since its last request when that is longer, so that a worker too slow to ask once per
/// sample still counts as slow. A worker's first request of the epoch only starts its clock
/// (whatever ran between the epochs is not a step), and a worker that has not asked yet is left
/// out. Sampling needs the replies to follow the requests at once: `parameter_server` refuses it
/// under bounded staleness, whose replies wait for the slowest worker.
/// @code
/// batch_coordinator c;
/// c.begin_epoch(10, 3);   // workers hold batches 0, 1, 2
/// c.next(0);              // 3 for worker 0, then 4, ..., 9, then empty
/// @endcode
class batch_coordinator {
 public:
  /// A new epoch of `batches` batches among `workers` workers, who start with batches 0 to
  /// `workers - 1`; forgets where the last epoch stopped.
  void begin_epoch(std::size_t batches, std::size_t workers) {
    batches_ = batches;
    next_ = std::min(workers, batches);
    stopped_after_.reset();
    requests_ = 0;
    timing_.assign(workers, worker_timing{});
  }

  void stop_when(stop_rule rule) { rule_ = std::move(rule); }

  /// The batch to hand out now to `worker`, which asks for one, or empty when the epoch's batches
  /// are all handed out or the rule stopped the hand-out.
  [[nodiscard]] std::optional<std::size_t> next(std::size_t worker) {
    const std::optional<trigger::step_sample> sample = time_request(worker);
    if (!stopped_after_ && next_ < batches_ && rule_.fire && rule_.fire(trigger::progress{next_, sample})) {
      stopped_after_ = next_;
    }
    if (stopped_after_ || next_ >= batches_) return std::nullopt;
    return next_++;
  }

  /// After the rule stopped this epoch's hand-out: the batches handed out by then.
  [[nodiscard]] std::optional<std::size_t> stopped_after() const noexcept { return stopped_after_; }

  /// The batches of this epoch.
  [[nodiscard]] std::size_t batches() const noexcept { return batches_; }

 private:
  using clock = std::chrono::steady_clock;
  struct worker_timing {
    std::optional<clock::time_point> last;  // its last request; empty before its first this epoch
    double seconds = 0.0;                   // between its requests since the last sample
    std::size_t steps = 0;
    double latest = 0.0;                    // its last time between two requests
  };

  // Times the request; every sample_every x workers requests, the sample of the workers' times.
  std::optional<trigger::step_sample> time_request(std::size_t worker) {
    if (rule_.sample_every == 0 || worker >= timing_.size()) return std::nullopt;
    const clock::time_point now = clock::now();
    worker_timing& w = timing_[worker];
    if (w.last) {
      w.latest = std::chrono::duration<double>(now - *w.last).count();
      w.seconds += w.latest;
      ++w.steps;
    }
    w.last = now;
    if (++requests_ % (rule_.sample_every * timing_.size()) != 0) return std::nullopt;
    per_step_.clear();
    for (worker_timing& each : timing_) {
      if (!each.last) continue;
      const double waited = std::chrono::duration<double>(now - *each.last).count();
      per_step_.push_back(std::max(each.steps == 0 ? each.latest : each.seconds / static_cast<double>(each.steps), waited));
      each.seconds = 0.0;
      each.steps = 0;
    }
    return trigger::summarize_steps(per_step_);
  }

  std::size_t batches_ = 0;
  std::size_t next_ = 0;
  stop_rule rule_;
  std::optional<std::size_t> stopped_after_;
  std::size_t requests_ = 0;  // this epoch's requests, for the samples
  std::vector<worker_timing> timing_;
  std::vector<double> per_step_;
};

}  // namespace switchyard::strategy
