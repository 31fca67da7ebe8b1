// The Strategy concept: two members make a strategy; what a missing or malformed one looks like.
#include <switchyard/strategy/policy.hpp>

#include <switchyard/optim/sgd.hpp>
#include <switchyard/strategy/all_reduce.hpp>
#include <switchyard/strategy/parameter_server.hpp>
#include <switchyard/strategy/switch_to.hpp>
#include <switchyard/transport/inproc.hpp>
#include <switchyard/trigger/after_epochs.hpp>

#include "arenas.hpp"

#include <doctest/doctest.h>

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sy = switchyard;
using test_models::arenas;

namespace {

// Every rank trains alone and never communicates: the smallest strategy there is.
struct independent {
  std::string_view name() const { return "independent"; }
  void step(sy::transport::inproc&, arenas& m, sy::optim::sgd<>& o) { o.step(m.parameters(), m.gradients()); }
};

struct reports_bytes {
  std::string name() const { return "reports"; }  // a temporary string is a name too
  sy::strategy::step_outcome step(sy::transport::inproc&, arenas&, sy::optim::sgd<>&) { return {12, {}, false}; }
};

struct without_step {
  std::string_view name() const { return "nameless"; }
};
struct without_name {
  void step(sy::transport::inproc&, arenas&, sy::optim::sgd<>&) {}
};
struct mutable_name {  // name() must be callable on a const strategy
  std::string_view name() { return "mutable"; }
  void step(sy::transport::inproc&, arenas&, sy::optim::sgd<>&) {}
};
struct step_returns_bytes {  // neither step_outcome nor void
  std::string_view name() const { return "bytes"; }
  std::size_t step(sy::transport::inproc&, arenas&, sy::optim::sgd<>&) { return 0; }
};

using policy_of = sy::optim::sgd<>;

}  // namespace

static_assert(sy::strategy::policy<independent, arenas, policy_of, sy::transport::inproc>);
static_assert(sy::strategy::policy<reports_bytes, arenas, policy_of, sy::transport::inproc>);
static_assert(!sy::strategy::policy<without_step, arenas, policy_of, sy::transport::inproc>);
static_assert(!sy::strategy::policy<without_name, arenas, policy_of, sy::transport::inproc>);
static_assert(!sy::strategy::policy<mutable_name, arenas, policy_of, sy::transport::inproc>);
static_assert(!sy::strategy::policy<step_returns_bytes, arenas, policy_of, sy::transport::inproc>);
// The shipped strategies are policies too.
static_assert(sy::strategy::policy<sy::strategy::all_reduce<>, arenas, policy_of, sy::transport::inproc>);
static_assert(sy::strategy::policy<sy::strategy::parameter_server<>, arenas, policy_of, sy::transport::inproc>);
static_assert(sy::strategy::policy<sy::strategy::switch_to<independent, sy::strategy::all_reduce<>,
                                                           sy::trigger::after_epochs<1>>,
                                   arenas, policy_of, sy::transport::inproc>);

TEST_CASE("policy.two_members: a user strategy steps the optimizer it is given") {
  arenas model{std::vector<float>(3), {1, 2, 3}};
  sy::optim::sgd optimizer{3, 0.5};
  independent s;
  sy::transport::run_inproc(1, [&](sy::transport::inproc& t) { s.step(t, model, optimizer); });
  CHECK(model.params == std::vector<float>{-0.5f, -1.0f, -1.5f});
}
