// A labelled image data set held as bytes in memory, loaded once and shared read-only by every
// in-process rank.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "switchyard/core/error.hpp"
#include "switchyard/data/batch.hpp"
#include "switchyard/data/labelled_dataset.hpp"

namespace switchyard::data {

/// @brief `size()` images of `rows() x cols()` pixels (one byte each, row-major, one image after
/// another) with one class label in `[0, classes())` per image.
///
/// Immutable once built, so ranks running as threads share one copy through
/// `std::shared_ptr<const dataset>`.
/// @code
/// auto train = switchyard::data::load_idx_dataset("train-images-idx3-ubyte.gz",
///                                                 "train-labels-idx1-ubyte.gz");  // data/idx.hpp
/// switchyard::data::batch_view first_ten = train->slice(0, 10);
/// @endcode
class dataset {
 public:
  /// @brief Takes ownership of `images` (`labels.size() * rows * cols` bytes) and `labels`.
  /// @throws usage_error if the sizes disagree, `rows`, `cols` or `classes` is 0, `classes` is
  /// above 256 (labels are bytes), or a label is not below `classes`.
  dataset(std::vector<std::uint8_t> images, std::vector<std::uint8_t> labels, std::size_t rows,
          std::size_t cols, std::size_t classes = 10);


  [[nodiscard]] std::size_t size() const noexcept { return labels_.size(); }
  [[nodiscard]] std::size_t rows() const noexcept { return rows_; }
  [[nodiscard]] std::size_t cols() const noexcept { return cols_; }
  [[nodiscard]] std::size_t pixels() const noexcept { return rows_ * cols_; }
  [[nodiscard]] std::size_t classes() const noexcept { return classes_; }

  /// All pixels, `size() * pixels()` bytes.
  [[nodiscard]] std::span<const std::uint8_t> images() const noexcept { return images_; }
  /// All labels, one per image.
  [[nodiscard]] std::span<const std::uint8_t> labels() const noexcept { return labels_; }
  /// The label of image `index` (unchecked, like `operator[]`).
  [[nodiscard]] std::uint8_t label(std::size_t index) const noexcept { return labels_[index]; }
  /// The pixels of image `index` (unchecked, like `operator[]`).
  [[nodiscard]] std::span<const std::uint8_t> image(std::size_t index) const noexcept {
    return images().subspan(index * pixels(), pixels());
  }

  /// @brief Examples `[first, first + count)` as a batch, without copying.
  /// @throws usage_error if the range goes past `size()`.
  [[nodiscard]] batch_view slice(std::size_t first, std::size_t count) const;

  /// @brief A copy of the first `count` examples, with the same image size and classes: a
  /// quick run on part of a data set.
  /// @throws usage_error if `count` is above `size()`.
  [[nodiscard]] dataset first(std::size_t count) const;

  /// @brief A copy holding every example `times` times over, in order (`times` 0: none): a data
  /// set of the same shape as large as a run needs, such as a simulated cluster of a thousand
  /// workers that each need full batches. It adds no information; the copies train like epochs.
  /// @throws usage_error if the copy's size does not fit a `std::size_t`.
  [[nodiscard]] dataset repeated(std::size_t times) const;

 private:
  std::vector<std::uint8_t> images_;
  std::vector<std::uint8_t> labels_;
  std::size_t rows_;
  std::size_t cols_;
  std::size_t classes_;
};

// ----------------------------------------------------------------------------------------------
// Implementation
// ----------------------------------------------------------------------------------------------

}  // namespace switchyard::data

namespace switchyard::detail {

/// Labels are bytes, so a data set has between 1 and 256 classes.
inline void check_class_count(std::size_t classes,
                              source_location where = source_location::current()) {
  if (classes == 0 || classes > 256) {
    raise<usage_error>(str("dataset: ", classes, " classes; labels are bytes, so use 1 to 256"),
                       where);
  }
}

/// Index of the first label not below `classes`, or `labels.size()` if there is none.
inline std::size_t first_label_out_of_range(std::span<const std::uint8_t> labels,
                                            std::size_t classes) {
  std::size_t index = 0;
  while (index < labels.size() && labels[index] < classes) ++index;
  return index;
}

}  // namespace switchyard::detail

namespace switchyard::data {

inline dataset::dataset(std::vector<std::uint8_t> images, std::vector<std::uint8_t> labels,
                        std::size_t rows, std::size_t cols, std::size_t classes)
    : images_(std::move(images)),
      labels_(std::move(labels)),
      rows_(rows),
      cols_(cols),
      classes_(classes) {
  detail::check_class_count(classes);
  if (rows == 0 || cols == 0) {
    detail::raise<usage_error>(detail::str("dataset: images of ", rows, "x", cols, " pixels"));
  }
  // Divisions instead of a product: a product of caller-given sizes could wrap around.
  const std::size_t image_count = images_.size() / rows / cols;
  if (image_count * rows * cols != images_.size() || image_count != labels_.size()) {
    detail::raise<usage_error>(detail::str("dataset: ", images_.size(), " pixel bytes are not ",
                                           labels_.size(), " images (one per label) of ", rows, "x",
                                           cols));
  }
  if (const std::size_t bad = detail::first_label_out_of_range(labels_, classes);
      bad < labels_.size()) {
    detail::raise<usage_error>(detail::str("dataset: label ", unsigned{labels_[bad]},
                                           " of example ", bad, " is not below the ", classes,
                                           " classes"));
  }
}

inline batch_view dataset::slice(std::size_t first, std::size_t count) const {
  if (first > size() || count > size() - first) {
    detail::raise<usage_error>(detail::str("dataset::slice: examples [", first, ", ", first + count,
                                           ") go past the ", size(), " examples"));
  }
  return {images().subspan(first * pixels(), count * pixels()), labels().subspan(first, count),
          rows_, cols_};
}

inline dataset dataset::first(std::size_t count) const {
  if (count > size()) {
    detail::raise<usage_error>(detail::str("dataset::first: ", count, " examples asked of a data set of ", size()));
  }
  const batch_view kept = slice(0, count);
  return {std::vector<std::uint8_t>(kept.images.begin(), kept.images.end()),
          std::vector<std::uint8_t>(kept.labels.begin(), kept.labels.end()), rows_, cols_, classes_};
}

inline dataset dataset::repeated(std::size_t times) const {
  if (times != 0 && images_.size() > std::numeric_limits<std::size_t>::max() / times) {
    detail::raise<usage_error>(detail::str("dataset::repeated: ", size(), " examples ", times,
                                           " times over do not fit in memory"));
  }
  std::vector<std::uint8_t> images;
  std::vector<std::uint8_t> labels;
  images.reserve(images_.size() * times);
  labels.reserve(labels_.size() * times);
  for (std::size_t copy = 0; copy < times; ++copy) {
    images.insert(images.end(), images_.begin(), images_.end());
    labels.insert(labels.end(), labels_.begin(), labels_.end());
  }
  return {std::move(images), std::move(labels), rows_, cols_, classes_};
}

static_assert(labelled_dataset<dataset> && sliced_dataset<dataset>);

}  // namespace switchyard::data
