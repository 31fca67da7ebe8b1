// The in-process native collectives: every rank publishes its buffer in the group's window, and
// ranks then read and write their peers' buffers directly, between two barriers.
#pragma once

#include <switchyard/core/partition.hpp>
#include <switchyard/core/buffer.hpp>
#include <switchyard/core/error.hpp>
#include <switchyard/core/operations.hpp>
#include <switchyard/transport/inproc/group.hpp>
#include <switchyard/transport/inproc/mailbox.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <exception>
#include <span>
#include <string>
#include <vector>

namespace switchyard::transport::detail {

// The native collectives reduce in tiles that stay in L1 while every rank's block is folded in.
inline constexpr std::size_t reduce_tile_bytes = 8192;

// Shows this rank's arguments to the group, and raises a usage_error on every rank when they
// differ or a rank is not in this collective (it called barrier() or split() instead: its slot
// is of an earlier call), after every rank has read the slots: a rank that catches it and calls
// the next collective at once must not overwrite its slot under another rank's report.
template <arithmetic T>
void publish_and_check(inproc_group& g, int rank, const char* name, std::byte* data, const std::byte* input,
                       std::size_t count, int root) {
  check_usable(g, rank, name);
  g.window[static_cast<std::size_t>(rank)] = {data, input, count, &detail::type_identity_tag<T>, root, name};
  barrier(g, rank, true);
  // Every rank in the collective sees the same slots, so every one raises: nobody waits at the
  // closing barrier for a rank that is not coming.
  const std::uint64_t stamp = g.window[static_cast<std::size_t>(rank)].stamp;
  const auto in_call = [stamp](const detail::window_slot& slot) { return slot.stamp == stamp; };
  const auto same_operation = [name](const detail::window_slot& slot) { return std::strcmp(slot.operation, name) == 0; };
  bool agree = true;
  for (const detail::window_slot& slot : g.window) {
    agree = agree && in_call(slot) && same_operation(slot) && slot.count == count &&
            slot.element_type == &detail::type_identity_tag<T> && slot.root == root;
  }
  if (!agree) {
    const bool operations_differ = !std::all_of(g.window.begin(), g.window.end(), [&](const detail::window_slot& slot) {
      return !in_call(slot) || same_operation(slot);
    });
    std::string table;
    for (int r = 0; r < g.size; ++r) {
      const detail::window_slot& slot = g.window[static_cast<std::size_t>(r)];
      table += detail::str(r == 0 ? "" : ", ", "rank ", r, ": ");
      if (!in_call(slot)) {
        table += "not in this collective";
        continue;
      }
      table += detail::str(operations_differ ? slot.operation : "", operations_differ ? " of " : "", slot.count,
                           slot.element_type == &detail::type_identity_tag<T> ? "" : " (other element type)");
      if (slot.root != root) table += detail::str(" root ", slot.root);
    }
    try {
      barrier(g, rank);
    } catch (const std::exception&) {
      // A rank not in this collective may never come to this barrier: the mismatch is the report.
    }
    detail::raise<usage_error>(detail::str("rank ", rank, ": ", name, " called with mismatched arguments across ranks (",
                                   table, ")"));
  }
}

// Runs this rank's part of a native collective once the arguments agree. The parts read and
// write other ranks' buffers, so no rank leaves before every part is done: an exception from a
// part (a reduction operation that throws) is held, every rank waits for the others through
// aborts and timeouts (the parts never wait), and then every rank raises if any part failed.
template <class Part>
void run_part(inproc_group& g, int rank, const char* name, Part part) {
  std::exception_ptr failure;
  try {
    part();
  } catch (...) {
    failure = std::current_exception();
  }
  const bool any_failed = closing_barrier(g, rank, failure != nullptr);
  if (failure) std::rethrow_exception(failure);
  if (any_failed) {
    detail::raise<transport_error>(
        detail::str("rank ", rank, ": ", name, " abandoned because another rank's part of it raised"));
  }
}

// Folds block [offset, offset + size) of every rank's buffer, in rank order, and hands each
// finished tile to `emit(tile_offset, tile)`.
template <class T, class Op, class Emit>
void fold_block(const std::vector<window_slot>& window, std::size_t offset, std::size_t size, Op op,
                Emit emit) {
  constexpr std::size_t tile_elements = std::max<std::size_t>(1, reduce_tile_bytes / sizeof(T));
  alignas(64) std::array<T, tile_elements> tile;
  const int ranks = static_cast<int>(window.size());
  for (std::size_t begin = offset; begin < offset + size; begin += tile_elements) {
    const std::size_t n = std::min(tile_elements, offset + size - begin);
    const T* first = reinterpret_cast<const T*>(window[0].input) + begin;
    std::copy_n(first, n, tile.data());
    for (int r = 1; r < ranks; ++r) {
      const T* other = reinterpret_cast<const T*>(window[static_cast<std::size_t>(r)].input) + begin;
      for (std::size_t i = 0; i < n; ++i) tile[i] = op(tile[i], other[i]);
    }
    finalize_all<Op>(std::span<T>(tile.data(), n), ranks);
    emit(begin, std::span<const T>(tile.data(), n));
  }
}

template <arithmetic T, class Op>
void native_allreduce(inproc_group& g, int rank, std::span<T> data, Op op) {
  if (g.size == 1) {
    check_usable(g, rank, "allreduce");
    finalize_all<Op>(data, 1);
    return;
  }
  auto* bytes = reinterpret_cast<std::byte*>(data.data());
  publish_and_check<T>(g, rank, "allreduce", bytes, bytes, data.size(), 0);
  // Rank r alone reads and writes block r of every buffer: no locks, one result per element,
  // written to every rank, so replicas hold identical bits.
  const block mine = block_of(data.size(), static_cast<std::size_t>(g.size),
                                                      static_cast<std::size_t>(rank));
  run_part(g, rank, "allreduce", [&] {
    detail::fold_block<T>(g.window, mine.offset, mine.size, op, [&g](std::size_t at, std::span<const T> tile) {
      for (const detail::window_slot& slot : g.window) {
        std::copy(tile.begin(), tile.end(), reinterpret_cast<T*>(slot.data) + at);
      }
    });
  });
}

template <arithmetic T>
void native_broadcast(inproc_group& g, int rank, std::span<T> data, int root) {
  check_peer(g, rank, root, "broadcast", false);
  auto* bytes = reinterpret_cast<std::byte*>(data.data());
  publish_and_check<T>(g, rank, "broadcast", bytes, bytes, data.size(), root);
  run_part(g, rank, "broadcast", [&] {
    if (rank != root) {
      const T* source = reinterpret_cast<const T*>(g.window[static_cast<std::size_t>(root)].input);
      std::copy_n(source, data.size(), data.data());
    }
  });
}

template <arithmetic T>
void native_allgather(inproc_group& g, int rank, std::span<const T> mine, std::span<T> all) {
  if (all.size() != mine.size() * static_cast<std::size_t>(g.size)) {
    detail::raise<usage_error>(detail::str("rank ", rank, ": allgather of ", mine.size(), " elements per rank over ", g.size,
                                   " ranks needs an output of ", mine.size() * static_cast<std::size_t>(g.size),
                                   " elements, got ", all.size()));
  }
  publish_and_check<T>(g, rank, "allgather", reinterpret_cast<std::byte*>(all.data()),
                       reinterpret_cast<const std::byte*>(mine.data()), mine.size(), 0);
  run_part(g, rank, "allgather", [&] {
    for (int r = 0; r < g.size; ++r) {
      const T* source = reinterpret_cast<const T*>(g.window[static_cast<std::size_t>(r)].input);
      std::copy_n(source, mine.size(), all.data() + static_cast<std::size_t>(r) * mine.size());
    }
  });
}

template <arithmetic T, class Op>
std::span<T> native_reduce_scatter(inproc_group& g, int rank, std::span<T> data, Op op) {
  auto* bytes = reinterpret_cast<std::byte*>(data.data());
  publish_and_check<T>(g, rank, "reduce_scatter", bytes, bytes, data.size(), 0);
  const block mine = block_of(data.size(), static_cast<std::size_t>(g.size),
                                                      static_cast<std::size_t>(rank));
  run_part(g, rank, "reduce_scatter", [&] {
    detail::fold_block<T>(g.window, mine.offset, mine.size, op, [data](std::size_t at, std::span<const T> tile) {
      std::copy(tile.begin(), tile.end(), data.data() + at);
    });
  });
  return data.subspan(mine.offset, mine.size);
}

}  // namespace switchyard::transport::detail
