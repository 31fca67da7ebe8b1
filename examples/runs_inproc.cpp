// The Fashion-MNIST runs over the inproc transport (see fashion_mnist_runs.hpp).
#include "fashion_mnist_train.hpp"

template example::run_result example::run_rank<switchyard::transport::inproc>(switchyard::transport::inproc&,
                                                                              const example::config&,
                                                                              const switchyard::data::fashion_mnist&);
