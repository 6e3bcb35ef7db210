#include "daemon/session_registry.hpp"

#include <vector>

#include "observability/log.hpp"

namespace weir {

session_registry::session_registry(std::size_t max_connections, listener_stats& stats)
    : max_connections_(max_connections), stats_(stats) {}

bool session_registry::make_room() {
  {
    std::lock_guard<std::mutex> guard(mutex_);
    if (closing_) return false;
  }
  if (static_cast<std::size_t>(stats_.active.load()) < max_connections_) return true;
  // A producer that is busy with the daemon is never the one to go.
  auto victim = longest_stalled();
  if (!victim) {
    ++stats_.rejected_over_limit;
    log::debug("connection refused: listen.max_connections reached and every connection is busy",
               {{"max_connections", std::to_string(max_connections_)}});
    return false;
  }
  victim->evict();
  return true;
}

bool session_registry::add(const make_session& make) {
  std::lock_guard<std::mutex> guard(mutex_);
  if (closing_) return false;
  const std::uint64_t id = next_id_++;
  // The entry goes when the session ends, whichever side ends it. A session
  // may end inside `make` (its attach posts, so not here): the lock is not
  // taken by on_finished on this thread.
  auto forget = [this, id] {
    std::lock_guard<std::mutex> g(mutex_);
    sessions_.erase(id);
  };
  sessions_[id] = make(std::move(forget));
  return true;
}

std::shared_ptr<session_control> session_registry::longest_stalled() {
  std::shared_ptr<session_control> victim;
  std::optional<session_control::clock::time_point> oldest;
  std::lock_guard<std::mutex> guard(mutex_);
  for (auto& [id, weak] : sessions_) {
    auto s = weak.lock();
    if (!s) continue;
    const auto since = s->stalled_since();
    if (since && (!oldest || *since < *oldest)) {
      oldest = since;
      victim = std::move(s);
    }
  }
  return victim;
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
