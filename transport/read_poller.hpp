#pragma once
// Tells Unix-socket sessions when their socket has bytes, from one
// level-triggered epoll set that the io threads wait on through Asio.
//
// Asio's own reactor is edge-triggered and reads speculatively: after every
// read that returned data it reads again at once, and on a producer that
// waits for its ack that read finds nothing (EAGAIN). That is one system
// call in three per record on the io thread (decision 0020). Here a socket
// with nothing to read costs nothing: a session reads once when the set
// says it has bytes, and the set says so again while bytes are left. The
// price is two system calls per wake-up of the io thread (this set's
// epoll_wait and Asio re-arming its descriptor), shared by every socket
// that was ready in it.
//
// That pays only when a wake-up finds several sockets ready: with one or a
// few producers it finds one, and a lone producer's record cost more CPU
// and a longer round trip through the set than through Asio's reactor
// (decision 0020). So the set is used
// only while many connections send: ten times a second the poller counts
// the connections that read bytes, and sessions read through the set while
// more than `batch_above` did, through Asio's reactor once no more than
// `direct_at_most` do. A session changes its way at its next read.
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>

#include "runtime/connections_per_look.hpp"
#include "observability/read_batching_stats.hpp"

namespace weir {

/// What the poller tells: called on an io thread, with no lock held.
class readable_target {
 public:
  virtual ~readable_target() = default;
  virtual void on_readable() = 0;
};

class read_poller {
 public:
  static constexpr std::uint32_t batch_above = 8;
  static constexpr std::uint32_t direct_at_most = 4;

  /// `always`: sessions read through the set whatever the load
  /// (runtime.read_batching: always), else as the count says.
  read_poller(boost::asio::io_context& io, bool always);
  ~read_poller();
  read_poller(const read_poller&) = delete;
  read_poller& operator=(const read_poller&) = delete;

  /// Starts waiting; on_readable calls begin once an io thread runs.
  void start();
  /// Stops waiting (before the io_context stops).
  void stop();

  /// From now on `target` hears when `fd` has bytes (or its peer is gone),
  /// until unwatch(). False when the set refused it.
  bool watch(int fd, std::weak_ptr<readable_target> target);
  /// No more calls for `fd`; before the descriptor is closed.
  void unwatch(int fd);

  /// Whether sessions should read through the set now.
  bool batching() const { return stats_.batching.load(std::memory_order_relaxed); }
  const read_batching_stats& stats() const { return stats_; }

  /// The way to read after a tick that counted `active` connections
  /// reading, from the way until then (`batching`).
  static bool next_batching(bool batching, std::uint32_t active) {
    if (active > batch_above) return true;
    if (active <= direct_at_most) return false;
    return batching;
  }
  /// A connection read bytes; `seen` is that connection's own marker.
  void note_read(std::uint32_t& seen) noexcept { reading_.note(seen); }

 private:
  void wait();     // mutex_ held
  void on_ready();
  void tick();     // mutex_ held

  boost::asio::posix::stream_descriptor set_;
  std::mutex mutex_;
  std::unordered_map<int, std::weak_ptr<readable_target>> targets_;
  bool stopped_ = false;
  boost::asio::steady_timer ticker_;
  connections_per_look reading_;  // connections that read since the last tick
  const bool always_;
  read_batching_stats stats_;
};

}  // namespace weir
