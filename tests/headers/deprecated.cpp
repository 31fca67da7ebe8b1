// A downstream file written against 0.1.0: the old include paths and names still compile (each
// with a deprecation warning, which deprecated.py checks) and mean what they meant. The umbrella
// header comes after the old ones, so the library's own code must compile beside the old names.
#include <switchyard/collective/partition.hpp>
#include <switchyard/train/history.hpp>
#include <switchyard/train/strategy.hpp>

#include <switchyard/switchyard.hpp>

#include <string_view>
#include <type_traits>
#include <vector>

namespace {

struct two_member_strategy {
  std::string_view name() const { return "two"; }
  template <class T, class M, class O>
  void step(T&, M&, O&) {}
};
struct no_step {
  std::string_view name() const { return "none"; }
};
struct any_model {};
struct any_optimizer {};

constexpr switchyard::collective::block middle = switchyard::collective::block_of(10, 3, 1);
static_assert(middle.offset == 4 && middle.size == 3);
static_assert(std::is_same_v<switchyard::collective::block, switchyard::block>);
static_assert(std::is_same_v<switchyard::train::step_outcome, switchyard::strategy::step_outcome>);
static_assert(switchyard::train::strategy<two_member_strategy, any_model, any_optimizer, switchyard::transport::inproc>);
static_assert(!switchyard::train::strategy<no_step, any_model, any_optimizer, switchyard::transport::inproc>);

}  // namespace

int main() {
  switchyard::train::history history;
  history.epochs.push_back(switchyard::train::epoch_record{});
  switchyard::train::step_outcome outcome{};
  std::vector<float> gradient(7, 1.0f);
  switchyard::transport::run_inproc(3, [&](switchyard::transport::inproc& t) {
    std::vector<float> mine = gradient;
    switchyard::collective::allreduce(t, mine, switchyard::ops::sum{});
    if (mine[6] != 3.0f) throw switchyard::usage_error("allreduce beside the old names gave a wrong sum");
  });
  return history.epochs.size() == 1 && outcome.bytes_sent == 0 ? 0 : 1;
}
