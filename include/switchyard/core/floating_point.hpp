// The floating-point environment of a thread: flushing subnormal floats to zero for a scope.
//
// Subnormal floats (magnitudes below 1.2e-38 in float, 2.2e-308 in double) appear in training when
// a parameter's gradient stays zero and its optimizer state (Adam's moments, a momentum velocity)
// decays geometrically. Intel cores take a microcode assist of the order of 100 cycles for every
// subnormal operand or result; flushing them to zero removes that cost and changes no value a
// model can tell apart from zero (docs/training.md, "Subnormal floats").
#pragma once

#include <cstdint>

#if defined(__x86_64__) || defined(_M_X64)
#include <xmmintrin.h>
#endif

namespace switchyard {

/// Whether this platform has a flush-to-zero mode that `flush_subnormals_scope` sets: x86-64
/// (MXCSR's FTZ and DAZ bits) and AArch64 (FPCR.FZ). Elsewhere the scope does nothing.
#if defined(__x86_64__) || defined(_M_X64) || defined(__aarch64__)
inline constexpr bool can_flush_subnormals = true;
#else
inline constexpr bool can_flush_subnormals = false;
#endif

namespace detail {

#if defined(__x86_64__) || defined(_M_X64)
using fp_control = std::uint32_t;
/// MXCSR bit 15, flush to zero (subnormal results become 0), and bit 6, denormals are zero
/// (subnormal operands are read as 0).
inline constexpr fp_control flush_bits = (1u << 15) | (1u << 6);
inline fp_control read_fp_control() noexcept { return _mm_getcsr(); }
inline void write_fp_control(fp_control value) noexcept { _mm_setcsr(value); }
#elif defined(__aarch64__)
using fp_control = std::uint64_t;
/// FPCR bit 24, FZ: subnormal operands and results of single and double precision become 0.
inline constexpr fp_control flush_bits = fp_control{1} << 24;
inline fp_control read_fp_control() noexcept {
  fp_control value;
  asm volatile("mrs %0, fpcr" : "=r"(value));
  return value;
}
inline void write_fp_control(fp_control value) noexcept { asm volatile("msr fpcr, %0" : : "r"(value)); }
#else
using fp_control = std::uint32_t;
inline constexpr fp_control flush_bits = 0;
inline fp_control read_fp_control() noexcept { return 0; }
inline void write_fp_control(fp_control) noexcept {}
#endif

}  // namespace detail

/// @brief Whether the calling thread flushes subnormal floats to zero: on x86-64 both FTZ and DAZ
/// are set, on AArch64 FZ; always false where `can_flush_subnormals` is false.
[[nodiscard]] inline bool subnormals_flushed() noexcept {
  return can_flush_subnormals && (detail::read_fp_control() & detail::flush_bits) == detail::flush_bits;
}

/// @brief Flushes subnormal floats to zero on the calling thread for the lifetime of the scope,
/// then puts the thread's flush mode back as it was, also when the scope is left by an exception.
///
/// Only the flush bits change: rounding mode, exception masks and the sticky exception flags are
/// left alone, so flags raised inside the scope are still visible after it. The mode is per
/// thread (per rank where a transport runs several ranks on one thread: core/rank_context.hpp);
/// threads started inside the scope inherit it on Linux, but a thread pool started
/// before (OpenBLAS's, when it runs more than one thread) does not. `train::trainer::fit` holds
/// one on every rank (`trainer_options::flush_subnormals`); hold your own around optimizer or
/// model calls made outside `fit`. The analogue of PyTorch's `torch.set_flush_denormal(True)`,
/// scoped.
/// @code
/// {
///   switchyard::flush_subnormals_scope flush;   // FTZ and DAZ on this thread
///   optimizer.step(parameters, gradients);
/// }                                             // the caller's mode again
/// @endcode
class flush_subnormals_scope {
 public:
  /// Sets the flush mode when `flush` is true; with false the scope changes nothing (the thread
  /// keeps whatever mode it had), so a run can make the choice an option.
  explicit flush_subnormals_scope(bool flush = true) noexcept : saved_(detail::read_fp_control()), active_(flush) {
    if (active_) detail::write_fp_control(saved_ | detail::flush_bits);
  }
  ~flush_subnormals_scope() {
    if (active_) {
      detail::write_fp_control((detail::read_fp_control() & ~detail::flush_bits) | (saved_ & detail::flush_bits));
    }
  }
  flush_subnormals_scope(const flush_subnormals_scope&) = delete;
  flush_subnormals_scope& operator=(const flush_subnormals_scope&) = delete;

 private:
  detail::fp_control saved_;
  bool active_;
};

}  // namespace switchyard
