// transport/inproc/mailbox.hpp: posted operations, their FIFO queues, the per-thread pool that
// recycles them, matching, and the one copy that completes a matched pair.
#include <switchyard/transport/inproc/mailbox.hpp>

#include <doctest/doctest.h>

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace sy = switchyard;
namespace d = sy::transport::detail;

namespace {

// Fills `op` as a posted operation on `data` (element type T) from `source` to `destination`.
template <class T>
void post(d::pending_op& op, std::span<const T> data, int source, int destination, int tag) {
  op.bytes = data.size_bytes();
  op.element_size = sizeof(T);
  op.element_type = &d::type_identity_tag<T>;
  op.source = source;
  op.destination = destination;
  op.tag = tag;
}

void make_send(d::pending_op& op, const std::vector<float>& data, int source, int destination, int tag) {
  post(op, std::span<const float>(data), source, destination, tag);
  op.send_data = reinterpret_cast<const std::byte*>(data.data());
}

template <class T>
void make_receive(d::pending_op& op, std::vector<T>& data, int source, int destination, int tag, bool exact) {
  post(op, std::span<const T>(data), source, destination, tag);
  op.recv_data = reinterpret_cast<std::byte*>(data.data());
  op.exact = exact;
}

}  // namespace

TEST_CASE("inproc.mailbox.queue: first in, first out; take_first takes the oldest match") {
  d::pending_op ops[5];
  d::op_queue queue;
  for (int i = 0; i < 5; ++i) {
    ops[i].tag = i % 2;
    queue.push(&ops[i]);
  }
  CHECK(queue.take_first([](const d::pending_op& op) { return op.tag == 1; }) == &ops[1]);
  CHECK(queue.take_first([](const d::pending_op& op) { return op.tag == 1; }) == &ops[3]);
  CHECK(queue.take_first([](const d::pending_op& op) { return op.tag == 1; }) == nullptr);
  CHECK(queue.remove(&ops[2]));
  CHECK_FALSE(queue.remove(&ops[2]));
  // What is left comes out in the order it went in, and the tail still works after removals.
  queue.push(&ops[1]);
  const auto any = [](const d::pending_op&) { return true; };
  CHECK(queue.take_first(any) == &ops[0]);
  CHECK(queue.take_first(any) == &ops[4]);
  CHECK(queue.take_first(any) == &ops[1]);
  CHECK(queue.take_first(any) == nullptr);
}

TEST_CASE("inproc.mailbox.pool: a released op comes back reset, and the pool is per thread") {
  d::op_pool pool;
  d::pending_op* op = pool.acquire();
  op->state.store(d::op_state::done);
  op->status = {3, 4, 5};
  op->failure = "failed";
  pool.release(op);
  d::pending_op* again = pool.acquire();
  CHECK(again == op);
  CHECK(again->state.load() == d::op_state::posted);
  CHECK(again->status.count == 0);
  CHECK(again->failure.empty());
  CHECK(again->next == nullptr);
  pool.release(again);
  CHECK(&d::thread_op_pool() == &d::thread_op_pool());
}

TEST_CASE("inproc.mailbox.accepts: a receive takes its source and tag, or any") {
  d::pending_op send;
  send.source = 2;
  send.tag = 7;
  d::pending_op recv;
  struct receive {
    int source, tag;
    bool accepted;
  };
  for (const receive r : std::vector<receive>{
           {2, 7, true}, {sy::transport::any_source, 7, true}, {2, sy::transport::any_tag, true},
           {sy::transport::any_source, sy::transport::any_tag, true}, {1, 7, false}, {2, 8, false}}) {
    CAPTURE(r.source);
    CAPTURE(r.tag);
    recv.source = r.source;
    recv.tag = r.tag;
    CHECK(d::accepts(recv, send) == r.accepted);
  }
}

TEST_CASE("inproc.mailbox.transfer: a matched pair is copied once and both complete") {
  d::inproc_fabric fabric(2, {});
  const std::vector<int> world{0, 1};
  const std::vector<float> payload{1.5F, 2.5F, 3.5F};
  d::pending_op send;
  make_send(send, payload, 0, 1, 9);
  std::vector<float> landed(3);
  d::pending_op recv;
  make_receive(recv, landed, 0, 1, 9, true);
  d::transfer(send, recv, world, fabric);
  CHECK(landed == payload);
  CHECK(send.state.load() == d::op_state::done);
  CHECK(recv.state.load() == d::op_state::done);
  CHECK(recv.status.source == 0);
  CHECK(recv.status.tag == 9);
  CHECK(recv.status.count == 3);
}

TEST_CASE("inproc.mailbox.transfer: a receive that is not exact takes a shorter message") {
  d::inproc_fabric fabric(2, {});
  const std::vector<int> world{0, 1};
  const std::vector<float> payload{4.0F, 5.0F};
  d::pending_op send;
  make_send(send, payload, 1, 0, 2);
  std::vector<float> landed(4, -1.0F);
  d::pending_op recv;
  make_receive(recv, landed, sy::transport::any_source, 0, 2, false);
  d::transfer(send, recv, world, fabric);
  CHECK(recv.state.load() == d::op_state::done);
  CHECK(recv.status.count == 2);
  CHECK(landed == std::vector<float>{4.0F, 5.0F, -1.0F, -1.0F});
}

TEST_CASE("inproc.mailbox.transfer: sizes or types that do not match fail both sides, naming them") {
  d::inproc_fabric fabric(2, {});
  const std::vector<int> world{0, 1};
  const std::vector<float> eight(8, 1.0F);
  SUBCASE("an exact receive of another size") {
    d::pending_op send;
    make_send(send, eight, 0, 1, 0);
    std::vector<float> six(6, 0.0F);
    d::pending_op recv;
    make_receive(recv, six, 0, 1, 0, true);
    d::transfer(send, recv, world, fabric);
    CHECK(send.state.load() == d::op_state::failed);
    CHECK(recv.state.load() == d::op_state::failed);
    CHECK(recv.failure == "message from rank 0 to rank 1 with tag 0 has 8 elements but the receive buffer expects 6");
    CHECK(send.failure == recv.failure);
    CHECK(six == std::vector<float>(6, 0.0F));  // nothing copied
  }
  SUBCASE("a receive that holds fewer") {
    d::pending_op send;
    make_send(send, eight, 0, 1, 0);
    std::vector<float> six(6);
    d::pending_op recv;
    make_receive(recv, six, sy::transport::any_source, 1, 0, false);
    d::transfer(send, recv, world, fabric);
    CHECK(recv.failure == "message from rank 0 to rank 1 with tag 0 has 8 elements but the receive buffer holds only 6");
  }
  SUBCASE("another element type") {
    d::pending_op send;
    make_send(send, eight, 0, 1, 0);
    std::vector<double> four(4);
    d::pending_op recv;
    make_receive(recv, four, 0, 1, 0, true);
    d::transfer(send, recv, world, fabric);
    CHECK(recv.state.load() == d::op_state::failed);
    CHECK(recv.failure.find("has elements of 4 bytes but the receive expects another type of 8 bytes") !=
          std::string::npos);
  }
}
