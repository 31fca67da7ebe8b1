// any_of refuses a part that is not a trigger with one sentence.
#include <switchyard/trigger/after_epochs.hpp>
#include <switchyard/trigger/combinators.hpp>

struct never {};  // no fire()

int main() {
  switchyard::trigger::any_of<switchyard::trigger::after_epochs<2>, never> t;
  return static_cast<int>(std::get<0>(t.triggers).value());
}
