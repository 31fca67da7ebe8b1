// strategy/parameter_server/residuals.hpp: the compressed workers' error-feedback residuals,
// gathered on rank 0 for a checkpoint, saved and loaded, and given back to each worker.
#include <switchyard/strategy/parameter_server/residuals.hpp>

#include <switchyard/transport/inproc.hpp>

#include "../../common/byte_archive.hpp"

#include <doctest/doctest.h>

#include <cstddef>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace sy = switchyard;
using sy::strategy::detail::ps_residuals;
using residuals = std::vector<std::vector<float>>;

namespace {

// What rank 0 saves after every worker of `workers` sent its residual: worker w owes w + 0.25 on
// each of `arena` parameters, but the last worker has not pushed yet and owes nothing.
std::vector<unsigned char> gathered(int workers, std::size_t arena) {
  const auto saved = sy::transport::run_inproc(workers, [&](sy::transport::inproc& t) {
    std::vector<float> owed;
    if (t.rank() + 1 < workers) owed.assign(arena, static_cast<float>(t.rank()) + 0.25f);
    ps_residuals held;
    held.gather(t, std::span<const float>(owed), arena, static_cast<std::size_t>(workers));
    std::vector<unsigned char> bytes;
    test_support::byte_archive<false> out{&bytes};
    held.serialize(out);
    return std::pair{held.saved(), bytes};
  });
  for (int rank = 1; rank < workers; ++rank) CHECK(saved[static_cast<std::size_t>(rank)].first.empty());
  residuals expected;
  for (int w = 0; w < workers; ++w) {
    expected.emplace_back(arena, w + 1 < workers ? static_cast<float>(w) + 0.25f : 0.0f);
  }
  CHECK(saved[0].first == expected);
  return saved[0].second;
}

ps_residuals loaded(std::vector<unsigned char> bytes) {
  ps_residuals held;
  test_support::byte_archive<true> in{&bytes};
  held.serialize(in);
  return held;
}

}  // namespace

TEST_CASE("ps.residuals: rank 0 gathers every worker's residual, zeros for one that owes nothing") {
  for (const int workers : {1, 2, 3}) {
    CAPTURE(workers);
    (void)gathered(workers, 5);
  }
}

TEST_CASE("ps.residuals: a loaded checkpoint gives each worker its own residual, once") {
  const std::vector<unsigned char> bytes = gathered(3, 4);
  for (std::size_t w = 0; w < 3; ++w) {
    ps_residuals held = loaded(bytes);
    sy::compression::error_feedback feedback;
    held.restore(0, 4, 3, w, feedback);
    const std::span<const float> own = feedback.residual();
    const float owed = w < 2 ? static_cast<float>(w) + 0.25f : 0.0f;
    CHECK(std::vector<float>(own.begin(), own.end()) == std::vector<float>(4, owed));
    CHECK(held.saved().empty());
    // Restored once: a second setup leaves the worker's feedback alone.
    feedback.reset();
    held.restore(0, 4, 3, w, feedback);
    CHECK(feedback.residual().empty());
  }
}

TEST_CASE("ps.residuals: resumed on another number of workers, or on a server, no one gets one") {
  const std::vector<unsigned char> bytes = gathered(3, 4);
  sy::compression::error_feedback feedback;
  ps_residuals other_count = loaded(bytes);
  other_count.restore(0, 4, 2, 0, feedback);
  CHECK(feedback.residual().empty());
  ps_residuals on_a_server = loaded(bytes);
  on_a_server.restore(3, 4, 3, std::nullopt, feedback);
  CHECK(feedback.residual().empty());
}

TEST_CASE("ps.residuals: a residual of another size than the model is refused") {
  ps_residuals held = loaded(gathered(2, 4));
  sy::compression::error_feedback feedback;
  CHECK_THROWS_WITH_AS(held.restore(1, 6, 2, 1, feedback),
                       doctest::Contains("rank 1: the checkpoint holds an error-feedback residual of 4 elements for a "
                                         "model of 6 parameters"),
                       sy::data_error);
  CHECK(feedback.residual().empty());
}

TEST_CASE("ps.residuals: clear forgets what rank 0 gathered") {
  ps_residuals held = loaded(gathered(2, 3));
  CHECK(held.saved().size() == 2);
  held.clear();
  CHECK(held.saved().empty());
}
