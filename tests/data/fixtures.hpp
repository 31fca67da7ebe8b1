// Helpers shared by the data suites: a scratch directory, IDX files written byte by byte (plain
// and through zlib's gzip writer), small synthetic data sets, and exception-message checks.
#pragma once

#include <doctest/doctest.h>
#include <zlib.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "switchyard/data/dataset.hpp"

namespace fixtures {

/// A fresh directory under the system temp directory, removed with everything in it.
class temp_dir {
 public:
  temp_dir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "switchyard-data-XXXXXX");
    REQUIRE(mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~temp_dir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;

  [[nodiscard]] std::filesystem::path operator/(std::string_view name) const {
    return path_ / name;
  }
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

/// An IDX file image: magic with `type`, big-endian extents, then `values`.
inline std::vector<std::uint8_t> idx_bytes(std::initializer_list<std::uint32_t> shape,
                                           std::span<const std::uint8_t> values,
                                           std::uint8_t type = 0x08) {
  std::vector<std::uint8_t> out{0, 0, type, static_cast<std::uint8_t>(shape.size())};
  for (const std::uint32_t extent : shape) {
    for (const int shift : {24, 16, 8, 0})
      out.push_back(static_cast<std::uint8_t>(extent >> shift));
  }
  out.insert(out.end(), values.begin(), values.end());
  return out;
}

inline void write_plain(const std::filesystem::path& file, std::span<const std::uint8_t> bytes) {
  std::ofstream out(file, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out.good());
}

/// Writes `bytes` as one gzip member; `append` adds a further member to the file.
inline void write_gzip(const std::filesystem::path& file, std::span<const std::uint8_t> bytes,
                       bool append = false) {
  gzFile out = gzopen(file.c_str(), append ? "ab" : "wb");
  REQUIRE(out != nullptr);
  if (!bytes.empty()) {
    REQUIRE(gzwrite(out, bytes.data(), static_cast<unsigned>(bytes.size())) ==
            static_cast<int>(bytes.size()));
  }
  REQUIRE(gzclose(out) == Z_OK);
}

inline std::vector<std::uint8_t> read_bytes(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// `count` values that differ from their neighbours, so misplaced bytes show.
inline std::vector<std::uint8_t> pattern(std::size_t count, std::size_t salt = 0) {
  std::vector<std::uint8_t> out(count);
  for (std::size_t i = 0; i < count; ++i) out[i] = static_cast<std::uint8_t>((i * 7 + salt) % 251);
  return out;
}

/// `size` images of `rows x cols` where every pixel of image i is `i % 256`, label `i % classes`.
inline std::shared_ptr<const switchyard::data::dataset> numbered_dataset(std::size_t size,
                                                                         std::size_t rows,
                                                                         std::size_t cols,
                                                                         std::size_t classes = 10) {
  std::vector<std::uint8_t> images(size * rows * cols);
  std::vector<std::uint8_t> labels(size);
  for (std::size_t i = 0; i < size; ++i) {
    std::fill_n(images.begin() + static_cast<std::ptrdiff_t>(i * rows * cols), rows * cols,
                static_cast<std::uint8_t>(i % 256));
    labels[i] = static_cast<std::uint8_t>(i % classes);
  }
  return std::make_shared<const switchyard::data::dataset>(std::move(images), std::move(labels),
                                                           rows, cols, classes);
}

/// The message of the `Error` that `call` throws; fails the test if it throws nothing.
template <class Error, class Call>
std::string message_of(Call&& call) {
  try {
    call();
  } catch (const Error& e) {
    return e.what();
  }
  FAIL("no exception thrown");
  return {};
}

/// Checks that `message` mentions every one of `parts`.
inline void check_mentions(const std::string& message,
                           std::initializer_list<std::string_view> parts) {
  for (const std::string_view part : parts) {
    CHECK_MESSAGE(message.find(part) != std::string::npos,
                  "expected \"" << part << "\" in: " << message);
  }
}

}  // namespace fixtures
