// train/checkpoint/fingerprint.hpp: the identity of the model a checkpoint belongs to (name,
// parameter count and size, layout), its serialization, and the message part that says where
// two layouts differ.
#include <switchyard/train/checkpoint/fingerprint.hpp>

#include "../../common/byte_archive.hpp"

#include <doctest/doctest.h>

#include <cstddef>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace sy = switchyard;

namespace {

// A user's model: parameters in a std::vector of any element type, no layout().
template <class T>
struct plain_model {
  std::vector<T> values;
  explicit plain_model(std::size_t n) : values(n, T{}) {}
  std::span<T> parameters() { return values; }
};

// A model that describes its layers.
struct described_model {
  std::vector<float> values = std::vector<float>(10);
  std::string layers = "dense 3x2, relu, dense 2x2";
  std::vector<float>& parameters() { return values; }
  [[nodiscard]] std::string layout() const { return layers; }
};

}  // namespace

TEST_CASE("checkpoint.fingerprint.fields: name, parameter count, element size, and the layout when there is one") {
  plain_model<float> small(260);
  const sy::train::model_fingerprint f = sy::train::fingerprint(small, "logistic");
  CHECK(f.name == "logistic");
  CHECK(f.parameters == 260);
  CHECK(f.element_bytes == 4);
  CHECK(f.layout.empty());
  plain_model<double> wide(260);
  CHECK(sy::train::fingerprint(wide, "logistic").element_bytes == 8);
  described_model described;
  const sy::train::model_fingerprint d = sy::train::fingerprint(described, "tiny");
  CHECK(d.parameters == 10);
  CHECK(d.layout == "dense 3x2, relu, dense 2x2");
}

TEST_CASE("checkpoint.fingerprint.changes: another count, element type, name or layout is another model; "
          "other values are not") {
  plain_model<float> model(100);
  const sy::train::model_fingerprint before = sy::train::fingerprint(model, "m");
  model.values[3] = 2.5F;  // training changes values, never the identity
  CHECK(sy::train::fingerprint(model, "m") == before);
  plain_model<float> one_more(101);
  CHECK(sy::train::fingerprint(one_more, "m") != before);
  plain_model<double> in_double(100);
  CHECK(sy::train::fingerprint(in_double, "m") != before);
  CHECK(sy::train::fingerprint(model, "n") != before);
  described_model a;
  described_model b;
  b.layers = "dense 3x2, relu, dense 2x3";
  CHECK(sy::train::fingerprint(a, "tiny") != sy::train::fingerprint(b, "tiny"));
  // Empty matches only empty.
  sy::train::model_fingerprint without = sy::train::fingerprint(a, "tiny");
  without.layout.clear();
  CHECK(without != sy::train::fingerprint(a, "tiny"));
}

TEST_CASE("checkpoint.fingerprint.serialize: every field round-trips through an archive") {
  described_model model;
  const sy::train::model_fingerprint saved = sy::train::fingerprint(model, "tiny");
  std::vector<unsigned char> bytes;
  test_support::byte_archive<false> out(&bytes);
  sy::train::model_fingerprint copy = saved;
  serialize(out, copy, 0);
  test_support::byte_archive<true> in(&bytes);
  sy::train::model_fingerprint loaded;
  serialize(in, loaded, 0);
  CHECK(loaded == saved);
  CHECK(loaded.layout == "dense 3x2, relu, dense 2x2");
}

TEST_CASE("checkpoint.fingerprint.layout_difference: the first layer that differs, shortened when long") {
  using sy::detail::layout_difference;
  CHECK(layout_difference("flatten, dense 64x5, relu, dense 5x4", "flatten, dense 64x5, relu, dense 5x2") ==
        "the layouts differ at layer 4: 'dense 5x4' in the checkpoint, 'dense 5x2' in this run");
  CHECK(layout_difference("", "flatten") == "the layouts differ at layer 1: no layout in the checkpoint, 'flatten' in "
                                            "this run");
  CHECK(layout_difference("flatten, relu", "flatten") ==
        "the layouts differ at layer 2: 'relu' in the checkpoint, none in this run");
  const std::string long_layer(200, 'x');
  CHECK(layout_difference(long_layer, "y") ==
        "the layouts differ at layer 1: '" + std::string(80, 'x') + "...' in the checkpoint, 'y' in this run");
}
