// train/checkpoint/signature.hpp: the names of a strategy's stages in order, which a checkpoint
// must match before the strategy's progress is decoded from it.
#include <switchyard/train/checkpoint/signature.hpp>

#include <switchyard/strategy/all_reduce.hpp>
#include <switchyard/strategy/alternate.hpp>
#include <switchyard/strategy/parameter_server.hpp>
#include <switchyard/strategy/switch_to.hpp>
#include <switchyard/trigger/after_epochs.hpp>

#include <doctest/doctest.h>

#include <string>
#include <string_view>

namespace sy = switchyard;

namespace {

using sync_ps = sy::strategy::parameter_server<sy::strategy::consistency::sync>;

// A user's strategy names itself and has no stages (examples/custom_policy.cpp's local SGD).
struct local_sgd {
  [[nodiscard]] std::string_view name() const noexcept { return "localsgd"; }
};

// A user's strategy that happens to have first() and second(): not a switch chain, so it is signed
// by its own name, whatever its members are called.
struct pair_of_rates {
  [[nodiscard]] std::string_view name() const noexcept { return "pair"; }
  [[nodiscard]] double first() const noexcept { return 0.1; }
  [[nodiscard]] double second() const noexcept { return 0.01; }
};

// A user's chain of stages, not a switch_to, that asks to be signed as one (is_switch_chain).
template <class First, class Second>
struct user_chain {
  First a;
  Second b;
  [[nodiscard]] std::string_view name() const noexcept { return "user_chain"; }
  [[nodiscard]] const First& first() const { return a; }
  [[nodiscard]] const Second& second() const { return b; }
};

struct named {
  std::string text;
  [[nodiscard]] std::string name() const { return text; }  // a temporary, copied before it goes
};

}  // namespace

template <class First, class Second>
inline constexpr bool sy::strategy::is_switch_chain<user_chain<First, Second>> = true;

TEST_CASE("checkpoint.signature.user: a user's strategy is signed as itself, first() and second() or not") {
  CHECK(sy::train::strategy_signature(pair_of_rates{}) == "pair");
  CHECK(sy::strategy::traits::signature(pair_of_rates{}) == "pair");
  using epochs_1 = sy::trigger::after_epochs<1>;
  CHECK(sy::train::strategy_signature(sy::strategy::switch_to<pair_of_rates, local_sgd, epochs_1>{}) == "pair>localsgd");
  CHECK(sy::train::strategy_signature(sy::strategy::switch_to<local_sgd, pair_of_rates, epochs_1>{}) == "localsgd>pair");
}

TEST_CASE("checkpoint.signature.user_chain: a user's chain that specializes is_switch_chain, through first() and "
          "second(), whatever name() returns") {
  CHECK(sy::train::strategy_signature(named{"mine"}) == "mine");
  const user_chain<named, local_sgd> two{{"a"}, {}};
  CHECK(sy::train::strategy_signature(two) == "a>localsgd");
  const user_chain<user_chain<named, named>, user_chain<named, named>> both{{{"a"}, {"b"}}, {{"c"}, {"d"}}};
  CHECK(sy::train::strategy_signature(both) == "(a>b)>c>d");
}

TEST_CASE("checkpoint.signature: a strategy's stages in order, nested chains in parentheses") {
  using ar = sy::strategy::all_reduce<>;
  using epochs_1 = sy::trigger::after_epochs<1>;
  CHECK(sy::train::strategy_signature(ar{}) == "allreduce");
  CHECK(sy::train::strategy_signature(sync_ps{1}) == "ps");
  using ps_then_ar = sy::strategy::switch_to<sync_ps, ar, epochs_1>;
  const ps_then_ar two{sync_ps{1}, ar{}, {}};
  CHECK(sy::train::strategy_signature(two) == "ps>allreduce");
  const sy::strategy::switch_to<sync_ps, sy::strategy::switch_to<ar, sync_ps, epochs_1>, epochs_1> three{
      sync_ps{1}, {ar{}, sync_ps{1}, {}}, {}};
  CHECK(sy::train::strategy_signature(three) == "ps>allreduce>ps");
  // The same stages nested in the first stage keep their progress in the same bytes.
  const sy::strategy::switch_to<ps_then_ar, sync_ps, epochs_1> nested_first{two, sync_ps{1}, {}};
  CHECK(sy::train::strategy_signature(nested_first) == "(ps>allreduce)>ps");
  // An alternate keeps its progress in another layout again: its own mark.
  const sy::strategy::alternate<ar, sync_ps, epochs_1, epochs_1> both_ways{ar{}, sync_ps{1}, {}, {}};
  CHECK(sy::train::strategy_signature(both_ways) == "(allreduce<>ps)");
  CHECK(sy::train::strategy_signature(local_sgd{}) == "localsgd");
  CHECK(sy::train::strategy_signature(sy::strategy::switch_to<local_sgd, ar, epochs_1>{}) == "localsgd>allreduce");
}


TEST_CASE("checkpoint.signature.options: a compressed parameter server signs its format, whose checkpoints hold the "
          "residuals; a user's signature() replaces its name()") {
  using sy::compression::format;
  CHECK(sy::train::strategy_signature(sync_ps{1, {}, format::bf16}) == "ps[bf16]");
  CHECK(sy::train::strategy_signature(sy::strategy::parameter_server<>{2, {}, format::fp16}) == "ps[fp16]");
  CHECK(sy::train::strategy_signature(sync_ps{1, {}, format::none}) == "ps");
  const sy::strategy::switch_to chain{sync_ps{1, {}, format::bf16}, sy::strategy::all_reduce<>{},
                                      sy::trigger::after_epochs{1}};
  CHECK(sy::train::strategy_signature(chain) == "ps[bf16]>allreduce");
  struct signed_stage {
    [[nodiscard]] std::string_view name() const noexcept { return "mine"; }
    [[nodiscard]] std::string signature() const { return "mine[v2]"; }
  };
  CHECK(sy::train::strategy_signature(signed_stage{}) == "mine[v2]");
}
