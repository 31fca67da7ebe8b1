// A data set in order as consecutive batches, for evaluation: every example once, no copies.
#pragma once

#include <algorithm>
#include <cstddef>
#include <iterator>

#include "switchyard/core/error.hpp"
#include "switchyard/data/batch.hpp"
#include "switchyard/data/dataset.hpp"

namespace switchyard::data {

/// @brief The examples of a data set in order, `batch_size` at a time; the last batch holds the
/// remainder and may be shorter. Each batch views the data set directly (no copy), so the data
/// set must outlive the range and its batches.
/// @code
/// std::size_t correct = 0;
/// for (switchyard::data::batch_view batch : switchyard::data::sequential_batches(*test, 256)) {
///   correct += count_correct(model.predict(batch), batch.labels);
/// }
/// @endcode
class sequential_batches {
 public:
  /// Forward iterator over the batches; dereferencing builds the batch view.
  class iterator {
   public:
    using iterator_concept = std::forward_iterator_tag;
    using value_type = batch_view;
    using difference_type = std::ptrdiff_t;

    iterator() = default;
    iterator(const sequential_batches& range, std::size_t index) : range_(&range), index_(index) {}
    [[nodiscard]] batch_view operator*() const { return (*range_)[index_]; }
    iterator& operator++() {
      ++index_;
      return *this;
    }
    iterator operator++(int) {
      iterator before = *this;
      ++index_;
      return before;
    }
    [[nodiscard]] bool operator==(const iterator&) const = default;

   private:
    const sequential_batches* range_ = nullptr;
    std::size_t index_ = 0;
  };

  /// @throws usage_error if `batch_size` is 0.
  sequential_batches(const dataset& data, std::size_t batch_size);

  /// Number of batches: `ceil(data.size() / batch_size)`.
  [[nodiscard]] std::size_t size() const noexcept {
    return (data_->size() + batch_size_ - 1) / batch_size_;
  }
  /// Batch `index < size()`: examples `[index * batch_size, ...)`, at most `batch_size`.
  [[nodiscard]] batch_view operator[](std::size_t index) const {
    const std::size_t first = index * batch_size_;
    return data_->slice(first, std::min(batch_size_, data_->size() - first));
  }
  [[nodiscard]] iterator begin() const { return {*this, 0}; }
  [[nodiscard]] iterator end() const { return {*this, size()}; }

 private:
  const dataset* data_;
  std::size_t batch_size_;
};

// ----------------------------------------------------------------------------------------------
// Implementation
// ----------------------------------------------------------------------------------------------

inline sequential_batches::sequential_batches(const dataset& data, std::size_t batch_size)
    : data_(&data), batch_size_(batch_size) {
  if (batch_size == 0) detail::raise<usage_error>("sequential_batches: batch size 0");
}

}  // namespace switchyard::data
