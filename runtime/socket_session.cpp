#include "runtime/socket_session.hpp"

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <caf/send.hpp>

namespace weir {

namespace asio = boost::asio;

socket_session::socket_session(socket_type socket, std::chrono::milliseconds read_timeout,
                               listener_stats& stats, std::function<void()> on_finished)
    : socket_(std::move(socket)),
      strand_(socket_.get_executor()),
      timer_(strand_),
      read_timeout_(read_timeout),
      stats_(stats),
      on_finished_(std::move(on_finished)) {
  ++stats_.active;
}

socket_session::~socket_session() {
  if (!finished_) --stats_.active;
}

void socket_session::write(byte_buffer bytes) {
  asio::post(strand_, [self = shared_from_this(), b = std::move(bytes)]() mutable {
    if (self->finished_) return;
    self->write_queue_.push_back(std::move(b));
    if (!self->writing_) self->do_write();
  });
}

void socket_session::read_more(bool mid_frame) {
  asio::post(strand_, [self = shared_from_this(), mid_frame] { self->do_read(mid_frame); });
}

void socket_session::close() {
  asio::post(strand_, [self = shared_from_this()] {
    self->close_requested_ = true;
    if (!self->writing_) self->finish();
  });
}

void socket_session::request_shutdown() {
  asio::post(strand_, [self = shared_from_this()] {
    if (self->actor_) caf::anon_send(self->actor_, shutdown_atom::value);
  });
}

void socket_session::abort() {
  asio::post(strand_, [self = shared_from_this()] { self->finish(); });
}

void socket_session::do_read(bool mid_frame) {
  if (finished_ || close_requested_) return;
  if (mid_frame) {
    // A peer that stops in the middle of a frame is closed without a reply.
    timer_.expires_after(read_timeout_);
    timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (ec || self->finished_) return;
      ++self->stats_.idle_timeouts;
      self->finish();
    });
  }
  socket_.async_read_some(
      asio::buffer(read_buf_),
      asio::bind_executor(strand_, [self = shared_from_this()](const boost::system::error_code& ec,
                                                                std::size_t n) {
        self->timer_.cancel();
        if (self->finished_) return;
        if (ec == asio::error::eof && self->actor_) {
          // A producer may half-close after its last frame and still wait
          // for the replies; the actor closes once they are written.
          caf::anon_send(self->actor_, socket_eof_atom::value);
          return;
        }
        if (ec) {
          self->finish();
          return;
        }
        caf::anon_send(self->actor_, socket_data_atom::value,
                       byte_buffer(self->read_buf_.begin(), self->read_buf_.begin() + n));
      }));
}

void socket_session::do_write() {
  if (write_queue_.empty()) {
    writing_ = false;
    if (close_requested_) finish();
    return;
  }
  writing_ = true;
  asio::async_write(socket_, asio::buffer(write_queue_.front()),
                    asio::bind_executor(strand_, [self = shared_from_this()](
                                                     const boost::system::error_code& ec, std::size_t) {
                      if (self->finished_) return;
                      self->write_queue_.pop_front();
                      if (ec) {
                        self->finish();
                        return;
                      }
                      self->do_write();
                    }));
}

void socket_session::finish() {
  if (finished_) return;
  finished_ = true;
  --stats_.active;  // the slot frees when the socket closes, not when the actor lets go
  timer_.cancel();
  boost::system::error_code ignored;
  socket_.shutdown(socket_type::shutdown_both, ignored);
  socket_.close(ignored);
  write_queue_.clear();
  if (actor_) caf::anon_send(actor_, socket_closed_atom::value);
  actor_ = caf::actor{};  // the actor holds this session; do not hold it back
  if (on_finished_) on_finished_();
}

}  // namespace weir
