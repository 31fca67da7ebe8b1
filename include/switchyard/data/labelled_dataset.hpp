// What the trainer asks of a data set and of a batch: the concepts a data set type of one's own
// meets to train through the stock trainer, and one sentence for each member it misses.
#pragma once

#include "switchyard/data/batch.hpp"

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>

namespace switchyard::data {

/// @brief A LabelledDataset: `size()` examples, each an image of `rows() x cols()` byte pixels
/// with a class label.
///
/// Required expressions, for `const D& d` and `std::size_t i < d.size()`:
/// @code
/// std::size_t n = d.size();            // the number of examples
/// std::size_t r = d.rows(), c = d.cols();  // every example's shape, in pixels
/// std::span<const std::uint8_t> x = d.image(i);  // example i's r * c pixels, row-major (a span,
///                                                // or a container that converts to one)
/// std::size_t y = d.label(i);          // example i's class, below 256 (labels are bytes)
/// @endcode
/// What `data::basic_batch_loader` gathers a training batch from, and what `train::trainer::fit`
/// trains and evaluates on. `data::dataset` is one; a `d.slice(first, count)` that returns a
/// `data::batch` (`sliced_dataset`) lets evaluation read examples in place instead of copying them.
template <class D>
concept labelled_dataset = requires(const D& d, std::size_t i) {
  { d.size() } -> std::convertible_to<std::size_t>;
  { d.rows() } -> std::convertible_to<std::size_t>;
  { d.cols() } -> std::convertible_to<std::size_t>;
  { d.image(i) } -> std::convertible_to<std::span<const std::uint8_t>>;
  { d.label(i) } -> std::convertible_to<std::size_t>;
};

/// @brief A Batch, as models train and evaluate on it: `size()` examples of `pixels()` bytes each,
/// their pixels in `images` and their labels in `labels`. `data::batch_view` is one; the loader
/// hands out `batch_view`s.
template <class B>
concept batch = requires(const B& b) {
  { b.size() } -> std::convertible_to<std::size_t>;
  { b.pixels() } -> std::convertible_to<std::size_t>;
  { b.images } -> std::convertible_to<std::span<const std::uint8_t>>;
  { b.labels } -> std::convertible_to<std::span<const std::uint8_t>>;
};

/// A labelled data set that hands out examples [first, first + count) as a batch without copying.
template <class D>
concept sliced_dataset = labelled_dataset<D> && requires(const D& d, std::size_t first, std::size_t count) {
  { d.slice(first, count) } -> batch;
};

/// Checks `D` member by member, with one sentence naming what is missing; true for a
/// `labelled_dataset`. For the `static_assert`s of the entry points that take data sets.
template <class D>
constexpr bool check_labelled_dataset() {
  static_assert(requires(const D& d) {
    { d.size() } -> std::convertible_to<std::size_t>;
  }, "the data set must provide size() const, returning the number of examples: see data/labelled_dataset.hpp");
  static_assert(requires(const D& d) {
    { d.rows() } -> std::convertible_to<std::size_t>;
    { d.cols() } -> std::convertible_to<std::size_t>;
  }, "the data set must provide rows() const and cols() const, every example's height and width in pixels: see "
     "data/labelled_dataset.hpp");
  static_assert(requires(const D& d, std::size_t i) {
    { d.image(i) } -> std::convertible_to<std::span<const std::uint8_t>>;
  }, "the data set must provide image(i) const, returning example i's rows() * cols() pixels as bytes "
     "(convertible to std::span<const std::uint8_t>): see data/labelled_dataset.hpp");
  static_assert(requires(const D& d, std::size_t i) {
    { d.label(i) } -> std::convertible_to<std::size_t>;
  }, "the data set must provide label(i) const, returning example i's class as an integer below 256: see "
     "data/labelled_dataset.hpp");
  return labelled_dataset<D>;
}

}  // namespace switchyard::data
