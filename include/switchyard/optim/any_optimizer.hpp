// An optimizer chosen at run time: any switchable optimizer behind one type, so that a program
// that picks SGD, momentum or Adam from its command line compiles its trainer and strategies once.
#pragma once

#include <concepts>
#include <cstdint>
#include <memory>
#include <span>
#include <type_traits>
#include <utility>

#include "switchyard/core/error.hpp"
#include "switchyard/optim/optimizer.hpp"
#include "switchyard/optim/optimizer_state.hpp"

namespace switchyard::optim {

/// @brief Any `switchable` optimizer of element type `T`, chosen at run time, as
/// `std::function` holds any callable. The trainer, the strategies and checkpoints see one type,
/// so a program that chooses among N optimizers instantiates them once instead of N times. Each
/// call is one indirect call; a step updates every parameter, so the call costs nothing beside it.
///
/// It forwards `step`, `export_state`, `import_state`, `scale_learning_rate` and `rewarm`, and the
/// members the trainer uses when an optimizer has them: `set_schedule_stride` and the
/// learning-rate adjustments a checkpoint keeps. For a held optimizer without those, it does what
/// the trainer does for such an optimizer: it ignores the stride, reports the default
/// adjustments, and accepts only the default ones (others throw `usage_error`: they would be lost).
///
/// Copies copy the held optimizer, state included. A moved-from `any_optimizer` may only be
/// assigned to or destroyed.
/// @tparam T parameter type (default `float`).
/// @code
/// optim::any_optimizer<> optimizer = options.adam ? optim::any_optimizer<>{optim::adam{size, 1e-3}}
///                                                 : optim::any_optimizer<>{optim::sgd{size, 0.1}};
/// train::trainer trainer{model, optimizer, strategy, options};
/// @endcode
template <std::floating_point T = float>
class any_optimizer {
 public:
  using value_type = T;

  /// Holds `optimizer` (implicit, as `std::function` converts from a callable).
  template <class O>
    requires(!std::same_as<O, any_optimizer> && switchable<O> && std::same_as<typename O::value_type, T>)
  any_optimizer(O optimizer)
      : held_(std::make_unique<holder<O>>(std::move(optimizer))) {}

  any_optimizer(const any_optimizer& other) : held_(other.held_->clone()) {}
  any_optimizer(any_optimizer&&) noexcept = default;
  any_optimizer& operator=(const any_optimizer& other) {
    if (this != &other) held_ = other.held_->clone();
    return *this;
  }
  any_optimizer& operator=(any_optimizer&&) noexcept = default;
  ~any_optimizer() = default;

  void step(std::span<T> params, std::span<const T> grads) { held_->step(params, grads); }
  [[nodiscard]] const optimizer_state<T>& export_state() const { return held_->export_state(); }
  void import_state(optimizer_state<T> state) { held_->import_state(std::move(state)); }
  void scale_learning_rate(double factor) { held_->scale_learning_rate(factor); }
  void rewarm(std::uint64_t steps) { held_->rewarm(steps); }
  void set_schedule_stride(std::uint64_t batches) { held_->set_schedule_stride(batches); }
  [[nodiscard]] rate_adjustments export_adjustments() const { return held_->export_adjustments(); }
  void import_adjustments(const rate_adjustments& a) { held_->import_adjustments(a); }

  /// The held optimizer if it is an `O`, else null (as `std::function::target`).
  template <class O>
  [[nodiscard]] O* target() noexcept {
    auto* h = dynamic_cast<holder<O>*>(held_.get());
    return h != nullptr ? &h->optimizer : nullptr;
  }
  template <class O>
  [[nodiscard]] const O* target() const noexcept {
    const auto* h = dynamic_cast<const holder<O>*>(held_.get());
    return h != nullptr ? &h->optimizer : nullptr;
  }

 private:
  struct base {
    base() = default;
    base(const base&) = default;
    base& operator=(const base&) = delete;
    virtual ~base() = default;
    [[nodiscard]] virtual std::unique_ptr<base> clone() const = 0;
    virtual void step(std::span<T> params, std::span<const T> grads) = 0;
    [[nodiscard]] virtual const optimizer_state<T>& export_state() const = 0;
    virtual void import_state(optimizer_state<T> state) = 0;
    virtual void scale_learning_rate(double factor) = 0;
    virtual void rewarm(std::uint64_t steps) = 0;
    virtual void set_schedule_stride(std::uint64_t batches) = 0;
    [[nodiscard]] virtual rate_adjustments export_adjustments() const = 0;
    virtual void import_adjustments(const rate_adjustments& a) = 0;
  };

  template <class O>
  struct holder final : base {
    explicit holder(O o) : optimizer(std::move(o)) {}
    [[nodiscard]] std::unique_ptr<base> clone() const override { return std::make_unique<holder>(optimizer); }
    void step(std::span<T> params, std::span<const T> grads) override { optimizer.step(params, grads); }
    [[nodiscard]] const optimizer_state<T>& export_state() const override {
      if constexpr (std::is_reference_v<decltype(optimizer.export_state())>) {
        return optimizer.export_state();
      } else {
        // An optimizer that returns its state by value: keep the copy alive for the reference.
        exported = optimizer.export_state();
        return exported;
      }
    }
    void import_state(optimizer_state<T> state) override { optimizer.import_state(std::move(state)); }
    void scale_learning_rate(double factor) override { optimizer.scale_learning_rate(factor); }
    void rewarm(std::uint64_t steps) override { optimizer.rewarm(steps); }
    void set_schedule_stride(std::uint64_t batches) override {
      if constexpr (requires { optimizer.set_schedule_stride(batches); }) optimizer.set_schedule_stride(batches);
    }
    [[nodiscard]] rate_adjustments export_adjustments() const override {
      if constexpr (requires { optimizer.export_adjustments(); }) {
        return optimizer.export_adjustments();
      } else {
        return {};
      }
    }
    void import_adjustments(const rate_adjustments& a) override {
      if constexpr (requires { optimizer.import_adjustments(a); }) {
        optimizer.import_adjustments(a);
      } else if (a != rate_adjustments{}) {
        switchyard::detail::raise<usage_error>(switchyard::detail::str(
            "optim::any_optimizer: the held optimizer has no import_adjustments, so it cannot take a learning-rate "
            "scale of ", a.learning_rate_scale, " and a ramp of ", a.rewarm_steps, " steps from step ",
            a.rewarm_from));
      }
    }

    O optimizer;
    mutable optimizer_state<T> exported;
  };

  std::unique_ptr<base> held_;
};

}  // namespace switchyard::optim
