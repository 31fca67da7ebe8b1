// An operation over strings is not a reduction over floats.
#include <switchyard/collective/reduce_scatter.hpp>
#include <switchyard/transport/inproc.hpp>

#include <vector>

struct same_name {
  bool operator()(const char* a, const char* b) const { return a == b; }
};

int main() {
  switchyard::transport::run_inproc(2, [](switchyard::transport::inproc& t) {
    std::vector<float> values(8, 1.0f);
    switchyard::collective::reduce_scatter(t, values, same_name{});
  });
}
