// Fashion-MNIST (Zalando's 28x28 grey clothing images, 10 classes) from the files of Debian's
// `dataset-fashion-mnist` package or any directory holding the same four files.
#pragma once

#include <array>
#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>

#include "switchyard/core/error.hpp"
#include "switchyard/data/dataset.hpp"
#include "switchyard/data/idx.hpp"

namespace switchyard::data {

/// @brief The train (60000 examples) and test (10000 examples) splits of Fashion-MNIST.
///
/// The directory is, in order of precedence: the argument of `load`, the environment variable
/// `SWITCHYARD_FASHION_MNIST_DIR`, `/usr/share/datasets/fashion-mnist` (Debian's package).
/// @code
/// auto fashion = switchyard::data::fashion_mnist::load();
/// // fashion.train->size() == 60000, fashion.test->size() == 10000, 28x28 pixels each
/// std::string_view name = switchyard::data::fashion_mnist::class_names[fashion.test->labels()[0]];
/// @endcode
struct fashion_mnist {
  std::shared_ptr<const dataset> train;
  std::shared_ptr<const dataset> test;

  static constexpr std::size_t classes = 10;
  /// The label of each class index.
  static constexpr std::array<std::string_view, classes> class_names{
      "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
      "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
  /// Where Debian's `dataset-fashion-mnist` installs the files.
  static constexpr std::string_view debian_directory = "/usr/share/datasets/fashion-mnist";
  /// The environment variable that overrides `debian_directory`.
  static constexpr const char* directory_variable = "SWITCHYARD_FASHION_MNIST_DIR";

  /// @brief `$SWITCHYARD_FASHION_MNIST_DIR` if set and not empty, else `debian_directory`.
  [[nodiscard]] static std::filesystem::path default_directory();

  /// @brief Loads both splits from `train-{images-idx3,labels-idx1}-ubyte.gz` and
  /// `t10k-{images-idx3,labels-idx1}-ubyte.gz` in `directory`.
  /// @throws data_error naming every missing file and how to install them, or any error of
  /// `load_idx_dataset` on a file that is there.
  [[nodiscard]] static fashion_mnist load(
      const std::filesystem::path& directory = default_directory());
};

// ----------------------------------------------------------------------------------------------
// Implementation
// ----------------------------------------------------------------------------------------------

inline std::filesystem::path fashion_mnist::default_directory() {
  const char* const overridden = std::getenv(directory_variable);
  return overridden != nullptr && *overridden != '\0' ? std::filesystem::path(overridden)
                                                      : std::filesystem::path(debian_directory);
}

inline fashion_mnist fashion_mnist::load(const std::filesystem::path& directory) {
  const std::array files{
      directory / "train-images-idx3-ubyte.gz", directory / "train-labels-idx1-ubyte.gz",
      directory / "t10k-images-idx3-ubyte.gz", directory / "t10k-labels-idx1-ubyte.gz"};
  // Check all four up front: a missing package should fail in one message, before a long read.
  std::string missing;
  for (const auto& file : files) {
    std::error_code ec;
    if (std::filesystem::exists(file, ec)) continue;
    if (!missing.empty()) missing += ", ";
    missing += file.string();
  }
  if (!missing.empty()) {
    detail::raise<data_error>(detail::str(
        "Fashion-MNIST: missing ", missing, "; install the files with `apt-get install ",
        "dataset-fashion-mnist`, or point ", directory_variable,
        " (or the directory argument) at a directory that holds them"));
  }
  return {load_idx_dataset(files[0], files[1], classes), load_idx_dataset(files[2], files[3], classes)};
}

}  // namespace switchyard::data
