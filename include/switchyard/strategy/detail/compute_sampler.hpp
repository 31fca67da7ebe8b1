// The straggler samples of a synchronous stage, which a sampling trigger
// (`trigger::samples_steps`) of `switch_to` or `alternate` watches.
#pragma once

#include <switchyard/collective/allgather.hpp>
#include <switchyard/strategy/traits.hpp>
#include <switchyard/transport/concurrency.hpp>
#include <switchyard/trigger/trigger.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace switchyard::strategy::detail {

// The straggler samples of a synchronous stage in which every rank is a worker (see
// `trigger::samples_steps`): each worker's compute time per step, from the end of its last step to
// the start of this one, and its whole step, end to end (on the transport's clock, simulated
// seconds on a simulated transport), shared every `every` steps by one all-gather of three
// numbers per worker (the third its group: its rank, or its node when the stage compares nodes,
// `traits::compares_nodes`; a group counts as its slowest worker).
class compute_sampler {
 public:
  // Whether a synchronous `stage` can be sampled: every rank steps, so every rank joins the gather.
  template <class Stage, class Transport>
  [[nodiscard]] static bool applies(const Stage& stage, const Transport& t) {
    return !traits::hands_out_batches(stage) && traits::worker_count(stage, t) == static_cast<std::size_t>(t.size());
  }

  // A new part of an epoch: its first step has no earlier end to time from.
  void begin_part() noexcept {
    last_end_.reset();
    mine_ = {};
    timed_ = 0;
    steps_ = 0;
  }
  // At the start of a step, after the worker's forward and backward pass.
  template <class Transport>
  void step_started(const Transport& t) {
    if (!last_end_) return;
    mine_[0] += transport::seconds_now(t) - *last_end_;
  }
  // At the end of a step; every `every` steps, collective over all ranks: the sample (none when
  // no step of the window was timed, the same on every rank).
  template <class Transport>
  std::optional<trigger::step_sample> step_ended(Transport& t, std::size_t every, int group) {
    const double now = transport::seconds_now(t);
    if (last_end_) {
      mine_[1] += now - *last_end_;
      ++timed_;
    }
    std::optional<trigger::step_sample> sample;
    if (every != 0 && ++steps_ % every == 0 && timed_ != 0) {
      const std::array<double, 3> shared{mine_[0] / static_cast<double>(timed_),
                                         mine_[1] / static_cast<double>(timed_), static_cast<double>(group)};
      const auto workers = static_cast<std::size_t>(t.size());
      gathered_.resize(3 * workers);
      collective::allgather(t, std::span<const double>(shared), gathered_);
      // Groups in the order of their first worker; each as slow as its slowest.
      compute_.clear();
      whole_.clear();
      groups_.clear();
      for (std::size_t w = 0; w < workers; ++w) {
        const double* each = &gathered_[3 * w];
        const auto at = std::find(groups_.begin(), groups_.end(), each[2]);
        if (at == groups_.end()) {
          groups_.push_back(each[2]);
          compute_.push_back(each[0]);
          whole_.push_back(each[1]);
        } else {
          const auto g = static_cast<std::size_t>(at - groups_.begin());
          compute_[g] = std::max(compute_[g], each[0]);
          whole_[g] = std::max(whole_[g], each[1]);
        }
      }
      sample = trigger::summarize_steps(compute_);
      sample->step_seconds = trigger::summarize_steps(whole_).median_seconds;
      mine_ = {};
      timed_ = 0;
    }
    last_end_ = transport::seconds_now(t);
    return sample;
  }

 private:
  std::optional<double> last_end_;  // seconds of the transport's clock (transport::seconds_now)
  std::array<double, 2> mine_{};  // compute and whole steps since the last sample, summed
  std::size_t timed_ = 0;         // steps they cover
  std::uint64_t steps_ = 0;       // steps of this part
  std::vector<double> gathered_;  // the workers' three numbers, worker by worker
  std::vector<double> compute_;
  std::vector<double> whole_;
  std::vector<double> groups_;
};

}  // namespace switchyard::strategy::detail
