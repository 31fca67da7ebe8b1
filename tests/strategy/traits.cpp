// The defaults of the strategy protocol: what a strategy that writes only name() and step() gets,
// and that a member a strategy writes replaces its default.
#include <switchyard/strategy/traits.hpp>

#include <switchyard/optim/adam.hpp>
#include <switchyard/optim/sgd.hpp>
#include <switchyard/strategy/all_reduce.hpp>
#include <switchyard/strategy/replicas.hpp>
#include <switchyard/transport/inproc.hpp>

#include "arenas.hpp"

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace sy = switchyard;
namespace traits = sy::strategy::traits;
using test_models::arenas;

namespace {

struct two_members {
  std::string_view name() const { return "two"; }
  template <class T, class M, class O>
  void step(T&, M& m, O& o) {
    o.step(m.parameters(), m.gradients());
  }
};

// Only its worker count: the last rank serves nothing and idles.
struct all_but_last : two_members {
  template <class T>
  std::size_t worker_count(const T& t) const {
    return static_cast<std::size_t>(t.size() - 1);
  }
};

// Its own setup, which keeps each rank's own parameters.
struct keeps_own_start : two_members {
  int setups = 0;
  template <class T, class M, class O>
  void setup(T&, M&, O&) {
    ++setups;
  }
  std::size_t batches_per_update(const sy::transport::inproc&) const { return 5; }
};

struct replicated_two : two_members {
  static constexpr bool replicated() { return true; }
};

struct stoppable_stage : two_members {
  sy::strategy::stop_rule rule;
  void stop_when(sy::strategy::stop_rule r) { rule = std::move(r); }
  std::optional<std::size_t> stopped_after() const { return 3; }
};

// A rank-dependent model and Adam state: what the replicas look like after a stage that drifts.
struct replica {
  arenas model;
  sy::optim::adam<> optimizer{4, 0.1};
  explicit replica(int rank)
      : model{std::vector<float>(4, 1.0f + static_cast<float>(rank)), std::vector<float>(4, 0.5f * static_cast<float>(rank + 1))} {
    optimizer.step(model.parameters(), model.gradients());
  }
};

}  // namespace

static_assert(!traits::stoppable<two_members>);
static_assert(traits::stoppable<stoppable_stage>);

TEST_CASE("traits.workers: by default every rank is a worker, indexed by its rank") {
  for (const int ranks : {1, 2, 3, 4}) {
    CAPTURE(ranks);
    sy::transport::run_inproc(ranks, [](sy::transport::inproc& t) {
      CHECK(traits::worker_count(two_members{}, t) == static_cast<std::size_t>(t.size()));
      CHECK(traits::worker_index(two_members{}, t) == static_cast<std::size_t>(t.rank()));
      CHECK(traits::batches_per_update(two_members{}, t) == static_cast<std::size_t>(t.size()));
      // A strategy that gives only its worker count: ranks beyond it are not workers.
      const std::optional<std::size_t> index = traits::worker_index(all_but_last{}, t);
      CHECK(index.has_value() == (t.rank() < t.size() - 1));
      CHECK(traits::batches_per_update(all_but_last{}, t) == static_cast<std::size_t>(t.size() - 1));
    });
  }
}

TEST_CASE("traits.flags: not replicated, no batches handed out, nothing to resume at or stop") {
  CHECK_FALSE(traits::replicated(two_members{}));
  CHECK(traits::replicated(replicated_two{}));
  CHECK(traits::replicated(sy::strategy::all_reduce<>{}));
  CHECK_FALSE(traits::hands_out_batches(two_members{}));
  CHECK_FALSE(traits::resume_at(two_members{}).has_value());
  CHECK_FALSE(traits::stopped_after(two_members{}).has_value());
  stoppable_stage s;
  traits::stop_when(s, {[](const sy::trigger::progress& p) { return p.batches >= 2; }, 5});
  REQUIRE(s.rule.fire);
  CHECK(s.rule.fire({2}));
  CHECK(s.rule.sample_every == 5);
  CHECK(traits::stopped_after(s) == 3u);
  CHECK(traits::name(two_members{}) == "two");
}

TEST_CASE("traits.setup: by default every rank gets rank 0's parameters and optimizer state; the schedule counts "
          "batches_per_update") {
  for (const int ranks : {1, 2, 3, 4}) {
    CAPTURE(ranks);
    const auto fingerprints = sy::transport::run_inproc(ranks, [](sy::transport::inproc& t) {
      replica r(t.rank());
      two_members s;
      traits::setup(s, t, r.model, r.optimizer);
      CHECK(r.model.params == replica(0).model.params);
      CHECK(r.optimizer.schedule_stride() == static_cast<std::uint64_t>(t.size()));
      return sy::strategy::training_state_fingerprint(r.model, r.optimizer);
    });
    for (const std::uint64_t f : fingerprints) CHECK(f == fingerprints[0]);
  }
}

TEST_CASE("traits.setup: a strategy's own setup replaces the default; the stride still follows it") {
  sy::transport::run_inproc(3, [](sy::transport::inproc& t) {
    replica r(t.rank());
    const std::vector<float> own = r.model.params;
    keeps_own_start s;
    traits::setup(s, t, r.model, r.optimizer);
    CHECK(s.setups == 1);
    CHECK(r.model.params == own);
    CHECK(r.optimizer.schedule_stride() == 5u);
  });
}

TEST_CASE("traits.hand_over: a stage that is not replicated hands every rank rank 0's state; a replicated one "
          "hands over as it is") {
  for (const int ranks : {2, 3, 4}) {
    CAPTURE(ranks);
    const auto handed = sy::transport::run_inproc(ranks, [](sy::transport::inproc& t) {
      replica r(t.rank());
      two_members s;
      traits::hand_over(s, t, r.model, r.optimizer);
      return sy::strategy::training_state_fingerprint(r.model, r.optimizer);
    });
    for (const std::uint64_t f : handed) CHECK(f == handed[0]);
    const auto kept = sy::transport::run_inproc(ranks, [](sy::transport::inproc& t) {
      replica r(t.rank());
      replicated_two s;
      traits::hand_over(s, t, r.model, r.optimizer);
      return r.model.params;
    });
    CHECK(kept[1] != kept[0]);  // nothing moved: the strategy says its replicas already agree
  }
}

TEST_CASE("traits.step: a step that returns void reports a default outcome; the optional hooks default to "
          "nothing") {
  sy::transport::run_inproc(2, [](sy::transport::inproc& t) {
    replica r(t.rank());
    two_members s;
    const std::vector<float> before = r.model.params;
    const sy::strategy::step_outcome outcome = traits::step(s, t, r.model, r.optimizer);
    CHECK(outcome.bytes_sent == 0u);
    CHECK_FALSE(outcome.next_batch.has_value());
    CHECK_FALSE(outcome.last);
    CHECK(r.model.params != before);
    const std::vector<float> stepped = r.model.params;
    traits::begin_epoch(s, t, 10);
    traits::serve(s, t, r.model, r.optimizer);
    traits::end_epoch(s, t, r.model, r.optimizer);
    traits::after_epoch(s, t, r.model, r.optimizer, 0);
    traits::finish(s, t, r.model, r.optimizer);
    CHECK(r.model.params == stepped);
    const auto state = traits::assembled_state(s, t, r.optimizer);
    CHECK(state.slots == r.optimizer.export_state().slots);
  });
}
