#include "transport/socket_session.hpp"

#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/write.hpp>
#include <caf/send.hpp>

#include "runtime/client_activity.hpp"
#include "runtime/io_thread_unit.hpp"
#include "transport/tcp_recovery.hpp"
#include "observability/log.hpp"

namespace weir {

namespace asio = boost::asio;

template <class Stream>
basic_socket_session<Stream>::basic_socket_session(socket_type socket, std::chrono::milliseconds read_timeout,
                               listener_stats& stats, std::function<void()> on_finished,
                                                   client_activity* activity, read_poller* poller)
    : socket_(std::move(socket)),
      fd_(socket_.lowest_layer().native_handle()),
      strand_(socket_.get_executor()),
      timer_(strand_),
      read_timeout_(read_timeout),
      stats_(stats),
      on_finished_(std::move(on_finished)),
      activity_(activity),
      poller_(direct_send ? poller : nullptr) {
  ++stats_.active;
  // Until its actor asks for the first read, a new connection waits on
  // nobody in particular: it is a candidate to make room, the oldest first.
  set_stalled(clock::now());
}

template <class Stream>
basic_socket_session<Stream>::~basic_socket_session() {
  if (finished_) return;
  --stats_.active;
}

template <class Stream>
void basic_socket_session<Stream>::attach(std::function<connection_actor(connection_io_ptr)> make_actor) {
  // Not on the accepting thread: with several io threads, a read the new
  // actor asked for could complete on another one before actor_ was set,
  // and the peer's first bytes went to no actor. A session closed before
  // this runs (the daemon stopping) gets no actor: none would be told.
  asio::post(strand_, [self = this->shared_from_this(), make = std::move(make_actor)] {
    if (!self->finished_) self->actor_ = make(self);
  });
}

template <class Stream>
void basic_socket_session<Stream>::write(byte_buffer bytes) {
  if (try_send_now(bytes)) return;
  const std::size_t n = bytes.size();
  // Counted here, on the actor's side, so that the actor sees the limit
  // before it takes the next frame.
  if (write_backlog_.fetch_add(n, std::memory_order_acq_rel) + n > write_limit &&
      !write_blocked_.exchange(true, std::memory_order_acq_rel)) {
    std::lock_guard<std::mutex> guard(send_mutex_);  // ordered with note_waiting()
    set_stalled(clock::now());
  }
  asio::post(strand_, [self = this->shared_from_this(), b = std::move(bytes)]() mutable {
    std::lock_guard<std::mutex> guard(self->send_mutex_);
    --self->posted_writes_;
    if (self->finished_) return;
    self->write_queue_.push_back(std::move(b));
    if (!self->writing_) self->do_write();
  });
}

/// On an idle connection a reply then needs no hand-off to the io thread (a
/// thread wake-up saved per reply). Order is kept: bytes already posted,
/// queued or being written go first, so this one waits its turn behind them.
template <class Stream>
bool basic_socket_session<Stream>::try_send_now(byte_buffer& bytes) {
  std::lock_guard<std::mutex> guard(send_mutex_);
  if (!direct_send || finished_ || writing_ || posted_writes_ > 0 || !write_queue_.empty()) {
    ++posted_writes_;
    return false;
  }
  const ssize_t sent = ::send(socket_.lowest_layer().native_handle(), bytes.data(), bytes.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  if (sent == static_cast<ssize_t>(bytes.size())) return true;
  // A full socket buffer, or an error the strand's write will meet and handle.
  if (sent > 0) bytes.erase(bytes.begin(), bytes.begin() + sent);
  ++posted_writes_;
  return false;
}

/// Called by the actor once it has decoded everything it was handed. The
/// strand is woken only to read again after a pause, or to start, move or
/// stop a frame's deadline: a busy connection, whose next read is already
/// armed, needs neither.
template <class Stream>
void basic_socket_session<Stream>::consumed(bool mid_frame, std::uint64_t frames_done, std::uint64_t chunks) {
  bool wake = false;
  {
    std::lock_guard<std::mutex> guard(send_mutex_);
    released_ += chunks;
    reading_started_ = true;
    actor_mid_frame_ = mid_frame;
    actor_frames_done_ = frames_done;
    wake = !finished_ && ((!read_armed_ && may_read()) || deadline_stale());
    if (!finished_) note_waiting();
  }
  if (wake) asio::post(strand_, [self = this->shared_from_this()] { self->on_consumed(); });
}

/// The actor is inside frame `frames_done` + 1 as surely as when it reports
/// a partial frame: told the same way, so that a later report (the frame
/// done after all) always wins over this one.
template <class Stream>
void basic_socket_session<Stream>::hold_frame(std::uint64_t frames_done) {
  consumed(true, frames_done, 0);
}

/// A read armed while replies were owed waits on the daemon; once the last
/// reply is out it waits on the peer, from now on (mid-frame: from the
/// frame's first byte).
template <class Stream>
void basic_socket_session<Stream>::set_replies_owed(bool owed) {
  std::lock_guard<std::mutex> guard(send_mutex_);
  if (finished_) return;
  replies_owed_ = owed;
  note_waiting();
}

// Called with send_mutex_ held. Who the connection waits on, from what it is
// doing: its peer when the peer does not read its replies (since it stopped:
// write() set that time), and when a read waits with everything read before
// consumed, mid-frame (since the frame's first byte, once its deadline runs)
// or with no reply owed (from now); else the daemon. Every change of those
// states comes through here, so that an idle connection always becomes a
// candidate to make room, and a busy one never.
template <class Stream>
void basic_socket_session<Stream>::note_waiting() {
  const bool on_peer = read_armed_ && delivered_ == released_;
  const bool between_frames = on_peer && !actor_mid_frame_ && !replies_owed_;
  between_frames_.store(between_frames, std::memory_order_relaxed);
  if (write_blocked_.load(std::memory_order_acquire)) return;
  if (on_peer && actor_mid_frame_ && !deadline_stale()) set_stalled(frame_started_);
  else if (between_frames) set_stalled(clock::now());
  else stalled_since_ns_.store(0, std::memory_order_relaxed);
}

template <class Stream>
void basic_socket_session<Stream>::close() {
  asio::post(strand_, [self = this->shared_from_this()] {
    std::lock_guard<std::mutex> guard(self->send_mutex_);
    self->close_requested_ = true;
    if (!self->writing_ && self->posted_writes_ == 0) self->finish();
  });
}

template <class Stream>
void basic_socket_session<Stream>::request_shutdown() {
  asio::post(strand_, [self = this->shared_from_this()] {
    if (self->actor_) caf::anon_send(self->actor_, shutdown_atom::value);
  });
}

template <class Stream>
void basic_socket_session<Stream>::abort() {
  asio::post(strand_, [self = this->shared_from_this()] {
    std::lock_guard<std::mutex> guard(self->send_mutex_);
    self->finish();
  });
}

template <class Stream>
void basic_socket_session<Stream>::evict() {
  asio::post(strand_, [self = this->shared_from_this()] {
    std::lock_guard<std::mutex> guard(self->send_mutex_);
    if (self->finished_) return;
    ++self->stats_.evicted;
    if (const auto closed = self->stats_.eviction_lines.admit())
      log::warn("connection closed for a newcomer at listen.max_connections: it had waited longest on its peer",
                {{"closed_since_last_line", std::to_string(closed)}});
    self->finish();
  });
}

template <class Stream>
std::optional<typename basic_socket_session<Stream>::clock::time_point> basic_socket_session<Stream>::stalled_since() const {
  const auto ns = stalled_since_ns_.load(std::memory_order_relaxed);
  if (ns == 0) return std::nullopt;
  return clock::time_point(clock::duration(ns));
}

// Asked only between frames: the stamp then is when its last reply went out,
// and a next frame already sent is the daemon's to read. Inside a frame the
// clock runs from the frame's first byte whatever is unread (a trickling peer
// has bytes pending too). A closed session's descriptor may have been reused
// meanwhile: the answer is then another socket's, which at worst spares or
// picks a different victim.
template <class Stream>
bool basic_socket_session<Stream>::input_waiting() const {
  if (!between_frames_.load(std::memory_order_relaxed) || write_blocked_.load(std::memory_order_acquire)) return false;
  return unread_input();
}

template <class Stream>
std::chrono::nanoseconds basic_socket_session<Stream>::loss_recovery_time() const {
  return tcp_loss_recovery_time(fd_);
}

template <class Stream>
bool basic_socket_session<Stream>::unread_input() const {
  int unread = 0;
  return ::ioctl(fd_, FIONREAD, &unread) == 0 && unread > 0;
}

/// The clock runs from the first byte of a frame, not from the last read: a
/// peer trickling a byte a second cannot keep a slot forever.
template <class Stream>
void basic_socket_session<Stream>::keep_frame_deadline(std::uint64_t frames_done) {
  if (deadline_armed_ && frames_done == deadline_frames_) return;
  deadline_frames_ = frames_done;
  deadline_armed_ = true;
  frame_started_ = clock::now();
  const std::uint64_t generation = ++deadline_generation_;
  timer_.expires_after(read_timeout_);
  timer_.async_wait([self = this->shared_from_this(), generation](const boost::system::error_code& ec) {
    if (ec) return;  // re-armed, cancelled, or closed
    std::lock_guard<std::mutex> guard(self->send_mutex_);
    // An expiry already queued when the deadline was cancelled or moved
    // still arrives without an error: it is this deadline's only if none came since.
    if (self->finished_ || !self->deadline_armed_ || generation != self->deadline_generation_) return;
    ++self->stats_.idle_timeouts;
    if (const auto closed = self->stats_.idle_timeout_lines.admit())
      log::warn("connection closed: a frame did not arrive whole within listen.read_timeout_ms",
                {{"read_timeout_ms", std::to_string(self->read_timeout_.count())},
                 {"closed_since_last_line", std::to_string(closed)}});
    self->finish();
  });
}

template <class Stream>
void basic_socket_session<Stream>::on_consumed() {
  bool arm = false;
  {
    std::lock_guard<std::mutex> guard(send_mutex_);
    if (finished_) return;
    if (actor_mid_frame_ && !peer_done_) {
      keep_frame_deadline(actor_frames_done_);
    } else if (deadline_armed_) {
      timer_.cancel();
      deadline_armed_ = false;
    }
    note_waiting();
    arm = claim_read();
  }
  if (arm) start_read();
}

template <class Stream>
bool basic_socket_session<Stream>::may_read() const {
  return reading_started_ && !finished_ && !close_requested_ && !peer_done_ &&
         !write_blocked_.load(std::memory_order_acquire) && delivered_ - released_ < chunks_ahead;
}

template <class Stream>
bool basic_socket_session<Stream>::deadline_stale() const {
  // After end of input no byte can come: the peer owes nothing, whatever the
  // actor still decodes or waits for.
  if (!actor_mid_frame_ || peer_done_) return deadline_armed_;
  return !(deadline_armed_ && deadline_frames_ == actor_frames_done_);
}

template <class Stream>
bool basic_socket_session<Stream>::claim_read() {
  if (read_armed_ || !may_read()) return false;
  read_armed_ = true;
  note_waiting();
  return true;
}

template <class Stream>
void basic_socket_session<Stream>::start_read() {
  if (poller_) {
    const int fd = socket_.lowest_layer().native_handle();
    if (poller_->batching()) {
      // Watched already: the poller tells of bytes that are there or come.
      if (polled_) return;
      polled_ = poller_->watch(fd, this->weak_from_this());
      if (polled_) return;
      // The set refused the socket (out of memory, or the per-user epoll
      // watch limit): Asio's reactor reads it from now on.
      const int error = errno;
      if (const auto fell_back = stats_.epoll_fallback_lines.admit())
        log::warn("runtime.read_batching: a connection could not join the epoll set; it is read through Asio's reactor",
                  {{"error", std::strerror(error)}, {"connections_since_last_line", std::to_string(fell_back)}});
      poller_ = nullptr;
    } else if (polled_) {
      poller_->unwatch(fd);
      polled_ = false;
    }
  }
  socket_.async_read_some(asio::buffer(read_buf_),
                          asio::bind_executor(strand_, [self = this->shared_from_this()](
                                                           const boost::system::error_code& ec, std::size_t n) {
                            self->on_read(ec, n);
                          }));
}

template <class Stream>
void basic_socket_session<Stream>::on_readable() {
  asio::dispatch(strand_, [self = this->shared_from_this()] { self->read_polled(); });
}

template <class Stream>
void basic_socket_session<Stream>::read_polled() {
  if (finished_ || !polled_) return;
  bool armed = false;
  {
    std::lock_guard<std::mutex> guard(send_mutex_);
    armed = read_armed_;
  }
  const int fd = socket_.lowest_layer().native_handle();
  if (!armed) {
    // Paused (or past end of input): the set would report the bytes again
    // and again; it watches once the next read is armed.
    poller_->unwatch(fd);
    polled_ = false;
    return;
  }
  const ssize_t got = ::recv(fd, read_buf_.data(), read_buf_.size(), MSG_DONTWAIT);
  if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
  boost::system::error_code ec;
  if (got < 0) ec = boost::system::error_code(errno, boost::system::system_category());
  else if (got == 0) ec = asio::error::eof;
  on_read(ec, got > 0 ? static_cast<std::size_t>(got) : 0);
}

template <class Stream>
void basic_socket_session<Stream>::on_read(const boost::system::error_code& ec, std::size_t n) {
  if (finished_) return;
  // A TLS peer that closes without close_notify ends its stream the same way.
  const bool eof = ec == asio::error::eof || (!direct_send && ec == asio::ssl::error::stream_truncated);
  {
    std::lock_guard<std::mutex> guard(send_mutex_);
    read_armed_ = false;
    if (ec && !eof) {
      finish();
      return;
    }
    peer_done_ = eof;
    delivered_ += !eof;
    if (eof && deadline_armed_) {
      timer_.cancel();
      deadline_armed_ = false;
    }
    note_waiting();  // the daemon has work now (unless the peer does not read)
  }
  if (eof) {
    // A producer may half-close after its last frame and still wait
    // for the replies; the actor closes once they are written.
    send_from_io_thread(actor_, socket_eof_atom::value);
    return;
  }
  if (activity_) activity_->note(activity_seen_);
  if (poller_) poller_->note_read(poller_seen_);
  // The actor runs on this thread now (io_thread_unit.hpp): no lock is
  // held here, as it writes replies and tells what it consumed.
  send_from_io_thread(actor_, socket_data_atom::value, byte_buffer(read_buf_.begin(), read_buf_.begin() + n));
  bool arm = false;
  {
    std::lock_guard<std::mutex> guard(send_mutex_);
    arm = claim_read();
  }
  if (arm) start_read();
}

// Called on the strand with send_mutex_ held.
template <class Stream>
void basic_socket_session<Stream>::do_write() {
  if (write_queue_.empty()) {
    writing_ = false;
    if (close_requested_) finish();
    return;
  }
  writing_ = true;
  asio::async_write(socket_, asio::buffer(write_queue_.front()),
                    asio::bind_executor(strand_, [self = this->shared_from_this()](
                                                     const boost::system::error_code& ec, std::size_t) {
                      std::lock_guard<std::mutex> guard(self->send_mutex_);
                      if (self->finished_) return;
                      const std::size_t n = self->write_queue_.front().size();
                      self->write_queue_.pop_front();
                      if (ec) {
                        self->finish();
                        return;
                      }
                      const std::size_t left = self->write_backlog_.fetch_sub(n, std::memory_order_acq_rel) - n;
                      if (left <= write_limit / 2 && self->write_blocked_.load(std::memory_order_acquire) &&
                          self->write_blocked_.exchange(false, std::memory_order_acq_rel)) {
                        self->note_waiting();
                        if (self->actor_) caf::anon_send(self->actor_, socket_writable_atom::value);
                        if (self->claim_read()) self->start_read();  // it paused while the peer did not read
                      }
                      self->do_write();
                    }));
}

// Called on the strand with send_mutex_ held: the socket is not closed under
// a reply being sent from the actor's thread (its descriptor could be reused).
template <class Stream>
void basic_socket_session<Stream>::finish() {
  if (finished_) return;
  finished_ = true;
  --stats_.active;  // the slot frees when the socket closes, not when the actor lets go
  replies_owed_ = false;
  stalled_since_ns_.store(0, std::memory_order_relaxed);
  timer_.cancel();
  if (polled_) {
    poller_->unwatch(socket_.lowest_layer().native_handle());  // before the descriptor can be reused
    polled_ = false;
  }
  boost::system::error_code ignored;
  socket_.lowest_layer().shutdown(asio::socket_base::shutdown_both, ignored);
  socket_.lowest_layer().close(ignored);
  write_queue_.clear();
  write_queue_.shrink_to_fit();
  if (actor_) caf::anon_send(actor_, socket_closed_atom::value);
  actor_ = connection_actor{};  // the actor holds this session; do not hold it back
  if (on_finished_) on_finished_();
}

template class basic_socket_session<asio::local::stream_protocol::socket>;
template class basic_socket_session<tls_stream>;

}  // namespace weir
