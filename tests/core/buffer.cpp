#include <switchyard/core/buffer.hpp>

#include <doctest/doctest.h>

#include <array>
#include <span>
#include <type_traits>
#include <vector>

namespace user {

// A tensor type that is not a range and opts in through the ADL customization point.
struct adl_tensor {
  float storage[3] = {1, 2, 3};
};
inline std::span<float> switchyard_as_span(adl_tensor& t) { return t.storage; }
inline std::span<const float> switchyard_as_span(const adl_tensor& t) { return t.storage; }

// A tensor type that opts in through the trait.
struct trait_tensor {
  std::vector<double> values{4, 5};
};

}  // namespace user

template <>
struct switchyard::buffer_traits<user::trait_tensor> {
  static std::span<double> span(user::trait_tensor& t) { return t.values; }
  static std::span<const double> span(const user::trait_tensor& t) { return t.values; }
};

using namespace switchyard;

static_assert(mutable_buffer<std::vector<float>>);
static_assert(mutable_buffer<std::array<int, 4>>);
static_assert(mutable_buffer<std::span<double>>);
static_assert(mutable_buffer<user::adl_tensor>);
static_assert(mutable_buffer<user::trait_tensor>);
static_assert(buffer<const std::vector<float>>);
static_assert(!mutable_buffer<const std::vector<float>>);
static_assert(!buffer<std::vector<bool>>, "bool is not an arithmetic element type for reductions");
static_assert(!buffer<std::vector<std::vector<float>>>);
static_assert(std::is_same_v<buffer_element_t<const std::vector<int>>, const int>);

TEST_CASE("buffer.as_span: every kind of buffer is viewed in place, without copies") {
  std::vector<float> v{1, 2, 3};
  CHECK(as_span(v).data() == v.data());
  CHECK(as_span(v).size() == 3);

  std::array<int, 2> a{7, 8};
  CHECK(as_span(a).data() == a.data());

  user::adl_tensor t;
  CHECK(as_span(t).data() == t.storage);
  CHECK(as_span(t)[2] == 3.0f);

  user::trait_tensor d;
  CHECK(as_span(d).data() == d.values.data());
  const user::trait_tensor& cd = d;
  CHECK(as_span(cd).size() == 2);

  std::vector<double> empty;
  CHECK(as_span(empty).empty());
}
