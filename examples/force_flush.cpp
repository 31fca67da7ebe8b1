// A preloaded shared object that switches flush-to-zero and denormals-are-zero on for the whole
// process from outside, before main: the reference that bench_subnormals.sh compares the
// trainer's own flush_subnormals_scope against. Threads inherit the mode from the main thread.
//
//   LD_PRELOAD=build/examples/libforce_flush.so build/examples/fashion_mnist --no-flush-subnormals
#include <xmmintrin.h>

namespace {

// MXCSR bit 15 (FTZ) and bit 6 (DAZ).
[[gnu::constructor]] void force_flush() { _mm_setcsr(_mm_getcsr() | (1u << 15) | (1u << 6)); }

}  // namespace
