// Tests of switchyard/data/labelled_dataset.hpp: which types are data sets and batches, member by
// member (the trainer and the loader refuse the others with data::check_labelled_dataset).
#include "switchyard/data/labelled_dataset.hpp"

#include "switchyard/data/dataset.hpp"

#include <doctest/doctest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace sy = switchyard;

namespace {

// Every member, each returning a type other than data::dataset's.
struct complete {
  std::vector<std::vector<std::uint8_t>> images;
  int size() const { return static_cast<int>(images.size()); }
  unsigned rows() const { return 1; }
  unsigned cols() const { return 2; }
  const std::vector<std::uint8_t>& image(std::size_t i) const { return images[i]; }
  char label(std::size_t) const { return 1; }
};

struct no_size {
  std::size_t rows() const { return 1; }
  std::size_t cols() const { return 1; }
  std::span<const std::uint8_t> image(std::size_t) const { return {}; }
  std::size_t label(std::size_t) const { return 0; }
};

struct no_label {
  std::size_t size() const { return 0; }
  std::size_t rows() const { return 1; }
  std::size_t cols() const { return 1; }
  std::span<const std::uint8_t> image(std::size_t) const { return {}; }
};

struct image_of_floats {
  std::vector<float> pixels;
  std::size_t size() const { return 0; }
  std::size_t rows() const { return 1; }
  std::size_t cols() const { return 1; }
  std::span<const float> image(std::size_t) const { return pixels; }
  std::size_t label(std::size_t) const { return 0; }
};

struct mutable_members {  // the trainer holds data sets as const
  std::size_t size() { return 0; }
  std::size_t rows() { return 1; }
  std::size_t cols() { return 1; }
  std::span<const std::uint8_t> image(std::size_t) { return {}; }
  std::size_t label(std::size_t) { return 0; }
};

// A data set that slices into its own batch type.
struct own_batch {
  std::span<const std::uint8_t> images;
  std::span<const std::uint8_t> labels;
  std::size_t size() const { return labels.size(); }
  std::size_t pixels() const { return 4; }
};
struct slicing : complete {
  own_batch slice(std::size_t, std::size_t) const { return {}; }
};
struct slicing_into_a_vector : complete {
  std::vector<std::uint8_t> slice(std::size_t, std::size_t) const { return {}; }
};

}  // namespace

static_assert(sy::data::labelled_dataset<sy::data::dataset>);
static_assert(sy::data::sliced_dataset<sy::data::dataset>);
static_assert(sy::data::labelled_dataset<complete>);
static_assert(!sy::data::sliced_dataset<complete>);
static_assert(!sy::data::labelled_dataset<no_size>);
static_assert(!sy::data::labelled_dataset<no_label>);
static_assert(!sy::data::labelled_dataset<image_of_floats>);
static_assert(!sy::data::labelled_dataset<mutable_members>);
static_assert(sy::data::sliced_dataset<slicing>);
static_assert(!sy::data::sliced_dataset<slicing_into_a_vector>);
static_assert(sy::data::batch<sy::data::batch_view>);
static_assert(sy::data::batch<own_batch>);
static_assert(!sy::data::batch<std::vector<std::uint8_t>>);
static_assert(sy::data::check_labelled_dataset<complete>());

TEST_CASE("labelled_dataset.dataset: data::dataset's label(i) is its labels()[i]") {
  const sy::data::dataset d({0, 0, 0, 0, 0, 0}, {2, 0, 1}, 1, 2, 3);
  for (std::size_t i = 0; i < d.size(); ++i) CHECK(d.label(i) == d.labels()[i]);
  CHECK(d.label(0) == 2);
  CHECK(d.image(1).size() == d.rows() * d.cols());
}
