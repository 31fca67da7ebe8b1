// Replaces the global operator new of a test program with one that counts, so a test can prove
// that a hot path allocates nothing. Include it from exactly one file of a test program.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

namespace counting_new {
inline std::atomic<std::size_t> allocations{0};
}  // namespace counting_new

// Not inlined: GCC 12 would otherwise see free() applied to new'd memory and warn
// (-Wmismatched-new-delete).
[[gnu::noinline]] void* operator new(std::size_t size) {
  counting_new::allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* memory = std::malloc(size == 0 ? 1 : size)) return memory;
  throw std::bad_alloc();
}
[[gnu::noinline]] void operator delete(void* memory) noexcept { std::free(memory); }
[[gnu::noinline]] void operator delete(void* memory, std::size_t) noexcept { std::free(memory); }
