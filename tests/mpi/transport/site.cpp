// transport/mpi/site.hpp: what a wait is for, in the words of the stall report and of the
// errors of failed MPI calls.
#include <switchyard/transport/mpi/site.hpp>

#include <doctest/doctest.h>

namespace sy = switchyard;
using sy::transport::detail::describe;
using sy::transport::detail::no_peer;
using sy::transport::detail::wait_site;

TEST_CASE("mpi.site.messages: the operation, its element count, the peer and the tag") {
  CHECK(describe({"receive", 1, 7, 4, 3}) == "a receive of 4 elements from rank 1 with tag 7");
  CHECK(describe({"send", 2, 0, 1, 3}) == "a send of 1 elements to rank 2 with tag 0");
  CHECK(describe({"receive", sy::transport::any_source, sy::transport::any_tag, 16, 2}) ==
        "a receive of 16 elements from any rank with tag any");
}

TEST_CASE("mpi.site.collectives: the operation, its element count and the ranks; a barrier has no count") {
  CHECK(describe({"barrier", no_peer, sy::transport::any_tag, 0, 3}) == "a barrier of 3 ranks");
  CHECK(describe({"allreduce", no_peer, sy::transport::any_tag, 4, 2}) == "an allreduce of 4 elements over 2 ranks");
  CHECK(describe({"allgather", no_peer, sy::transport::any_tag, 0, 1}) == "an allgather of 0 elements over 1 ranks");
  CHECK(describe({"broadcast", no_peer, sy::transport::any_tag, 9, 5}) == "a broadcast of 9 elements over 5 ranks");
  CHECK(describe({"reduce_scatter", no_peer, sy::transport::any_tag, 70000, 4}) ==
        "a reduce_scatter of 70000 elements over 4 ranks");
}

TEST_CASE("mpi.site.default: a receive from no one in particular, of nothing yet") {
  const wait_site site;
  CHECK(site.peer == no_peer);
  CHECK(site.tag == sy::transport::any_tag);
  CHECK(site.count == 0);
  CHECK(no_peer != sy::transport::any_source);
}
