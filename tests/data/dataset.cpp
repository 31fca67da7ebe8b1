// Tests of switchyard/data/dataset.hpp: loading image/label pairs, their cross-checks, and the
// in-memory constructor.
#include "switchyard/data/dataset.hpp"
#include "switchyard/data/idx.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <vector>

#include "fixtures.hpp"

using switchyard::data_error;
using switchyard::usage_error;
using switchyard::data::dataset;
using switchyard::data::load_idx_dataset;

namespace {

/// Writes a gzip image file of `count` 2x3 images and a plain label file with `labels`.
struct pair_files {
  fixtures::temp_dir dir;
  std::filesystem::path images = dir / "images.gz";
  std::filesystem::path labels = dir / "labels.idx";

  pair_files(std::uint32_t count, const std::vector<std::uint8_t>& label_values) {
    fixtures::write_gzip(images, fixtures::idx_bytes({count, 2, 3}, fixtures::pattern(count * 6)));
    fixtures::write_plain(
        labels,
        fixtures::idx_bytes({static_cast<std::uint32_t>(label_values.size())}, label_values));
  }
};

}  // namespace

TEST_CASE("dataset.load" * doctest::timeout(60)) {
  const std::vector<std::uint8_t> labels{9, 0, 3, 3};
  pair_files files(4, labels);
  const std::shared_ptr<const dataset> data = load_idx_dataset(files.images, files.labels);
  CHECK(data->size() == 4);
  CHECK(data->rows() == 2);
  CHECK(data->cols() == 3);
  CHECK(data->pixels() == 6);
  CHECK(data->classes() == 10);
  const auto pixels = fixtures::pattern(24);
  CHECK(std::ranges::equal(data->images(), pixels));
  CHECK(std::ranges::equal(data->labels(), labels));
  CHECK(std::ranges::equal(data->image(2), std::span(pixels).subspan(12, 6)));
}

TEST_CASE("dataset.load_rejects_inconsistent_files" * doctest::timeout(60)) {
  SUBCASE("counts disagree") {
    pair_files files(4, {1, 2, 3});
    fixtures::check_mentions(
        fixtures::message_of<data_error>([&] { (void)load_idx_dataset(files.images, files.labels); }),
        {files.images.string() + " holds 4 images but " + files.labels.string() +
         " holds 3 labels"});
  }
  SUBCASE("label out of range") {
    pair_files files(4, {1, 2, 10, 3});
    fixtures::check_mentions(
        fixtures::message_of<data_error>([&] { (void)load_idx_dataset(files.images, files.labels); }),
        {files.labels.string() + ": label 10 of example 2 is out of range for 10 classes"});
    // The same file is fine with more classes.
    CHECK(load_idx_dataset(files.images, files.labels, 11)->classes() == 11);
  }
  SUBCASE("files swapped") {
    pair_files files(4, {1, 2, 3, 4});
    fixtures::check_mentions(
        fixtures::message_of<data_error>([&] { (void)load_idx_dataset(files.labels, files.images); }),
        {files.labels.string(), "expected images (3 dimensions", "declares shape 4"});
    fixtures::check_mentions(
        fixtures::message_of<data_error>([&] { (void)load_idx_dataset(files.images, files.images); }),
        {files.images.string(), "expected labels (1 dimension", "declares shape 4x2x3"});
  }
  SUBCASE("images of no pixels") {
    pair_files files(4, {1, 2, 3, 4});
    fixtures::write_plain(files.images, fixtures::idx_bytes({4, 0, 3}, {}));
    fixtures::check_mentions(
        fixtures::message_of<data_error>([&] { (void)load_idx_dataset(files.images, files.labels); }),
        {files.images.string(), "rows and cols not 0", "declares shape 4x0x3"});
  }
  SUBCASE("a file's own error") {
    pair_files files(4, {1, 2, 3, 4});
    std::filesystem::remove(files.labels);
    fixtures::check_mentions(
        fixtures::message_of<data_error>([&] { (void)load_idx_dataset(files.images, files.labels); }),
        {files.labels.string(), "No such file"});
  }
}

TEST_CASE("dataset.constructor_checks_its_arguments" * doctest::timeout(60)) {
  const auto make = [](std::size_t pixels, std::vector<std::uint8_t> labels, std::size_t rows,
                       std::size_t cols, std::size_t classes) {
    return fixtures::message_of<usage_error>([&] {
      (void)dataset(std::vector<std::uint8_t>(pixels), std::move(labels), rows, cols, classes);
    });
  };
  fixtures::check_mentions(make(13, {0, 1}, 2, 3, 10), {"13 pixel bytes are not 2 images", "2x3"});
  fixtures::check_mentions(make(12, {0, 1, 2}, 2, 3, 10), {"12 pixel bytes are not 3 images"});
  fixtures::check_mentions(make(12, {0, 5}, 2, 3, 5), {"label 5 of example 1", "5 classes"});
  fixtures::check_mentions(make(0, {}, 0, 3, 10), {"images of 0x3 pixels"});
  fixtures::check_mentions(make(0, {}, 2, 3, 0), {"0 classes"});
  fixtures::check_mentions(make(0, {}, 2, 3, 257), {"257 classes", "1 to 256"});
  CHECK(dataset(std::vector<std::uint8_t>(12), {0, 255}, 2, 3, 256).size() == 2);
  CHECK(dataset({}, {}, 28, 28).size() == 0);
}

TEST_CASE("dataset.slice_views_without_copying" * doctest::timeout(60)) {
  const auto data = fixtures::numbered_dataset(5, 2, 2);
  const auto batch = data->slice(1, 3);
  CHECK(batch.size() == 3);
  CHECK(batch.rows == 2);
  CHECK(batch.cols == 2);
  CHECK(batch.images.data() == data->images().data() + 4);
  CHECK(batch.images.size() == 12);
  CHECK(batch.labels.data() == data->labels().data() + 1);
  CHECK(data->slice(5, 0).size() == 0);
  fixtures::check_mentions(fixtures::message_of<usage_error>([&] { (void)data->slice(3, 3); }),
                           {"examples [3, 6) go past the 5 examples"});
  fixtures::check_mentions(fixtures::message_of<usage_error>([&] { (void)data->slice(6, 0); }),
                           {"go past the 5 examples"});
}

TEST_CASE("dataset.first: a copy of the first examples, with the shape and classes kept" * doctest::timeout(60)) {
  const auto data = fixtures::numbered_dataset(5, 2, 3);
  const dataset three = data->first(3);
  CHECK(three.size() == 3);
  CHECK(three.rows() == 2);
  CHECK(three.cols() == 3);
  CHECK(three.classes() == data->classes());
  CHECK(std::ranges::equal(three.images(), data->images().first(18)));
  CHECK(std::ranges::equal(three.labels(), data->labels().first(3)));
  CHECK(three.images().data() != data->images().data());
  CHECK(data->first(0).size() == 0);
  CHECK(data->first(5).size() == 5);
  fixtures::check_mentions(fixtures::message_of<usage_error>([&] { (void)data->first(6); }),
                           {"dataset::first", "6 examples", "of 5"});
}

TEST_CASE("dataset.repeated: every example the given number of times over, in order" * doctest::timeout(60)) {
  const auto data = fixtures::numbered_dataset(5, 2, 3);
  const dataset thrice = data->repeated(3);
  CHECK(thrice.size() == 15);
  CHECK(thrice.rows() == 2);
  CHECK(thrice.cols() == 3);
  CHECK(thrice.classes() == data->classes());
  for (std::size_t index = 0; index < thrice.size(); ++index) {
    CAPTURE(index);
    CHECK(std::ranges::equal(thrice.image(index), data->image(index % 5)));
    CHECK(thrice.label(index) == data->label(index % 5));
  }
  CHECK(std::ranges::equal(data->repeated(1).images(), data->images()));
  CHECK(data->repeated(0).size() == 0);
  fixtures::check_mentions(
      fixtures::message_of<usage_error>([&] { (void)data->repeated(std::numeric_limits<std::size_t>::max() / 10); }),
      {"dataset::repeated", "5 examples", "do not fit"});
}
