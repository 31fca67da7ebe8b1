// libFuzzer target for switchyard/train/checkpoint.hpp: whatever the bytes, load either returns a
// checkpoint consistent with its own model fingerprint or throws data_error. The input is the
// payload (a Boost binary archive); the harness puts a valid header with its CRC-32 in front, so
// the fuzzer's bytes reach the archive decoder instead of stopping at the checksum.
#include "switchyard/train/checkpoint.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace detail = switchyard::detail;
  const std::span<const std::byte> payload = std::as_bytes(std::span(data, size));
  const auto header = detail::checkpoint_header(payload, switchyard::train::checkpoint<float>::format_version);
  std::vector<std::byte> file(header.size() + payload.size());
  std::copy(header.begin(), header.end(), file.begin());
  std::copy(payload.begin(), payload.end(), file.begin() + static_cast<std::ptrdiff_t>(header.size()));
  try {
    // What the seed corpus holds, so that mutations of it get past the model check.
    const switchyard::train::model_fingerprint expected{"mlp", 4, sizeof(float), "dense 1x2"};
    const auto c = switchyard::train::load<float>(file, "fuzz input", expected);
    if (c.state.parameters.size() != expected.parameters || c.state.optimizer.size != expected.parameters) {
      std::abort();
    }
    for (const auto& slot : c.state.optimizer.slots) {
      if (slot.size() != c.state.optimizer.size) std::abort();
    }
  } catch (const switchyard::data_error&) {
    // The expected outcome for malformed input.
  }
  return 0;
}
