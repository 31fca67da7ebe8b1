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

TEST_CASE("blas_threads_scope: sets the budget for its lifetime and puts the previous one back") {
  const int before = switchyard::nn::blas_threads();
  {
    const switchyard::nn::blas_threads_scope scope{1};
    CHECK(switchyard::nn::blas_threads() == 1);
  }
  CHECK(switchyard::nn::blas_threads() == before);
  CHECK_THROWS_WITH_AS(switchyard::nn::blas_threads_scope{0}, doctest::Contains("at least 1, got 0"),
                       switchyard::usage_error);
  CHECK(switchyard::nn::blas_threads() == before);
}
