// A simulated rank's matching queues: the messages that arrived before their receive and the
// receives posted before their message, indexed by (group, source, tag) so that a receive that
// names its source and tag, and a message that meets such receives, find their match without
// scanning the others. MPI's order holds: a receive takes the earliest message it accepts, a
// message the earliest receive that accepts it, whichever index they sit in (every entry carries
// its arrival or posting number). Receives from any source or with any tag are matched in order
// of arrival, as before the index. A key's queue stays once made (a rank meets few keys), so
// that a message or receive costs no allocation once its key has been seen.
#pragma once

#include <switchyard/transport/transport.hpp>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <unordered_map>

namespace switchyard::transport::detail {

// What a message is matched by.
struct match_key {
  std::uint64_t group = 0;
  int source = 0;
  int tag = 0;
  friend bool operator==(const match_key&, const match_key&) = default;
};

struct match_key_hash {
  std::size_t operator()(const match_key& k) const noexcept {
    const auto peer = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.source)) << 32) |
                      static_cast<std::uint32_t>(k.tag);
    return std::hash<std::uint64_t>{}(peer ^ (k.group * 0x9E3779B97F4A7C15ULL));
  }
};

template <class Item>
struct match_entry {
  std::uint64_t sequence = 0;
  Item* item = nullptr;
};

// `Message` and `Receive` have `group`, `source` and `tag`; `accepts(receive, message)` says
// whether they match (found by argument-dependent lookup).
template <class Message, class Receive>
class sim_matching {
 public:
  // The earliest waiting message that `r` accepts, taken out of the queue, or null.
  Message* take_message(const Receive& r) {
    if (r.source != any_source && r.tag != any_tag) {
      const auto bucket = messages_.find(match_key{r.group, r.source, r.tag});
      if (bucket == messages_.end() || bucket->second.empty()) return nullptr;
      return pop_message(bucket);
    }
    for (const auto& [sequence, m] : arrivals_) {
      if (accepts(r, *m)) return pop_message(messages_.find(match_key{m->group, m->source, m->tag}));
    }
    return nullptr;
  }
  // Keeps message `m`, which no posted receive accepted.
  void keep_message(Message* m) {
    const std::uint64_t sequence = next_++;
    messages_[match_key{m->group, m->source, m->tag}].push_back({sequence, m});
    arrivals_.emplace(sequence, m);
  }
  // The earliest posted receive that accepts `m`, taken out of the queue, or null.
  Receive* take_receive(const Message& m) {
    const auto bucket = receives_.find(match_key{m.group, m.source, m.tag});
    const bool none = bucket == receives_.end() || bucket->second.empty();
    const std::uint64_t exact = none ? UINT64_MAX : bucket->second.front().sequence;
    for (auto it = wildcards_.begin(); it != wildcards_.end() && it->first < exact; ++it) {
      if (accepts(*it->second, m)) {
        Receive* r = it->second;
        wildcards_.erase(it);
        return r;
      }
    }
    if (none) return nullptr;
    Receive* r = bucket->second.front().item;
    bucket->second.pop_front();
    return r;
  }
  // Posts receive `r`, which no waiting message fitted.
  void post_receive(Receive* r) {
    const std::uint64_t sequence = next_++;
    if (r->source == any_source || r->tag == any_tag) {
      wildcards_.emplace(sequence, r);
    } else {
      receives_[match_key{r->group, r->source, r->tag}].push_back({sequence, r});
    }
  }
  // Takes receive `r` out of the queue if it is posted there (a receive dropped before it completed).
  void cancel_receive(const Receive* r) {
    if (r->source == any_source || r->tag == any_tag) {
      std::erase_if(wildcards_, [r](const auto& w) { return w.second == r; });
      return;
    }
    const auto bucket = receives_.find(match_key{r->group, r->source, r->tag});
    if (bucket == receives_.end()) return;
    std::erase_if(bucket->second, [r](const match_entry<Receive>& e) { return e.item == r; });
  }
  // Messages waiting for their receive, and receives posted.
  [[nodiscard]] std::size_t waiting_messages() const noexcept { return arrivals_.size(); }
  [[nodiscard]] std::size_t posted_receives() const noexcept {
    std::size_t n = wildcards_.size();
    for (const auto& bucket : receives_) n += bucket.second.size();
    return n;
  }

 private:
  using message_buckets = std::unordered_map<match_key, std::deque<match_entry<Message>>, match_key_hash>;

  // The first message of `bucket`, the earliest of its key, out of both indexes.
  Message* pop_message(typename message_buckets::iterator bucket) {
    const match_entry<Message> first = bucket->second.front();
    bucket->second.pop_front();
    arrivals_.erase(first.sequence);
    return first.item;
  }

  std::uint64_t next_ = 0;                           // arrivals and postings, counted together
  message_buckets messages_;                         // by key, each in order of arrival
  std::map<std::uint64_t, Message*> arrivals_;       // all of them, in order of arrival
  std::unordered_map<match_key, std::deque<match_entry<Receive>>, match_key_hash> receives_;  // naming source and tag
  std::map<std::uint64_t, Receive*> wildcards_;      // from any source or with any tag, in order
};

}  // namespace switchyard::transport::detail
