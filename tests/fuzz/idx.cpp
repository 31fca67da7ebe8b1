// libFuzzer target for switchyard/data/idx.hpp: whatever the bytes, read_idx either returns an
// array whose values match its shape or throws data_error. A crash, a sanitizer report, another
// exception or a mismatched array is a bug.
#include "switchyard/data/idx.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto array = switchyard::data::read_idx(std::span(data, size), "fuzz input");
    std::size_t elements = 1;
    for (const std::size_t extent : array.shape) elements *= extent;
    if (array.shape.empty() || elements != array.values.size()) std::abort();
  } catch (const switchyard::data_error&) {
    // The expected outcome for malformed input.
  }
  return 0;
}
