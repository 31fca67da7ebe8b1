// A strategy's member named like an optional member of the protocol (strategy/traits.hpp) that
// cannot be called as that member is refused with one sentence naming the signature expected,
// instead of being passed over for the default. One case per build: meson.build compiles this
// file once for each HOOK_* macro.
#include "linear_model.hpp"

#include <switchyard/core/history.hpp>
#include <switchyard/data/batch.hpp>
#include <switchyard/optim/sgd.hpp>
#include <switchyard/strategy/traits.hpp>
#include <switchyard/transport/inproc.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace sy = switchyard;
using transport = sy::transport::inproc;
using model = linear_model<float>;
using optimizer = sy::optim::sgd<>;

// Each case's member lacks or mistypes one argument (or the return type) of the hook it is named
// after.
struct strategy {
  std::string_view name() const { return "hook"; }
  void step(transport&, model&, optimizer&) {}
#if defined(HOOK_SETUP)
  void setup(transport&, model&) {}
#elif defined(HOOK_ENTER)
  void enter(transport&, optimizer&) {}
#elif defined(HOOK_FORWARD_BACKWARD)
  double forward_backward(transport&, const sy::data::batch_view&) { return 0.0; }
#elif defined(HOOK_BEGIN_EPOCH)
  void begin_epoch(transport&) {}
#elif defined(HOOK_SERVE)
  void serve(model&, optimizer&) {}
#elif defined(HOOK_END_EPOCH)
  void end_epoch(transport&, optimizer&) {}
#elif defined(HOOK_AFTER_EPOCH)
  void after_epoch(transport&, model&, optimizer&, std::size_t epoch) { static_cast<void>(epoch); }
#elif defined(HOOK_HAND_OVER)
  template <class Model>
  void hand_over(Model&) {}
#elif defined(HOOK_FINISH)
  void finish() {}
#elif defined(HOOK_PREPARE_CHECKPOINT)
  void prepare_checkpoint() {}
#elif defined(HOOK_SERIALIZE_PROGRESS)
  template <class Archive>
  void serialize_progress(Archive&, unsigned version) { static_cast<void>(version); }
#elif defined(HOOK_STOP_WHEN)
  void stop_when(std::size_t batches) { static_cast<void>(batches); }
#elif defined(HOOK_WORKER_COUNT)
  std::size_t worker_count() const { return 1; }
#elif defined(HOOK_SIGNATURE)
  int signature() const { return 2; }
#else
#error "define one HOOK_* case"
#endif
};

// Just enough of an archive for serialize_progress.
struct archive {};

int main() {
  sy::transport::run_inproc(1, [](transport& t) {
    strategy s;
    model m;
    optimizer o(4, 0.1);
    sy::strategy::traits::setup(s, t, m, o);
    sy::strategy::traits::enter(s, t, m, o);
    sy::strategy::traits::begin_epoch(s, t, 1);
    double loss = sy::strategy::traits::forward_backward(s, t, m, sy::data::batch_view{});
    sy::strategy::traits::serve(s, t, m, o);
    sy::strategy::traits::end_epoch(s, t, m, o);
    sy::strategy::traits::after_epoch(s, t, m, o, sy::train::epoch_record{});
    sy::strategy::traits::hand_over(s, t, m, o);
    sy::strategy::traits::finish(s, t, m, o);
    sy::strategy::traits::prepare_checkpoint(s, t);
    archive a;
    sy::strategy::traits::serialize_progress(s, a);
    sy::strategy::traits::stop_when(s, {});
    loss += static_cast<double>(sy::strategy::traits::worker_count(s, t));
    loss += static_cast<double>(sy::strategy::traits::signature(s).size());
    return loss > 0.0 ? 0 : 1;
  });
}
