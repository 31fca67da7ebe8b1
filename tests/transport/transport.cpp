// The Transport concept: what a user's transport must provide, and proof that the collectives
// run over a transport with no native collectives at all.
#include <switchyard/transport/transport.hpp>

#include <switchyard/collective/allreduce.hpp>
#include <switchyard/collective/native.hpp>
#include <switchyard/transport/inproc.hpp>

#include "../collective/harness.hpp"
#include "../collective/scenarios.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <type_traits>

namespace sy = switchyard;

namespace {

// A user transport: point-to-point only, forwarded to an in-process handle.
class point_to_point_only {
 public:
  explicit point_to_point_only(sy::transport::inproc inner) : inner_(std::move(inner)) {}
  int rank() const { return inner_.rank(); }
  int size() const { return inner_.size(); }
  template <class T>
  void send(std::span<const T> data, int peer, int tag) { inner_.send(data, peer, tag); }
  template <class T>
  void recv(std::span<T> data, int peer, int tag) { inner_.recv(data, peer, tag); }
  template <class T>
  auto isend(std::span<const T> data, int peer, int tag) { return inner_.isend(data, peer, tag); }
  template <class T>
  auto irecv(std::span<T> data, int peer, int tag) { return inner_.irecv(data, peer, tag); }
  template <class T>
  sy::transport::message_status recv_any(std::span<T> data, int tag) { return inner_.recv_any(data, tag); }
  void barrier() { inner_.barrier(); }
  point_to_point_only split(int color, int key) { return point_to_point_only(inner_.split(color, key)); }

 private:
  sy::transport::inproc inner_;
};

struct missing_recv_any {
  int rank() const { return 0; }
  int size() const { return 1; }
  template <class T>
  void send(std::span<const T>, int, int) {}
  template <class T>
  void recv(std::span<T>, int, int) {}
  void barrier() {}
};

// Sends only floats: the library also sends doubles and 64-bit integers through a transport.
struct float_only {
  int rank() const { return 0; }
  int size() const { return 1; }
  void send(std::span<const float>, int, int) {}
  void recv(std::span<float>, int, int) {}
  sy::transport::inproc_request isend(std::span<const float>, int, int) { return {}; }
  sy::transport::inproc_request irecv(std::span<float>, int, int) { return {}; }
  sy::transport::message_status recv_any(std::span<float>, int) { return {}; }
  void barrier() {}
  float_only split(int, int) { return {}; }
};

// Moves every element type but the 16-bit words of compressed gradients.
struct no_words {
  int rank() const { return 0; }
  int size() const { return 1; }
  template <class T>
    requires(!std::is_same_v<T, std::uint16_t>)
  void send(std::span<const T>, int, int) {}
  template <class T>
  void recv(std::span<T>, int, int) {}
  template <class T>
  sy::transport::inproc_request isend(std::span<const T>, int, int) { return {}; }
  template <class T>
  sy::transport::inproc_request irecv(std::span<T>, int, int) { return {}; }
  template <class T>
  sy::transport::message_status recv_any(std::span<T>, int) { return {}; }
  void barrier() {}
  no_words split(int, int) { return {}; }
};

}  // namespace

static_assert(sy::transport::transport<point_to_point_only>);
static_assert(sy::transport::transport_of<no_words, std::uint64_t> && !sy::transport::transport<no_words>);
static_assert(!sy::transport::transport<missing_recv_any>);
static_assert(sy::transport::transport_of<float_only, float> && !sy::transport::transport<float_only>);
static_assert(sy::transport::transport_of<point_to_point_only, std::uint64_t>);
static_assert(!sy::collective::has_native_allreduce<point_to_point_only, float, sy::ops::sum>);
static_assert(sy::collective::has_native_allreduce<sy::transport::inproc, float, sy::ops::sum>);

TEST_CASE("transport.user: every collective runs over a transport with point-to-point only" * doctest::timeout(300)) {
  harness::run_at_every_size([](sy::transport::inproc& t) {
    point_to_point_only plain(t);
    std::vector<std::string> failures = scenarios::allreduce_suite(plain);
    for (auto* suite : {&scenarios::broadcast_suite<point_to_point_only>, &scenarios::allgather_suite<point_to_point_only>,
                        &scenarios::reduce_scatter_suite<point_to_point_only>}) {
      for (std::string& f : suite(plain)) failures.push_back(std::move(f));
    }
    return failures;
  });
}
