// Averages one buffer over four in-process ranks with the umbrella header; exits non-zero if any
// rank got a wrong value.
#include <switchyard/switchyard.hpp>

#include <cstdio>
#include <vector>

int main() {
  const auto ok = switchyard::transport::run_inproc(4, [](switchyard::transport::inproc& t) {
    std::vector<float> gradient(1001, static_cast<float>(t.rank()));
    switchyard::collective::allreduce(t, gradient, switchyard::ops::average{});
    return gradient.front() == 1.5f && gradient.back() == 1.5f;
  });
  for (bool rank_ok : ok) {
    if (!rank_ok) return 1;
  }
  std::puts("consumer: allreduce over 4 in-process ranks gave the average on every rank");
  return 0;
}
