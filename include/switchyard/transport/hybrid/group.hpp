// A group of a hybrid world as one of its threads holds it: where each member runs (process,
// thread slot, rank among the group's threads of this process), the in-process group of the
// members that share this process, and the context that keeps the group's MPI messages apart.
#pragma once

#include <switchyard/transport/hybrid/process.hpp>
#include <switchyard/transport/inproc/handle.hpp>
#include <switchyard/transport/topology.hpp>
#include <switchyard/transport/transport.hpp>

#include <boost/mpi/config.hpp>  // <mpi.h>, without Open MPI's deprecated C++ bindings

#include <algorithm>
#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

namespace switchyard::transport::detail {

struct hybrid_member {
  int process = 0;
  int slot = 0;    // the thread slot on its process, whose communicator it receives on
  int local = -1;  // its rank in the in-process group, for a member of this process
};

struct hybrid_group {
  hybrid_group(std::shared_ptr<hybrid_process> owner, inproc local_group, std::vector<hybrid_member> all,
               int my_rank, int group_context, bool checked)
      : process(std::move(owner)),
        local(std::move(local_group)),
        members(std::move(all)),
        rank(my_rank),
        context(group_context),
        checks{checked, 0} {
    const std::size_t n = members.size();
    std::vector<int> node_of(n);
    std::vector<int> identity(n);
    for (std::size_t r = 0; r < n; ++r) {
      identity[r] = static_cast<int>(r);
      node_of[r] = members[r].process;
      if (members[r].local >= 0) {
        if (local_ranks.size() <= static_cast<std::size_t>(members[r].local)) {
          local_ranks.resize(static_cast<std::size_t>(members[r].local) + 1);
        }
        local_ranks[static_cast<std::size_t>(members[r].local)] = static_cast<int>(r);
      } else if (std::find(remote_slots.begin(), remote_slots.end(), members[r].slot) == remote_slots.end()) {
        remote_slots.push_back(members[r].slot);
      }
    }
    topology = topologies(identity, node_of)[static_cast<std::size_t>(rank)];
  }

  [[nodiscard]] const hybrid_member& me() const { return members[static_cast<std::size_t>(rank)]; }
  [[nodiscard]] MPI_Comm comm_of(int slot) const { return process->slots[static_cast<std::size_t>(slot)]; }
  // The group rank of the member on `process` in `slot`, or -1.
  [[nodiscard]] int rank_of(int on_process, int slot) const {
    for (std::size_t r = 0; r < members.size(); ++r) {
      if (members[r].process == on_process && members[r].slot == slot) return static_cast<int>(r);
    }
    return -1;
  }
  [[nodiscard]] int size() const noexcept { return static_cast<int>(members.size()); }

  std::shared_ptr<hybrid_process> process;
  inproc local;
  std::vector<hybrid_member> members;  // group rank -> where it runs
  int rank;
  int context;
  std::vector<int> local_ranks;   // rank in the in-process group -> group rank
  std::vector<int> remote_slots;  // the slots of the members on other processes, each once
  node_topology topology;
  collective_check_state checks;
  transport::group_cache cache;
};

}  // namespace switchyard::transport::detail
