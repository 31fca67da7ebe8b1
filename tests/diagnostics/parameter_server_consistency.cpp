// A consistency policy without max_lead() is refused with one sentence naming it.
#include <switchyard/strategy/parameter_server.hpp>

struct eventually {};

int main() {
  switchyard::strategy::parameter_server<eventually> ps{1};
  return static_cast<int>(ps.servers());
}
