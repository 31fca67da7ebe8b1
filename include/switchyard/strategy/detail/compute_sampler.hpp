// The straggler samples of a synchronous stage, which a sampling trigger
// (`trigger::samples_steps`) of `switch_to` or `alternate` watches.
#pragma once

#include <switchyard/collective/allgather.hpp>
#include <switchyard/strategy/traits.hpp>
#include <switchyard/transport/concurrency.hpp>
#include <switchyard/trigger/trigger.hpp>

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
// seconds on a simulated transport), shared every `every` steps by one
// all-gather of two numbers per worker.
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
  std::optional<trigger::step_sample> step_ended(Transport& t, std::size_t every) {
    const double now = transport::seconds_now(t);
    if (last_end_) {
      mine_[1] += now - *last_end_;
      ++timed_;
    }
    std::optional<trigger::step_sample> sample;
    if (every != 0 && ++steps_ % every == 0 && timed_ != 0) {
      for (double& each : mine_) each /= static_cast<double>(timed_);
      const auto workers = static_cast<std::size_t>(t.size());
      gathered_.resize(2 * workers);
      collective::allgather(t, std::span<const double>(mine_), gathered_);
      compute_.resize(workers);
      whole_.resize(workers);
      for (std::size_t w = 0; w < workers; ++w) {
        compute_[w] = gathered_[2 * w];
        whole_[w] = gathered_[2 * w + 1];
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
  std::vector<double> gathered_;  // the workers' two numbers, worker by worker
  std::vector<double> compute_;
  std::vector<double> whole_;
};

}  // namespace switchyard::strategy::detail
