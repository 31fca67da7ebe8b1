// The umbrella header: everything switchyard offers whose dependencies the build provides.
// The core (transports in process, collectives, optimizers, strategies, the trainer, in-memory
// data sets and batches, the model concept) needs only the standard library; the
// other parts come with their Meson dependency, which defines the macro that enables them here:
// `switchyard-xtensor` (SWITCHYARD_HAS_XTENSOR), `switchyard-data` (SWITCHYARD_HAS_DATA),
// `switchyard-nn` (SWITCHYARD_HAS_NN), `switchyard-checkpoint` (SWITCHYARD_HAS_CHECKPOINT),
// `switchyard-mpi` (SWITCHYARD_HAS_MPI), `switchyard-sim` (SWITCHYARD_HAS_SIMGRID).
#pragma once

#include <switchyard/collective/algorithm.hpp>
#include <switchyard/collective/allgather.hpp>
#include <switchyard/collective/allreduce.hpp>
#include <switchyard/collective/barrier.hpp>
#include <switchyard/collective/broadcast.hpp>
#include <switchyard/collective/compressed.hpp>
#include <switchyard/collective/native.hpp>
#include <switchyard/collective/node_groups.hpp>
#include <switchyard/core/partition.hpp>
#include <switchyard/collective/reduce_scatter.hpp>
#include <switchyard/collective/stage.hpp>
#include <switchyard/core/buffer.hpp>
#include <switchyard/core/compression.hpp>
#include <switchyard/core/error.hpp>
#include <switchyard/core/floating_point.hpp>
#include <switchyard/core/operations.hpp>
#include <switchyard/core/rank_context.hpp>
#include <switchyard/core/sequence.hpp>
#include <switchyard/core/threshold.hpp>
#include <switchyard/transport/concurrency.hpp>
#include <switchyard/transport/faulty.hpp>
#include <switchyard/transport/inproc.hpp>
#include <switchyard/trigger/after_epochs.hpp>
#include <switchyard/trigger/after_seconds.hpp>
#include <switchyard/trigger/after_steps.hpp>
#include <switchyard/trigger/combinators.hpp>
#include <switchyard/trigger/loss_plateau.hpp>
#include <switchyard/trigger/trigger.hpp>
#include <switchyard/transport/topology.hpp>
#include <switchyard/transport/transport.hpp>
#include <switchyard/optim/adam.hpp>
#include <switchyard/optim/any_optimizer.hpp>
#include <switchyard/optim/constant.hpp>
#include <switchyard/optim/cosine.hpp>
#include <switchyard/optim/momentum.hpp>
#include <switchyard/optim/optimizer.hpp>
#include <switchyard/optim/optimizer_state.hpp>
#include <switchyard/optim/schedule.hpp>
#include <switchyard/optim/sgd.hpp>
#include <switchyard/optim/step_decay.hpp>
#include <switchyard/optim/warmup.hpp>
#include <switchyard/strategy/all_reduce.hpp>
#include <switchyard/strategy/parameter_server.hpp>
#include <switchyard/strategy/policy.hpp>
#include <switchyard/strategy/replicas.hpp>
#include <switchyard/strategy/switch_to.hpp>
#include <switchyard/strategy/traits.hpp>
#include <switchyard/train/batch_source.hpp>
#include <switchyard/train/epoch_log.hpp>
#include <switchyard/core/history.hpp>
#include <switchyard/train/trainer.hpp>
#include <switchyard/train/training_state.hpp>
#include <switchyard/data/batch.hpp>
#include <switchyard/data/batch_loader.hpp>
#include <switchyard/data/dataset.hpp>
#include <switchyard/data/sequential_batches.hpp>
#include <switchyard/data/shard_plan.hpp>
#include <switchyard/nn/evaluation.hpp>
#include <switchyard/nn/model.hpp>

#if defined(SWITCHYARD_HAS_XTENSOR)
#include <switchyard/tensor/xtensor.hpp>
#endif
#if defined(SWITCHYARD_HAS_DATA)
#include <switchyard/data/fashion_mnist.hpp>
#include <switchyard/data/idx.hpp>
#endif
#if defined(SWITCHYARD_HAS_NN)
#include <switchyard/nn/blas_kernels.hpp>
#include <switchyard/nn/blas_threads.hpp>
#include <switchyard/nn/cnn.hpp>
#include <switchyard/nn/conv2d.hpp>
#include <switchyard/nn/dense.hpp>
#include <switchyard/nn/flatten.hpp>
#include <switchyard/nn/initializer.hpp>
#include <switchyard/nn/layer.hpp>
#include <switchyard/nn/max_pool.hpp>
#include <switchyard/nn/mlp.hpp>
#include <switchyard/nn/relu.hpp>
#include <switchyard/nn/rng.hpp>
#include <switchyard/nn/sequential.hpp>
#include <switchyard/nn/softmax_cross_entropy.hpp>
#endif
#if defined(SWITCHYARD_HAS_CHECKPOINT)
#include <switchyard/train/checkpoint.hpp>
#endif
#if defined(SWITCHYARD_HAS_MPI)
#include <switchyard/transport/mpi.hpp>
#endif
#if defined(SWITCHYARD_HAS_SIMGRID)
#include <switchyard/transport/simulated.hpp>
#endif
