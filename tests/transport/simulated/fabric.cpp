// transport/simulated/fabric.hpp: a receive accepts its group, source and tag (or any of the
// user's tags, never the transport's own), a matched message fills it or says why it cannot, the
// message pool hands back the buffers it took, and operations are put into words only on demand.
#include <switchyard/transport/simulated/fabric.hpp>

#include <doctest/doctest.h>

#include <cstddef>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace sy = switchyard;
namespace d = sy::transport::detail;

namespace {

d::sim_message message_of(std::vector<float> values, int source, int tag) {
  d::sim_message m;
  m.source = source;
  m.tag = tag;
  m.element_size = sizeof(float);
  m.element_type = &d::element_type_tag<float>;
  m.bytes = m.capacity = values.size() * sizeof(float);
  m.payload = std::make_unique_for_overwrite<std::byte[]>(m.capacity);
  if (!values.empty()) std::memcpy(m.data(), values.data(), m.bytes);
  return m;
}

}  // namespace

TEST_CASE("simulated.fabric.accepts: group, source and tag, or any; never the transport's own tags") {
  const d::sim_message m = message_of({1.0F}, 2, 7);
  d::sim_receive r;
  r.source = 2;
  r.tag = 7;
  CHECK(d::accepts(r, m));
  r.source = sy::transport::any_source;
  r.tag = sy::transport::any_tag;
  CHECK(d::accepts(r, m));
  r.group = 1;
  CHECK_FALSE(d::accepts(r, m));
  r.group = 0;
  CHECK_FALSE(d::accepts(r, message_of({}, 2, d::barrier_tag)));
  r.tag = 8;
  CHECK_FALSE(d::accepts(r, m));
}

TEST_CASE("simulated.fabric.complete: copies a fitting message, names sizes and types that do not fit") {
  std::vector<float> into(2);
  d::sim_receive r;
  r.data = reinterpret_cast<std::byte*>(into.data());
  r.bytes = into.size() * sizeof(float);
  r.element_size = sizeof(float);
  r.element_type = &d::element_type_tag<float>;
  d::complete(r, message_of({1.5F, 2.5F}, 3, 4), 0);
  CHECK(r.done);
  CHECK(r.failure.empty());
  CHECK(into == std::vector<float>{1.5F, 2.5F});
  CHECK(r.status.source == 3);
  CHECK(r.status.count == 2);

  d::sim_receive exact = r;
  exact.done = false;
  d::complete(exact, message_of({1.0F}, 3, 4), 0);
  CHECK(exact.failure == "message from rank 3 to rank 0 with tag 4 has 1 elements but the receive buffer expects 2");
  d::sim_receive other_type = r;
  other_type.element_type = &d::element_type_tag<int>;
  d::complete(other_type, message_of({1.0F, 2.0F}, 3, 4), 0);
  CHECK(other_type.failure.find("receive expects another type") != std::string::npos);
}

TEST_CASE("simulated.fabric.pool: a released message is taken again for its size class, never for a larger one") {
  d::sim_message_pool pool;
  d::sim_message* small = pool.acquire(100);
  CHECK(small->bytes == 100);
  CHECK(small->capacity == 128);
  d::sim_message* empty = pool.acquire(0);
  CHECK(empty->capacity == 64);
  std::memset(small->data(), 0x5a, small->bytes);
  pool.release(small);
  d::sim_message* again = pool.acquire(120);  // the same class: the same message and buffer
  CHECK(again == small);
  CHECK(again->bytes == 120);
  CHECK(again->data()[99] == std::byte{0x5a});
  d::sim_message* larger = pool.acquire(129);  // the next class: a new one
  CHECK(larger != small);
  CHECK(larger->capacity == 256);
  CHECK(pool.made() == 3);
  // Many in flight at once, then all back: the next round makes none.
  std::set<d::sim_message*> round;
  for (int i = 0; i < 50; ++i) round.insert(pool.acquire(4096));
  CHECK(round.size() == 50);
  for (d::sim_message* m : round) pool.release(m);
  for (int i = 0; i < 50; ++i) CHECK(round.count(pool.acquire(3000)) == 1);
  CHECK(pool.made() == 53);
}

TEST_CASE("simulated.fabric.describe: a request's operation in words, for errors and deadlock reports") {
  using kind = d::sim_operation::kind;
  CHECK(d::describe({kind::send, 10, 2, 7}) == "send of 10 elements to rank 2 with tag 7");
  CHECK(d::describe({kind::receive, 4, 1, 5}) == "receive of 4 elements from rank 1 with tag 5");
  CHECK(d::describe({kind::receive, 3, sy::transport::any_source, sy::transport::any_tag}) ==
        "receive of 3 elements from any rank with tag any");
  CHECK(d::describe({kind::dropped_sends}) == "the sends it dropped before they completed");
  CHECK(d::describe({}) == "nothing the transport knows of");
}
