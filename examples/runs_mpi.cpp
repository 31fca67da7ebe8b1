// The Fashion-MNIST runs over the MPI transport (see fashion_mnist_runs.hpp).
#include "fashion_mnist_train.hpp"

template example::run_result example::run_rank<switchyard::transport::mpi>(switchyard::transport::mpi&,
                                                                           const example::config&,
                                                                           const switchyard::data::fashion_mnist&);
