// The Fashion-MNIST runs over the hybrid transport, threads per node (see fashion_mnist_runs.hpp).
#include "fashion_mnist_train.hpp"

template example::run_result example::run_rank<switchyard::transport::hybrid>(switchyard::transport::hybrid&,
                                                                              const example::config&,
                                                                              const switchyard::data::fashion_mnist&);
