// The simulated platform: checks a `simulated_options` before anything runs, configures SimGrid's
// network model once per process and its time precision per world, and builds the hosts and
// links (a star or racks under uplinks) or loads a platform file.
#pragma once

#include <switchyard/core/error.hpp>
#include <switchyard/transport/simulated/fabric.hpp>
#include <switchyard/transport/simulated/options.hpp>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <xbt/log.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace switchyard::transport::detail {

// Raises `usage_error` for anything in `options` that cannot make a cluster, before any engine
// exists: no hosts, rates without units or below zero, more ranks than a host has cores, a speed
// factor for a host that does not exist or with a platform file, speed windows that end before they
// begin or overlap, a platform file that cannot be read, a negative or infinite byte cost, a time
// precision of 0 or coarser than a latency.
inline void check_options(const simulated_options& options) {
  const simulated_platform& p = options.platform;
  if (options.native_max_ranks < 1) {
    raise<usage_error>(str("simulated_options::native_max_ranks must be at least 1, got ", options.native_max_ranks));
  }
  if (options.ranks_per_host < 1) {
    raise<usage_error>(str("simulated_options::ranks_per_host must be at least 1, got ", options.ranks_per_host));
  }
  if (!(options.byte_cost >= 0) || !std::isfinite(options.byte_cost)) {
    raise<usage_error>(str("simulated_options::byte_cost must be finite and not negative, got ", options.byte_cost));
  }
  const double precision = parse_duration(options.time_precision, "time precision");
  if (!(precision > 0)) {
    raise<usage_error>(str("simulated_options::time_precision must be above 0, got ", options.time_precision));
  }
  if (!p.file.empty()) {
    if (!p.speeds.empty()) {
      raise<usage_error>(str("speed factors apply to the hosts the options describe, not to those of the platform file '",
                             p.file, "': give its hosts their speeds in the file"));
    }
    std::ifstream in(p.file);
    if (!in) raise<usage_error>(str("the platform file '", p.file, "' cannot be read"));
    // SimGrid crashes on a platform without hosts instead of saying so: look for the tags that
    // make hosts first.
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (text.find("<host") == std::string::npos && text.find("<cluster") == std::string::npos &&
        text.find("<cabinet") == std::string::npos) {
      raise<usage_error>(str("the platform file '", p.file, "' names no hosts (no <host>, <cluster> or <cabinet>)"));
    }
  } else {
    if (p.hosts < 1) raise<usage_error>(str("a simulated cluster needs at least 1 host, got ", p.hosts));
    if (p.cores < 1) raise<usage_error>(str("simulated hosts need at least 1 core, got ", p.cores));
    if (options.ranks_per_host > p.cores) {
      raise<usage_error>(str(options.ranks_per_host, " ranks per host need as many cores, but the hosts have ", p.cores,
                             " (simulated_platform::cores)"));
    }
    (void)parse_bandwidth(p.bandwidth, "link bandwidth");
    const double link_latency = parse_duration(p.latency, "link latency");
    (void)parse_bandwidth(p.loopback_bandwidth, "loopback bandwidth");
    const double loopback_latency = parse_duration(p.loopback_latency, "loopback latency");
    const auto check_resolved = [&](double latency, const char* what, const std::string& given) {
      if (latency > 0 && latency < precision) {
        raise<usage_error>(str("the time precision ", options.time_precision, " is coarser than the ", what,
                               " latency ", given, ", which SimGrid could then not resolve: give a precision of at "
                               "most ", given));
      }
    };
    check_resolved(link_latency, "link", p.latency);
    check_resolved(loopback_latency, "loopback", p.loopback_latency);
    if (p.rack_size < 0) raise<usage_error>(str("simulated_platform::rack_size must be 0 (one switch) or more, got ", p.rack_size));
    if (!(p.oversubscription >= 1)) {
      raise<usage_error>(str("simulated_platform::oversubscription must be at least 1, got ", p.oversubscription));
    }
  }
  for (const host_speed& s : p.speeds) {
    if (s.host < 0 || s.host >= p.hosts) {
      raise<usage_error>(str("a speed factor names host ", s.host, " but the cluster has hosts 0 to ", p.hosts - 1));
    }
    if (!(s.factor > 0) || !std::isfinite(s.factor)) {
      raise<usage_error>(str("the speed factor of host ", s.host, " must be positive and finite, got ", s.factor));
    }
    if (!(s.from >= 0) || !std::isfinite(s.from) || !(s.to > s.from)) {
      raise<usage_error>(str("the speed window of host ", s.host, " must run from 0 or later to a later time, got ",
                             s.from, " to ", s.to, " simulated seconds"));
    }
    for (const host_speed& other : p.speeds) {
      if (&other != &s && other.host == s.host && other.from < s.to && s.from < other.to) {
        raise<usage_error>(str("host ", s.host, " has overlapping speed windows: ", other.from, " to ", other.to,
                               " and ", s.from, " to ", s.to, " simulated seconds"));
      }
    }
  }
}

// SimGrid chooses its network model once per process; every simulated world must ask for the
// one the first chose. The time precision is a plain setting, taken again by every world.
inline void configure_network(simgrid::s4u::Engine& engine, const simulated_options& options) {
  static std::string chosen;
  const std::string model = options.network == network_model::cm02 ? "CM02" : "LV08";
  const std::string wanted = model + (options.cross_traffic ? " with cross-traffic" : " without cross-traffic");
  if (chosen.empty()) {
    xbt_log_control_set("xbt_cfg.thres:warning");
    engine.set_config("network/model:" + model);
    engine.set_config(std::string("network/crosstraffic:") + (options.cross_traffic ? "1" : "0"));
    chosen = wanted;
  } else if (chosen != wanted) {
    raise<usage_error>(str("this process simulated its first world with SimGrid's ", chosen, "; a world with ", wanted,
                           " needs a process of its own (SimGrid sets the model once per process)"));
  }
  engine.set_config("surf/precision", parse_duration(options.time_precision, "time precision"));
}

// One host with its link to its switch and a loopback route for the ranks it runs.
// Its speed for the whole run is its first power state; each window of `p.speeds` adds one, which
// start_speed_windows switches to while the window lasts.
inline simgrid::s4u::Host* add_host(simgrid::s4u::NetZone& zone, const simulated_platform& p, int index) {
  namespace sg4 = simgrid::s4u;
  const std::string name = str("host-", index);
  std::vector<double> speeds{reference_flops};
  for (const host_speed& s : p.speeds) {
    if (s.host != index) continue;
    if (s.whole_run()) {
      speeds.front() = reference_flops * s.factor;
    } else {
      speeds.push_back(reference_flops * s.factor);
    }
  }
  sg4::Host* host = zone.create_host(name, speeds)->set_core_count(p.cores)->seal();
  sg4::Link* link = zone.create_split_duplex_link(name + "-link", parse_bandwidth(p.bandwidth))
                        ->set_latency(parse_duration(p.latency))
                        ->seal();
  zone.add_route(host->get_netpoint(), nullptr, nullptr, nullptr, {{link, sg4::LinkInRoute::Direction::UP}}, true);
  sg4::Link* loopback = zone.create_link(name + "-loopback", parse_bandwidth(p.loopback_bandwidth))
                            ->set_latency(parse_duration(p.loopback_latency))
                            ->set_sharing_policy(sg4::Link::SharingPolicy::FATPIPE)
                            ->seal();
  zone.add_route(host->get_netpoint(), host->get_netpoint(), nullptr, nullptr, {{loopback, sg4::LinkInRoute::Direction::NONE}},
                 false);
  return host;
}

// Builds the platform of `options` in `engine` and returns its hosts in rank order. A platform
// file's links are checked against the time precision here, once SimGrid has read them.
inline std::vector<simgrid::s4u::Host*> build_platform(simgrid::s4u::Engine& engine, const simulated_options& options) {
  namespace sg4 = simgrid::s4u;
  const simulated_platform& p = options.platform;
  if (!p.file.empty()) {
    try {
      engine.load_platform(p.file);
    } catch (const std::exception& e) {
      raise<usage_error>(str("the platform file '", p.file, "' does not load: ", e.what()));
    }
    std::vector<sg4::Host*> hosts = engine.get_all_hosts();
    if (hosts.empty()) raise<usage_error>(str("the platform file '", p.file, "' names no hosts"));
    const double precision = parse_duration(options.time_precision, "time precision");
    for (const sg4::Link* link : engine.get_all_links()) {
      if (link->get_latency() > 0 && link->get_latency() < precision) {
        raise<usage_error>(str("the time precision ", options.time_precision, " is coarser than the latency of link ",
                               link->get_name(), " of the platform file '", p.file, "' (", link->get_latency() * 1e9,
                               " ns), which SimGrid could then not resolve: give a precision of at most that latency"));
      }
    }
    for (sg4::Host* h : hosts) {
      if (options.ranks_per_host > h->get_core_count()) {
        raise<usage_error>(str(options.ranks_per_host, " ranks per host need as many cores, but host ", h->get_name(),
                               " of '", p.file, "' has ", h->get_core_count()));
      }
    }
    return hosts;
  }
  std::vector<sg4::Host*> hosts;
  hosts.reserve(static_cast<std::size_t>(p.hosts));
  sg4::NetZone* top = sg4::create_star_zone("cluster");
  if (p.rack_size == 0 || p.rack_size >= p.hosts) {
    for (int h = 0; h < p.hosts; ++h) hosts.push_back(add_host(*top, p, h));
    top->seal();
    return hosts;
  }
  const double uplink = parse_bandwidth(p.bandwidth) * p.rack_size / p.oversubscription;
  for (int first = 0, rack = 0; first < p.hosts; first += p.rack_size, ++rack) {
    sg4::NetZone* zone = sg4::create_star_zone(str("rack-", rack));
    zone->set_parent(top);
    for (int h = first; h < std::min(p.hosts, first + p.rack_size); ++h) {
      hosts.push_back(add_host(*zone, p, h));
    }
    simgrid::kernel::routing::NetPoint* gateway = zone->create_router(str("rack-", rack, "-switch"));
    zone->seal();
    sg4::Link* link = top->create_split_duplex_link(str("rack-", rack, "-uplink"), uplink)
                          ->set_latency(parse_duration(p.latency))
                          ->seal();
    top->add_route(zone->get_netpoint(), nullptr, gateway, nullptr, {{link, sg4::LinkInRoute::Direction::UP}}, true);
  }
  top->seal();
  return hosts;
}

// Starts, for each host with speed windows, a daemon actor that switches the host to a window's
// power state at its start and back to the first at its end, in simulated seconds since `start`.
// Daemons end with the last rank.
inline void start_speed_windows(const std::vector<simgrid::s4u::Host*>& hosts, const simulated_platform& p, double start) {
  namespace sg4 = simgrid::s4u;
  for (std::size_t h = 0; h < hosts.size(); ++h) {
    struct window {
      double from;
      double to;
      unsigned long state;
    };
    std::vector<window> windows;
    for (const host_speed& s : p.speeds) {
      if (static_cast<std::size_t>(s.host) == h && !s.whole_run()) windows.push_back({s.from, s.to, windows.size() + 1});
    }
    if (windows.empty()) continue;
    std::sort(windows.begin(), windows.end(), [](const window& a, const window& b) { return a.from < b.from; });
    sg4::Host* host = hosts[h];
    sg4::Actor::create(str("speed-", h), host, [host, windows, start] {
      for (const window& w : windows) {
        sg4::this_actor::sleep_until(start + w.from);
        host->set_pstate(w.state);
        if (!std::isfinite(w.to)) return;
        sg4::this_actor::sleep_until(start + w.to);
        host->set_pstate(0);
      }
    })->daemonize();
  }
}

}  // namespace switchyard::transport::detail
