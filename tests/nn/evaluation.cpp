// Tests of nn/evaluation.hpp: sums combine by addition; means guard the empty case.
#include "switchyard/nn/evaluation.hpp"

#include <doctest/doctest.h>

namespace nn = switchyard::nn;

TEST_CASE("evaluation.combines_batches_of_unequal_size") {
  nn::evaluation total;
  CHECK(total.mean_loss() == 0.0);
  CHECK(total.accuracy() == 0.0);
  total += nn::evaluation{3.0, 2, 4};
  total += nn::evaluation{1.5, 1, 2};
  CHECK(total.loss_sum == 4.5);
  CHECK(total.correct == 3);
  CHECK(total.count == 6);
  CHECK(total.mean_loss() == doctest::Approx(0.75));
  CHECK(total.accuracy() == doctest::Approx(0.5));
  const nn::evaluation sum = nn::evaluation{1.0, 1, 1} + nn::evaluation{2.0, 0, 1};
  CHECK(sum.loss_sum == 3.0);
  CHECK(sum.count == 2);
}
