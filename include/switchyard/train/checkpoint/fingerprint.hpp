// The identity of the model a checkpoint belongs to: a name, the parameter count and size, and the
// layers' shapes when the model describes them.
#pragma once

#include <switchyard/core/buffer.hpp>
#include <switchyard/core/error.hpp>
#include <switchyard/core/sequence.hpp>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace switchyard::train {

/// @brief What a checkpoint must match to be resumed into a model: a name the program gives the
/// architecture (`"mlp"`, `"cnn"`), the number of parameters, their size in bytes, and the shapes
/// of the layers when the model describes them.
struct model_fingerprint {
  std::string name;
  std::uint64_t parameters = 0;
  std::uint32_t element_bytes = 0;
  /// The model's `layout()` (`nn::sequential`'s: `"flatten, dense 64x256, relu, dense 256x4"`), or
  /// empty for a model without one. Compared like the rest: empty matches only empty.
  std::string layout;

  friend bool operator==(const model_fingerprint&, const model_fingerprint&) = default;
};

template <class Archive>
void serialize(Archive& archive, model_fingerprint& f, const unsigned int /*version*/) {
  serialize_sequence(archive, f.name);
  archive& f.parameters;
  archive& f.element_bytes;
  serialize_sequence(archive, f.layout);
}

/// The fingerprint of `model` under `name`, with `model.layout()` when the model has one.
template <class Model>
[[nodiscard]] model_fingerprint fingerprint(Model& model, std::string name) {
  using element = std::remove_const_t<buffer_element_t<decltype(model.parameters())>>;
  model_fingerprint f{std::move(name), as_span(model.parameters()).size(), static_cast<std::uint32_t>(sizeof(element)), {}};
  if constexpr (requires {
                  { model.layout() } -> std::convertible_to<std::string>;
                }) {
    f.layout = model.layout();
  }
  return f;
}

}  // namespace switchyard::train

// In switchyard::detail, not train::detail, which would hide switchyard::detail from train code.
namespace switchyard::detail {

// The first layer where two layouts differ, for the message refusing another model: a whole
// layout can run to hundreds of characters, and a loaded one to any length.
inline std::string layout_difference(std::string_view saved, std::string_view expected) {
  constexpr std::string_view separator = ", ";
  constexpr std::size_t shown = 80;
  const auto layers = [&](std::string_view layout) {
    std::vector<std::string_view> each;
    while (!layout.empty()) {
      const std::size_t end = layout.find(separator);
      each.push_back(layout.substr(0, end));
      layout = end == std::string_view::npos ? std::string_view() : layout.substr(end + separator.size());
    }
    return each;
  };
  const std::vector<std::string_view> a = layers(saved);
  const std::vector<std::string_view> b = layers(expected);
  std::size_t at = 0;
  while (at < a.size() && at < b.size() && a[at] == b[at]) ++at;
  const auto layer = [&](const std::vector<std::string_view>& each) {
    if (each.empty()) return std::string("no layout");
    if (at >= each.size()) return std::string("none");
    const std::string_view text = each[at];
    return text.size() <= shown ? detail::str("'", text, "'") : detail::str("'", text.substr(0, shown), "...'");
  };
  return detail::str("the layouts differ at layer ", at + 1, ": ", layer(a), " in the checkpoint, ", layer(b),
                     " in this run");
}

}  // namespace switchyard::detail
