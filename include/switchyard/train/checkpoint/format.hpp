// The checkpoint format: what a checkpoint holds, the 24-byte header (magic, version, CRC-32,
// length) in front of its Boost binary archive, and the checks that read it back from bytes.
#pragma once

#include <switchyard/core/error.hpp>
#include <switchyard/core/sequence.hpp>
#include <switchyard/train/checkpoint/fingerprint.hpp>
#include <switchyard/train/training_state.hpp>

#include <array>
#include <boost/archive/binary_iarchive.hpp>
#include <boost/archive/binary_oarchive.hpp>
#include <boost/crc.hpp>
#include <boost/serialization/string.hpp>
#include <boost/serialization/vector.hpp>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace switchyard::train {

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
  /// signature and the model's layout, version 3 the subnormal flush setting, version 4 the
  /// epochs' time breakdown, version 5 an `alternate`'s switches inside epochs and their reasons,
  /// version 6 the training set's size and the batch size).
  static constexpr std::uint32_t format_version = 6;

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

/// Reads the checkpoint in `bytes` (named `name` in messages), refusing with a `data_error` that
/// says which: a truncated file, one that is not a checkpoint, another format version, a checksum
/// mismatch (corrupted), a payload that does not decode, or a model other than `expected`.
/// Safe on any bytes (what a fuzzer calls).
template <class T = float>
[[nodiscard]] checkpoint<T> load(std::span<const std::byte> bytes, std::string_view name,
                                 const model_fingerprint& expected);

}  // namespace switchyard::train

// ---------------------------------------------------------------------------------------------
// Implementation
// ---------------------------------------------------------------------------------------------

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

// The payload of `c`: a Boost binary archive without Boost's own header.
template <class T>
std::string checkpoint_payload(const train::checkpoint<T>& c) {
  std::ostringstream payload_stream(std::ios::binary);
  {
    boost::archive::binary_oarchive archive(payload_stream, boost::archive::no_header);
    archive << c;
  }
  return std::move(payload_stream).str();
}

// The header in front of `payload`: the magic, `version`, the payload's CRC-32 and its length.
inline std::array<std::byte, checkpoint_header_bytes> checkpoint_header(std::span<const std::byte> payload,
                                                                        std::uint32_t version) {
  std::array<std::byte, checkpoint_header_bytes> header{};
  for (std::size_t i = 0; i < checkpoint_magic.size(); ++i) {
    header[i] = static_cast<std::byte>(checkpoint_magic[i]);
  }
  put_le(header.data() + 8, version, 4);
  put_le(header.data() + 12, crc32(payload), 4);
  put_le(header.data() + 16, payload.size(), 8);
  return header;
}

}  // namespace switchyard::detail

namespace switchyard::train {

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

}  // namespace switchyard::train
