#include <switchyard/core/floating_point.hpp>

#include <doctest/doctest.h>

#include <cfenv>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <thread>

namespace sy = switchyard;

namespace {

// Kept out of the compiler's constant folding: the arithmetic must run on the FPU at run time.
volatile float subnormal_operand = 1e-39F;
volatile float small_operand = 1e-30F;
volatile float tiny_factor = 1e-9F;

bool is_subnormal(float value) { return std::fpclassify(value) == FP_SUBNORMAL; }

}  // namespace

TEST_CASE("floating_point.scope: flushes subnormal operands and results inside, restores the mode after") {
  REQUIRE(is_subnormal(subnormal_operand));
  REQUIRE_FALSE(sy::subnormals_flushed());
  CHECK(is_subnormal(subnormal_operand * 1.0F));
  CHECK(is_subnormal(small_operand * tiny_factor));
  {
    const sy::flush_subnormals_scope flush;
    if constexpr (sy::can_flush_subnormals) {
      CHECK(sy::subnormals_flushed());
      CHECK(subnormal_operand * 1.0F == 0.0F);     // operand read as zero (DAZ, FZ)
      CHECK(small_operand * tiny_factor == 0.0F);  // result flushed to zero (FTZ, FZ)
      CHECK(small_operand * 1.0F == 1e-30F);       // normal values are untouched
    } else {
      CHECK_FALSE(sy::subnormals_flushed());
    }
  }
  CHECK_FALSE(sy::subnormals_flushed());
  CHECK(is_subnormal(small_operand * tiny_factor));
}

TEST_CASE("floating_point.scope: false changes nothing; nested scopes restore the outer mode") {
  {
    const sy::flush_subnormals_scope off(false);
    CHECK_FALSE(sy::subnormals_flushed());
  }
  {
    const sy::flush_subnormals_scope outer;
    {
      const sy::flush_subnormals_scope inner;
      CHECK(sy::subnormals_flushed() == sy::can_flush_subnormals);
      {
        // The caller's flushing mode is left on by a scope that does not flush.
        const sy::flush_subnormals_scope off(false);
        CHECK(sy::subnormals_flushed() == sy::can_flush_subnormals);
      }
    }
    CHECK(sy::subnormals_flushed() == sy::can_flush_subnormals);
  }
  CHECK_FALSE(sy::subnormals_flushed());
}

TEST_CASE("floating_point.scope: the mode comes back when the scope is left by an exception") {
  CHECK_THROWS_AS(
      [] {
        const sy::flush_subnormals_scope flush;
        throw std::runtime_error("leaving the scope");
      }(),
      std::runtime_error);
  CHECK_FALSE(sy::subnormals_flushed());
}

TEST_CASE("floating_point.scope: rounding mode and exception flags raised inside survive the scope") {
  REQUIRE(std::fesetround(FE_UPWARD) == 0);
  std::feclearexcept(FE_ALL_EXCEPT);
  {
    const sy::flush_subnormals_scope flush;
    volatile float huge = std::numeric_limits<float>::max();
    volatile float overflowed = huge * 2.0F;
    CHECK(std::isinf(overflowed));
  }
  CHECK(std::fetestexcept(FE_OVERFLOW) != 0);
  CHECK(std::fegetround() == FE_UPWARD);
  std::fesetround(FE_TONEAREST);
  std::feclearexcept(FE_ALL_EXCEPT);
}

TEST_CASE("floating_point.scope: the mode is per thread; a thread started inside inherits it") {
  bool started_outside = true;
  bool started_inside = false;
  bool outside_thread_after = true;
  {
    std::thread outside([&] { started_outside = sy::subnormals_flushed(); });
    outside.join();
    const sy::flush_subnormals_scope flush;
    // Linux copies the creating thread's floating-point control registers into a new thread.
    std::thread([&] { started_inside = sy::subnormals_flushed(); }).join();
  }
  std::thread([&] { outside_thread_after = sy::subnormals_flushed(); }).join();
  CHECK_FALSE(started_outside);
  CHECK(started_inside == sy::can_flush_subnormals);
  CHECK_FALSE(outside_thread_after);
}
