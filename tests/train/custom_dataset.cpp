// A data set type of one's own (not data::dataset) trains a model through the stock trainer: the
// trainer asks only for data::labelled_dataset (size, rows, cols, image(i), label(i)).
#include <switchyard/train/trainer.hpp>

#include <switchyard/data/dataset.hpp>
#include <switchyard/optim/sgd.hpp>
#include <switchyard/strategy/all_reduce.hpp>
#include <switchyard/transport/inproc.hpp>

#include "../nn/logistic_regression.hpp"

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace sy = switchyard;

namespace {

// 4x4 pictures of a bright horizontal bar; the class is the bar's row. Held as one std::vector per
// picture and an int per label: another layout than data::dataset's, and no slice().
class bars {
 public:
  bars(std::size_t examples, std::uint64_t seed) {
    std::uint64_t state = seed;
    auto next = [&state] {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      return static_cast<std::uint32_t>(state >> 33);
    };
    for (std::size_t n = 0; n < examples; ++n) {
      const int row = static_cast<int>(next() % 4);
      std::vector<std::uint8_t> picture(16);
      for (std::size_t i = 0; i < 16; ++i) {
        const std::uint32_t noise = next() % 64;
        picture[i] = static_cast<std::uint8_t>(static_cast<int>(i / 4) == row ? 191 + noise : noise);
      }
      pictures_.push_back(std::move(picture));
      labels_.push_back(row);
    }
  }

  [[nodiscard]] std::size_t size() const { return labels_.size(); }
  [[nodiscard]] std::size_t rows() const { return 4; }
  [[nodiscard]] std::size_t cols() const { return 4; }
  [[nodiscard]] const std::vector<std::uint8_t>& image(std::size_t i) const { return pictures_[i]; }
  [[nodiscard]] int label(std::size_t i) const { return labels_[i]; }

  // The same examples as a data::dataset.
  [[nodiscard]] std::shared_ptr<const sy::data::dataset> as_dataset() const {
    std::vector<std::uint8_t> images;
    std::vector<std::uint8_t> labels;
    for (std::size_t n = 0; n < size(); ++n) {
      images.insert(images.end(), pictures_[n].begin(), pictures_[n].end());
      labels.push_back(static_cast<std::uint8_t>(labels_[n]));
    }
    return std::make_shared<const sy::data::dataset>(std::move(images), std::move(labels), 4, 4, 4);
  }

  std::vector<std::vector<std::uint8_t>> pictures_;
  std::vector<int> labels_;
};

static_assert(sy::data::labelled_dataset<bars>);
static_assert(!sy::data::sliced_dataset<bars>);
static_assert(sy::data::labelled_dataset<sy::data::dataset> && sy::data::sliced_dataset<sy::data::dataset>);
static_assert(sy::data::batch<sy::data::batch_view>);

sy::train::trainer_options options() {
  sy::train::trainer_options o;
  o.epochs = 4;
  o.batch_size = 8;
  o.eval_batch_size = 7;  // batches that do not divide a rank's block of the test set
  return o;
}

// Trains the logistic regression of docs/models.md on `train`, tests on `test`, over `ranks` ranks.
template <class Train, class Test>
sy::train::history train_on(int ranks, std::shared_ptr<Train> train, const Test& test) {
  const auto histories = sy::transport::run_inproc(ranks, [&](sy::transport::inproc& t) {
    logistic_regression model{16, 4};
    sy::optim::sgd optimizer{model.parameters().size(), 0.5};
    sy::train::trainer trainer{model, optimizer, sy::strategy::all_reduce<>{}, options()};
    return trainer.fit(t, train, test);
  });
  return histories[0];
}

}  // namespace

TEST_CASE("trainer.custom_dataset: a data set of one's own trains a model through the stock trainer") {
  const auto train = std::make_shared<const bars>(480, 3);
  const bars test(100, 4);
  const sy::train::history h = train_on(2, train, test);
  REQUIRE(h.epochs.size() == 4);
  CHECK(h.epochs[0].steps == 480 / 8);
  CHECK(h.last().train_loss < h.epochs[0].train_loss);
  CHECK(h.last().test_accuracy > 0.9);
  // A non-const pointer is taken as well.
  const auto mutable_train = std::make_shared<bars>(480, 3);
  CHECK(train_on(1, mutable_train, test).last().test_accuracy > 0.9);
}

TEST_CASE("trainer.custom_dataset: the same examples as a data::dataset train to the same bits") {
  const bars train(480, 3);
  const bars test(100, 4);
  for (const int ranks : {1, 3}) {
    CAPTURE(ranks);
    const sy::train::history own = train_on(ranks, std::make_shared<const bars>(train), test);
    const sy::train::history stock = train_on(ranks, train.as_dataset(), *test.as_dataset());
    REQUIRE(own.epochs.size() == stock.epochs.size());
    for (std::size_t e = 0; e < own.epochs.size(); ++e) {
      CAPTURE(e);
      CHECK(own.epochs[e].train_loss == stock.epochs[e].train_loss);
      CHECK(own.epochs[e].test_loss == stock.epochs[e].test_loss);
      CHECK(own.epochs[e].test_accuracy == stock.epochs[e].test_accuracy);
    }
  }
}

TEST_CASE("trainer.custom_dataset: an image of the wrong size or a label beyond a byte is refused, naming the example") {
  auto broken = std::make_shared<bars>(64, 5);
  const bars test(16, 6);
  SUBCASE("an image of 15 pixels") {
    broken->pictures_[3].pop_back();
    sy::data::basic_batch_loader<bars> loader(broken, 8);
    const std::vector<std::size_t> indices{0, 3};
    CHECK_THROWS_WITH_AS((void)loader.gather(indices), doctest::Contains("example 3 has 15 pixels, not 4x4"),
                         sy::usage_error);
  }
  SUBCASE("a label of 300") {
    broken->labels_[5] = 300;
    CHECK_THROWS_WITH_AS(train_on(1, broken, test), doctest::Contains("example 5 has label 300; labels are bytes"),
                         sy::usage_error);
  }
}
