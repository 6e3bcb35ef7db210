#include "weir/client.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "messages/wire/batch.hpp"
#include "messages/wire/coordinate.hpp"
#include "messages/wire/frame.hpp"

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

[[noreturn]] void fail(const std::string& what) { throw client_error(what); }

}  // namespace

bool batch_result::all_accepted() const {
  if (nack) return false;
  for (bool a : accepted)
    if (!a) return false;
  return !accepted.empty();
}

connection connection::connect_unix(const std::string& path) {
  sockaddr_un addr{};
  if (path.size() >= sizeof addr.sun_path) fail("socket path too long: " + path);
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fail(std::string("socket(): ") + std::strerror(errno));
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    const int err = errno;
    ::close(fd);
    fail("cannot connect to " + path + ": " + std::strerror(err));
  }
  return connection(fd);
}

connection::connection(connection&& other) noexcept : fd_(other.fd_), poisoned_(other.poisoned_) {
  other.fd_ = -1;
}

connection& connection::operator=(connection&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    poisoned_ = other.poisoned_;
    other.fd_ = -1;
  }
  return *this;
}

connection::~connection() {
  if (fd_ >= 0) ::close(fd_);
}

void connection::set_timeout(std::chrono::milliseconds timeout) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

void connection::send_raw(std::span<const std::uint8_t> bytes) {
  if (poisoned_) fail("connection is poisoned by an earlier error");
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      poisoned_ = true;
      fail(std::string("send: ") + std::strerror(errno));
    }
    sent += static_cast<std::size_t>(n);
  }
}

void connection::read_exact(std::uint8_t* out, std::size_t n) {
  std::size_t got = 0;
  while (got < n) {
    const ssize_t r = ::recv(fd_, out + got, n - got, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      poisoned_ = true;
      fail(r == 0 ? "connection closed by the daemon" : std::string("recv: ") + std::strerror(errno));
    }
    got += static_cast<std::size_t>(r);
  }
}

reply connection::read_reply() {
  if (poisoned_) fail("connection is poisoned by an earlier error");
  std::uint8_t header[w::header_size];
  read_exact(header, sizeof header);
  auto h = w::decode_header(byte_span(header, sizeof header), w::payload_hard_cap);
  if (!h) {
    poisoned_ = true;
    fail("bad reply header: " + std::string(w::name_of(h.error())));
  }
  const auto type = static_cast<std::uint8_t>(h.value().type);
  if (h.value().payload_len > reply_cap(type)) {
    poisoned_ = true;
    fail("reply payload larger than its type allows");
  }
  reply r;
  r.type = type;
  r.payload.resize(h.value().payload_len);
  read_exact(r.payload.data(), r.payload.size());
  std::uint8_t crc[4];
  read_exact(crc, 4);
  if (crc32_of(r.payload) != load_le32(crc)) {
    poisoned_ = true;
    fail("bad reply payload CRC");
  }
  return r;
}

bool connection::readable(std::chrono::milliseconds wait) {
  pollfd p{fd_, POLLIN, 0};
  return ::poll(&p, 1, static_cast<int>(wait.count())) > 0;
}

bool connection::closed_by_peer(std::chrono::milliseconds wait) {
  pollfd p{fd_, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(wait.count())) <= 0) return false;
  std::uint8_t b;
  return ::recv(fd_, &b, 1, MSG_PEEK) == 0 || (p.revents & (POLLHUP | POLLERR));
}

void connection::health_check() {
  send_raw(w::encode_frame(w::message_type::health_check, w::durability::durable, {}));
  const reply r = read_reply();
  if (r.type != static_cast<std::uint8_t>(w::message_type::health_check_response))
    fail("unexpected reply to HealthCheck (type " + std::to_string(r.type) + ")");
}

push_result connection::expect_ack(const reply& r) {
  if (r.type == static_cast<std::uint8_t>(w::message_type::ack)) return {true, 0};
  if (r.type == static_cast<std::uint8_t>(w::message_type::nack) && !r.payload.empty())
    return {false, r.payload[0]};
  poisoned_ = true;
  fail("unexpected reply type " + std::to_string(r.type));
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
    poisoned_ = true;
    fail("bad AckTracked coordinate: " + std::string(w::name_of(c.error())));
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
      poisoned_ = true;
      fail("bad AckBatch: " + std::string(w::name_of(bits.error())));
    }
    out.accepted = std::move(bits.value());
    return out;
  }
  auto nack = expect_ack(r);
  if (nack.acked) {
    poisoned_ = true;
    fail("plain Ack to a PushBatch");
  }
  out.nack = nack.nack;
  return out;
}

}  // namespace weir::client
