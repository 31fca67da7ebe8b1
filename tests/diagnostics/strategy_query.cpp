// A strategy's optional query member written without const, or returning the wrong type, is
// refused with one sentence naming it instead of being silently replaced by the default. One case
// per build: meson.build compiles this file once for each QUERY_* macro.
#include <switchyard/strategy/traits.hpp>
#include <switchyard/transport/inproc.hpp>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sy = switchyard;
using transport = sy::transport::inproc;

// Just enough of an optimizer for assembled_state.
struct plain_optimizer {
  using value_type = float;
  sy::optim::optimizer_state<float> state;
  const sy::optim::optimizer_state<float>& export_state() const { return state; }
};

struct strategy {
  std::string_view name() const { return "query"; }
#if defined(QUERY_WORKER_COUNT_NONCONST)
  std::size_t worker_count(const transport& t) { return static_cast<std::size_t>(t.size()); }
#elif defined(QUERY_WORKER_INDEX_NONCONST)
  std::optional<std::size_t> worker_index(const transport&) { return 0; }
#elif defined(QUERY_REPLICATED_NONCONST)
  bool replicated() { return true; }
#elif defined(QUERY_REPLICATED_TYPE)
  std::string replicated() const { return "yes"; }
#elif defined(QUERY_BATCHES_PER_UPDATE_NONCONST)
  std::size_t batches_per_update(const transport&) { return 1; }
#elif defined(QUERY_BATCHES_PER_UPDATE_TYPE)
  std::vector<std::size_t> batches_per_update(const transport&) const { return {1}; }
#elif defined(QUERY_HANDS_OUT_BATCHES_NONCONST)
  bool hands_out_batches() { return true; }
#elif defined(QUERY_HANDS_OUT_BATCHES_TYPE)
  std::string_view hands_out_batches() const { return "yes"; }
#elif defined(QUERY_RESUME_AT_NONCONST)
  std::optional<std::size_t> resume_at() { return 3; }
#elif defined(QUERY_RESUME_AT_TYPE)
  std::size_t resume_at() const { return 3; }
#elif defined(QUERY_ASSEMBLED_STATE_NONCONST)
  sy::optim::optimizer_state<float> assembled_state(transport&, const plain_optimizer& o) { return o.state; }
#elif defined(QUERY_ASSEMBLED_STATE_TYPE)
  std::vector<float> assembled_state(transport&, const plain_optimizer&) const { return {}; }
#elif defined(QUERY_STOPPED_AFTER_NONCONST)
  void stop_when(sy::strategy::stop_rule) {}
  std::optional<std::size_t> stopped_after() { return std::nullopt; }
#elif defined(QUERY_STOPPED_AFTER_TYPE)
  void stop_when(sy::strategy::stop_rule) {}
  bool stopped_after() const { return false; }
#elif defined(QUERY_STOPPED_AFTER_MISSING)
  void stop_when(sy::strategy::stop_rule) {}
#else
#error "define one QUERY_* case"
#endif
};

int main() {
  sy::transport::run_inproc(1, [](transport& t) {
    strategy s;
    plain_optimizer o;
    std::size_t sum = sy::strategy::traits::worker_count(s, t);
    sum += sy::strategy::traits::worker_index(s, t).value_or(0);
    sum += sy::strategy::traits::replicated(s) ? 1 : 0;
    sum += sy::strategy::traits::batches_per_update(s, t);
    sum += sy::strategy::traits::hands_out_batches(s) ? 1 : 0;
    sum += sy::strategy::traits::resume_at(s).value_or(0);
    sum += sy::strategy::traits::assembled_state(s, t, o).size;
    sy::strategy::traits::stop_when(s, {});
    sum += sy::strategy::traits::stopped_after(s).value_or(0);
    return sum;
  });
}
