// A parameter server's worker side: each step pushes every shard's gradient to its server and pulls
// the fresh shard back, encoded under compression, and on the wire while the next batch's gradient
// is computed when pipelined.
#pragma once

#include <switchyard/core/compression.hpp>
#include <switchyard/core/partition.hpp>
#include <switchyard/strategy/parameter_server/protocol.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <span>
#include <type_traits>
#include <typeinfo>
#include <variant>
#include <vector>

namespace switchyard::strategy::detail {

/// @brief The requests of a worker's exchange, of whatever type the transport's requests are,
/// kept from the step that posts them to the one that waits for them; allocated once and reused.
/// `in_flight()` says that an exchange is posted and not yet waited for. Dropping them destroys
/// what is still pending, which cancels it (in process) or waits for it (MPI): see
/// transport::request. A copy starts empty: each copy of a strategy gets its own.
class exchange_requests {
 public:
  exchange_requests() = default;
  exchange_requests(const exchange_requests&) noexcept {}
  exchange_requests& operator=(const exchange_requests&) noexcept {
    drop();
    return *this;
  }

  [[nodiscard]] bool in_flight() const noexcept { return in_flight_; }
  void set_in_flight(bool posted) noexcept { in_flight_ = posted; }

  template <class Request>
  [[nodiscard]] std::vector<Request>& of() {
    if (type_ == nullptr || *type_ != typeid(Request)) {
      drop();
      held_ = std::make_shared<std::vector<Request>>();
      type_ = &typeid(Request);
    }
    return *static_cast<std::vector<Request>*>(held_.get());
  }
  void drop() noexcept {
    held_.reset();
    type_ = nullptr;
    in_flight_ = false;
  }

 private:
  std::shared_ptr<void> held_;
  const std::type_info* type_ = nullptr;
  bool in_flight_ = false;
};

/// @brief A parameter-server worker's buffers of the model's element type `T`.
template <class T>
struct ps_worker_buffers {
  std::vector<T> pushed;  ///< pipelined: the gradient on the wire while the next one is computed
  std::vector<T> pulled;  ///< pipelined: the parameters on their way while the model trains on the last
  T report{};             ///< the step's compute time, to server 0 when the stop rule samples
};

/// @brief What a parameter-server worker keeps from step to step, and its exchange with the
/// servers of a `ps_plan`: `post_exchange` posts a step's pulls and pushes, `finish_exchange` waits
/// for them (in the same step, or in the next one when pipelined) and returns the batch server 0
/// handed out with its reply.
///
/// Under compression a push is the gradient plus what the worker's earlier pushes still owe it,
/// rounded to 16-bit words (`feedback()`, which a checkpoint saves), and a pull is the shard's words.
/// Pipelined, the push goes from a copy of the gradient and the pull lands beside the model, so
/// the next backward pass can run while they are on the wire. A copy starts without an exchange.
/// @code
/// worker.setup<float>(plan, true);
/// worker.post_exchange(t, plan, parameters, gradients, started);
/// std::optional<std::size_t> next = worker.finish_exchange(t, plan, parameters, [] {});
/// @endcode
class ps_worker {
 public:
  /// Sizes the buffers a worker of `plan` needs (none when this rank does not work) and drops an
  /// exchange a failed run left in flight.
  template <class T>
  void setup(const ps_plan& plan, bool works) {
    requests_.drop();
    buffers<T> own;
    if (works && plan.compressed()) {
      sent_words_.assign(plan.arena, 0);
      received_words_.assign(plan.arena, 0);
    } else if (works && plan.pipelined) {
      own.pushed.resize(plan.arena);
      own.pulled.resize(plan.arena);
    }
    buffers_ = std::move(own);
  }

  /// A new part of an epoch: no step ended in it yet, and the next push belongs to round 0.
  void begin_part() noexcept {
    step_end_.reset();
    round_ = 0;
  }

  /// Drops the exchange in flight, if any: what a failed part left behind.
  void drop_exchange() noexcept { requests_.drop(); }
  /// Whether an exchange is posted and not yet waited for.
  [[nodiscard]] bool in_flight() const noexcept { return requests_.in_flight(); }
  /// The error feedback of this worker's pushes (used under compression).
  [[nodiscard]] compression::error_feedback& feedback() noexcept { return feedback_; }
  /// The end of a step, in seconds of the transport clock (`transport::seconds_now`), from which
  /// the next one's compute time is measured.
  void mark_step_end(double at) noexcept { step_end_ = at; }
  /// Node aggregation: the next compute report is at least `seconds`, the slowest compute time of
  /// the workers of the node whose gradients the next push sums (a slow node counts once).
  void report_at_least(double seconds) noexcept { least_report_ = seconds; }

  /// Posts the compute report, the hand-out's receive, and a pull from and a push to every server
  /// (encoded under compression, from a copy when pipelined); returns the bytes pushed.
  template <class Transport, class T>
  std::size_t post_exchange(Transport& t, const ps_plan& plan, std::span<T> parameters, std::span<const T> gradients,
                            double started);

  /// Waits for the exchange in flight, puts the pulled parameters into `parameters` and returns the
  /// batch server 0 handed out with them, if any. When a wait fails, `on_failure()` runs before the
  /// failure is rethrown (and may throw a cause of its own).
  template <class Transport, class T, class OnFailure>
  std::optional<std::size_t> finish_exchange(Transport& t, const ps_plan& plan, std::span<T> parameters,
                                             OnFailure&& on_failure);

 private:
  template <class T>
  using buffers = ps_worker_buffers<T>;
  template <class T>
  [[nodiscard]] buffers<T>& buffers_of() {
    return std::get<buffers<T>>(buffers_);
  }
  // Posts one pull from and one push to each server, the compute report and the push's round
  // (backup workers) between them; returns the bytes pushed.
  template <class Transport, class Request, class Pulled, class Pushed, class T>
  std::size_t post(Transport& t, const ps_plan& plan, std::vector<Request>& requests, std::span<Pulled> pulled,
                   std::span<const Pushed> pushed, double started, T& report);

  compression::error_feedback feedback_;       // what its pushes still owe the gradients
  std::vector<std::uint16_t> sent_words_;      // a push, under compression
  std::vector<std::uint16_t> received_words_;  // a pull, under compression
  std::variant<buffers<float>, buffers<double>> buffers_;
  // What server 0 handed out with its reply, the batch (-1: none) and server 0's round.
  std::array<std::int64_t, 2> handed_{-1, 0};
  // Backup workers: the round its next push belongs to, which it tells every server.
  std::int64_t round_ = 0;
  std::optional<double> step_end_;            // the end of its last step this part
  double least_report_ = 0.0;                 // node aggregation: the node's slowest compute time this step
  // Last: destroyed first, before the buffers its requests use.
  exchange_requests requests_;
};

// ---------------------------------------------------------------------------------------------
// Implementation
// ---------------------------------------------------------------------------------------------

template <class Transport, class T>
std::size_t ps_worker::post_exchange(Transport& t, const ps_plan& plan, std::span<T> parameters,
                                     std::span<const T> gradients, double started) {
  using request = decltype(t.isend(std::span<const T>(), 0, 0));
  std::vector<request>& requests = requests_.of<request>();
  // What was posted before a throw must not stay behind for a later step to wait for.
  struct clear_on_throw {
    std::vector<request>& posted;
    int uncaught = std::uncaught_exceptions();
    ~clear_on_throw() {
      if (std::uncaught_exceptions() > uncaught) posted.clear();
    }
  } guard{requests};
  buffers<T>& mine = buffers_of<T>();
  // Post every pull before any push, so a server's reply always finds its receive waiting. The
  // receives also come first in `requests`, which finish_exchange waits for in order: the alert of
  // a co-located server whose loop threw fails them, while a send to that loop would never
  // complete in process.
  if (plan.hands_out_batches) {
    requests.push_back(t.irecv(std::span<std::int64_t>(handed_), plan.server_rank(0), ps_tags::assign));
  }
  // One pull from and one push to each server, of the model's elements or of the codec's words.
  // Pipelined, the pull lands beside the model, which trains the next batch meanwhile, and the
  // push goes from a copy, which the next backward pass cannot overwrite.
  if constexpr (std::is_same_v<T, float>) {
    if (plan.compressed()) {
      compression::with_codec(plan.compression,
                              [&]<class Codec>(Codec) { feedback_.encode<Codec>(gradients, sent_words_); });
      return post(t, plan, requests, std::span<std::uint16_t>(received_words_),
                  std::span<const std::uint16_t>(sent_words_), started, mine.report);
    }
  }
  if (!plan.pipelined) return post(t, plan, requests, parameters, gradients, started, mine.report);
  std::copy(gradients.begin(), gradients.end(), mine.pushed.begin());
  return post(t, plan, requests, std::span<T>(mine.pulled), std::span<const T>(mine.pushed), started, mine.report);
}

template <class Transport, class Request, class Pulled, class Pushed, class T>
std::size_t ps_worker::post(Transport& t, const ps_plan& plan, std::vector<Request>& requests,
                            std::span<Pulled> pulled, std::span<const Pushed> pushed,
                            double started, T& report) {
  for (std::size_t s = 0; s < plan.servers; ++s) {
    const block b = plan.shard(s);
    requests.push_back(t.irecv(pulled.subspan(b.offset, b.size), plan.server_rank(s), ps_tags::pull));
  }
  // The compute time goes before the push: server 0 reads it when it answers the push.
  if (plan.sampling) {
    report = step_end_ ? std::max(static_cast<T>(started - *step_end_), static_cast<T>(least_report_)) : T{-1};
    least_report_ = 0.0;
    requests.push_back(t.isend(std::span<const T>(&report, 1), plan.server_rank(0), ps_tags::compute));
  }
  // With backup workers, each push goes with the round it belongs to, posted first: a server
  // receives it right after the push.
  if (plan.backups) {
    for (std::size_t s = 0; s < plan.servers; ++s) {
      requests.push_back(t.isend(std::span<const std::int64_t>(&round_, 1), plan.server_rank(s), ps_tags::round));
    }
  }
  for (std::size_t s = 0; s < plan.servers; ++s) {
    const block b = plan.shard(s);
    requests.push_back(t.isend(pushed.subspan(b.offset, b.size), plan.server_rank(s), ps_tags::push));
  }
  requests_.set_in_flight(true);
  return pushed.size_bytes();
}

template <class Transport, class T, class OnFailure>
std::optional<std::size_t> ps_worker::finish_exchange(Transport& t, const ps_plan& plan, std::span<T> parameters,
                                                      OnFailure&& on_failure) {
  using request = decltype(t.isend(std::span<const T>(), 0, 0));
  std::vector<request>& requests = requests_.of<request>();
  requests_.set_in_flight(false);
  try {
    for (request& r : requests) r.wait();
  } catch (...) {
    requests.clear();
    on_failure();
    throw;
  }
  requests.clear();
  if constexpr (std::is_same_v<T, float>) {
    if (plan.compressed()) {
      compression::with_codec(plan.compression, [&]<class Codec>(Codec) {
        compression::decode<Codec>(std::span<const std::uint16_t>(received_words_), parameters);
      });
    }
  }
  if (plan.pipelined && !plan.compressed()) {
    const std::vector<T>& pulled = buffers_of<T>().pulled;
    std::copy(pulled.begin(), pulled.end(), parameters.begin());
  }
  if (!plan.hands_out_batches) return std::nullopt;
  round_ = handed_[1];
  if (handed_[0] < 0) return std::nullopt;
  return static_cast<std::size_t>(handed_[0]);
}

}  // namespace switchyard::strategy::detail
