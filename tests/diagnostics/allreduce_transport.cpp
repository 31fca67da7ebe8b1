// A transport without split() does not satisfy transport::transport.
#include <switchyard/collective/allreduce.hpp>
#include <switchyard/transport/inproc.hpp>

#include <span>
#include <vector>

class unsplittable {
 public:
  explicit unsplittable(switchyard::transport::inproc inner) : inner_(inner) {}
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
  switchyard::transport::message_status recv_any(std::span<T> data, int tag) { return inner_.recv_any(data, tag); }
  void barrier() { inner_.barrier(); }

 private:
  switchyard::transport::inproc inner_;
};

int main() {
  switchyard::transport::run_inproc(2, [](switchyard::transport::inproc& t) {
    unsplittable u(t);
    std::vector<float> values(8, 1.0f);
    switchyard::collective::allreduce(u, values);
  });
}
