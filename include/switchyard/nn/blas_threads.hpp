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

/// @brief Sets the process's OpenBLAS thread budget for the lifetime of the scope, then puts the
/// previous budget back.
///
/// The budget is one setting for the whole process, so set it once, before the ranks start, in
/// the code that launches them (around `transport::run_inproc`, or in `main` under MPI), not from
/// each rank: the trainer does not touch it. One thread per rank is right when ranks fill the
/// cores (in-process ranks are threads, MPI runs a process per core).
/// @code
/// switchyard::nn::blas_threads_scope blas{1};   // 4 in-process ranks on 4 cores: one thread each
/// switchyard::transport::run_inproc(4, train_rank);
/// @endcode
class blas_threads_scope {
 public:
  /// @throws usage_error if `threads` is below 1.
  explicit blas_threads_scope(int threads) : saved_(blas_threads()) { set_blas_threads(threads); }
  ~blas_threads_scope() { openblas_set_num_threads(saved_); }
  blas_threads_scope(const blas_threads_scope&) = delete;
  blas_threads_scope& operator=(const blas_threads_scope&) = delete;

 private:
  int saved_;
};

}  // namespace switchyard::nn
