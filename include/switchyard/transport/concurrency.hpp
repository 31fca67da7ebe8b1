// The optional concurrency and clock hooks of a transport: how a rank runs an activity beside its
// own (a communication thread, a co-located server), how it waits for one, and what time it is.
// A transport that has none of them gets the standard library's threads and steady clock; a
// simulator maps them to its own actors, waits and simulated time.
#pragma once

#include <switchyard/transport/transport.hpp>

#include <chrono>
#include <condition_variable>
#include <concepts>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>

namespace switchyard::transport {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

/// @brief The optional concurrency hook of a transport, for `T& t` and a callable `f` of no
/// arguments:
/// @code
/// auto a = t.spawn(f);                      // runs f beside the calling rank, as one of its activities
/// a.join();                                 // blocks until f returned
/// typename T::mutex_type m;                 // BasicLockable: lock(), unlock(), try_lock()
/// typename T::condition_variable_type cv;   // cv.wait(std::unique_lock<T::mutex_type>&[, pred]),
///                                           // cv.notify_one(), cv.notify_all()
/// @endcode
/// A transport without it (`inproc`, `mpi`, a user's) gets `std::thread`, `std::mutex` and
/// `std::condition_variable` (`spawn`, `mutex_of`, `condition_variable_of`). A transport whose
/// ranks take turns on one thread (`ranks_share_a_thread`) must have it: a real thread would run
/// outside its schedule, and `spawn` refuses to compile rather than start one.
template <class T>
concept has_concurrency = requires(T& t, std::function<void()> f) {
  typename T::mutex_type;
  typename T::condition_variable_type;
  t.spawn(std::move(f)).join();
};

/// @brief The optional clock hook of a transport: `double s = ct.now();`, seconds on the rank's
/// clock (any origin, never going back). `transport::simulated` answers simulated seconds; a
/// transport without it gets `std::chrono::steady_clock` (`seconds_now`).
template <class T>
concept has_clock = requires(const T& ct) {
  { ct.now() } -> std::convertible_to<double>;
};

namespace detail {

template <class T>
struct concurrency_types {
  using mutex = std::mutex;
  using condition_variable = std::condition_variable;
};

template <has_concurrency T>
struct concurrency_types<T> {
  using mutex = typename T::mutex_type;
  using condition_variable = typename T::condition_variable_type;
};

}  // namespace detail

/// @brief The mutex of `T`'s activities: `T::mutex_type`, else `std::mutex`.
template <class T>
using mutex_of = typename detail::concurrency_types<T>::mutex;

/// @brief The condition variable of `T`'s activities: `T::condition_variable_type`, else
/// `std::condition_variable`. It waits on a `std::unique_lock<mutex_of<T>>`.
template <class T>
using condition_variable_of = typename detail::concurrency_types<T>::condition_variable;

/// @brief A running activity of a rank, whatever the transport made it of: move-only, empty
/// when default-constructed or joined. Destroying one that was not joined joins it (as
/// `std::jthread` does; there is no stop request: the activity must end by itself).
class activity {
 public:
  activity() = default;
  /// Takes over `handle`, anything with `join()`: a `std::thread`, a transport's own.
  template <class Handle>
    requires(!std::same_as<std::remove_cvref_t<Handle>, activity>)
  explicit activity(Handle&& handle) : self_(std::make_unique<model<std::remove_cvref_t<Handle>>>(std::move(handle))) {}
  activity(activity&&) noexcept = default;
  activity& operator=(activity&& other) noexcept;
  ~activity();

  [[nodiscard]] bool joinable() const noexcept { return self_ != nullptr; }
  /// Blocks until the activity returned; afterwards the handle is empty.
  void join();

 private:
  struct concept_base {
    virtual ~concept_base() = default;
    virtual void join() = 0;
  };
  template <class Handle>
  struct model final : concept_base {
    explicit model(Handle h) : handle(std::move(h)) {}
    void join() override { handle.join(); }
    Handle handle;
  };
  std::unique_ptr<concept_base> self_;
};

/// @brief Runs `f` beside the calling rank of `t`: `t.spawn(f)` where the transport has it,
/// else a `std::thread`. `f` must not throw (as for `std::thread`): catch what it raises and hand
/// it over.
/// @code
/// std::mutex done_mutex;  // transport::mutex_of<Transport>
/// transport::activity helper = transport::spawn(t, [&] { ...; });
/// helper.join();
/// @endcode
template <class T, class F>
[[nodiscard]] activity spawn(T& t, F&& f);

/// @brief Seconds on the clock of `t`'s rank: `t.now()` where the transport has it (simulated
/// seconds on `transport::simulated`), else `std::chrono::steady_clock`. Every duration that
/// decides something (step and epoch times, straggler samples, deadlines) is read from it.
template <class T>
[[nodiscard]] double seconds_now(const T& t);

// ---------------------------------------------------------------------------------------------
// Implementation
// ---------------------------------------------------------------------------------------------

inline activity& activity::operator=(activity&& other) noexcept {
  if (this != &other) {
    if (self_) self_->join();
    self_ = std::move(other.self_);
  }
  return *this;
}

inline activity::~activity() {
  if (self_) self_->join();
}

inline void activity::join() {
  const std::unique_ptr<concept_base> running = std::move(self_);
  if (running) running->join();
}

template <class T, class F>
activity spawn(T& t, F&& f) {
  if constexpr (has_concurrency<T>) {
    return activity(t.spawn(std::forward<F>(f)));
  } else {
    static_assert(!ranks_share_a_thread<T>,
                  "the ranks of this transport take turns on one thread, so a std::thread would run outside their "
                  "schedule: give the transport spawn(f), mutex_type and condition_variable_type "
                  "(transport::has_concurrency)");
    return activity(std::thread(std::forward<F>(f)));
  }
}

template <class T>
double seconds_now(const T& t) {
  if constexpr (has_clock<T>) {
    return static_cast<double>(t.now());
  } else {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }
}

}  // namespace switchyard::transport
