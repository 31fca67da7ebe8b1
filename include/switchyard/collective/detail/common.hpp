// What the collective algorithms share: reserved tags, per-rank scratch that is allocated once,
// the request type of a transport, and the context added to errors.
#pragma once

#include <switchyard/core/buffer.hpp>
#include <switchyard/core/error.hpp>
#include <switchyard/core/operations.hpp>
#include <switchyard/core/rank_context.hpp>
#include <switchyard/transport/transport.hpp>

#include <cstddef>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

namespace switchyard::collective::detail {

// The require_* helpers return `auto` so that a call instantiates them on the spot: with a plain
// `void`, GCC defers their bodies, and their message comes after the errors of the lines that
// follow the call instead of first.

/// The collectives' one-sentence diagnostic for a type that is not a transport.
template <class Transport>
constexpr auto require_transport() {
  static_assert(transport::transport<Transport>,
                "the transport must be a copyable, non-const handle with rank(), size(), send, recv, isend, irecv, "
                "recv_any, barrier() and split(color, key): see transport/transport.hpp");
}

/// What a buffer argument is to a collective, as the diagnostic for a non-buffer names it.
enum class buffer_role { buffer, input, output };

/// The collectives' one-sentence diagnostic for a type that is not a buffer. The sentence is
/// spelled out once per role because a C++20 static_assert message must be a string literal
/// (composing one from constants needs C++26, or a macro); keep the three in step.
template <class Buffer, buffer_role Role = buffer_role::buffer>
constexpr auto require_buffer() {
  if constexpr (Role == buffer_role::input) {
    static_assert(switchyard::buffer<Buffer>,
                  "the input must be a contiguous range of arithmetic values (std::vector, std::array, std::span), "
                  "an xtensor container, or a type with a switchyard::buffer_traits specialization or an ADL "
                  "switchyard_as_span: see core/buffer.hpp");
  } else if constexpr (Role == buffer_role::output) {
    static_assert(switchyard::buffer<Buffer>,
                  "the output must be a contiguous range of arithmetic values (std::vector, std::array, std::span), "
                  "an xtensor container, or a type with a switchyard::buffer_traits specialization or an ADL "
                  "switchyard_as_span: see core/buffer.hpp");
  } else {
    static_assert(switchyard::buffer<Buffer>,
                  "the buffer must be a contiguous range of arithmetic values (std::vector, std::array, std::span), "
                  "an xtensor container, or a type with a switchyard::buffer_traits specialization or an ADL "
                  "switchyard_as_span: see core/buffer.hpp");
  }
}

/// The diagnostic of the reducing collectives for an operation that does not reduce `T`.
template <class Op, class T>
constexpr auto require_reduction() {
  static_assert(reduction<Op, T>, "the operation must be callable as T op(T, T) for the buffer's element type");
}

using switchyard::detail::raise;
using switchyard::detail::str;

/// Tags at and above this value are reserved for the collectives; MPI guarantees 32767 at least.
inline constexpr int reserved_tag_base = 32000;
enum tag : int {
  allreduce_tag = reserved_tag_base,
  reduce_scatter_tag,
  allgather_tag,
  broadcast_tag,
  fingerprint_tag,
};

// Scratch space of the calling rank, grown on first use and kept: the first touch of fresh pages
// costs more than moving the data, so a hot loop of collectives must not allocate. `slot` keeps
// apart the buffers an algorithm uses at the same time. Per rank, not per thread: simulated ranks
// share one thread and switch in the middle of a collective (core/rank_context.hpp).
template <class T>
std::span<T> scratch(std::size_t count, std::size_t slot = 0) {
  return current_rank_context().scratch<T>(count, slot);
}

template <class Transport, class T>
using request_t = decltype(std::declval<Transport&>().isend(std::declval<std::span<const T>>(), 0, 0));

// Runs `body`, adding to transport errors which collective failed on which rank and with how
// many elements there: when ranks disagree on a count, their messages together show both.
template <class Body>
decltype(auto) in_context(std::string_view what, int rank, std::size_t count, Body&& body) {
  try {
    return std::forward<Body>(body)();
  } catch (const timeout_error& e) {
    throw timeout_error(str(what, " of ", count, " elements on rank ", rank, ": ", e.what()));
  } catch (const transport_error& e) {
    throw transport_error(str(what, " of ", count, " elements on rank ", rank, ": ", e.what()));
  }
}

}  // namespace switchyard::collective::detail
