// Recursive-doubling all-reduce for any world size: the ranks beyond the largest power of two
// first fold into a partner, the power-of-two group exchanges at doubling distances, and the
// folded ranks get the result back.
#pragma once

#include <switchyard/collective/detail/common.hpp>
#include <switchyard/core/operations.hpp>

#include <algorithm>
#include <bit>
#include <span>

namespace switchyard::collective::detail {

// The largest power of two not above `n` (n >= 1).
constexpr int power_of_two_below(int n) noexcept { return static_cast<int>(std::bit_floor(static_cast<unsigned>(n))); }

// Reduces `data` over every rank with an algorithm that needs a power-of-two group: ranks
// 0 .. 2*extra-1 pair up (2i, 2i+1), the even one hands its buffer to the odd one, which folds it
// in (lower rank first) and joins the group; `body(virtual_rank, power, real_rank)` then runs on
// the `power` ranks of the group, where `real_rank(v)` maps a virtual rank back; the even ranks
// get the result from their partner at the end. Virtual ranks keep the order of the real ones, so
// a body that folds in virtual-rank order folds in rank order.
template <class Transport, class T, class Op, class Body>
void over_power_of_two(Transport& t, std::span<T> data, Op op, Body body) {
  const int n = t.size();
  const int r = t.rank();
  const int power = power_of_two_below(n);
  const int extra = n - power;
  int virtual_rank = r - extra;
  if (r < 2 * extra) {
    if (r % 2 == 0) {
      t.send(std::span<const T>(data), r + 1, allreduce_tag);
      t.recv(data, r + 1, allreduce_tag);
      return;
    }
    std::span<T> incoming = scratch<T>(data.size(), 0);
    t.recv(incoming, r - 1, allreduce_tag);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = op(incoming[i], data[i]);
    virtual_rank = r / 2;
  }
  body(virtual_rank, power, [extra](int v) { return v < extra ? 2 * v + 1 : v + extra; });
  if (r < 2 * extra) t.send(std::span<const T>(data), r - 1, allreduce_tag);
}

// Both partners of an exchange compute op(lower rank's value, higher rank's value), so they hold
// the same bits after every round, even for operations that are not commutative.
template <class Transport, class T, class Op>
void recursive_doubling_allreduce(Transport& t, std::span<T> data, Op op) {
  over_power_of_two(t, data, op, [&](int virtual_rank, int power, auto real_rank) {
    std::span<T> incoming = scratch<T>(data.size(), 0);
    for (int distance = 1; distance < power; distance *= 2) {
      const int partner = virtual_rank ^ distance;
      auto receive = t.irecv(incoming, real_rank(partner), allreduce_tag);
      t.send(std::span<const T>(data), real_rank(partner), allreduce_tag);
      receive.wait();
      const bool mine_is_lower = virtual_rank < partner;
      for (std::size_t i = 0; i < data.size(); ++i) {
        data[i] = mine_is_lower ? op(data[i], incoming[i]) : op(incoming[i], data[i]);
      }
    }
    finalize_all<Op>(data, t.size());
  });
}

}  // namespace switchyard::collective::detail
