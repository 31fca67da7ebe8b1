#include <switchyard/tensor/xtensor.hpp>

#include <switchyard/collective/allreduce.hpp>
#include <switchyard/collective/broadcast.hpp>
#include <switchyard/transport/inproc.hpp>

#include <doctest/doctest.h>

#include <xtensor/xadapt.hpp>

#include <vector>

namespace sy = switchyard;

static_assert(sy::mutable_buffer<xt::xtensor<float, 1>>);
static_assert(sy::mutable_buffer<xt::xtensor<double, 3>>);
static_assert(sy::mutable_buffer<xt::xarray<int>>);
static_assert(sy::buffer<const xt::xtensor<float, 2>>);
static_assert(!sy::mutable_buffer<const xt::xtensor<float, 2>>);

TEST_CASE("xtensor.as_span: containers and adaptors are viewed in place") {
  xt::xtensor<float, 2> matrix = {{1, 2, 3}, {4, 5, 6}};
  CHECK(sy::as_span(matrix).data() == matrix.data());
  CHECK(sy::as_span(matrix).size() == 6);
  xt::xarray<double> any_rank = xt::zeros<double>({2, 3, 4});
  CHECK(sy::as_span(any_rank).size() == 24);
  std::vector<float> storage(8, 1.0f);
  auto adapted = xt::adapt(storage.data(), storage.size(), xt::no_ownership(), std::vector<std::size_t>{2, 4});
  CHECK(sy::as_span(adapted).data() == storage.data());
}

TEST_CASE_TEMPLATE("xtensor.collectives: all-reduce and broadcast work on xtensor types in place", Tensor,
                   xt::xtensor<float, 2>, xt::xtensor<double, 1>, xt::xarray<std::int32_t>) {
  for (int ranks : {1, 2, 3, 4}) {
    CAPTURE(ranks);
    const auto sums = sy::transport::run_inproc(ranks, [](sy::transport::inproc& t) {
      using value = typename Tensor::value_type;
      Tensor x = [] {
        if constexpr (std::is_same_v<Tensor, xt::xtensor<double, 1>>) {
          return Tensor::from_shape({15});
        } else {
          return Tensor::from_shape({3, 5});
        }
      }();
      x.fill(static_cast<value>(t.rank() + 1));
      sy::collective::allreduce(t, x, sy::ops::sum{}, sy::algorithm::ring{});
      Tensor y = x * static_cast<typename Tensor::value_type>(t.rank() + 1);
      sy::collective::broadcast(t, y, 0);
      return std::vector<double>{static_cast<double>(x(0)), static_cast<double>(y.data()[14])};
    });
    for (const auto& s : sums) {
      CHECK(s[0] == ranks * (ranks + 1) / 2);
      CHECK(s[1] == ranks * (ranks + 1) / 2);
    }
  }
}
