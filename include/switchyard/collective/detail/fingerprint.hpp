// Checked collectives: before its data moves, a collective exchanges a fixed-size fingerprint of
// the call (operation, algorithm, counts, element type, reduction, root, sequence number, stage)
// with every rank of the group, and every rank raises the same usage_error when they differ.
#pragma once

#include <switchyard/collective/algorithm.hpp>
#include <switchyard/collective/detail/bruck.hpp>
#include <switchyard/collective/detail/common.hpp>
#include <switchyard/collective/detail/ring.hpp>
#include <switchyard/core/partition.hpp>
#include <switchyard/collective/stage.hpp>
#include <switchyard/core/operations.hpp>
#include <switchyard/core/rank_context.hpp>
#include <switchyard/transport/transport.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <vector>

#if __has_include(<cxxabi.h>)
#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#endif

namespace switchyard::collective::detail {

enum class operation : std::uint64_t { allreduce = 1, broadcast, allgather, reduce_scatter, barrier };

inline std::string_view operation_name(std::uint64_t id) {
  constexpr std::string_view names[] = {"?", "allreduce", "broadcast", "allgather", "reduce_scatter", "barrier"};
  return id < std::size(names) ? names[id] : names[0];
}

template <class Algorithm>
constexpr std::uint64_t algorithm_id() {
  if constexpr (std::is_same_v<Algorithm, algorithm::automatic>) return 1;
  if constexpr (std::is_same_v<Algorithm, algorithm::ring>) return 2;
  if constexpr (std::is_same_v<Algorithm, algorithm::recursive_doubling>) return 3;
  if constexpr (std::is_same_v<Algorithm, algorithm::binomial_tree>) return 4;
  if constexpr (std::is_same_v<Algorithm, algorithm::native>) return 5;
  if constexpr (std::is_same_v<Algorithm, algorithm::hierarchical>) return 6;
  if constexpr (std::is_same_v<Algorithm, algorithm::halving_doubling>) return 7;
  if constexpr (std::is_same_v<Algorithm, algorithm::scatter_allgather>) return 8;
}

// The id that checked collectives compare: what `Algorithm` resolved to on this rank (`native`
// when `automatic` takes the native hook), so that ranks whose automatic choices differ are caught.
template <class Algorithm>
constexpr std::uint64_t resolved_algorithm_id(bool native, std::uint64_t otherwise) {
  if (native) return algorithm_id<algorithm::native>();
  return std::is_same_v<Algorithm, algorithm::automatic> ? otherwise : algorithm_id<Algorithm>();
}

inline std::string_view algorithm_name(std::uint64_t id) {
  constexpr std::string_view names[] = {"none",          "automatic", "ring",        "recursive_doubling",
                                        "binomial_tree", "native",    "hierarchical", "halving_doubling",
                                        "scatter_allgather"};
  return id < std::size(names) ? names[id] : "?";
}

// Element types travel as kind * 256 + size in bytes, so that every process of a job, whatever
// its type_info addresses, names a type the same way.
template <class T>
constexpr std::uint64_t type_id() {
  const std::uint64_t kind = std::is_floating_point_v<T> ? 1 : std::is_signed_v<T> ? 2 : 3;
  return kind * 256 + sizeof(T);
}

inline std::string type_name(std::uint64_t id) {
  const std::uint64_t bytes = id % 256;
  switch (id / 256) {
    case 0: return "none";
    case 1: return bytes == sizeof(float) ? "float" : bytes == sizeof(double) ? "double" : "long double";
    case 2: return str("int", bytes * 8);
    default: return str("uint", bytes * 8);
  }
}

// FNV-1a: a stable hash of a name, equal in every process.
inline std::uint64_t hash_of(std::string_view text) noexcept {
  std::uint64_t h = 14695981039346656037ull;
  for (const char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

// A reduction operation's printable name: the library's by their own names, others demangled.
template <class Op>
std::string op_name() {
  if constexpr (std::is_same_v<Op, ops::sum>) return "sum";
  if constexpr (std::is_same_v<Op, ops::average>) return "average";
  if constexpr (std::is_same_v<Op, ops::min>) return "min";
  if constexpr (std::is_same_v<Op, ops::max>) return "max";
  if constexpr (!std::is_same_v<Op, ops::sum> && !std::is_same_v<Op, ops::average> && !std::is_same_v<Op, ops::min> &&
                !std::is_same_v<Op, ops::max>) {
    const char* mangled = typeid(Op).name();
#if __has_include(<cxxabi.h>)
    int status = 0;
    const std::unique_ptr<char, void (*)(void*)> demangled(abi::__cxa_demangle(mangled, nullptr, nullptr, &status),
                                                           std::free);
    if (status == 0 && demangled) return demangled.get();
#endif
    return mangled;
  }
}

// The fingerprint: fixed-size, so that its exchange can never mismatch. Names travel as their
// hash (compared) and their first bytes (printed).
inline constexpr std::size_t name_words = 4;
struct fingerprint_fields {
  enum : std::size_t { sequence, op_kind, algorithm_kind, count, output, element, reduction, root, stage,
                       reduction_name, stage_name = reduction_name + name_words, size = stage_name + name_words };
};
using fingerprint = std::array<std::uint64_t, fingerprint_fields::size>;

inline void pack_name(fingerprint& f, std::size_t at, std::string_view name) {
  char bytes[name_words * sizeof(std::uint64_t)] = {};
  std::memcpy(bytes, name.data(), std::min(name.size(), sizeof bytes));
  std::memcpy(f.data() + at, bytes, sizeof bytes);
}

inline std::string unpack_name(const std::uint64_t* f, std::size_t at) {
  char bytes[name_words * sizeof(std::uint64_t)];
  std::memcpy(bytes, f + at, sizeof bytes);
  return std::string(bytes, strnlen(bytes, sizeof bytes));
}

// What one collective call is, besides its sequence number and stage.
struct call {
  operation kind;
  std::uint64_t algorithm = 0;
  std::uint64_t count = 0;
  std::uint64_t output = 0;  // allgather's output size
  std::uint64_t element = 0;
  std::uint64_t root = 0;
};

// A reduction's hash and name, computed once per operation type.
struct reduction_identity {
  std::uint64_t hash = 0;
  std::string name;
};

template <class Op>
const reduction_identity& reduction_of() {
  static const reduction_identity identity{hash_of(typeid(Op).name()), op_name<Op>()};
  return identity;
}

// "ranks 0-2, 5" for the ranks whose entry equals `value`.
inline std::string rank_list(const std::vector<std::uint64_t>& values, std::uint64_t value) {
  std::string out;
  int members = 0;
  const int n = static_cast<int>(values.size());
  for (int r = 0; r < n;) {
    if (values[static_cast<std::size_t>(r)] != value) {
      ++r;
      continue;
    }
    int last = r;
    while (last + 1 < n && values[static_cast<std::size_t>(last + 1)] == value) ++last;
    out += str(out.empty() ? "" : ", ", r, last == r ? std::string() : str(last == r + 1 ? ", " : "-", last));
    members += last - r + 1;
    r = last + 1;
  }
  return str(members == 1 ? "rank " : "ranks ", out);
}

// Builds the report every rank raises: each field that differs, its values and who holds them.
inline std::string mismatch_report(const std::vector<std::uint64_t>& all, int rank, int ranks) {
  using F = fingerprint_fields;
  const auto at = [&all](int r) { return all.data() + static_cast<std::size_t>(r) * F::size; };
  struct field {
    std::size_t index;
    const char* label;
  };
  constexpr field fields[] = {{F::sequence, "collective number"}, {F::op_kind, "operation"},
                              {F::algorithm_kind, "algorithm"},   {F::count, "element count"},
                              {F::output, "output size"},         {F::element, "element type"},
                              {F::reduction, "reduction"},        {F::root, "root"},
                              {F::stage, "stage"}};
  const auto show = [&](std::size_t index, int r) -> std::string {
    const std::uint64_t v = at(r)[index];
    switch (index) {
      case F::sequence: return str("#", v);
      case F::op_kind: return std::string(operation_name(v));
      case F::algorithm_kind: return std::string(algorithm_name(v));
      case F::element: return type_name(v);
      case F::reduction: return v == 0 ? std::string("none") : unpack_name(at(r), F::reduction_name);
      case F::stage: return str('"', unpack_name(at(r), F::stage_name), '"');
      case F::root: return std::to_string(static_cast<std::int64_t>(v));
      default: return std::to_string(v);
    }
  };
  constexpr std::size_t shown_values = 8;
  std::string differences;
  std::vector<std::uint64_t> column(static_cast<std::size_t>(ranks));
  for (const field& f : fields) {
    for (int r = 0; r < ranks; ++r) column[static_cast<std::size_t>(r)] = at(r)[f.index];
    std::vector<int> first_holders;  // the lowest rank holding each distinct value
    for (int r = 0; r < ranks; ++r) {
      const auto first = std::find(column.begin(), column.end(), column[static_cast<std::size_t>(r)]);
      if (first - column.begin() == r) first_holders.push_back(r);
    }
    if (first_holders.size() < 2) continue;
    std::string values;
    for (std::size_t i = 0; i < first_holders.size() && i < shown_values; ++i) {
      const int holder = first_holders[i];
      values += str(i == 0 ? "" : " vs ", show(f.index, holder), " (",
                    rank_list(column, column[static_cast<std::size_t>(holder)]), ")");
    }
    if (first_holders.size() > shown_values) values += str(" and ", first_holders.size() - shown_values, " more");
    differences += str(differences.empty() ? "" : "; ", f.label, ": ", values);
  }
  const std::uint64_t* mine = at(rank);
  return str("rank ", rank, ": collective #", mine[F::sequence], " does not match across the ", ranks,
             " ranks of its group: ", differences, " (this rank called ", operation_name(mine[F::op_kind]), " of ",
             mine[F::count], " ", type_name(mine[F::element]), " elements",
             mine[F::reduction] == 0 ? std::string() : str(", reduction ", show(F::reduction, rank)), ", stage ",
             show(F::stage, rank), "; collective checks are on)");
}

// Exchanges this rank's fingerprint with every rank of the group, on the reserved fingerprint
// tag around the ring (every message has the same size, whatever the calls were), and raises
// usage_error on every rank if any field differs. `Op` is the reduction, void for none. Costs one
// predictable branch when checks are off.
template <class Op, class Transport>
void check_call(Transport& t, const call& c) {
  if constexpr (transport::has_collective_checks<Transport>) {
    transport::collective_check_state& state = t.collective_checks();
    if (!state.enabled) [[likely]] {
      return;
    }
    using F = fingerprint_fields;
    const std::uint64_t sequence = state.sequence++;
    const int ranks = t.size();
    if (ranks == 1) return;
    fingerprint mine{};
    mine[F::sequence] = sequence;
    mine[F::op_kind] = static_cast<std::uint64_t>(c.kind);
    mine[F::algorithm_kind] = c.algorithm;
    mine[F::count] = c.count;
    mine[F::output] = c.output;
    mine[F::element] = c.element;
    mine[F::root] = c.root;
    const std::string_view stage = current_stage();
    mine[F::stage] = hash_of(stage);
    pack_name(mine, F::stage_name, stage);
    if constexpr (!std::is_void_v<Op>) {
      const reduction_identity& reduction = reduction_of<Op>();
      mine[F::reduction] = reduction.hash;
      pack_name(mine, F::reduction_name, reduction.name);
    }
    std::vector<std::uint64_t>& all = current_rank_context().fingerprints;
    all.resize(static_cast<std::size_t>(ranks) * F::size);
    const auto of_rank = [](int r) { return switchyard::block{static_cast<std::size_t>(r) * F::size, F::size}; };
    std::copy(mine.begin(), mine.end(), all.begin() + static_cast<std::ptrdiff_t>(of_rank(t.rank()).offset));
    allgather_in_place(
        t, std::span<std::uint64_t>(all), [&](std::size_t b) { return of_rank(static_cast<int>(b)); },
        prefers_bruck(ranks), fingerprint_tag);
    for (int r = 0; r < ranks; ++r) {
      if (!std::equal(mine.begin(), mine.end(), all.begin() + static_cast<std::ptrdiff_t>(of_rank(r).offset))) {
        raise<usage_error>(mismatch_report(all, t.rank(), ranks));
      }
    }
  }
}

}  // namespace switchyard::collective::detail
