// Compile-time tags that choose how a collective runs.
#pragma once

#include <type_traits>

namespace switchyard::algorithm {

/// @brief Reduce-scatter then all-gather around a ring, pipelined in segments: moves
/// 2(n-1)/n of the buffer per rank, the bandwidth-optimal choice for large buffers.
/// Needs a commutative operation.
struct ring {};

/// @brief Pairwise exchanges at doubling distances, log2(n) rounds (plus a fold for world sizes
/// that are not powers of two): the latency-optimal choice for small buffers.
struct recursive_doubling {};

/// @brief Rabenseifner's algorithm: reduce-scatter by recursive halving, then all-gather by
/// recursive doubling (plus the fold of recursive_doubling for world sizes that are not powers of
/// two). Moves 2(p-1)/p of the buffer per rank, as the ring does, in 2 log2(p) rounds instead of
/// 2(p-1): the choice for large buffers over many ranks. Keeps rank order, so any operation.
struct halving_doubling {};

/// @brief Node-aware: reduce-scatter inside each node, each rank all-reduces its slices with the
/// ranks that own them on the other nodes (one ring per slice, in parallel), all-gather inside
/// each node. Crosses node boundaries with 1/local-size of the buffer per rank instead of all of
/// it; nodes may differ in size. Needs a commutative operation; see docs/collectives.md.
struct hierarchical {};

/// @brief Binomial tree (broadcast): the whole buffer in ceil(log2 n) rounds from the root, the
/// choice for small buffers.
struct binomial_tree {};

/// @brief Scatter then all-gather (broadcast, van de Geijn's): the root's buffer is cut into one
/// block per rank, scattered down a binomial tree (each rank receives the blocks of its subtree),
/// then all-gathered (Bruck's from 8 ranks, the ring below). About 2 buffers' time in
/// 2 ceil(log2 n) rounds instead of ceil(log2 n) buffers: the choice for large buffers over many
/// ranks.
struct scatter_allgather {};

/// @brief The transport's own collective (`MPI_Allreduce`, or the in-process shared-memory
/// one); a compile error if the transport has none.
struct native {};

/// @brief Native where the transport has it, else chosen by message size; see
/// docs/collectives.md for the rule and docs/performance.md for the measurements.
struct automatic {};

/// @brief The all-reduce algorithm tags.
template <class A>
concept allreduce_algorithm = std::is_same_v<A, ring> || std::is_same_v<A, recursive_doubling> ||
                              std::is_same_v<A, halving_doubling> ||
                              std::is_same_v<A, hierarchical> || std::is_same_v<A, native> ||
                              std::is_same_v<A, automatic>;

}  // namespace switchyard::algorithm
