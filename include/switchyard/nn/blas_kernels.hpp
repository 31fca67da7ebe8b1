// Whether OpenBLAS runs the widest kernels this CPU can: an OpenBLAS older than the CPU does not
// know its model and falls back to the kernels of an older family (on x86-64, a CPU with AVX-512
// may get the AVX2 ones), until OPENBLAS_CORETYPE names a better family.
#pragma once

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>
#include <string>
#include <string_view>

// Declared weak where the compiler allows: the symbol is there only when the BLAS is OpenBLAS,
// and null otherwise.
extern "C" {
#if defined(__GNUC__)
[[gnu::weak]]
#endif
char* openblas_get_corename(void);
}

namespace switchyard::nn {

/// @brief The widest vector instructions an x86-64 BLAS kernel family uses, in the order CPUs
/// gained them.
enum class simd_level { sse, avx, avx2, avx512 };

/// @brief "SSE", "AVX", "AVX2" or "AVX-512".
[[nodiscard]] constexpr std::string_view simd_name(simd_level level) noexcept {
  switch (level) {
    case simd_level::sse: return "SSE";
    case simd_level::avx: return "AVX";
    case simd_level::avx2: return "AVX2";
    case simd_level::avx512: return "AVX-512";
  }
  return "SSE";
}

/// @brief The level of the kernels an OpenBLAS x86-64 core name stands for ("Haswell": AVX2,
/// "SkylakeX": AVX-512), in any case; nothing for a name this table does not hold (other
/// architectures, families newer than it).
[[nodiscard]] inline std::optional<simd_level> kernel_level(std::string_view core_name) {
  struct family {
    std::string_view name;
    simd_level level;
  };
  static constexpr std::array<family, 26> families{{
      {"katmai", simd_level::sse},       {"coppermine", simd_level::sse},     {"northwood", simd_level::sse},
      {"prescott", simd_level::sse},     {"banias", simd_level::sse},         {"atom", simd_level::sse},
      {"core2", simd_level::sse},        {"penryn", simd_level::sse},         {"dunnington", simd_level::sse},
      {"nehalem", simd_level::sse},      {"athlon", simd_level::sse},         {"opteron", simd_level::sse},
      {"opteron(sse3)", simd_level::sse}, {"barcelona", simd_level::sse},     {"nano", simd_level::sse},
      {"bobcat", simd_level::sse},       {"sandybridge", simd_level::avx},    {"bulldozer", simd_level::avx},
      {"piledriver", simd_level::avx},   {"steamroller", simd_level::avx},    {"excavator", simd_level::avx},
      {"haswell", simd_level::avx2},     {"zen", simd_level::avx2},           {"skylakex", simd_level::avx512},
      {"cooperlake", simd_level::avx512}, {"sapphirerapids", simd_level::avx512},
  }};
  std::string lower(core_name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const auto* found = std::find_if(families.begin(), families.end(), [&](const family& f) { return f.name == lower; });
  if (found == families.end()) return std::nullopt;
  return found->level;
}

/// @brief The widest level this CPU and its operating system run, from the CPU's feature bits
/// (cpuid, through `__builtin_cpu_supports`: AVX-512F, AVX2, AVX); nothing off x86-64 or
/// without that builtin.
[[nodiscard]] inline std::optional<simd_level> cpu_level() {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return simd_level::avx512;
  if (__builtin_cpu_supports("avx2")) return simd_level::avx2;
  if (__builtin_cpu_supports("avx")) return simd_level::avx;
  return simd_level::sse;
#else
  return std::nullopt;
#endif
}

/// @brief The warning for OpenBLAS kernels of `core_name` on a CPU of level `cpu`, or nothing
/// when they are as wide as the CPU runs, or the name is not in `kernel_level`'s table.
///
/// The message names the family whose kernels fit the CPU, as OPENBLAS_CORETYPE takes it.
/// @code
/// switchyard::nn::blas_kernel_warning("Haswell", switchyard::nn::simd_level::avx512);
/// // "OpenBLAS runs its Haswell kernels (AVX2) on a CPU with AVX-512; OPENBLAS_CORETYPE=SkylakeX in the
/// //  environment selects its AVX-512 kernels"
/// @endcode
[[nodiscard]] inline std::optional<std::string> blas_kernel_warning(std::string_view core_name, simd_level cpu) {
  const std::optional<simd_level> kernels = kernel_level(core_name);
  if (!kernels || *kernels >= cpu) return std::nullopt;
  static constexpr std::array<std::string_view, 4> fitting{"Nehalem", "Sandybridge", "Haswell", "SkylakeX"};
  return "OpenBLAS runs its " + std::string(core_name) + " kernels (" + std::string(simd_name(*kernels)) +
         ") on a CPU with " + std::string(simd_name(cpu)) + "; OPENBLAS_CORETYPE=" +
         std::string(fitting[static_cast<std::size_t>(cpu)]) + " in the environment selects its " +
         std::string(simd_name(cpu)) + " kernels";
}

/// @brief The warning for the OpenBLAS of this process on this CPU, or nothing when the BLAS is
/// not OpenBLAS, the CPU is not x86-64, or the kernels are as wide as the CPU runs.
/// @code
/// if (auto warning = switchyard::nn::blas_kernel_warning()) std::fprintf(stderr, "warning: %s\n", warning->c_str());
/// @endcode
[[nodiscard]] inline std::optional<std::string> blas_kernel_warning() {
  const std::optional<simd_level> cpu = cpu_level();
  if (!cpu) return std::nullopt;
#if defined(__GNUC__)
  if (&openblas_get_corename == nullptr) return std::nullopt;
#endif
  const char* core_name = openblas_get_corename();
  if (core_name == nullptr) return std::nullopt;
  return blas_kernel_warning(core_name, *cpu);
}

}  // namespace switchyard::nn
