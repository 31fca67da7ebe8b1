// transport/simulated/matching.hpp: a receive takes the earliest message it accepts and a message
// the earliest receive that accepts it, whether they name source and tag or take any; groups and
// the transport's own tags stay apart; a cancelled receive matches nothing. And, in a simulated
// world of several sizes, MPI's order holds end to end: every rank's messages to one peer arrive
// in order under exact, any-source and any-tag receives mixed.
#include <switchyard/transport/simulated.hpp>
#include <switchyard/transport/simulated/matching.hpp>

#include <doctest/doctest.h>

#include "../../common/simulated_quiet.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <tuple>
#include <span>
#include <vector>

namespace sy = switchyard;
namespace d = sy::transport::detail;
using sy::transport::any_source;
using sy::transport::any_tag;
using sy::transport::simulated;

namespace {

using queues = d::sim_matching<d::sim_message, d::sim_receive>;

d::sim_message message(int source, int tag, std::uint64_t group = 1) {
  d::sim_message m;
  m.group = group;
  m.source = source;
  m.tag = tag;
  return m;
}

d::sim_receive receive(int source, int tag, std::uint64_t group = 1) {
  d::sim_receive r;
  r.group = group;
  r.source = source;
  r.tag = tag;
  return r;
}

}  // namespace

TEST_CASE("simulated.matching.messages: a receive takes the earliest message it accepts, exact or any") {
  queues q;
  std::vector<d::sim_message> m;
  for (const auto& [source, tag, group] : {std::tuple{2, 5, 1}, {1, 5, 1}, {2, 6, 1}, {2, 5, 1}, {1, -2, 1}, {1, 5, 9}}) {
    m.push_back(message(source, tag, static_cast<std::uint64_t>(group)));
  }
  for (auto& x : m) q.keep_message(&x);
  CHECK(q.waiting_messages() == 6);
  CHECK(q.take_message(receive(2, 7)) == nullptr);
  CHECK(q.take_message(receive(any_source, any_tag, 9)) == &m[5]);  // its own group only
  CHECK(q.take_message(receive(2, 6)) == &m[2]);
  CHECK(q.take_message(receive(any_source, 5)) == &m[0]);
  CHECK(q.take_message(receive(1, any_tag)) == &m[1]);
  CHECK(q.take_message(receive(1, any_tag)) == nullptr);  // any tag never takes the transport's own
  CHECK(q.take_message(receive(1, -2)) == &m[4]);
  CHECK(q.take_message(receive(any_source, any_tag)) == &m[3]);
  CHECK(q.waiting_messages() == 0);
  CHECK(q.take_message(receive(any_source, any_tag)) == nullptr);
}

TEST_CASE("simulated.matching.receives: a message takes the earliest posted receive that accepts it") {
  queues q;
  std::vector<d::sim_receive> r{receive(3, 4), receive(any_source, 4), receive(3, any_tag), receive(3, 4),
                                receive(any_source, any_tag), receive(3, 4, 9)};
  for (auto& x : r) q.post_receive(&x);
  CHECK(q.posted_receives() == 6);
  const d::sim_message m34 = message(3, 4);
  const d::sim_message m24 = message(2, 4);
  const d::sim_message m38 = message(3, 8);
  const d::sim_message m3own = message(3, -3);
  CHECK(q.take_receive(m34) == &r[0]);
  CHECK(q.take_receive(m34) == &r[1]);  // posted before the second exact one
  CHECK(q.take_receive(m24) == &r[4]);
  CHECK(q.take_receive(m3own) == nullptr);
  CHECK(q.take_receive(m38) == &r[2]);
  CHECK(q.take_receive(m38) == nullptr);
  CHECK(q.take_receive(m34) == &r[3]);
  CHECK(q.take_receive(m34) == nullptr);  // r[5] is another group's
  CHECK(q.take_receive(message(3, 4, 9)) == &r[5]);
  CHECK(q.posted_receives() == 0);
}

TEST_CASE("simulated.matching.cancel: a cancelled receive, exact or any, matches nothing") {
  queues q;
  d::sim_receive exact = receive(1, 2);
  d::sim_receive later = receive(1, 2);
  d::sim_receive any = receive(any_source, 2);
  q.post_receive(&exact);
  q.post_receive(&any);
  q.post_receive(&later);
  q.cancel_receive(&exact);
  q.cancel_receive(&any);
  q.cancel_receive(&any);  // twice: no harm
  CHECK(q.posted_receives() == 1);
  CHECK(q.take_receive(message(1, 2)) == &later);
  CHECK(q.take_receive(message(1, 2)) == nullptr);
}

// Every rank sends `per_peer` messages to every other one, tags alternating 0 and 1, values
// counting up. The receiver takes them through two receives naming the source (any tag) per
// peer, then n - 1 from any source per tag, then any source and tag for the rest: each sender's
// values on each tag must come in order of the receives. `early`: the receives are posted before
// the messages arrive; else the messages wait for them (posted after a barrier).
namespace {

void exchange_in_order(simulated& t, bool early) {
  constexpr int per_peer = 6;
  const int n = t.size();
  struct slot {
    std::vector<int> value = std::vector<int>(1);
    sy::transport::simulated_request request;
  };
  std::vector<slot> slots(static_cast<std::size_t>(per_peer * (n - 1)));
  std::vector<std::vector<int>> values;
  values.reserve(slots.size());
  std::vector<sy::transport::simulated_request> sends;
  const auto post_receives = [&] {
    std::size_t k = 0;
    for (int p = 1; p < n; ++p) {
      for (int j = 0; j < 2; ++j, ++k) slots[k].request = t.irecv(std::span<int>(slots[k].value), (t.rank() + p) % n, any_tag);
    }
    for (int tag = 0; tag < 2; ++tag) {
      for (int p = 1; p < n; ++p, ++k) slots[k].request = t.irecv(std::span<int>(slots[k].value), any_source, tag);
    }
    for (; k < slots.size(); ++k) slots[k].request = t.irecv(std::span<int>(slots[k].value), any_source, any_tag);
  };
  if (early) post_receives();
  for (int i = 0; i < per_peer; ++i) {
    for (int p = 1; p < n; ++p) {
      values.push_back({i});
      sends.push_back(t.isend(std::span<const int>(values.back()), (t.rank() + p) % n, i % 2));
    }
  }
  if (!early) {
    for (auto& s : sends) s.wait();
    t.barrier();
    post_receives();
  }
  std::map<std::pair<int, int>, std::vector<int>> seen;  // (source, tag) -> values, in order of the receives
  for (auto& s : slots) {
    s.request.wait();
    seen[{s.request.status().source, s.request.status().tag}].push_back(s.value[0]);
  }
  for (auto& s : sends) s.wait();
  CHECK(seen.size() == static_cast<std::size_t>(2 * (n - 1)));
  for (const auto& entry : seen) {
    const int source = entry.first.first;
    const int tag = entry.first.second;
    CAPTURE(source);
    CAPTURE(tag);
    std::vector<int> want;
    for (int v = tag; v < per_peer; v += 2) want.push_back(v);
    CHECK(entry.second == want);
  }
}

}  // namespace

TEST_CASE("simulated.matching.order: non-overtaking under exact, any-source and any-tag receives, at every size" *
          doctest::timeout(120)) {
  for (const int n : {1, 2, 3, 4, 7}) {
    for (const bool early : {true, false}) {
      CAPTURE(n);
      CAPTURE(early);
      sy::transport::run_simulated(n, [early](simulated& t) { exchange_in_order(t, early); }, quiet());
    }
  }
}
