// Booleans are not arithmetic values the collectives reduce, so std::array<bool, N> is no buffer.
#include <switchyard/collective/reduce_scatter.hpp>
#include <switchyard/transport/inproc.hpp>

#include <array>

int main() {
  switchyard::transport::run_inproc(2, [](switchyard::transport::inproc& t) {
    std::array<bool, 8> flags{};
    switchyard::collective::reduce_scatter(t, flags);
  });
}
