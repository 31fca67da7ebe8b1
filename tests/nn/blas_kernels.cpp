#include <switchyard/nn/blas_kernels.hpp>
#include <switchyard/nn/blas_threads.hpp>

#include <doctest/doctest.h>

using switchyard::nn::blas_kernel_warning;
using switchyard::nn::kernel_level;
using switchyard::nn::simd_level;

TEST_CASE("blas_kernels: core names map to the widest instructions of their kernels, in any case") {
  CHECK(kernel_level("Prescott") == simd_level::sse);
  CHECK(kernel_level("Core2") == simd_level::sse);
  CHECK(kernel_level("NEHALEM") == simd_level::sse);
  CHECK(kernel_level("Sandybridge") == simd_level::avx);
  CHECK(kernel_level("Haswell") == simd_level::avx2);
  CHECK(kernel_level("zen") == simd_level::avx2);
  CHECK(kernel_level("SkylakeX") == simd_level::avx512);
  CHECK(kernel_level("Cooperlake") == simd_level::avx512);
  CHECK(kernel_level("SapphireRapids") == simd_level::avx512);
  CHECK_FALSE(kernel_level("NEOVERSEN1").has_value());
  CHECK_FALSE(kernel_level("").has_value());
}

TEST_CASE("blas_kernels: a warning when the kernels are older than the CPU, naming OPENBLAS_CORETYPE") {
  const auto avx512 = blas_kernel_warning("Haswell", simd_level::avx512);
  REQUIRE(avx512.has_value());
  CHECK(*avx512 ==
        "OpenBLAS runs its Haswell kernels (AVX2) on a CPU with AVX-512; OPENBLAS_CORETYPE=SkylakeX in the "
        "environment selects its AVX-512 kernels");
  const auto avx2 = blas_kernel_warning("Prescott", simd_level::avx2);
  REQUIRE(avx2.has_value());
  CHECK(avx2->find("Prescott kernels (SSE)") != std::string::npos);
  CHECK(avx2->find("OPENBLAS_CORETYPE=Haswell") != std::string::npos);
  CHECK(blas_kernel_warning("Core2", simd_level::avx)->find("OPENBLAS_CORETYPE=Sandybridge") != std::string::npos);
  CHECK(avx2->find('\n') == std::string::npos);  // one line
  // Kernels as wide as the CPU, or wider (a forced OPENBLAS_CORETYPE), and unknown names: no warning.
  CHECK_FALSE(blas_kernel_warning("Haswell", simd_level::avx2).has_value());
  CHECK_FALSE(blas_kernel_warning("SkylakeX", simd_level::avx512).has_value());
  CHECK_FALSE(blas_kernel_warning("SkylakeX", simd_level::avx2).has_value());
  CHECK_FALSE(blas_kernel_warning("ARMV8", simd_level::avx512).has_value());
}

TEST_CASE("blas_kernels: this process's OpenBLAS is asked, and answers for this CPU") {
  // Keeps OpenBLAS linked in, as any program that multiplies matrices does.
  CHECK(switchyard::nn::blas_threads() >= 1);
  const std::optional<std::string> warning = blas_kernel_warning();
#if defined(__x86_64__) && defined(__GNUC__)
  REQUIRE(openblas_get_corename != nullptr);
  const std::string core_name = openblas_get_corename();
  MESSAGE("OpenBLAS core: ", core_name, "; warning: ", warning.value_or("none"));
  CHECK(warning == blas_kernel_warning(core_name, *switchyard::nn::cpu_level()));
#else
  CHECK_FALSE(warning.has_value());
#endif
}
