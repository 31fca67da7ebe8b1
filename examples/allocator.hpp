// Which malloc the example runs on: mimalloc when the build linked it (Meson option `mimalloc`,
// docs/simulation.md#memory-allocator), else the C library's. The examples write it into their
// summaries, since what a large simulation costs depends on it.
#pragma once

#include <cstdlib>
#include <string>

#if defined(SWITCHYARD_EXAMPLES_MIMALLOC)
#include <mimalloc.h>
#endif

namespace example {

/// "mimalloc 2.0.9" when `malloc` is mimalloc's (linked, it replaces the C library's for the whole
/// process, SimGrid included), else "system".
inline std::string allocator_name() {
#if defined(SWITCHYARD_EXAMPLES_MIMALLOC)
  void* probe = std::calloc(1, 16);
  const bool ours = mi_is_in_heap_region(probe);
  std::free(probe);
  if (ours) {
    const int v = mi_version();
    return "mimalloc " + std::to_string(v / 100) + "." + std::to_string(v / 10 % 10) + "." + std::to_string(v % 10);
  }
#endif
  return "system";
}

}  // namespace example
