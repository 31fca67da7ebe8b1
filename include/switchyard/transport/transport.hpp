// The Transport role: the small handle through which ranks exchange spans of arithmetic values.
// Collectives, strategies and the trainer are written against this concept only.
#pragma once

#include <concepts>
#include <cstddef>
#include <span>

namespace switchyard::transport {

/// @brief What a completed receive reports: who sent it, with which tag, how many elements.
struct message_status {
  int source = -1;
  int tag = -1;
  std::size_t count = 0;
};

/// @brief Tag value a receive may name to accept messages that carry any tag.
inline constexpr int any_tag = -1;

/// @brief Source value `irecv` may name to accept a message from any rank.
inline constexpr int any_source = -1;

/// @brief A pending non-blocking operation: `wait()` blocks until it completes (or throws),
/// `test()` says whether it has. Destroying one that has not completed cancels it or waits.
/// Requests are movable and default-constructible (an empty request is complete), so algorithms
/// can keep several in flight.
template <class R>
concept request = std::default_initializable<R> && std::movable<R> && requires(R& r) {
  r.wait();
  { r.test() } -> std::convertible_to<bool>;
};

/// @brief A Transport: a rank's handle on a group of ranks (in-process threads, an MPI
/// communicator, or a user's network layer).
///
/// Required expressions, for `T& t`, `const T& ct`, spans `std::span<E> out` and
/// `std::span<const E> in` of every arithmetic `E`, and `int peer, tag, color, key`:
/// @code
/// int r = ct.rank();                 // 0 <= r < ct.size()
/// int n = ct.size();
/// t.send(in, peer, tag);             // blocking; may wait until the peer receives
/// t.recv(out, peer, tag);            // blocking; the message must have exactly out.size() elements
/// auto s = t.isend(in, peer, tag);   // non-blocking, s.wait(); `in` must outlive s
/// auto r = t.irecv(out, peer, tag);  // non-blocking, r.wait(); `out` must outlive r
/// message_status st = t.recv_any(out, tag);   // from any source; st.count <= out.size()
/// t.barrier();
/// T sub = t.split(color, key);       // collective: ranks with the same color form a group,
///                                    // ordered by (key, rank)
/// @endcode
/// Messages between one pair of ranks with one tag arrive in the order they were sent.
/// A transport may also provide native collectives (`native_allreduce`, `native_broadcast`,
/// `native_allgather`, `native_reduce_scatter`); see switchyard/collective/native.hpp.
template <class T>
concept transport = std::copy_constructible<T> &&
    requires(T& t, const T& ct, std::span<float> out, std::span<const float> in, int peer, int tag) {
      { ct.rank() } -> std::convertible_to<int>;
      { ct.size() } -> std::convertible_to<int>;
      t.send(in, peer, tag);
      t.recv(out, peer, tag);
      { t.isend(in, peer, tag) } -> request;
      { t.irecv(out, peer, tag) } -> request;
      { t.recv_any(out, tag) } -> std::same_as<message_status>;
      t.barrier();
      { t.split(peer, tag) } -> std::same_as<T>;
    };

}  // namespace switchyard::transport
