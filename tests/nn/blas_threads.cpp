#include <switchyard/nn/blas_threads.hpp>

#include <doctest/doctest.h>

TEST_CASE("blas_threads: the budget is set for the process and read back") {
  const int before = switchyard::nn::blas_threads();
  switchyard::nn::set_blas_threads(1);
  CHECK(switchyard::nn::blas_threads() == 1);
  CHECK_THROWS_WITH_AS(switchyard::nn::set_blas_threads(0), doctest::Contains("at least 1, got 0"),
                       switchyard::usage_error);
  switchyard::nn::set_blas_threads(before);
  CHECK(switchyard::nn::blas_threads() == before);
}
