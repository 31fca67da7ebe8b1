// Gathers the scattered examples of a training batch into one contiguous buffer, allocated once
// and reused for every batch.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "switchyard/core/error.hpp"
#include "switchyard/data/batch.hpp"
#include "switchyard/data/dataset.hpp"
#include "switchyard/data/labelled_dataset.hpp"

namespace switchyard::data {

/// @brief Copies the examples a `shard_plan` picks from a `labelled_dataset` into a buffer sized
/// for `capacity` examples when the loader is built; `gather` never allocates.
///
/// One loader per rank: it shares the data set and owns its buffer. `batch_loader` is the loader
/// of a `data::dataset`; a data set type of one's own gets `basic_batch_loader<its type>`.
/// @code
/// switchyard::data::batch_loader loader(train, 64);
/// switchyard::data::batch_view batch = loader.gather(plan.batch(rank, step));
/// @endcode
template <class Dataset>
class basic_batch_loader {
  static_assert(check_labelled_dataset<Dataset>());

 public:
  /// @throws usage_error if `data` is null.
  basic_batch_loader(std::shared_ptr<const Dataset> data, std::size_t capacity);

  /// @brief Copies examples `indices` (in that order) into the buffer and returns a view of it,
  /// valid until the next `gather`.
  /// @throws usage_error if there are more than `capacity()` indices or one is not below
  /// `data().size()`, or if an example's image does not have `rows() * cols()` pixels or its
  /// label does not fit a byte.
  [[nodiscard]] batch_view gather(std::span<const std::size_t> indices);

  [[nodiscard]] const Dataset& data() const noexcept { return *data_; }
  [[nodiscard]] std::size_t capacity() const noexcept { return labels_.size(); }

 private:
  std::shared_ptr<const Dataset> data_;
  std::size_t rows_ = 0;
  std::size_t cols_ = 0;
  std::vector<std::uint8_t> images_;
  std::vector<std::uint8_t> labels_;
};

/// The loader of a `data::dataset`.
using batch_loader = basic_batch_loader<dataset>;

// ----------------------------------------------------------------------------------------------
// Implementation
// ----------------------------------------------------------------------------------------------

template <class Dataset>
basic_batch_loader<Dataset>::basic_batch_loader(std::shared_ptr<const Dataset> data, std::size_t capacity)
    : data_(std::move(data)) {
  if (!data_) detail::raise<usage_error>("batch_loader: no data set (null pointer)");
  rows_ = static_cast<std::size_t>(data_->rows());
  cols_ = static_cast<std::size_t>(data_->cols());
  images_.resize(capacity * rows_ * cols_);
  labels_.resize(capacity);
}

template <class Dataset>
batch_view basic_batch_loader<Dataset>::gather(std::span<const std::size_t> indices) {
  if (indices.size() > capacity()) {
    detail::raise<usage_error>(detail::str("batch_loader::gather: ", indices.size(),
                                           " examples do not fit the capacity of ", capacity()));
  }
  const std::size_t pixels = rows_ * cols_;
  const auto examples = static_cast<std::size_t>(data_->size());
  for (std::size_t slot = 0; slot < indices.size(); ++slot) {
    const std::size_t index = indices[slot];
    if (index >= examples) {
      detail::raise<usage_error>(detail::str("batch_loader::gather: example ", index,
                                             " of a data set of ", examples));
    }
    // Bound to a reference: an image returned as a container lives until the copy is made.
    const auto& image = data_->image(index);
    const std::span<const std::uint8_t> bytes(image);
    if (bytes.size() != pixels) {
      detail::raise<usage_error>(detail::str("batch_loader::gather: example ", index, " has ", bytes.size(),
                                             " pixels, not ", rows_, "x", cols_));
    }
    const auto label = static_cast<std::size_t>(data_->label(index));
    if (label > 255) {
      detail::raise<usage_error>(detail::str("batch_loader::gather: example ", index, " has label ", label,
                                             "; labels are bytes, below 256"));
    }
    std::ranges::copy(bytes, images_.begin() + static_cast<std::ptrdiff_t>(slot * pixels));
    labels_[slot] = static_cast<std::uint8_t>(label);
  }
  return {std::span(images_).first(indices.size() * pixels),
          std::span(labels_).first(indices.size()), rows_, cols_};
}

}  // namespace switchyard::data
