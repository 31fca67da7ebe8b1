// Checkpoints: a training state and the strategy's progress in one versioned, checksummed file
// written atomically, and read back refusing anything that is not a whole checkpoint of this model.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <boost/archive/binary_iarchive.hpp>
#include <boost/archive/binary_oarchive.hpp>
#include <boost/crc.hpp>
#include <boost/serialization/string.hpp>
#include <boost/serialization/vector.hpp>
#include <cerrno>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <switchyard/core/buffer.hpp>
#include <switchyard/core/error.hpp>
#include <switchyard/core/sequence.hpp>
#include <switchyard/train/training_state.hpp>
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

/// @brief The names of the strategy's stages in order, which a checkpoint must match to be resumed
/// under `strategy`: `"allreduce"` for a plain strategy (its `name()`), `"ps>allreduce"` for a
/// `switch_to` (recursing through `first()` and `second()`), `"ps>allreduce>ps"` for a chain
/// nested in its second stage and `"(ps>allreduce)>ps"` for one nested in its first (the two chains
/// keep their progress in the same bytes, so the signature tells them apart).
///
/// Unlike `name()` of a switch, it does not change with the active stage. Triggers and options
/// are not part of it: a run may be resumed with other thresholds.
/// @code
/// switchyard::strategy::switch_to ps_then_ar{ps, ar, switchyard::trigger::after_epochs{3}};
/// switchyard::train::strategy_signature(ps_then_ar);   // "ps>allreduce"
/// @endcode
template <class Strategy>
[[nodiscard]] std::string strategy_signature(const Strategy& strategy);

/// @brief One checkpoint: the model it belongs to, the signature of the strategy that wrote it
/// (`strategy_signature`), the training state between two epochs, and the strategy's own progress
/// (a switch chain's stage and trigger state), encoded by `encode_progress` (empty for strategies
/// without progress: all-reduce, parameter server).
///
/// On disk: a 24-byte header (`"SWYDCKPT"`, the format version, the payload's length and its
/// CRC-32, little-endian), then the payload, a Boost.Serialization binary archive of this struct
/// without Boost's own header (whose signature string Boost reads with an unchecked length). Every
/// sequence in it goes through `serialize_sequence`, so no count can claim more than the payload.
/// @tparam T the element type of the parameters (default `float`).
/// @code
/// switchyard::train::checkpoint<float> c{switchyard::train::fingerprint(model, "mlp"), "allreduce", state, {}};
/// switchyard::train::save("run/checkpoint.bin", c);
/// auto back = switchyard::train::load<float>("run/checkpoint.bin", c.model);
/// @endcode
template <class T = float>
struct checkpoint {
  /// The format this build writes and the only one it reads (version 2 added the strategy
  /// signature and the model's layout, version 3 the subnormal flush setting).
  static constexpr std::uint32_t format_version = 3;

  model_fingerprint model;
  std::string strategy;
  training_state<T> state;
  std::vector<std::uint8_t> strategy_progress;
};

template <class Archive, class T>
void serialize(Archive& archive, checkpoint<T>& c, const unsigned int /*version*/) {
  archive& c.model;
  serialize_sequence(archive, c.strategy);
  archive& c.state;
  serialize_sequence(archive, c.strategy_progress);
}

/// Writes `c` to `path` atomically: into `path` + ".tmp" in the same directory, flushed to disk,
/// then renamed over `path`, so `path` is always either the previous checkpoint or this one, whole.
/// Raises `data_error` naming the file when it cannot be written (the previous one stays).
template <class T>
void save(const std::filesystem::path& path, const checkpoint<T>& c);

/// Reads the checkpoint in `bytes` (named `name` in messages), refusing with a `data_error` that
/// says which: a truncated file, one that is not a checkpoint, another format version, a checksum
/// mismatch (corrupted), a payload that does not decode, or a model other than `expected`.
/// Safe on any bytes (what a fuzzer calls).
template <class T = float>
[[nodiscard]] checkpoint<T> load(std::span<const std::byte> bytes, std::string_view name,
                                 const model_fingerprint& expected);

/// Reads the checkpoint file at `path`, as `load` on its bytes.
template <class T = float>
[[nodiscard]] checkpoint<T> load(const std::filesystem::path& path, const model_fingerprint& expected);

/// The strategy's progress as bytes (empty for a strategy without `serialize_progress`).
template <class Strategy>
[[nodiscard]] std::vector<std::uint8_t> encode_progress(Strategy& strategy);

/// Restores the strategy's progress from `bytes`; raises `data_error` (naming `name`) when they do
/// not fit this strategy (another chain of stages, or another strategy altogether), and then leaves
/// a copyable strategy as it was.
template <class Strategy>
void decode_progress(Strategy& strategy, std::span<const std::uint8_t> bytes, std::string_view name);

/// The file checkpoints go to in `directory`: `directory/checkpoint.bin`.
[[nodiscard]] inline std::filesystem::path checkpoint_file(const std::filesystem::path& directory) {
  return directory / "checkpoint.bin";
}

/// Makes `trainer` write a checkpoint into `directory` (created if missing) at the epochs its
/// `options().checkpoint_every` says; call it on every rank (rank 0 writes).
/// @code
/// options.checkpoint_every = 1;
/// switchyard::train::trainer trainer{model, optimizer, strategy, options};
/// switchyard::train::write_checkpoints(trainer, "run", switchyard::train::fingerprint(model, "mlp"));
/// @endcode
template <class Trainer>
void write_checkpoints(Trainer& trainer, std::filesystem::path directory, model_fingerprint model);

/// Makes the next `trainer.fit` continue from the checkpoint file `path` (every rank reads it):
/// restores the strategy's progress and hands the state to `trainer.resume_from`. Returns the
/// epoch the checkpoint was taken after. Raises `data_error` for a file that cannot be resumed,
/// before any training: one `load` refuses, one written by a strategy of another
/// `strategy_signature`, or one trained with the other `trainer_options::flush_subnormals`
/// (both refused before the trainer is changed).
template <class Trainer>
std::uint64_t resume(Trainer& trainer, const std::filesystem::path& path, const model_fingerprint& model);

// ---------------------------------------------------------------------------------------------
// Implementation
// ---------------------------------------------------------------------------------------------

}  // namespace switchyard::train

// In switchyard::detail, not train::detail, which would hide switchyard::detail from train code.
namespace switchyard::detail {

inline constexpr std::array<char, 8> checkpoint_magic{'S', 'W', 'Y', 'D', 'C', 'K', 'P', 'T'};
inline constexpr std::size_t checkpoint_header_bytes = 24;

inline std::uint32_t crc32(std::span<const std::byte> bytes) {
  boost::crc_32_type crc;
  crc.process_bytes(bytes.data(), bytes.size());
  return crc.checksum();
}

inline void put_le(std::byte* out, std::uint64_t value, std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; ++i) out[i] = static_cast<std::byte>((value >> (8 * i)) & 0xffu);
}

inline std::uint64_t get_le(const std::byte* in, std::size_t bytes) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < bytes; ++i) value |= static_cast<std::uint64_t>(in[i]) << (8 * i);
  return value;
}

// Writes all of `bytes` to `fd`; false with errno set on failure.
inline bool write_all(int fd, std::span<const std::byte> bytes) {
  while (!bytes.empty()) {
    const ssize_t written = ::write(fd, bytes.data(), bytes.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    bytes = bytes.subspan(static_cast<std::size_t>(written));
  }
  return true;
}

[[noreturn]] inline void raise_checkpoint_io(const std::filesystem::path& path, std::string_view doing, int error) {
  detail::raise<data_error>(detail::str("checkpoint ", path.string(), ": cannot ", doing, ": ", std::strerror(error)));
}

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

namespace switchyard::train {

template <class T>
void save(const std::filesystem::path& path, const checkpoint<T>& c) {
  std::ostringstream payload_stream(std::ios::binary);
  {
    boost::archive::binary_oarchive archive(payload_stream, boost::archive::no_header);
    archive << c;
  }
  const std::string payload = std::move(payload_stream).str();
  const std::span<const std::byte> payload_bytes = std::as_bytes(std::span(payload.data(), payload.size()));
  std::array<std::byte, detail::checkpoint_header_bytes> header{};
  for (std::size_t i = 0; i < detail::checkpoint_magic.size(); ++i) {
    header[i] = static_cast<std::byte>(detail::checkpoint_magic[i]);
  }
  detail::put_le(header.data() + 8, checkpoint<T>::format_version, 4);
  detail::put_le(header.data() + 12, detail::crc32(payload_bytes), 4);
  detail::put_le(header.data() + 16, payload.size(), 8);

  std::filesystem::path temporary = path;
  temporary += ".tmp";
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) detail::raise_checkpoint_io(temporary, "create the temporary file", errno);
  const bool written = detail::write_all(fd, header) && detail::write_all(fd, payload_bytes) && ::fsync(fd) == 0;
  const int write_error = errno;
  if (::close(fd) != 0 || !written) {
    const int error = written ? errno : write_error;
    ::unlink(temporary.c_str());
    detail::raise_checkpoint_io(temporary, "write", error);
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    detail::raise_checkpoint_io(path, "rename the temporary file over it", error);
  }
  // The rename itself is durable once the directory is flushed.
  const std::filesystem::path directory = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  const int directory_fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (directory_fd >= 0) {
    ::fsync(directory_fd);
    ::close(directory_fd);
  }
}

template <class T>
checkpoint<T> load(std::span<const std::byte> bytes, std::string_view name, const model_fingerprint& expected) {
  if (bytes.size() < detail::checkpoint_header_bytes) {
    detail::raise<data_error>(detail::str("checkpoint ", name, " is truncated: ", bytes.size(),
                                          " bytes, shorter than the ", detail::checkpoint_header_bytes,
                                          "-byte header"));
  }
  for (std::size_t i = 0; i < detail::checkpoint_magic.size(); ++i) {
    if (bytes[i] != static_cast<std::byte>(detail::checkpoint_magic[i])) {
      detail::raise<data_error>(
          detail::str("checkpoint ", name, " is not a switchyard checkpoint (no SWYDCKPT header)"));
    }
  }
  const std::uint64_t version = detail::get_le(bytes.data() + 8, 4);
  if (version != checkpoint<T>::format_version) {
    detail::raise<data_error>(detail::str("checkpoint ", name, " has format version ", version,
                                          "; this build reads version ", checkpoint<T>::format_version));
  }
  const std::uint64_t checksum = detail::get_le(bytes.data() + 12, 4);
  const std::uint64_t length = detail::get_le(bytes.data() + 16, 8);
  const std::span<const std::byte> payload = bytes.subspan(detail::checkpoint_header_bytes);
  if (payload.size() < length) {
    detail::raise<data_error>(detail::str("checkpoint ", name, " is truncated: ", payload.size(), " of its ", length,
                                          " payload bytes are there"));
  }
  if (payload.size() > length) {
    detail::raise<data_error>(detail::str("checkpoint ", name, " is corrupted: ", payload.size() - length,
                                          " bytes follow its payload of ", length));
  }
  if (detail::crc32(payload) != checksum) {
    detail::raise<data_error>(
        detail::str("checkpoint ", name, " is corrupted: the payload's CRC-32 does not match its header"));
  }
  checkpoint<T> c;
  try {
    // No sequence in the payload can have more elements than the payload has bytes.
    const sequence_budget_scope budget{payload.size()};
    std::istringstream in(std::string(reinterpret_cast<const char*>(payload.data()), payload.size()), std::ios::binary);
    boost::archive::binary_iarchive archive(in, boost::archive::no_header);
    archive >> c;
  } catch (const std::exception& e) {
    detail::raise<data_error>(
        detail::str("checkpoint ", name, " is corrupted: its payload does not decode (", e.what(), ")"));
  }
  if (c.model != expected) {
    const std::string layouts = c.model.layout == expected.layout
                                    ? std::string()
                                    : "; " + detail::layout_difference(c.model.layout, expected.layout);
    detail::raise<data_error>(detail::str("checkpoint ", name, " is for another model: '", c.model.name, "' with ",
                                          c.model.parameters, " parameters of ", c.model.element_bytes,
                                          " bytes, this run has '", expected.name, "' with ", expected.parameters,
                                          " parameters of ", expected.element_bytes, " bytes", layouts));
  }
  if (c.state.parameters.size() != c.model.parameters || c.state.optimizer.size != c.model.parameters) {
    detail::raise<data_error>(detail::str("checkpoint ", name, " is corrupted: ", c.state.parameters.size(),
                                          " parameters and an optimizer state of ", c.state.optimizer.size,
                                          " for a model of ", c.model.parameters));
  }
  for (std::size_t k = 0; k < c.state.optimizer.slots.size(); ++k) {
    if (c.state.optimizer.slots[k].size() != c.state.optimizer.size) {
      detail::raise<data_error>(detail::str("checkpoint ", name, " is corrupted: optimizer slot ", k, " has ",
                                            c.state.optimizer.slots[k].size(), " values for ", c.state.optimizer.size,
                                            " parameters"));
    }
  }
  return c;
}

template <class T>
checkpoint<T> load(const std::filesystem::path& path, const model_fingerprint& expected) {
  std::ifstream in(path, std::ios::binary);
  if (!in) detail::raise_checkpoint_io(path, "open it", errno);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) detail::raise_checkpoint_io(path, "read it", errno);
  return load<T>(std::as_bytes(std::span(bytes.data(), bytes.size())), path.string(), expected);
}

template <class Strategy>
std::string strategy_signature(const Strategy& strategy) {
  if constexpr (requires {
                  strategy.first();
                  strategy.second();
                }) {
    std::string first = strategy_signature(strategy.first());
    if constexpr (requires {
                    strategy.first().first();
                    strategy.first().second();
                  }) {
      first = "(" + first + ")";
    }
    return first + ">" + strategy_signature(strategy.second());
  } else {
    static_assert(requires {
                    { strategy.name() } -> std::convertible_to<std::string_view>;
                  }, "a checkpointed strategy needs a const name() (or, for a chain of stages, first() and second()): "
                     "see strategy/policy.hpp");
    return std::string(std::string_view(strategy.name()));
  }
}

template <class Strategy>
std::vector<std::uint8_t> encode_progress(Strategy& strategy) {
  if constexpr (requires(boost::archive::binary_oarchive & a) { strategy.serialize_progress(a); }) {
    std::ostringstream out(std::ios::binary);
    {
      boost::archive::binary_oarchive archive(out, boost::archive::no_header);
      strategy.serialize_progress(archive);
    }
    const std::string bytes = std::move(out).str();
    return {bytes.begin(), bytes.end()};
  } else {
    return {};
  }
}

template <class Strategy>
void decode_progress(Strategy& strategy, std::span<const std::uint8_t> bytes, std::string_view name) {
  if constexpr (requires(boost::archive::binary_iarchive & a) { strategy.serialize_progress(a); }) {
    // Decoded into a copy when the strategy can be copied, so that bytes that fail partway leave
    // it as it was; a move-only strategy is decoded in place.
    constexpr bool in_copy = std::copy_constructible<Strategy> && std::is_move_assignable_v<Strategy>;
    std::optional<Strategy> copy;
    if constexpr (in_copy) copy.emplace(strategy);
    Strategy& target = copy ? *copy : strategy;
    std::istringstream in(std::string(bytes.begin(), bytes.end()), std::ios::binary);
    try {
      const sequence_budget_scope budget{bytes.size()};
      boost::archive::binary_iarchive archive(in, boost::archive::no_header);
      target.serialize_progress(archive);
    } catch (const std::exception& e) {
      detail::raise<data_error>(detail::str("checkpoint ", name, " does not hold this strategy's progress (",
                                            bytes.size(), " bytes that do not decode: ", e.what(),
                                            "); was it written by another strategy?"));
    }
    if (in.peek() != std::char_traits<char>::eof()) {
      detail::raise<data_error>(detail::str("checkpoint ", name,
                                            " holds more strategy progress than this strategy has; was it "
                                            "written by another chain of stages?"));
    }
    if constexpr (in_copy) strategy = std::move(*copy);
  } else if (!bytes.empty()) {
    detail::raise<data_error>(detail::str("checkpoint ", name, " holds ", bytes.size(),
                                          " bytes of strategy progress, this "
                                          "strategy keeps none; was it written by a strategy switch?"));
  }
}

template <class Trainer>
void write_checkpoints(Trainer& trainer, std::filesystem::path directory, model_fingerprint model) {
  using T = typename Trainer::parameter_type;
  trainer.on_checkpoint([&trainer, directory = std::move(directory), model = std::move(model),
                         signature = strategy_signature(trainer.strategy())](const training_state<T>& state) {
    std::error_code error;
    std::filesystem::create_directories(directory, error);
    if (error) {
      detail::raise<data_error>(
          detail::str("checkpoint directory ", directory.string(), ": cannot create it: ", error.message()));
    }
    save(checkpoint_file(directory), checkpoint<T>{model, signature, state, encode_progress(trainer.strategy())});
  });
}

template <class Trainer>
std::uint64_t resume(Trainer& trainer, const std::filesystem::path& path, const model_fingerprint& model) {
  checkpoint<typename Trainer::parameter_type> c = load<typename Trainer::parameter_type>(path, model);
  // Before decode_progress: chains of other stages can keep their progress in the same bytes.
  const std::string signature = strategy_signature(trainer.strategy());
  if (c.strategy != signature) {
    detail::raise<data_error>(detail::str("checkpoint ", path.string(), " was written by strategy '", c.strategy,
                                          "', this run's strategy is '", signature, "'"));
  }
  if (c.state.flush_subnormals != trainer.options().flush_subnormals) {
    detail::raise<data_error>(detail::str("checkpoint ", path.string(), " was trained ",
                                          detail::subnormal_mode(c.state.flush_subnormals), ", this run is set to ",
                                          detail::subnormal_mode(trainer.options().flush_subnormals),
                                          " (trainer_options::flush_subnormals): resume with the same setting"));
  }
  decode_progress(trainer.strategy(), c.strategy_progress, path.string());
  const std::uint64_t epoch = c.state.epoch;
  trainer.resume_from(std::move(c.state));
  return epoch;
}

}  // namespace switchyard::train
