#pragma once
// The producer connections of every listener (the Unix socket and TCP), under
// one listen.max_connections. At the limit a new connection takes the place
// of the one that has waited longest on its peer, whichever listener either
// came from: idle or hostile connections on one cannot lock producers out of
// the other. Once the daemon winds down, no connection joins.
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "observability/listener_stats.hpp"

namespace weir {

/// What the registry needs of a session, whatever its transport.
class session_control {
 public:
  using clock = std::chrono::steady_clock;
  virtual ~session_control() = default;
  /// No new frames; owed replies written; then close.
  virtual void request_shutdown() = 0;
  /// Close at once, without flushing.
  virtual void abort() = 0;
  /// Close at once to make room for a new connection.
  virtual void evict() = 0;
  /// Since when the session has waited on its peer; nullopt while it waits on the daemon.
  virtual std::optional<clock::time_point> stalled_since() const = 0;
  /// Bytes the peer sent wait unread while its replies flow: whatever
  /// stalled_since says, the daemon owes it a read (an io thread busy with a
  /// flood of new connections has not come to it yet).
  virtual bool input_waiting() const = 0;
};

class session_registry {
 public:
  using make_session = std::function<std::shared_ptr<session_control>(std::function<void()> on_finished)>;

  session_registry(std::size_t max_connections, listener_stats& stats);

  /// Serves one more connection if it may be: under the limit, or at it
  /// once the session stalled longest has been evicted (in one step, so
  /// that connections admitted at once from several threads never pass the
  /// limit or pick the same victim). Then registers the session `make`
  /// builds, which leaves the registry when it calls the on_finished it was
  /// given. False, with nothing built, when every session is busy with the
  /// daemon (counted as rejected over the limit) or the daemon is winding
  /// down: the caller closes the connection.
  bool admit(const make_session& make);
  /// From now on no session joins; every live one is asked to finish.
  void wind_down();
  /// Every live session is closed at once.
  void stop();
  std::size_t max_connections() const { return max_connections_; }

 private:
  using entries = std::unordered_map<std::uint64_t, std::weak_ptr<session_control>>;
  /// The live session stalled longest on its peer, none whose input waits
  /// unread; end() when all wait on the daemon. With mutex_ held.
  entries::iterator longest_stalled();
  void for_each(void (session_control::*action)());

  const std::size_t max_connections_;
  listener_stats& stats_;
  std::mutex mutex_;
  bool closing_ = false;
  std::uint64_t next_id_ = 0;
  entries sessions_;
};

}  // namespace weir
