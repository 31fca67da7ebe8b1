// Tests of optim/schedule.hpp: the concept over the shipped schedules and a user one.
#include "switchyard/optim/schedule.hpp"

#include <doctest/doctest.h>

#include <cstdint>

#include "switchyard/optim/constant.hpp"
#include "switchyard/optim/cosine.hpp"
#include "switchyard/optim/step_decay.hpp"
#include "switchyard/optim/warmup.hpp"

namespace optim = switchyard::optim;

namespace {

struct inverse_sqrt {
  [[nodiscard]] double lr(std::uint64_t step) const { return 1.0 / (1.0 + static_cast<double>(step)); }
};

struct mutable_lr {
  double lr(std::uint64_t);  // not callable on a const schedule
};

}  // namespace

TEST_CASE("schedule.concept") {
  static_assert(optim::schedule<optim::constant> && optim::schedule<optim::step_decay>);
  static_assert(optim::schedule<optim::cosine> && optim::schedule<optim::warmup<optim::cosine>>);
  static_assert(optim::schedule<optim::warmup<optim::warmup<optim::constant>>>);
  static_assert(optim::schedule<inverse_sqrt>);
  static_assert(!optim::schedule<mutable_lr> && !optim::schedule<double>);
  const optim::warmup ramp{4, inverse_sqrt{}};
  CHECK(ramp.lr(3) == 1.0);
  CHECK(ramp.lr(5) == 0.5);
}
