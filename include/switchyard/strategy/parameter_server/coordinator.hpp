// Which batch of an epoch a parameter server hands out next: server 0's first come, first served
// hand-out, and the rule that can stop it inside an epoch.
#pragma once

#include <switchyard/strategy/traits.hpp>
#include <switchyard/transport/concurrency.hpp>
#include <switchyard/trigger/trigger.hpp>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

namespace switchyard::strategy {

/// @brief The hand-out of an epoch's batches to a parameter server's workers, first come, first
/// served: worker w starts the epoch with batch w (and w + W when its exchanges are pipelined), and
/// each reply to a worker carries `next()`.
///
/// A rule (`stop_when`) can stop the hand-out inside an epoch: before batch n is handed out,
/// `rule.fire` is asked with the n batches handed out so far in this epoch, and once it holds no
/// batch is handed out until the next epoch (what a `switch_to` or an `alternate` with a step
/// trigger installs). The rule stays from epoch to epoch; an empty rule never stops.
///
/// With `rule.sample_every` = K, every K x W requests (W workers) the rule is also given a sample
/// of the workers' compute times per step, which they report with their requests: each worker's
/// mean compute time per step over its reports since the last sample. A worker that has not asked
/// since the last sample counts with the longer of its last reported time and the time since its
/// last request, so that a worker too slow to ask once per sample still counts as slow. A worker's
/// first request of a part reports nothing (whatever ran before it is not a step), and a worker
/// that has not asked yet is left out. Compute times, not the time between requests: the
/// requests of every worker also wait for the server's link, which would hide a slow worker.
/// Sampling needs the replies to follow the requests at once: `parameter_server` refuses it under
/// bounded staleness, whose replies wait for the slowest worker.
/// @code
/// batch_coordinator c;
/// c.begin_epoch(10, 3);   // workers hold batches 0, 1, 2
/// c.next(0);              // 3 for worker 0, then 4, ..., 9, then empty
/// @endcode
class batch_coordinator {
 public:
  /// A new epoch of `batches` batches among `workers` workers, who start with `ahead` batches
  /// each: batches 0 to `workers - 1`, and with `ahead` = 2 also `workers` to `2 workers - 1`
  /// (worker w holds w and w + workers); forgets where the last epoch stopped.
  void begin_epoch(std::size_t batches, std::size_t workers, std::size_t ahead = 1) {
    batches_ = batches;
    std::size_t starting = workers;
    if (!blocks_.empty()) {
      starting = 0;
      for (const std::size_t b : blocks_) starting += b;
    }
    next_ = std::min(starting * ahead, batches);
    stopped_after_.reset();
    requests_ = 0;
    timing_.assign(workers, worker_timing{});
  }

  void stop_when(stop_rule rule) { rule_ = std::move(rule); }

  /// Node aggregation: worker w stands for `sizes[w]` workers (its node's), which start the epoch
  /// with one batch each, two when pipelined (`ahead`; the `begin_epoch` workers are then the
  /// nodes), and each of its requests
  /// takes a block of `sizes[w]` consecutive batches, or what is left: `next` returns the block's
  /// first. Empty (the default): one batch per request.
  void hand_out_blocks(std::vector<std::size_t> sizes) { blocks_ = std::move(sizes); }

  /// The batch to hand out now to `worker`, which asks for one, or empty when the epoch's batches
  /// are all handed out or the rule stopped the hand-out. `compute_seconds`: when the rule
  /// samples, the worker's compute time for the step it just finished (empty for its first
  /// request of the part). `now`: the time of the request, in seconds of the serving rank's
  /// transport clock (`transport::seconds_now`, simulated seconds on a simulated transport; the
  /// parameter server passes it); by default the steady clock.
  [[nodiscard]] std::optional<std::size_t> next(std::size_t worker, std::optional<double> compute_seconds = {},
                                                std::optional<double> now = {}) {
    const std::optional<trigger::step_sample> sample =
        record(worker, compute_seconds, now ? *now : transport::seconds_now(steady_clock_only{}));
    if (!stopped_after_ && next_ < batches_ && rule_.fire && rule_.fire(trigger::progress{next_, sample})) {
      stopped_after_ = next_;
    }
    if (stopped_after_ || next_ >= batches_) return std::nullopt;
    const std::size_t first = next_;
    const std::size_t block = worker < blocks_.size() ? std::max<std::size_t>(blocks_[worker], 1) : 1;
    next_ = std::min(next_ + block, batches_);
    return first;
  }

  /// After the rule stopped this epoch's hand-out: the batches handed out by then.
  [[nodiscard]] std::optional<std::size_t> stopped_after() const noexcept { return stopped_after_; }

  /// The batches of this epoch.
  [[nodiscard]] std::size_t batches() const noexcept { return batches_; }

 private:
  // A transport without a clock: `transport::seconds_now` reads the steady clock for it.
  struct steady_clock_only {};
  struct worker_timing {
    std::optional<double> last;  // its last request; empty before its first this part
    double seconds = 0.0;                   // compute reported since the last sample
    std::size_t steps = 0;                  // reports since the last sample
    double latest = 0.0;                    // its last report
  };

  // Records the request and its report; every sample_every x workers requests, the sample.
  std::optional<trigger::step_sample> record(std::size_t worker, std::optional<double> compute_seconds, double now) {
    if (rule_.sample_every == 0 || worker >= timing_.size()) return std::nullopt;
    worker_timing& w = timing_[worker];
    if (compute_seconds) {
      w.latest = *compute_seconds;
      w.seconds += w.latest;
      ++w.steps;
    }
    w.last = now;
    if (++requests_ % (rule_.sample_every * timing_.size()) != 0) return std::nullopt;
    per_step_.clear();
    for (worker_timing& each : timing_) {
      if (!each.last) continue;
      const double waited = now - *each.last;
      per_step_.push_back(each.steps == 0 ? std::max(each.latest, waited)
                                          : each.seconds / static_cast<double>(each.steps));
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
  std::vector<std::size_t> blocks_;  // node aggregation: the batches of each worker's request
};

}  // namespace switchyard::strategy
