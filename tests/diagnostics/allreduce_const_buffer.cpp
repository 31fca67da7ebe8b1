// All-reduce works in place, so a const buffer is refused.
#include <switchyard/collective/allreduce.hpp>
#include <switchyard/transport/inproc.hpp>

#include <vector>

int main() {
  switchyard::transport::run_inproc(2, [](switchyard::transport::inproc& t) {
    const std::vector<float> values(8, 1.0f);
    switchyard::collective::allreduce(t, values);
  });
}
