// A trigger whose fire() takes a non-const record does not satisfy trigger::trigger.
#include <switchyard/strategy/all_reduce.hpp>
#include <switchyard/strategy/switch_to.hpp>

struct mutating_trigger {
  bool fire(switchyard::train::epoch_record& record) { return record.epoch > 2; }
};

int main() {
  namespace sy = switchyard;
  sy::strategy::switch_to switch_stage{sy::strategy::all_reduce<>{}, sy::strategy::all_reduce<>{}, mutating_trigger{}};
  return switch_stage.switched() ? 1 : 0;
}
