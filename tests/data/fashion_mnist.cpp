// Tests of switchyard/data/fashion_mnist.hpp: the real data set (installed by the CI; absent files
// fail this suite, they do not skip it), the directory override, and the missing-file message.
#include "switchyard/data/fashion_mnist.hpp"

#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include "fixtures.hpp"

using switchyard::data_error;
using switchyard::data::fashion_mnist;

namespace {

/// Sets `SWITCHYARD_FASHION_MNIST_DIR` for its lifetime, then restores the previous value.
class scoped_directory_variable {
 public:
  explicit scoped_directory_variable(const std::string& value) {
    if (const char* previous = std::getenv(fashion_mnist::directory_variable)) previous_ = previous;
    setenv(fashion_mnist::directory_variable, value.c_str(), 1);
  }
  ~scoped_directory_variable() {
    if (previous_) {
      setenv(fashion_mnist::directory_variable, previous_->c_str(), 1);
    } else {
      unsetenv(fashion_mnist::directory_variable);
    }
  }
  scoped_directory_variable(const scoped_directory_variable&) = delete;
  scoped_directory_variable& operator=(const scoped_directory_variable&) = delete;

 private:
  std::optional<std::string> previous_;
};

std::array<std::size_t, 10> class_counts(const switchyard::data::dataset& data) {
  std::array<std::size_t, 10> counts{};
  for (const std::uint8_t label : data.labels()) ++counts.at(label);
  return counts;
}

}  // namespace

TEST_CASE("fashion_mnist.real_files" * doctest::timeout(120)) {
  // Fails with the install hint if the package is missing: the CI installs it.
  const auto fashion = fashion_mnist::load();
  for (const auto& expected : {std::pair{fashion.train, 60000}, std::pair{fashion.test, 10000}}) {
    const auto& split = expected.first;
    const int size = expected.second;
    CAPTURE(size);
    CHECK(split->size() == static_cast<std::size_t>(size));
    CHECK(split->rows() == 28);
    CHECK(split->cols() == 28);
    CHECK(split->classes() == 10);
    // Fashion-MNIST is balanced: every class has a tenth of each split.
    std::array<std::size_t, 10> balanced{};
    balanced.fill(static_cast<std::size_t>(size / 10));
    CHECK(class_counts(*split) == balanced);
  }
  // Both splits start with an ankle boot.
  CHECK(fashion_mnist::class_names[fashion.train->labels()[0]] == "Ankle boot");
  CHECK(fashion_mnist::class_names[fashion.test->labels()[0]] == "Ankle boot");
}

TEST_CASE("fashion_mnist.missing_files_name_the_package" * doctest::timeout(60)) {
  fixtures::temp_dir dir;
  fixtures::write_gzip(dir / "train-labels-idx1-ubyte.gz", fixtures::idx_bytes({0}, {}));
  const std::string message =
      fixtures::message_of<data_error>([&] { (void)fashion_mnist::load(dir.path()); });
  fixtures::check_mentions(
      message,
      {(dir / "train-images-idx3-ubyte.gz").string(), (dir / "t10k-images-idx3-ubyte.gz").string(),
       (dir / "t10k-labels-idx1-ubyte.gz").string(), "apt-get install dataset-fashion-mnist",
       "SWITCHYARD_FASHION_MNIST_DIR"});
  CHECK(message.find("train-labels") == std::string::npos);
}

TEST_CASE("fashion_mnist.directory_override" * doctest::timeout(60)) {
  // Small stand-in files in the Fashion-MNIST layout: 3 training and 2 test images of 28x28.
  fixtures::temp_dir dir;
  fixtures::write_gzip(dir / "train-images-idx3-ubyte.gz",
                       fixtures::idx_bytes({3, 28, 28}, fixtures::pattern(3 * 784)));
  fixtures::write_gzip(dir / "train-labels-idx1-ubyte.gz",
                       fixtures::idx_bytes({3}, std::vector<std::uint8_t>{4, 0, 9}));
  fixtures::write_gzip(dir / "t10k-images-idx3-ubyte.gz",
                       fixtures::idx_bytes({2, 28, 28}, fixtures::pattern(2 * 784, 1)));
  fixtures::write_gzip(dir / "t10k-labels-idx1-ubyte.gz",
                       fixtures::idx_bytes({2}, std::vector<std::uint8_t>{1, 8}));

  const auto check_stand_in = [](const fashion_mnist& fashion) {
    CHECK(fashion.train->size() == 3);
    CHECK(fashion.test->size() == 2);
    CHECK(fashion.test->labels()[1] == 8);
  };
  SUBCASE("argument") { check_stand_in(fashion_mnist::load(dir.path())); }
  SUBCASE("environment variable") {
    const scoped_directory_variable variable(dir.path().string());
    CHECK(fashion_mnist::default_directory() == dir.path());
    check_stand_in(fashion_mnist::load());
  }
  SUBCASE("empty environment variable means the default") {
    const scoped_directory_variable variable("");
    CHECK(fashion_mnist::default_directory() == fashion_mnist::debian_directory);
  }
}
