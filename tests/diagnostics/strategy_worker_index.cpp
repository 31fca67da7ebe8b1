// A strategy's optional worker_index(t) that returns the wrong type is refused with one sentence
// instead of being silently replaced by the default.
#include <switchyard/strategy/traits.hpp>
#include <switchyard/transport/inproc.hpp>

#include <string_view>

struct index_as_int {
  std::string_view name() const { return "int index"; }
  int worker_index(const switchyard::transport::inproc& t) const { return t.rank(); }
};

int main() {
  namespace sy = switchyard;
  sy::transport::run_inproc(1, [](sy::transport::inproc& t) {
    return sy::strategy::traits::worker_index(index_as_int{}, t).has_value() ? 0 : 1;
  });
}
