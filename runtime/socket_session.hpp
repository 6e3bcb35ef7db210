#pragma once
// The Asio side of one client connection: it reads and writes bytes on the
// socket's strand and forwards them to the connection actor, which owns all
// protocol state. It never blocks and never waits on the actor.
#include <array>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>

#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <caf/actor.hpp>

#include "messages/connection_protocol.hpp"
#include "runtime/listener_stats.hpp"

namespace weir {

class socket_session : public connection_io, public std::enable_shared_from_this<socket_session> {
 public:
  using socket_type = boost::asio::local::stream_protocol::socket;

  socket_session(socket_type socket, std::chrono::milliseconds read_timeout, listener_stats& stats,
                 std::function<void()> on_finished);
  ~socket_session() override;

  /// Binds the session to its actor; the actor asks for the first read.
  void attach(caf::actor actor) { actor_ = std::move(actor); }

  void write(byte_buffer bytes) override;
  void read_more(bool mid_frame) override;
  void close() override;

  /// Asks the actor to finish: no new frames, owed replies written, then close.
  void request_shutdown();
  /// Closes at once, without flushing; used when shutdown runs out of time.
  void abort();

 private:
  void do_read(bool mid_frame);
  void do_write();
  void finish();

  socket_type socket_;
  boost::asio::strand<socket_type::executor_type> strand_;
  boost::asio::steady_timer timer_;
  std::chrono::milliseconds read_timeout_;
  listener_stats& stats_;
  std::function<void()> on_finished_;
  caf::actor actor_;
  std::array<std::uint8_t, 64 * 1024> read_buf_{};
  std::deque<byte_buffer> write_queue_;
  bool writing_ = false;
  bool close_requested_ = false;
  bool finished_ = false;
};

}  // namespace weir
