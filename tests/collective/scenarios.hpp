// Multi-rank scenarios for the collectives, written once over any Transport and run both
// in-process (at world sizes 1, 2, 3, 4, 7) and under mpiexec. Each returns the failures it saw
// as text, so the caller (a thread or an MPI process) reports them with doctest.
#pragma once

#include <switchyard/collective/algorithm.hpp>
#include <switchyard/collective/allgather.hpp>
#include <switchyard/collective/allreduce.hpp>
#include <switchyard/collective/barrier.hpp>
#include <switchyard/collective/broadcast.hpp>
#include <switchyard/collective/compressed.hpp>
#include <switchyard/collective/detail/ring.hpp>
#include <switchyard/collective/native.hpp>
#include <switchyard/core/partition.hpp>
#include <switchyard/collective/reduce_scatter.hpp>
#include <switchyard/core/compression.hpp>
#include <switchyard/core/error.hpp>
#include <switchyard/core/operations.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace scenarios {

namespace sy = switchyard;

// Element counts: empty, one, fewer than most world sizes, not divisible, large and odd. Large is
// large enough that every rank's part of a ring holds more than one segment at every world size
// swept (up to 7 ranks), and no larger: under the sanitizers the time goes with the bytes.
inline constexpr std::size_t large = (std::size_t{1} << 18) + 3;
static_assert(large * sizeof(std::int32_t) / 7 > sy::collective::detail::ring_segment_bytes);
inline const std::vector<std::size_t> counts = {0, 1, 5, 1000, large};

// Small integers (halves for floating point): every sum is exact in any order, so every
// algorithm must match the sequential reference exactly.
template <class T>
T exact_value(int rank, std::size_t i) {
  const int v = static_cast<int>((static_cast<std::size_t>(rank) * 37 + i * 11) % 19) - 9;
  if constexpr (std::is_floating_point_v<T>) return static_cast<T>(v) / T(2);
  return static_cast<T>(v);
}

template <class T, class Op>
T reference(int ranks, std::size_t i, Op op) {
  T acc = exact_value<T>(0, i);
  for (int r = 1; r < ranks; ++r) acc = op(acc, exact_value<T>(r, i));
  if constexpr (sy::finalized_reduction<Op, T>) acc = Op::finalize(acc, ranks);
  return acc;
}

template <class A>
std::string algorithm_name() {
  if constexpr (std::is_same_v<A, sy::algorithm::ring>) return "ring";
  if constexpr (std::is_same_v<A, sy::algorithm::recursive_doubling>) return "recursive_doubling";
  if constexpr (std::is_same_v<A, sy::algorithm::halving_doubling>) return "halving_doubling";
  if constexpr (std::is_same_v<A, sy::algorithm::hierarchical>) return "hierarchical";
  if constexpr (std::is_same_v<A, sy::algorithm::native>) return "native";
  if constexpr (std::is_same_v<A, sy::algorithm::binomial_tree>) return "binomial_tree";
  if constexpr (std::is_same_v<A, sy::algorithm::scatter_allgather>) return "scatter_allgather";
  if constexpr (std::is_same_v<A, sy::algorithm::automatic>) return "automatic";
}

template <class T>
std::string type_name() {
  if constexpr (std::is_same_v<T, float>) return "float";
  if constexpr (std::is_same_v<T, double>) return "double";
  if constexpr (std::is_same_v<T, std::int32_t>) return "int32";
}

template <class Op>
std::string op_name() {
  if constexpr (std::is_same_v<Op, sy::ops::sum>) return "sum";
  if constexpr (std::is_same_v<Op, sy::ops::min>) return "min";
  if constexpr (std::is_same_v<Op, sy::ops::max>) return "max";
  if constexpr (std::is_same_v<Op, sy::ops::average>) return "average";
}

template <class T>
std::string first_mismatch(const std::vector<T>& got, auto expected_at, const std::string& what) {
  for (std::size_t i = 0; i < got.size(); ++i) {
    const T expected = expected_at(i);
    if (!(got[i] == expected)) {
      return what + ": element " + std::to_string(i) + " is " + std::to_string(got[i]) + ", expected " +
             std::to_string(expected);
    }
  }
  return {};
}

// Runs `call`, which every rank makes with the same bad argument, and records a failure unless it
// raises a usage_error that says `expected`. The suites go on with good calls after it: a refused
// call must leave nothing behind on the transport.
template <class Call>
void expect_refused(Call call, const std::string& expected, const std::string& what,
                    std::vector<std::string>& failures) {
  try {
    call();
    failures.push_back(what + ": not refused");
  } catch (const sy::usage_error& e) {
    if (std::string_view(e.what()).find(expected) == std::string_view::npos) {
      failures.push_back(what + ": refused with \"" + e.what() + "\", which does not say \"" + expected + "\"");
    }
  }
}

template <class T, class Algorithm, class Op, class Transport>
void allreduce_case(Transport& t, std::size_t count, std::vector<std::string>& failures) {
  std::vector<T> data(count);
  for (std::size_t i = 0; i < count; ++i) data[i] = exact_value<T>(t.rank(), i);
  sy::collective::allreduce(t, data, Op{}, Algorithm{});
  const std::string what = "allreduce " + algorithm_name<Algorithm>() + " " + type_name<T>() + " " + op_name<Op>() +
                           " count " + std::to_string(count) + " ranks " + std::to_string(t.size()) + " rank " +
                           std::to_string(t.rank());
  if (auto failure = first_mismatch(data, [&](std::size_t i) { return reference<T>(t.size(), i, Op{}); }, what);
      !failure.empty()) {
    failures.push_back(failure);
  }
}

template <class T, class Algorithm, class Transport>
void allreduce_all_ops(Transport& t, std::vector<std::string>& failures) {
  for (std::size_t count : counts) {
    allreduce_case<T, Algorithm, sy::ops::sum>(t, count, failures);
    if (count == large) continue;  // one operation suffices for the large buffer
    allreduce_case<T, Algorithm, sy::ops::average>(t, count, failures);
    allreduce_case<T, Algorithm, sy::ops::min>(t, count, failures);
    allreduce_case<T, Algorithm, sy::ops::max>(t, count, failures);
  }
}

/// Every algorithm, type, operation and count against the sequential reference.
template <class Transport>
std::vector<std::string> allreduce_suite(Transport& t) {
  std::vector<std::string> failures;
  auto per_type = [&]<class T>() {
    allreduce_all_ops<T, sy::algorithm::ring>(t, failures);
    allreduce_all_ops<T, sy::algorithm::recursive_doubling>(t, failures);
    allreduce_all_ops<T, sy::algorithm::halving_doubling>(t, failures);
    allreduce_all_ops<T, sy::algorithm::hierarchical>(t, failures);
    if constexpr (sy::collective::has_native_allreduce<Transport, T, sy::ops::sum>) {
      allreduce_all_ops<T, sy::algorithm::native>(t, failures);
    }
    allreduce_all_ops<T, sy::algorithm::automatic>(t, failures);
  };
  per_type.template operator()<float>();
  per_type.template operator()<double>();
  per_type.template operator()<std::int32_t>();
  return failures;
}

// Values with full mantissas, different per rank: sums round, so only a careful algorithm keeps
// every replica's bits identical.
template <class T>
T rounding_value(int rank, std::size_t i) {
  std::uint64_t x = (static_cast<std::uint64_t>(rank) + 1) * 0x9E3779B97F4A7C15ull ^ (i * 0xBF58476D1CE4E5B9ull);
  x ^= x >> 31;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 29;
  return static_cast<T>(static_cast<double>(x >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

template <class T>
std::uint64_t bit_hash(const std::vector<T>& values) {
  std::uint64_t h = 1469598103934665603ull;
  for (const T& v : values) {
    unsigned char bytes[sizeof(T)];
    std::memcpy(bytes, &v, sizeof(T));
    for (unsigned char b : bytes) h = (h ^ b) * 1099511628211ull;
  }
  return h;
}

template <class T, class Algorithm, class Op, class Transport>
void identical_bits_case(Transport& t, std::size_t count, std::vector<std::string>& failures) {
  std::vector<T> data(count);
  for (std::size_t i = 0; i < count; ++i) data[i] = rounding_value<T>(t.rank(), i);
  sy::collective::allreduce(t, data, Op{}, Algorithm{});
  std::vector<std::uint64_t> mine{bit_hash(data)};
  std::vector<std::uint64_t> all(static_cast<std::size_t>(t.size()));
  sy::collective::allgather(t, mine, all);
  const std::string what = "identical bits " + algorithm_name<Algorithm>() + " " + type_name<T>() + " " +
                           op_name<Op>() + " count " + std::to_string(count) + " ranks " + std::to_string(t.size());
  for (std::size_t r = 0; r < all.size(); ++r) {
    if (all[r] != all[0]) failures.push_back(what + ": rank " + std::to_string(r) + " differs from rank 0");
  }
  for (std::size_t i = 0; i < count; ++i) {
    double expected = 0;
    for (int r = 0; r < t.size(); ++r) expected += static_cast<double>(rounding_value<T>(r, i));
    if constexpr (std::is_same_v<Op, sy::ops::average>) expected /= t.size();
    const double tolerance = (std::is_same_v<T, float> ? 1e-5 : 1e-13) * t.size();
    if (std::abs(static_cast<double>(data[i]) - expected) > tolerance) {
      failures.push_back(what + ": element " + std::to_string(i) + " is off the reference");
      break;
    }
  }
}

/// Replicas must hold the same bits after a rounding all-reduce, for every algorithm.
template <class Transport>
std::vector<std::string> identical_bits_suite(Transport& t) {
  std::vector<std::string> failures;
  auto per_type = [&]<class T>() {
    for (std::size_t count : {std::size_t{7}, std::size_t{100003}}) {
      identical_bits_case<T, sy::algorithm::ring, sy::ops::sum>(t, count, failures);
      identical_bits_case<T, sy::algorithm::recursive_doubling, sy::ops::sum>(t, count, failures);
      identical_bits_case<T, sy::algorithm::halving_doubling, sy::ops::sum>(t, count, failures);
      identical_bits_case<T, sy::algorithm::hierarchical, sy::ops::sum>(t, count, failures);
      if constexpr (sy::collective::has_native_allreduce<Transport, T, sy::ops::sum>) {
        identical_bits_case<T, sy::algorithm::native, sy::ops::sum>(t, count, failures);
      }
      identical_bits_case<T, sy::algorithm::automatic, sy::ops::average>(t, count, failures);
    }
  };
  per_type.template operator()<float>();
  per_type.template operator()<double>();
  return failures;
}

/// The hierarchical all-reduce on the transport's topology (the in-process tests group ranks into
/// nodes of every shape): sums and averages against the sequential reference, on counts that are
/// empty, smaller than the slice count, odd, not divisible, one past a ring segment and large, and
/// replicas identical to the last bit when sums round.
template <class Transport>
std::vector<std::string> hierarchical_suite(Transport& t) {
  using hierarchical = sy::algorithm::hierarchical;
  std::vector<std::string> failures;
  auto per_type = [&]<class T>() {
    const std::size_t past_segment = sy::collective::detail::ring_segment_bytes / sizeof(T) + 1;
    for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{5}, std::size_t{1000}, std::size_t{1001},
                              past_segment, large}) {
      allreduce_case<T, hierarchical, sy::ops::sum>(t, count, failures);
      if (count != large) allreduce_case<T, hierarchical, sy::ops::average>(t, count, failures);
    }
    for (std::size_t count : {std::size_t{7}, std::size_t{100003}}) {
      identical_bits_case<T, hierarchical, sy::ops::sum>(t, count, failures);
      identical_bits_case<T, hierarchical, sy::ops::average>(t, count, failures);
    }
  };
  per_type.template operator()<float>();
  per_type.template operator()<double>();
  return failures;
}

template <class T, class Algorithm, class Transport>
void broadcast_case(Transport& t, std::size_t count, int root, std::vector<std::string>& failures) {
  std::vector<T> data(count);
  for (std::size_t i = 0; i < count; ++i) data[i] = exact_value<T>(t.rank(), i);
  sy::collective::broadcast(t, data, root, Algorithm{});
  const std::string what = "broadcast " + algorithm_name<Algorithm>() + " " + type_name<T>() + " count " +
                           std::to_string(count) + " root " + std::to_string(root) + " rank " + std::to_string(t.rank());
  if (auto f = first_mismatch(data, [&](std::size_t i) { return exact_value<T>(root, i); }, what); !f.empty()) {
    failures.push_back(f);
  }
}

// A root outside the group, the same on every rank, is refused on every rank (with the checks of
// collective/checked.hpp off too), and the buffer is left as it was.
template <class Algorithm, class Transport>
void broadcast_refusals(Transport& t, std::vector<std::string>& failures) {
  const std::string rank = std::to_string(t.rank());
  for (const int root : {-1, t.size()}) {
    const std::string what = "broadcast " + algorithm_name<Algorithm>() + " root " + std::to_string(root) + " rank " + rank;
    std::vector<float> data(5, 1.5F);
    expect_refused([&] { sy::collective::broadcast(t, data, root, Algorithm{}); },
                   "broadcast on rank " + rank + ": root " + std::to_string(root) + " is outside the group of " +
                       std::to_string(t.size()) + " ranks",
                   what, failures);
    if (data != std::vector<float>(5, 1.5F)) failures.push_back(what + ": the refused call changed the buffer");
  }
}

/// A root outside the group, then every root, algorithm, type and count.
template <class Transport>
std::vector<std::string> broadcast_suite(Transport& t) {
  std::vector<std::string> failures;
  broadcast_refusals<sy::algorithm::binomial_tree>(t, failures);
  broadcast_refusals<sy::algorithm::scatter_allgather>(t, failures);
  if constexpr (sy::collective::has_native_broadcast<Transport, float>) {
    broadcast_refusals<sy::algorithm::native>(t, failures);
  }
  broadcast_refusals<sy::algorithm::automatic>(t, failures);
  auto per_type = [&]<class T>() {
    for (std::size_t count : counts) {
      for (int root = 0; root < t.size(); ++root) {
        if (count == large && root != t.size() - 1) continue;
        broadcast_case<T, sy::algorithm::binomial_tree>(t, count, root, failures);
        broadcast_case<T, sy::algorithm::scatter_allgather>(t, count, root, failures);
        if constexpr (sy::collective::has_native_broadcast<Transport, T>) {
          broadcast_case<T, sy::algorithm::native>(t, count, root, failures);
        }
        broadcast_case<T, sy::algorithm::automatic>(t, count, root, failures);
      }
    }
  };
  per_type.template operator()<float>();
  per_type.template operator()<double>();
  per_type.template operator()<std::int32_t>();
  return failures;
}

template <class T, class Algorithm, class Transport>
void allgather_case(Transport& t, std::size_t count, std::vector<std::string>& failures) {
  std::vector<T> mine(count);
  for (std::size_t i = 0; i < count; ++i) mine[i] = exact_value<T>(t.rank(), i);
  std::vector<T> all(count * static_cast<std::size_t>(t.size()), T(99));
  sy::collective::allgather(t, mine, all, Algorithm{});
  const std::string what = "allgather " + algorithm_name<Algorithm>() + " " + type_name<T>() + " count " +
                           std::to_string(count) + " ranks " + std::to_string(t.size());
  if (auto f = first_mismatch(all, [&](std::size_t i) { return exact_value<T>(static_cast<int>(i / count), i % count); },
                              what);
      !f.empty()) {
    failures.push_back(f);
  }
}

// Blocks of different sizes, some empty, gathered in place: rank r's block holds `sizes(r)`
// elements (none on every third rank from the second on; `scale` elements more on the others).
template <class T, class Algorithm, class Transport>
void allgather_blocks_case(Transport& t, std::size_t scale, std::vector<std::string>& failures) {
  const auto n = static_cast<std::size_t>(t.size());
  auto size_of = [scale](std::size_t r) { return r % 3 == 1 ? std::size_t{0} : scale + (r * 7) % 5; };
  std::vector<sy::block> blocks;
  std::size_t total = 0;
  for (std::size_t r = 0; r < n; ++r) {
    blocks.push_back({total, size_of(r)});
    total += size_of(r);
  }
  std::vector<T> data(total, T(99));
  const sy::block mine = blocks[static_cast<std::size_t>(t.rank())];
  for (std::size_t i = 0; i < mine.size; ++i) data[mine.offset + i] = exact_value<T>(t.rank(), i);
  sy::collective::allgather_blocks(t, data, [&](std::size_t r) { return blocks[r]; }, Algorithm{});
  const std::string what = "allgather_blocks " + algorithm_name<Algorithm>() + " " + type_name<T>() + " scale " +
                           std::to_string(scale) + " ranks " + std::to_string(n) + " rank " + std::to_string(t.rank());
  for (std::size_t r = 0; r < n; ++r) {
    for (std::size_t i = 0; i < blocks[r].size; ++i) {
      if (!(data[blocks[r].offset + i] == exact_value<T>(static_cast<int>(r), i))) {
        failures.push_back(what + ": block " + std::to_string(r) + " element " + std::to_string(i) + " differs");
        return;
      }
    }
  }
}

// Blocks that leave a gap or overlap are refused on every rank, with the block and its offsets.
template <class Transport>
void allgather_blocks_refusals(Transport& t, std::vector<std::string>& failures) {
  const std::string rank = std::to_string(t.rank());
  std::vector<double> data(4 * static_cast<std::size_t>(t.size()), -1.0);
  const std::vector<double> before = data;
  // Block 0 starts at 1: a gap before it.
  const auto gap = [](std::size_t r) { return sy::block{1 + 4 * r, 4}; };
  expect_refused([&] { sy::collective::allgather_blocks(t, data, gap); },
                 "allgather_blocks on rank " + rank + ": block 0 is [1, 5)", "allgather_blocks gap rank " + rank,
                 failures);
  // The blocks stop one element short of the end.
  const auto last = static_cast<std::size_t>(t.size()) - 1;
  const auto short_of_end = [last](std::size_t r) { return sy::block{4 * r, r == last ? 3 : std::size_t{4}}; };
  expect_refused([&] { sy::collective::allgather_blocks(t, data, short_of_end); },
                 "the blocks end at " + std::to_string(data.size() - 1) + " of " + std::to_string(data.size()),
                 "allgather_blocks short rank " + rank, failures);
  if (data != before) failures.push_back("allgather_blocks rank " + rank + ": a refused call changed the buffer");
}

// An output one element short or long, the same on every rank, is refused on every rank (with the
// checks of collective/checked.hpp off too), and the output is left as it was.
template <class Algorithm, class Transport>
void allgather_refusals(Transport& t, std::vector<std::string>& failures) {
  const std::string rank = std::to_string(t.rank());
  const std::size_t needed = 3 * static_cast<std::size_t>(t.size());
  const std::vector<double> mine(3, 2.5);
  for (const std::size_t size : {needed - 1, needed + 1}) {
    const std::string what = "allgather " + algorithm_name<Algorithm>() + " output " + std::to_string(size) + " rank " + rank;
    std::vector<double> all(size, -1.0);
    expect_refused([&] { sy::collective::allgather(t, mine, all, Algorithm{}); },
                   "allgather on rank " + rank + ": 3 elements per rank over " + std::to_string(t.size()) +
                       " ranks need an output of " + std::to_string(needed) + " elements, got " + std::to_string(size),
                   what, failures);
    if (all != std::vector<double>(size, -1.0)) failures.push_back(what + ": the refused call changed the output");
  }
}

/// An output of the wrong size, then every algorithm, type and count.
template <class Transport>
std::vector<std::string> allgather_suite(Transport& t) {
  std::vector<std::string> failures;
  allgather_refusals<sy::algorithm::ring>(t, failures);
  allgather_refusals<sy::algorithm::recursive_doubling>(t, failures);
  if constexpr (sy::collective::has_native_allgather<Transport, double>) {
    allgather_refusals<sy::algorithm::native>(t, failures);
  }
  allgather_refusals<sy::algorithm::automatic>(t, failures);
  allgather_blocks_refusals(t, failures);
  for (std::size_t scale : {std::size_t{0}, std::size_t{1}, std::size_t{1000}}) {
    allgather_blocks_case<float, sy::algorithm::ring>(t, scale, failures);
    allgather_blocks_case<float, sy::algorithm::recursive_doubling>(t, scale, failures);
    allgather_blocks_case<double, sy::algorithm::automatic>(t, scale, failures);
  }
  auto per_type = [&]<class T>() {
    for (std::size_t count : counts) {
      if (count == large) count = 100003;  // the output is ranks x count
      allgather_case<T, sy::algorithm::ring>(t, count, failures);
      allgather_case<T, sy::algorithm::recursive_doubling>(t, count, failures);
      if constexpr (sy::collective::has_native_allgather<Transport, T>) {
        allgather_case<T, sy::algorithm::native>(t, count, failures);
      }
      allgather_case<T, sy::algorithm::automatic>(t, count, failures);
    }
  };
  per_type.template operator()<float>();
  per_type.template operator()<double>();
  per_type.template operator()<std::int32_t>();
  return failures;
}

template <class T, class Algorithm, class Op, class Transport>
void reduce_scatter_case(Transport& t, std::size_t count, std::vector<std::string>& failures) {
  std::vector<T> data(count);
  for (std::size_t i = 0; i < count; ++i) data[i] = exact_value<T>(t.rank(), i);
  const std::span<T> block = sy::collective::reduce_scatter(t, data, Op{}, Algorithm{});
  const sy::block expected =
      sy::block_of(count, static_cast<std::size_t>(t.size()), static_cast<std::size_t>(t.rank()));
  const std::string what = "reduce_scatter " + algorithm_name<Algorithm>() + " " + type_name<T>() + " " +
                           op_name<Op>() + " count " + std::to_string(count) + " ranks " + std::to_string(t.size()) +
                           " rank " + std::to_string(t.rank());
  if (block.size() != expected.size || (count > 0 && block.data() != data.data() + expected.offset)) {
    failures.push_back(what + ": returned the wrong block");
    return;
  }
  std::vector<T> got(block.begin(), block.end());
  if (auto f = first_mismatch(got, [&](std::size_t i) { return reference<T>(t.size(), expected.offset + i, Op{}); },
                              what);
      !f.empty()) {
    failures.push_back(f);
  }
}

template <class Transport>
std::vector<std::string> reduce_scatter_suite(Transport& t) {
  std::vector<std::string> failures;
  auto per_type = [&]<class T>() {
    for (std::size_t count : counts) {
      reduce_scatter_case<T, sy::algorithm::ring, sy::ops::sum>(t, count, failures);
      if constexpr (sy::collective::has_native_reduce_scatter<Transport, T, sy::ops::sum>) {
        reduce_scatter_case<T, sy::algorithm::native, sy::ops::sum>(t, count, failures);
      }
      reduce_scatter_case<T, sy::algorithm::automatic, sy::ops::average>(t, count, failures);
      reduce_scatter_case<T, sy::algorithm::ring, sy::ops::max>(t, count, failures);
    }
  };
  per_type.template operator()<float>();
  per_type.template operator()<double>();
  per_type.template operator()<std::int32_t>();
  return failures;
}

/// No rank leaves a barrier before the last one arrived: ranks arrive staggered, and every
/// departure time must follow every arrival time (one machine, one monotonic clock).
template <class Transport>
std::vector<std::string> barrier_suite(Transport& t) {
  std::vector<std::string> failures;
  auto now = [] {
    return static_cast<std::int64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  };
  for (int round = 0; round < 5; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(((t.rank() + round) % t.size()) * 3));
    std::vector<std::int64_t> times{now(), 0};
    sy::collective::barrier(t);
    times[1] = now();
    std::vector<std::int64_t> all(2 * static_cast<std::size_t>(t.size()));
    sy::collective::allgather(t, times, all);
    std::int64_t last_arrival = all[0];
    for (int r = 0; r < t.size(); ++r) last_arrival = std::max(last_arrival, all[2 * static_cast<std::size_t>(r)]);
    for (int r = 0; r < t.size(); ++r) {
      if (all[2 * static_cast<std::size_t>(r) + 1] < last_arrival) {
        failures.push_back("barrier round " + std::to_string(round) + ": rank " + std::to_string(r) +
                           " left before the last rank arrived");
      }
    }
  }
  return failures;
}

template <class Codec, class Algorithm, class Op, class Transport>
void compressed_case(Transport& t, std::size_t count, std::vector<std::string>& failures) {
  std::vector<float> data(count);
  for (std::size_t i = 0; i < count; ++i) data[i] = rounding_value<float>(t.rank(), i);
  std::vector<typename Codec::word> words;
  sy::collective::compressed_allreduce<Codec>(t, std::span<float>(data), words, Op{}, Algorithm{});
  const std::string what = std::string(Codec::name) + " allreduce " + algorithm_name<Algorithm>() + " " + op_name<Op>() +
                           " count " + std::to_string(count) + " ranks " + std::to_string(t.size());
  std::vector<std::uint64_t> mine{bit_hash(data)};
  std::vector<std::uint64_t> all(static_cast<std::size_t>(t.size()));
  sy::collective::allgather(t, mine, all);
  for (std::size_t r = 0; r < all.size(); ++r) {
    if (all[r] != all[0]) failures.push_back(what + ": rank " + std::to_string(r) + " differs from rank 0");
  }
  // Each rank's value is rounded once and each of the n - 1 partial sums once more: the error is
  // at most n roundings of the largest partial sum, itself at most the sum of the magnitudes.
  const double n = t.size();
  const double u = Codec::unit_roundoff;
  for (std::size_t i = 0; i < count; ++i) {
    double exact = 0;
    double magnitude = 0;
    for (int r = 0; r < t.size(); ++r) {
      exact += static_cast<double>(rounding_value<float>(r, i));
      magnitude += std::abs(static_cast<double>(rounding_value<float>(r, i)));
    }
    double bound = n * u * (magnitude + Codec::min_normal) * (1 + n * u);
    if constexpr (std::is_same_v<Op, sy::ops::average>) {
      exact /= n;
      bound /= n;
    }
    if (!(std::abs(static_cast<double>(data[i]) - exact) <= bound)) {
      failures.push_back(what + ": element " + std::to_string(i) + " is " + std::to_string(data[i]) + ", exact " +
                         std::to_string(exact) + ", beyond the bound " + std::to_string(bound));
      break;
    }
  }
  // The words are scratch for the next call: the same size allocates nothing.
  const auto* kept = words.data();
  sy::collective::compressed_allreduce<Codec>(t, std::span<float>(data), words, Op{}, Algorithm{});
  if (words.data() != kept) failures.push_back(what + ": a second call of the same size reallocated its words");
}

/// fp16 and bf16 words on the wire: identical replicas within the codec's bound, for every
/// algorithm, an even and an odd count, sums and averages; the run-time format `none` is the
/// plain all-reduce.
template <class Transport>
std::vector<std::string> compressed_suite(Transport& t) {
  std::vector<std::string> failures;
  auto per_codec = [&]<class Codec>() {
    for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{1000}, std::size_t{100003}}) {
      compressed_case<Codec, sy::algorithm::ring, sy::ops::sum>(t, count, failures);
      compressed_case<Codec, sy::algorithm::recursive_doubling, sy::ops::sum>(t, count, failures);
      compressed_case<Codec, sy::algorithm::automatic, sy::ops::average>(t, count, failures);
    }
  };
  per_codec.template operator()<sy::compression::fp16>();
  per_codec.template operator()<sy::compression::bf16>();
  std::vector<float> plain(1001);
  for (std::size_t i = 0; i < plain.size(); ++i) plain[i] = rounding_value<float>(t.rank(), i);
  std::vector<float> through_none = plain;
  std::vector<std::uint16_t> words;
  sy::collective::allreduce(t, plain, sy::ops::average{});
  sy::collective::compressed_allreduce(sy::compression::format::none, t, std::span<float>(through_none), words,
                                       sy::ops::average{});
  if (bit_hash(plain) != bit_hash(through_none)) failures.push_back("format none differs from the plain all-reduce");
  if (!words.empty()) failures.push_back("format none used the words");
  return failures;
}

}  // namespace scenarios
