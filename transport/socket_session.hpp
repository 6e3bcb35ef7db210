#pragma once
// The Asio side of one client connection: it reads and writes bytes on the
// socket's strand and forwards them to the connection actor, which owns all
// protocol state. It never blocks and never waits on the actor.
//
// It also keeps the peer honest about time and memory: a frame must arrive
// whole within the read timeout of its first byte (not per read), and reply
// bytes the peer does not read are bounded (the actor stops reading while
// they are over the write limit). And it says how long it has been stalled on
// its peer, so that at the connection limit the listener can close the
// connection that waits longest for its peer instead of refusing a new one.
//
// One template for both transports: a Unix socket, and TLS over TCP (whose
// handshake the TCP listener has done before the session starts). On the
// Unix socket a reply may go straight out from the actor's thread; a TLS
// stream is touched only on its strand.
#include <array>
#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <type_traits>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <caf/actor.hpp>

#include "transport/read_poller.hpp"
#include "transport/session_registry.hpp"
#include "messages/connection_protocol.hpp"
#include "observability/listener_stats.hpp"

namespace weir {

class client_activity;

template <class Stream>
class basic_socket_session : public connection_io,
                             public session_control,
                             public readable_target,
                             public std::enable_shared_from_this<basic_socket_session<Stream>> {
 public:
  using socket_type = Stream;
  using clock = std::chrono::steady_clock;
  /// Whether replies may be sent from the actor's thread (not through TLS).
  static constexpr bool direct_send = std::is_same_v<Stream, boost::asio::local::stream_protocol::socket>;

  /// Reply bytes queued for a peer beyond which the actor stops reading.
  static constexpr std::size_t write_limit = 256 * 1024;
  /// Chunks read and not yet consumed by the actor beyond which the session
  /// stops reading: the next read is armed as soon as one is delivered, and
  /// a peer the actor does not keep up with is held to this much.
  static constexpr std::uint64_t chunks_ahead = 2;

  basic_socket_session(socket_type socket, std::chrono::milliseconds read_timeout, listener_stats& stats,
                       std::function<void()> on_finished, client_activity* activity = nullptr,
                       read_poller* poller = nullptr);
  ~basic_socket_session() override;

  /// Makes the session's actor with `make_actor` and binds the session to
  /// it, on the session's strand. The actor starts the reading as soon as it
  /// exists, and every handler that hands it bytes runs on the strand after
  /// this one, so none can find the session without its actor.
  void attach(std::function<connection_actor(connection_io_ptr)> make_actor);

  void write(byte_buffer bytes) override;
  void consumed(bool mid_frame, std::uint64_t frames_done, std::uint64_t chunks) override;
  void hold_frame(std::uint64_t frames_done) override;
  void set_replies_owed(bool owed) override;
  bool write_blocked() const override { return write_blocked_.load(std::memory_order_acquire); }
  void close() override;

  /// Asks the actor to finish: no new frames, owed replies written, then close.
  void request_shutdown() override;
  /// Closes at once, without flushing; used when shutdown runs out of time.
  void abort() override;
  /// Closes at once to make room for a new connection.
  void evict() override;

  /// Since when the session has waited on its peer (for the rest of a frame,
  /// for a next frame, or for the peer to read its replies); nullopt while it
  /// waits on the daemon.
  std::optional<clock::time_point> stalled_since() const override;
  bool input_waiting() const override;
  bool unread_input() const override;
  std::chrono::nanoseconds loss_recovery_time() const override;

  /// The poller says the socket has bytes (Unix sockets with a poller).
  void on_readable() override;

 private:
  /// On the strand: the deadline follows the actor's frame, and reading
  /// resumes if it had paused.
  void on_consumed();
  // The next three are called with send_mutex_ held.
  /// Whether another chunk may be read now.
  bool may_read() const;
  /// Whether the frame deadline does not match the actor's frame.
  bool deadline_stale() const;
  /// Marks a read armed if one may be; the caller then calls start_read().
  bool claim_read();
  /// On the strand: reads the next chunk and hands it to the actor.
  void start_read();
  /// On the strand: what a read brought (`n` bytes, or end of input or an
  /// error in `ec`) goes to the actor.
  void on_read(const boost::system::error_code& ec, std::size_t n);
  /// On the strand, told by the poller: reads once if a read is armed, else
  /// stops listening to the poller until the next one is.
  void read_polled();
  /// Sends `bytes` from the calling thread (the connection actor's) when
  /// nothing is queued or in flight ahead of them; false, with what the
  /// socket took cut from the front, when the rest must go through the strand.
  bool try_send_now(byte_buffer& bytes);
  void do_write();
  void finish();
  void keep_frame_deadline(std::uint64_t frames_done);  // send_mutex_ held
  void note_waiting();
  void set_stalled(clock::time_point at) { stalled_since_ns_.store(at.time_since_epoch().count(), std::memory_order_relaxed); }

  socket_type socket_;
  const int fd_;  // for input_waiting(), from other threads: the socket object is the strand's
  boost::asio::strand<typename socket_type::executor_type> strand_;
  boost::asio::steady_timer timer_;
  std::chrono::milliseconds read_timeout_;
  listener_stats& stats_;
  std::function<void()> on_finished_;
  client_activity* activity_;  // told of client bytes; null: nobody listens
  read_poller* poller_;        // null: reads go through Asio's reactor
  bool polled_ = false;        // the poller watches the socket (strand only)
  std::uint32_t poller_seen_ = 0;  // read_poller::note_read's marker for this connection
  std::uint32_t activity_seen_ = 0;  // client_activity::note's marker for this connection
  connection_actor actor_;
  std::array<std::uint8_t, 64 * 1024> read_buf_{};
  // Replies may be sent straight from the actor's thread (try_send_now): the
  // state that decides whether bytes are already ahead of a reply, and the
  // socket's closing, are guarded by send_mutex_. The strand reads them
  // without it (it is their only other writer).
  std::mutex send_mutex_;
  std::deque<byte_buffer> write_queue_;
  std::size_t posted_writes_ = 0;  // write() calls on their way to write_queue_
  bool writing_ = false;
  bool close_requested_ = false;
  bool finished_ = false;
  // Reading and who the connection waits on (guarded by send_mutex_: the
  // actor's thread sets what it consumed and replies_owed_, the strand the
  // rest).
  bool replies_owed_ = false;
  bool reading_started_ = false;   // the actor's first consumed() call came
  bool read_armed_ = false;
  bool peer_done_ = false;         // end of input: nothing more to read
  std::uint64_t delivered_ = 0;    // chunks handed to the actor
  std::uint64_t released_ = 0;     // of those, chunks it consumed
  bool actor_mid_frame_ = false;   // as of its last consumed() call
  std::uint64_t actor_frames_done_ = 0;
  bool deadline_armed_ = false;
  std::uint64_t deadline_frames_ = 0;  // frames_done when the deadline was armed
  std::uint64_t deadline_generation_ = 0;  // which arming a timer expiry belongs to
  clock::time_point frame_started_{};
  std::atomic<std::size_t> write_backlog_{0};
  std::atomic<bool> write_blocked_{false};
  std::atomic<clock::rep> stalled_since_ns_{0};  // 0: waiting on the daemon
  std::atomic<bool> between_frames_{false};      // stalled on its peer, no frame begun, replies read
};

using unix_session = basic_socket_session<boost::asio::local::stream_protocol::socket>;
using tls_stream = boost::asio::ssl::stream<boost::asio::ip::tcp::socket>;
using tls_session = basic_socket_session<tls_stream>;

}  // namespace weir
