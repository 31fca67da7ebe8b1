// A parameter server made of its detail pieces, run in process: workers 0 to W - 1 (ps_worker)
// and one server, rank W (ps_server), for the suites of worker.hpp and server.hpp.
#pragma once

#include <switchyard/strategy/parameter_server/consistency.hpp>
#include <switchyard/strategy/parameter_server/protocol.hpp>
#include <switchyard/strategy/parameter_server/server.hpp>
#include <switchyard/strategy/parameter_server/serving_thread.hpp>
#include <switchyard/strategy/parameter_server/statistics.hpp>
#include <switchyard/strategy/parameter_server/worker.hpp>
#include <switchyard/transport/inproc.hpp>

#include <switchyard/transport/concurrency.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace ps_test {

namespace sy = switchyard;

// An optimizer that subtracts the gradient.
struct subtract {
  using value_type = float;
  void step(std::span<float> parameters, std::span<const float> gradient) const {
    for (std::size_t i = 0; i < parameters.size(); ++i) parameters[i] -= gradient[i];
  }
};

// What one rank saw: a worker its pulls, a server its parameters and statistics.
struct rank_view {
  std::vector<std::vector<float>> pulled;          // the parameters after each finished exchange
  std::vector<std::optional<std::size_t>> handed;  // the batch server 0 handed out with each
  std::vector<float> residual;                     // what its pushes still owe (compressed)
  std::vector<float> served;                       // the server's parameters after the part
  sy::strategy::ps_statistics statistics;
};

// `workers` workers each train `steps` steps against one server of `parameters`; worker w's every
// gradient is (w + 1) / 2 on each parameter. `plan` gives the wire settings; its ranks are set here.
template <class Consistency>
std::vector<rank_view> run(Consistency consistency, sy::strategy::detail::ps_plan plan, std::size_t workers,
                           std::size_t steps, const std::vector<float>& parameters) {
  namespace detail = sy::strategy::detail;
  plan.servers = 1;
  plan.workers = workers;
  plan.first_server = workers;
  plan.arena = parameters.size();
  plan.hands_out_batches = !sy::strategy::consistency::is_synchronous<Consistency>;
  plan.backups = sy::strategy::consistency::has_backups<Consistency>;
  const std::size_t batches = workers * steps;
  return sy::transport::run_inproc(static_cast<int>(workers) + 1, [&](sy::transport::inproc& t) {
    rank_view view;
    std::vector<float> own = parameters;
    if (static_cast<std::size_t>(t.rank()) == workers) {
      detail::ps_server<Consistency> server{consistency};
      server.template setup<float>(plan, std::span<const float>(own), false);
      server.coordinator().begin_epoch(batches, workers, plan.pipelined ? 2 : 1);
      server.begin_part(plan, batches);
      const detail::serving_thread serving;
      subtract optimizer;
      server.serve(t, plan, std::span<float>(own), optimizer, view.statistics, serving);
      view.served = own;
      return view;
    }
    detail::ps_worker worker;
    worker.setup<float>(plan, true);
    worker.begin_part();
    const std::vector<float> gradient(own.size(), 0.5f * static_cast<float>(t.rank() + 1));
    const auto finish = [&] {
      view.handed.push_back(worker.finish_exchange(t, plan, std::span<float>(own), [] {}));
      view.pulled.push_back(own);
    };
    for (std::size_t s = 0; s < steps; ++s) {
      if (worker.in_flight()) finish();
      worker.post_exchange(t, plan, std::span<float>(own), std::span<const float>(gradient),
                           sy::transport::seconds_now(t));
      if (!plan.pipelined) finish();
    }
    if (worker.in_flight()) finish();
    if (plan.compressed()) {
      t.send(std::span<const std::uint16_t>(), static_cast<int>(workers), detail::ps_tags::push);
    } else {
      t.send(std::span<const float>(), static_cast<int>(workers), detail::ps_tags::push);
    }
    const std::span<const float> owed = worker.feedback().residual();
    view.residual.assign(owed.begin(), owed.end());
    return view;
  });
}

}  // namespace ps_test
