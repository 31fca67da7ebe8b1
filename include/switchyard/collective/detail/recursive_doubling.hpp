// Recursive-doubling all-reduce for any world size: the ranks beyond the largest power of two
// first fold into a partner, the power-of-two group exchanges at doubling distances, and the
// folded ranks get the result back.
#pragma once

#include <switchyard/collective/detail/common.hpp>
#include <switchyard/core/operations.hpp>

#include <algorithm>
#include <span>

namespace switchyard::collective::detail {

// Both partners of an exchange compute op(lower rank's value, higher rank's value), so they hold
// the same bits after every round, even for operations that are not commutative.
template <class Transport, class T, class Op>
void recursive_doubling_allreduce(Transport& t, std::span<T> data, Op op) {
  const int n = t.size();
  const int r = t.rank();
  int power = 1;
  while (power * 2 <= n) power *= 2;
  const int extra = n - power;
  std::span<T> incoming = scratch<T>(data.size(), 0);
  auto fold = [&](bool mine_is_lower) {
    for (std::size_t i = 0; i < data.size(); ++i) {
      data[i] = mine_is_lower ? op(data[i], incoming[i]) : op(incoming[i], data[i]);
    }
  };
  auto exchange = [&](int peer) {
    auto receive = t.irecv(incoming, peer, allreduce_tag);
    t.send(std::span<const T>(data), peer, allreduce_tag);
    receive.wait();
  };

  // Ranks 0 .. 2*extra-1 pair up (2i, 2i+1); the even one hands its data over and sits out.
  int virtual_rank = r - extra;
  if (r < 2 * extra) {
    if (r % 2 == 0) {
      t.send(std::span<const T>(data), r + 1, allreduce_tag);
      t.recv(data, r + 1, allreduce_tag);
      return;
    }
    t.recv(incoming, r - 1, allreduce_tag);
    fold(false);
    virtual_rank = r / 2;
  }
  auto real_rank = [extra](int v) { return v < extra ? 2 * v + 1 : v + extra; };
  for (int distance = 1; distance < power; distance *= 2) {
    const int partner = virtual_rank ^ distance;
    exchange(real_rank(partner));
    fold(virtual_rank < partner);
  }
  finalize_all<Op>(data, n);
  if (r < 2 * extra) t.send(std::span<const T>(data), r - 1, allreduce_tag);
}

}  // namespace switchyard::collective::detail
