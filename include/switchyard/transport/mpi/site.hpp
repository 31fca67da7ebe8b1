// What an MPI wait is for (operation, peer, tag, element count), kept as plain values and put
// into words only when a stall report or an error message needs them.
#pragma once

#include <switchyard/core/error.hpp>
#include <switchyard/transport/transport.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace switchyard::transport::detail {

using switchyard::detail::str;

// What a wait is for, kept as plain values: the report is built only when the watchdog fires.
inline constexpr int no_peer = -2;
struct wait_site {
  const char* operation = "receive";  // "send", "receive", "barrier" or a collective's name
  int peer = no_peer;                 // a rank, any_source, or no_peer for a collective
  int tag = any_tag;
  std::size_t count = 0;
  int ranks = 0;                      // the communicator's size, for collectives
};

// What the operation at `site` is: "a receive of 4 elements from rank 1 with tag 7".
inline std::string describe(const wait_site& site) {
  const std::string_view operation = site.operation;
  const char* article = operation.front() == 'a' ? "an " : "a ";  // allreduce, allgather
  if (site.peer == no_peer) {
    if (operation == "barrier") return str("a barrier of ", site.ranks, " ranks");
    return str(article, operation, " of ", site.count, " elements over ", site.ranks, " ranks");
  }
  return str("a ", operation, " of ", site.count, " elements ", operation == "send" ? "to" : "from", " ",
             site.peer == any_source ? std::string("any rank") : str("rank ", site.peer), " with tag ",
             site.tag == any_tag ? std::string("any") : std::to_string(site.tag));
}

}  // namespace switchyard::transport::detail
