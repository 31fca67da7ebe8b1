// For the tests of transport/inproc/'s pieces: a bare group of in-process ranks, without the
// launcher, and one thread per rank to play it.
#pragma once

#include <switchyard/transport/inproc/group.hpp>

#include <chrono>
#include <cstddef>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace inproc_test {

// A group of ranks 0 .. ranks - 1 of a new fabric.
inline std::shared_ptr<switchyard::transport::detail::inproc_group> make_group(
    int ranks, switchyard::transport::inproc_options options = {}) {
  auto fabric = std::make_shared<switchyard::transport::detail::inproc_fabric>(ranks, options);
  std::vector<int> members;
  for (int r = 0; r < ranks; ++r) members.push_back(r);
  return std::make_shared<switchyard::transport::detail::inproc_group>(fabric, std::move(members));
}

// Options whose waits time out after `milliseconds` and never spin.
inline switchyard::transport::inproc_options quick(int milliseconds) {
  switchyard::transport::inproc_options o;
  o.timeout = std::chrono::milliseconds(milliseconds);
  o.spin = 0;
  return o;
}

// Runs `f(rank)` on one thread per rank and returns what each raised ("" for nothing).
template <class F>
std::vector<std::string> on_threads(int ranks, F f) {
  std::vector<std::string> raised(static_cast<std::size_t>(ranks));
  {
    std::vector<std::jthread> threads;
    for (int r = 0; r < ranks; ++r) {
      threads.emplace_back([&raised, &f, r] {
        try {
          f(r);
        } catch (const std::exception& e) {
          raised[static_cast<std::size_t>(r)] = e.what();
        }
      });
    }
  }
  return raised;
}

}  // namespace inproc_test
