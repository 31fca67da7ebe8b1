// Tests of core/rank_context.hpp: scratch is kept per type and slot, a scope installs a context and
// puts the previous one back, and suspend/resume carry a rank's floating-point mode.
#include <switchyard/core/rank_context.hpp>

#include <switchyard/core/floating_point.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <thread>

namespace sy = switchyard;

TEST_CASE("rank_context.scratch: kept per element type and slot, grown and never shrunk") {
  sy::rank_context context;
  const std::span<float> first = context.scratch<float>(100);
  const std::span<float> second = context.scratch<float>(50, 1);
  const std::span<double> other = context.scratch<double>(10);
  CHECK(first.size() == 100);
  CHECK(second.size() == 50);
  CHECK(static_cast<const void*>(first.data()) != static_cast<const void*>(other.data()));
  CHECK(first.data() != second.data());
  CHECK(context.scratch<float>(80).data() == first.data());  // smaller: the same storage
}

TEST_CASE("rank_context.scope: installs a context, then the previous one again; threads have their own") {
  sy::rank_context& own = sy::current_rank_context();
  sy::rank_context other;
  {
    const sy::rank_context_scope scope{other};
    CHECK(&sy::current_rank_context() == &other);
    sy::current_rank_context().stage_label = "inside";
    std::thread([&] { CHECK(&sy::current_rank_context() != &other); }).join();
  }
  CHECK(&sy::current_rank_context() == &own);
  CHECK(own.stage_label.empty());
  CHECK(other.stage_label == "inside");
}

TEST_CASE("rank_context.floating_point: suspend keeps a rank's mode, resume makes it the thread's again") {
  if (!sy::can_flush_subnormals) return;
  sy::rank_context flushing;
  sy::rank_context plain;
  const sy::rank_context_scope scope{plain};
  {
    sy::detail::resume(flushing);
    const sy::flush_subnormals_scope flush;
    sy::detail::suspend(flushing);
    sy::detail::resume(plain);
    CHECK_FALSE(sy::subnormals_flushed());
    sy::detail::suspend(plain);
    sy::detail::resume(flushing);
    CHECK(sy::subnormals_flushed());
  }
  CHECK_FALSE(sy::subnormals_flushed());
}
