#include "weir/client.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "client/tls_channel.hpp"

#include "wire/batch.hpp"
#include "wire/coordinate.hpp"
#include "wire/frame.hpp"

namespace weir::client {

namespace {

namespace w = weir::wire;

/// Largest payload each reply type may carry; checked before allocating.
std::size_t reply_cap(std::uint8_t type) {
  switch (static_cast<w::message_type>(type)) {
    case w::message_type::ack:
    case w::message_type::health_check_response: return 0;
    case w::message_type::nack: return 2;
    case w::message_type::ack_tracked: return w::coordinate_fixed_size + w::max_segment_name;
    case w::message_type::ack_batch: return w::batch_header_size + w::batch_records_hard_cap / 8;
    default: return 0;
  }
}

[[noreturn]] void fail(const std::string& what, error_kind kind) { throw client_error(what, kind); }

/// A TCP connection to `host`:`port` made within `timeout`, blocking afterwards.
int connect_tcp_socket(const std::string& host, std::uint16_t port, std::chrono::milliseconds timeout) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); rc != 0)
    fail("cannot resolve " + host + ": " + ::gai_strerror(rc), error_kind::unreachable);
  std::string why = "no address";
  int fd = -1;
  for (addrinfo* a = found; a && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) continue;
    int err = ::connect(fd, a->ai_addr, a->ai_addrlen) == 0 ? 0 : errno;
    if (err == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      const int ready = ::poll(&p, 1, static_cast<int>(timeout.count()));
      socklen_t len = sizeof err;
      if (ready <= 0) err = ETIMEDOUT;
      else ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    }
    if (err != 0) {
      why = std::strerror(err);
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  if (fd < 0) fail("cannot connect to " + host + ":" + std::to_string(port) + ": " + why, error_kind::unreachable);
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

}  // namespace

// The public enum mirrors the wire codec's, byte for byte.
static_assert(static_cast<std::uint8_t>(nack_reason::internal_error) ==
              static_cast<std::uint8_t>(w::nack_reason::internal_error));
static_assert(static_cast<std::uint8_t>(nack_reason::bad_batch_framing) ==
              static_cast<std::uint8_t>(w::nack_reason::bad_batch_framing));

std::optional<nack_reason> known_nack(std::uint8_t reason) {
  switch (static_cast<nack_reason>(reason)) {
    case nack_reason::bad_magic:
    case nack_reason::version_mismatch:
    case nack_reason::bad_header_crc:
    case nack_reason::payload_too_large:
    case nack_reason::bad_payload_crc:
    case nack_reason::internal_error:
    case nack_reason::empty_payload:
    case nack_reason::unknown_message:
    case nack_reason::reserved_flags_set:
    case nack_reason::bad_batch_framing:
      return static_cast<nack_reason>(reason);
  }
  return std::nullopt;
}

std::string nack_name(std::uint8_t reason) {
  if (known_nack(reason)) return std::string(w::name_of(static_cast<w::nack_reason>(reason)));
  char buf[16];
  std::snprintf(buf, sizeof buf, "Unknown(0x%02x)", reason);
  return buf;
}

bool batch_result::all_accepted() const {
  if (nack) return false;
  for (bool a : accepted)
    if (!a) return false;
  return !accepted.empty();
}

connection::connection(int fd) : fd_(fd) {}

connection connection::connect_unix(const std::string& path, std::chrono::milliseconds timeout) {
  sockaddr_un addr{};
  if (path.size() >= sizeof addr.sun_path) fail("socket path too long: " + path, error_kind::unreachable);
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fail(std::string("socket(): ") + std::strerror(errno), error_kind::unreachable);
  connection c(fd);
  // A Unix-socket connect does not go in progress: it blocks while the
  // listener's backlog is full, for at most the send timeout (EAGAIN after).
  c.set_timeout(timeout);
  int rc = 0;
  do {
    rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    const int err = errno;
    fail("cannot connect to " + path + ": " +
             (err == EAGAIN ? "no room in its backlog within the connect timeout (the daemon is not accepting)"
                            : std::strerror(err)),
         error_kind::unreachable);
  }
  c.set_timeout(std::chrono::milliseconds(0));
  return c;
}

connection connection::connect_tcp(const std::string& host, std::uint16_t port, const tls_options& tls,
                                   std::chrono::milliseconds timeout) {
  connection c(connect_tcp_socket(host, port, timeout));
  // The handshake is bounded by the same timeout; after it, by set_timeout's.
  c.set_timeout(timeout);
  c.tls_ = std::make_unique<tls_channel>(c.fd_, host, tls);
  c.set_timeout(std::chrono::milliseconds(0));
  return c;
}

connection::connection(connection&& other) noexcept
    : fd_(other.fd_),
      poisoned_(std::move(other.poisoned_)),
      closed_after_reply_(std::move(other.closed_after_reply_)),
      tls_(std::move(other.tls_)),
      inbox_(std::move(other.inbox_)),
      inbox_at_(other.inbox_at_) {
  other.fd_ = -1;
}

connection& connection::operator=(connection&& other) noexcept {
  if (this != &other) {
    tls_.reset();
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    poisoned_ = std::move(other.poisoned_);
    closed_after_reply_ = std::move(other.closed_after_reply_);
    tls_ = std::move(other.tls_);
    inbox_ = std::move(other.inbox_);
    inbox_at_ = other.inbox_at_;
    other.fd_ = -1;
  }
  return *this;
}

connection::~connection() {
  tls_.reset();
  if (fd_ >= 0) ::close(fd_);
}

void connection::set_timeout(std::chrono::milliseconds timeout) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

void connection::poison(const std::string& what, error_kind kind) {
  if (poisoned_.empty()) poisoned_ = what;
  throw client_error(what, kind);
}

void connection::check_usable() const {
  if (!poisoned_.empty())
    throw client_error("connection is poisoned by an earlier error (" + poisoned_ + "); make a new one",
                       error_kind::poisoned);
}

void connection::send_raw(std::span<const std::uint8_t> bytes) {
  check_usable();
  if (!closed_after_reply_.empty()) poison(closed_after_reply_, error_kind::connection_lost);
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    const long n = tls_ ? tls_->write(bytes.data() + sent, bytes.size() - sent)
                        : ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK)
        poison("send timed out: the daemon took no more bytes within the timeout", error_kind::timeout);
      // A daemon refuses a frame from its header (too large, say), answers
      // and closes while the rest is still being sent: that answer, not a
      // broken pipe, is what the caller must see. The replies already there
      // are read as usual; the one after them is the end of the connection,
      // and so is any further send. (Not over TLS: after a failed write the
      // TLS session must not be read from.)
      const int send_errno = errno;  // reply_waiting() may change errno
      if (n < 0 && !tls_ && (send_errno == EPIPE || send_errno == ECONNRESET) && reply_waiting()) {
        closed_after_reply_ = std::string("send: ") + std::strerror(send_errno) + ": the daemon closed the connection";
        return;
      }
      errno = send_errno;
      poison(std::string("send: ") + (n == 0 ? "connection closed by the daemon" : std::strerror(errno)),
             error_kind::connection_lost);
    }
    sent += static_cast<std::size_t>(n);
  }
}

void connection::read_exact(std::uint8_t* out, std::size_t n) {
  std::size_t got = 0;
  while (got < n) {
    if (inbox_at_ < inbox_.size()) {
      const std::size_t take = std::min(n - got, inbox_.size() - inbox_at_);
      std::memcpy(out + got, inbox_.data() + inbox_at_, take);
      inbox_at_ += take;
      got += take;
      continue;
    }
    inbox_.resize(64 * 1024);
    inbox_at_ = 0;
    const long r = tls_ ? tls_->read(inbox_.data(), inbox_.size()) : ::recv(fd_, inbox_.data(), inbox_.size(), 0);
    inbox_.resize(r > 0 ? static_cast<std::size_t>(r) : 0);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      poison("no reply within the timeout", error_kind::timeout);
    if (r < 0 && tls_ && tls_->refused())
      poison("the daemon refused this client: " + tls_->failure() +
                 " (with TLS 1.3 a refused client certificate shows here, after the handshake)",
             error_kind::tls);
    if (r < 0 && tls_ && !tls_->failure().empty())
      poison("the TLS connection failed: " + tls_->failure(), error_kind::connection_lost);
    if (r <= 0)
      poison(r == 0 ? "connection closed by the daemon" : std::string("recv: ") + std::strerror(errno),
             error_kind::connection_lost);
  }
}

reply connection::read_reply() {
  check_usable();
  std::uint8_t header[w::header_size];
  read_exact(header, sizeof header);
  auto h = w::decode_header(byte_span(header, sizeof header), w::payload_hard_cap);
  if (!h) {
    poison("bad reply header: " + std::string(w::name_of(h.error())), error_kind::protocol);
  }
  const auto type = static_cast<std::uint8_t>(h.value().type);
  if (h.value().payload_len > reply_cap(type)) {
    poison("reply payload larger than its type allows", error_kind::protocol);
  }
  reply r;
  r.type = type;
  r.payload.resize(h.value().payload_len);
  read_exact(r.payload.data(), r.payload.size());
  std::uint8_t crc[4];
  read_exact(crc, 4);
  if (crc32_of(r.payload) != load_le32(crc)) {
    poison("bad reply payload CRC", error_kind::protocol);
  }
  return r;
}

bool connection::reply_waiting() {
  if (inbox_at_ < inbox_.size()) return true;
  // poll() says "readable" for a closed socket too: only bytes count.
  std::uint8_t b;
  return ::recv(fd_, &b, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
}

bool connection::readable(std::chrono::milliseconds wait) {
  if (inbox_at_ < inbox_.size()) return true;
  if (tls_) return tls_->readable(wait);
  pollfd p{fd_, POLLIN, 0};
  return ::poll(&p, 1, static_cast<int>(wait.count())) > 0;
}

bool connection::closed_by_peer(std::chrono::milliseconds wait) {
  if (inbox_at_ < inbox_.size()) return false;  // bytes still to read
  if (tls_) return tls_->closed(wait);
  pollfd p{fd_, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(wait.count())) <= 0) return false;
  if (p.revents & (POLLHUP | POLLERR)) return true;
  std::uint8_t b;
  return ::recv(fd_, &b, 1, MSG_PEEK) == 0;
}

void connection::health_check() {
  send_raw(w::encode_frame(w::message_type::health_check, w::durability::durable, {}));
  const reply r = read_reply();
  if (r.type != static_cast<std::uint8_t>(w::message_type::health_check_response))
    poison("unexpected reply to HealthCheck (type " + std::to_string(r.type) + ")", error_kind::protocol);
}

push_result connection::expect_ack(const reply& r) {
  if (r.type == static_cast<std::uint8_t>(w::message_type::ack)) return {true, 0};
  if (r.type == static_cast<std::uint8_t>(w::message_type::nack) && !r.payload.empty())
    return {false, r.payload[0]};
  poison("unexpected reply type " + std::to_string(r.type), error_kind::protocol);
}

push_result connection::push(std::span<const std::uint8_t> payload, durability d) {
  send_raw(w::encode_frame(w::message_type::push, static_cast<w::durability>(d), payload));
  return expect_ack(read_reply());
}

tracked_result connection::push_tracked(std::span<const std::uint8_t> payload, durability d) {
  send_raw(w::encode_frame(w::message_type::push_tracked, static_cast<w::durability>(d), payload));
  const reply r = read_reply();
  tracked_result out;
  if (r.type != static_cast<std::uint8_t>(w::message_type::ack_tracked)) {
    static_cast<push_result&>(out) = expect_ack(r);
    return out;
  }
  auto c = w::decode_coordinate(r.payload);
  if (!c) {
    poison("bad AckTracked coordinate: " + std::string(w::name_of(c.error())), error_kind::protocol);
  }
  out.acked = true;
  out.index = c.value().index;
  out.record_id_hex = w::to_hex(c.value().id);
  out.segment = c.value().segment;
  return out;
}

batch_result connection::push_batch(const std::vector<std::span<const std::uint8_t>>& records,
                                     durability d) {
  send_raw(w::encode_frame(w::message_type::push_batch, static_cast<w::durability>(d),
                           w::encode_batch_body(records)));
  const reply r = read_reply();
  batch_result out;
  if (r.type == static_cast<std::uint8_t>(w::message_type::ack_batch)) {
    auto bits = w::decode_ack_batch(r.payload, records.size());
    if (!bits) {
      poison("bad AckBatch: " + std::string(w::name_of(bits.error())), error_kind::protocol);
    }
    out.accepted = std::move(bits.value());
    return out;
  }
  auto nack = expect_ack(r);
  if (nack.acked) {
    poison("plain Ack to a PushBatch", error_kind::protocol);
  }
  out.nack = nack.nack;
  return out;
}

}  // namespace weir::client
