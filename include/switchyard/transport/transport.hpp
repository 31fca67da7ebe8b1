// The Transport role: the small handle through which ranks exchange spans of arithmetic values.
// Collectives, strategies and the trainer are written against this concept only.
#pragma once

#include <switchyard/core/error.hpp>

#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string_view>

namespace switchyard::transport {

/// @brief What a completed receive reports: who sent it, with which tag, how many elements.
struct message_status {
  int source = -1;
  int tag = -1;
  std::size_t count = 0;
};

namespace detail {

// The time `timeout` from now, or the end of the clock when that lies beyond it: a timeout of
// `std::chrono::milliseconds::max()` waits forever instead of overflowing into the past.
inline std::chrono::steady_clock::time_point deadline_after(std::chrono::milliseconds timeout) {
  using clock = std::chrono::steady_clock;
  const clock::time_point now = clock::now();
  const auto room = std::chrono::duration_cast<std::chrono::milliseconds>(clock::time_point::max() - now);
  return timeout >= room ? clock::time_point::max() : now + timeout;
}

}  // namespace detail

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

/// @brief The point-to-point members of a transport for one element type `E`: blocking and
/// non-blocking send and receive of spans of `E`, and a receive from any source.
template <class T, class E>
concept transport_of = requires(T& t, std::span<E> out, std::span<const E> in, int peer, int tag) {
  t.send(in, peer, tag);
  t.recv(out, peer, tag);
  { t.isend(in, peer, tag) } -> request;
  { t.irecv(out, peer, tag) } -> request;
  { t.recv_any(out, tag) } -> std::same_as<message_status>;
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
/// Messages between one pair of ranks with one tag arrive in the order they were sent. The
/// concept checks the point-to-point members (`transport_of`) for every element type the library
/// itself sends: `float` and `double` (parameters, gradients, optimizer state, epoch records),
/// `std::int64_t` and `std::uint64_t` (counters, fingerprints, checked-collective headers) and
/// `std::uint16_t` (fp16 and bf16 words of compressed gradients and parameters).
/// A transport may also provide native collectives (`native_allreduce`, `native_broadcast`,
/// `native_allgather`, `native_reduce_scatter`); see switchyard/collective/native.hpp; and a
/// concurrency hook and a clock (`spawn`, `now`); see switchyard/transport/concurrency.hpp.
template <class T>
concept transport = std::copy_constructible<T> &&
    requires(T& t, const T& ct, int color, int key) {
      { ct.rank() } -> std::convertible_to<int>;
      { ct.size() } -> std::convertible_to<int>;
      t.barrier();
      { t.split(color, key) } -> std::same_as<T>;
    } && transport_of<T, float> && transport_of<T, double> && transport_of<T, std::int64_t> &&
    transport_of<T, std::uint64_t> && transport_of<T, std::uint16_t>;

/// @brief One rank's state of the collective checks on one group: whether every collective first
/// exchanges a fingerprint with the other ranks (docs/collectives.md#checked-collectives), and
/// how many collectives this rank has started on the group.
struct collective_check_state {
  bool enabled = false;
  std::uint64_t sequence = 0;
};

/// @brief The optional hook of a transport whose collectives can be checked:
/// `collective_check_state& t.collective_checks()`, the same state for every copy of a handle and
/// a fresh one for each group made by `split`. `inproc`, `mpi` and `faulty<T>` over either have it.
template <class T>
concept has_collective_checks = requires(T& t) {
  { t.collective_checks() } -> std::same_as<collective_check_state&>;
};

/// @brief Whether the ranks of `T` take turns on one thread, as a simulator's actors do: a
/// transport says so with `static constexpr bool ranks_share_a_thread = true` (`simulated`, and
/// `faulty<T>` over one). A thread a strategy started would run outside their schedule, and a wait
/// on a standard mutex would stop every rank, so such a transport must also have the concurrency
/// hook (transport/concurrency.hpp: `spawn`, `mutex_type`, `condition_variable_type`), through
/// which the library runs a rank's concurrent activities; `transport::spawn` refuses to compile a
/// `std::thread` for it.
template <class T>
concept ranks_share_a_thread = requires {
  requires T::ranks_share_a_thread;
};

/// @brief Whether the environment variable `SWITCHYARD_CHECK_COLLECTIVES` asks for checked
/// collectives: `1` is on; unset, empty or `0` is off; anything else is a `usage_error`. Read
/// once per process; the default of `inproc_options::check_collectives` and
/// `mpi_options::check_collectives`.
inline bool check_collectives_from_environment() {
  static const bool on = [] {
    const char* text = std::getenv("SWITCHYARD_CHECK_COLLECTIVES");
    const std::string_view value = text == nullptr ? std::string_view() : std::string_view(text);
    if (value.empty() || value == "0") return false;
    if (value == "1") return true;
    switchyard::detail::raise<usage_error>(
        switchyard::detail::str("SWITCHYARD_CHECK_COLLECTIVES must be 1 (on) or 0 (off), got '", value, "'"));
  }();
  return on;
}

}  // namespace switchyard::transport
