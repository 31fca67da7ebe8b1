// A minimal archive for tests: writes (or reads) arithmetic values to (or from) a byte string
// through `operator&`, as Boost.Serialization archives do, with their compile-time `is_loading`.
#pragma once

#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace test_support {

template <bool Loading>
class byte_archive {
 public:
  using is_loading = std::bool_constant<Loading>;
  explicit byte_archive(std::vector<unsigned char>* bytes) : bytes_(bytes) {}

  template <class T>
    requires std::is_arithmetic_v<T>
  byte_archive& operator&(T& value) {
    if constexpr (Loading) {
      if (read_ + sizeof value > bytes_->size()) throw std::out_of_range("byte_archive: read past the end");
      std::memcpy(&value, bytes_->data() + read_, sizeof value);
      read_ += sizeof value;
    } else {
      const std::size_t end = bytes_->size();
      bytes_->resize(end + sizeof value);
      std::memcpy(bytes_->data() + end, &value, sizeof value);
    }
    return *this;
  }

 private:
  std::vector<unsigned char>* bytes_;
  std::size_t read_ = 0;
};

}  // namespace test_support
