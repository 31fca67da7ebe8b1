// The random source of model initialization: a splitmix64 stream whose every draw is specified
// here, so one seed gives the same parameters with any compiler and standard library.
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>

namespace switchyard::nn {

/// @brief A seeded splitmix64 generator with uniform and normal draws defined bit for bit.
///
/// The `std::` distributions are deliberately not used: their algorithms are unspecified and
/// differ across standard libraries, which would give replicas built by different toolchains
/// different initial parameters. `uniform` uses only integer arithmetic, one conversion and one
/// multiply-add, so it is bitwise reproducible everywhere; `normal` (Box-Muller) also calls
/// `std::log`, `std::sqrt` and `std::cos`, so it is reproducible within one math library (glibc's
/// are correctly rounded in practice, but the standard does not promise it).
///
/// @code
/// nn::portable_rng rng{42};
/// const double u = rng.uniform(-0.1, 0.1);   // same value on every platform
/// const double z = rng.normal(0.0, 1.0);
/// @endcode
class portable_rng {
 public:
  /// Starts the stream at `seed`; equal seeds give equal streams.
  explicit constexpr portable_rng(std::uint64_t seed) noexcept : state_(seed) {}

  /// The next 64 random bits (Steele, Lea and Flood's splitmix64 finalizer).
  constexpr std::uint64_t next() noexcept {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  /// A double uniform in [0, 1) with 53 random bits.
  constexpr double uniform01() noexcept {
    return static_cast<double>(next() >> 11) * 0x1.0p-53;
  }

  /// A double uniform in [low, high).
  constexpr double uniform(double low, double high) noexcept {
    return low + (high - low) * uniform01();
  }

  /// A normal draw with the given mean and standard deviation (Box-Muller, one draw per call so
  /// that the stream position depends only on the number of calls).
  double normal(double mean, double stddev) noexcept {
    // 1 - u lies in (0, 1], so the logarithm is finite.
    const double radius = std::sqrt(-2.0 * std::log(1.0 - uniform01()));
    const double angle = 2.0 * std::numbers::pi * uniform01();
    return mean + stddev * radius * std::cos(angle);
  }

 private:
  std::uint64_t state_;
};

}  // namespace switchyard::nn
