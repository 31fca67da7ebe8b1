// A stage of switch_to that is not a strategy (no name()) is refused with one sentence, not with
// an error deep inside the switch.
#include <switchyard/strategy/all_reduce.hpp>
#include <switchyard/strategy/switch_to.hpp>
#include <switchyard/trigger/after_epochs.hpp>

struct not_a_strategy {
  template <class T, class M, class O>
  void step(T&, M&, O&) {}
};

int main() {
  namespace sy = switchyard;
  sy::strategy::switch_to sw{not_a_strategy{}, sy::strategy::all_reduce<>{}, sy::trigger::after_epochs<1>{}};
  return sw.switched() ? 1 : 0;
}
