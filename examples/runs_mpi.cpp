// The Fashion-MNIST runs of the mlp over the mpi transport (see fashion_mnist_runs.hpp).
#include "fashion_mnist_train.hpp"

template example::run_result example::run_model<switchyard::nn::mlp<>, switchyard::transport::mpi>(
    switchyard::transport::mpi&, const example::config&, const switchyard::data::fashion_mnist&);
