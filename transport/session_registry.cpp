#include "transport/session_registry.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "observability/log.hpp"

namespace weir {

session_registry::session_registry(std::size_t max_connections, listener_stats& stats)
    : max_connections_(max_connections), stats_(stats) {}

bool session_registry::admit(const make_session& make) {
  std::lock_guard<std::mutex> guard(mutex_);
  if (closing_) return false;
  for (auto it = sessions_.begin(); it != sessions_.end();) it = it->second.expired() ? sessions_.erase(it) : std::next(it);
  if (sessions_.size() >= max_connections_) {
    // A producer that is busy with the daemon is never the one to go.
    const auto victim = longest_stalled();
    if (victim == sessions_.end()) {
      ++stats_.rejected_over_limit;
      if (const auto refused = stats_.over_limit_lines.admit())
        log::warn("connection refused: listen.max_connections reached and every connection is busy",
                  {{"max_connections", std::to_string(max_connections_)}, {"refused_since_last_line", std::to_string(refused)}});
      return false;
    }
    auto s = victim->second.lock();
    sessions_.erase(victim);  // its slot is the new one's from now on
    if (s) s->evict();        // posted to its strand: no lock of ours is taken there
  }
  const std::uint64_t id = next_id_++;
  // The entry goes when the session ends, whichever side ends it (its
  // finish runs on its strand, never inside `make`).
  auto forget = [this, id] {
    std::lock_guard<std::mutex> g(mutex_);
    sessions_.erase(id);
  };
  sessions_[id] = make(std::move(forget));
  return true;
}

session_registry::entries::iterator session_registry::longest_stalled() {
  using candidate = std::pair<session_control::clock::time_point, entries::iterator>;
  std::vector<candidate> stalled;
  for (auto it = sessions_.begin(); it != sessions_.end(); ++it)
    if (auto s = it->second.lock())
      if (const auto since = s->stalled_since()) stalled.emplace_back(*since, it);
  // Its stamp says since when it waited on its peer, not whether the peer has
  // sent since: one system call each, asked oldest first, of as few as need
  // it (a heap, not a sort: at tens of thousands of connections this runs
  // for every newcomer of a flood).
  const auto later = [](const candidate& a, const candidate& b) { return a.first > b.first; };
  std::make_heap(stalled.begin(), stalled.end(), later);
  for (auto end = stalled.end(); end != stalled.begin(); --end) {
    std::pop_heap(stalled.begin(), end, later);
    const auto it = (end - 1)->second;
    if (auto s = it->second.lock(); s && !s->input_waiting()) return it;
  }
  return sessions_.end();
}

void session_registry::wind_down() {
  {
    std::lock_guard<std::mutex> guard(mutex_);
    closing_ = true;
  }
  for_each(&session_control::request_shutdown);
}

void session_registry::stop() {
  {
    std::lock_guard<std::mutex> guard(mutex_);
    closing_ = true;
  }
  for_each(&session_control::abort);
}

void session_registry::for_each(void (session_control::*action)()) {
  // Actions post to each session's strand; taken out of the lock so that a
  // session ending meanwhile (forget) never waits on it.
  std::vector<std::shared_ptr<session_control>> live;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    for (auto& [id, weak] : sessions_)
      if (auto s = weak.lock()) live.push_back(std::move(s));
  }
  for (auto& s : live) ((*s).*action)();
}

}  // namespace weir
