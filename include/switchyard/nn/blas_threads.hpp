// The thread budget of the matrix products: OpenBLAS threads per process. In-process ranks are
// threads already, and MPI runs one process per core, so the examples run one BLAS thread per
// rank unless the user asks for more.
#pragma once

#include <switchyard/core/error.hpp>

// Declared here rather than through <cblas.h>, whose declarations conflict with xtensor-blas's.
extern "C" {
void openblas_set_num_threads(int threads);
int openblas_get_num_threads(void);
}

namespace switchyard::nn {

/// @brief Sets how many threads each OpenBLAS call may use, for the whole process.
/// @code
/// switchyard::nn::set_blas_threads(1);   // 4 in-process ranks on 4 cores: one thread each
/// @endcode
inline void set_blas_threads(int threads) {
  if (threads < 1) {
    switchyard::detail::raise<usage_error>(switchyard::detail::str("BLAS threads must be at least 1, got ", threads));
  }
  openblas_set_num_threads(threads);
}

/// @brief How many threads each OpenBLAS call may use.
inline int blas_threads() { return openblas_get_num_threads(); }

}  // namespace switchyard::nn
