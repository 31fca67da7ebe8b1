// Checkpoints: a training state and the strategy's progress in one versioned, checksummed file
// written atomically, and read back refusing anything that is not a whole checkpoint of this model.
// This header is the trainer glue (save, load, write_checkpoints, resume); the pieces live in
// train/checkpoint/: fingerprint.hpp (model_fingerprint), signature.hpp (strategy_signature),
// progress.hpp (encode_progress, decode_progress), format.hpp (checkpoint, its header and CRC,
// load from bytes) and file.hpp (the atomic POSIX write and the read).
#pragma once

#include <switchyard/core/error.hpp>
#include <switchyard/train/checkpoint/file.hpp>
#include <switchyard/train/checkpoint/fingerprint.hpp>
#include <switchyard/train/checkpoint/format.hpp>
#include <switchyard/train/checkpoint/progress.hpp>
#include <switchyard/train/checkpoint/signature.hpp>
#include <switchyard/train/training_state.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace switchyard::train {

/// Writes `c` to `path` atomically: into `path` + ".tmp" in the same directory, flushed to disk,
/// then renamed over `path`, so `path` is always either the previous checkpoint or this one, whole.
/// Raises `data_error` naming the file when it cannot be written (the previous one stays).
template <class T>
void save(const std::filesystem::path& path, const checkpoint<T>& c);

/// Reads the checkpoint file at `path`, as `load` on its bytes.
template <class T = float>
[[nodiscard]] checkpoint<T> load(const std::filesystem::path& path, const model_fingerprint& expected);

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

template <class T>
void save(const std::filesystem::path& path, const checkpoint<T>& c) {
  const std::string payload = detail::checkpoint_payload(c);
  const std::span<const std::byte> payload_bytes = std::as_bytes(std::span(payload.data(), payload.size()));
  const auto header = detail::checkpoint_header(payload_bytes, checkpoint<T>::format_version);
  detail::write_file_atomically(path, {header, payload_bytes});
}

template <class T>
checkpoint<T> load(const std::filesystem::path& path, const model_fingerprint& expected) {
  const std::vector<char> bytes = detail::read_file(path);
  return load<T>(std::as_bytes(std::span(bytes.data(), bytes.size())), path.string(), expected);
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
