// transport/simulated/fabric.hpp: a receive accepts its group, source and tag (or any of the
// user's tags, never the transport's own), and a matched message fills it or says why it cannot.
#include <switchyard/transport/simulated/fabric.hpp>

#include <doctest/doctest.h>

#include <cstddef>
#include <cstring>
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
  m.data.resize(values.size() * sizeof(float));
  if (!values.empty()) std::memcpy(m.data.data(), values.data(), m.data.size());
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
