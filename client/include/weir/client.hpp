#pragma once
// libweir-client: a small blocking client for the weir v1 wire protocol, on
// the daemon's Unix socket or over TCP with mutual TLS.
//
//   auto c = weir::client::connection::connect_unix("var/run/weir.sock");
//   c.health_check();
//   auto r = c.push(bytes, weir::client::durability::durable);
//   if (!r.acked) ...  // r.reason() names it; only InternalError is retryable
//
// A connection that has seen a transport or protocol error is poisoned: it
// says so (with the first error) on every later call; build a new one.
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace weir::client {

enum class durability : std::uint8_t { durable = 0x01, buffered = 0x03, replicated = 0x04 };

/// What went wrong on a connection (client_error::kind()).
enum class error_kind : std::uint8_t {
  unreachable,      // no connection made: nothing was sent
  connection_lost,  // the daemon closed the connection, or it broke: outcome unknown
  timeout,          // no reply, or no room to send, within the timeout: outcome unknown
  protocol,         // a reply that breaks the protocol (bad CRC, type, size)
  tls,              // the TLS handshake failed, or a certificate was refused
  poisoned,         // the connection already failed earlier
};

/// A transport or protocol failure; the connection is unusable afterwards.
class client_error : public std::runtime_error {
 public:
  explicit client_error(const std::string& what, error_kind kind = error_kind::protocol)
      : std::runtime_error(what), kind_(kind) {}
  error_kind kind() const { return kind_; }
  /// True when the frame in flight may or may not have been written (the
  /// connection was lost, or timed out: a reply that did not come says
  /// nothing about the write): pushing it again on a new connection is the
  /// safe course (perhaps a duplicate, with its own record id; never a loss).
  bool retryable() const { return kind_ == error_kind::connection_lost || kind_ == error_kind::timeout; }

 private:
  error_kind kind_;
};

/// Why the daemon refused a frame: the Nack's reason byte (wire protocol §4).
enum class nack_reason : std::uint8_t {
  bad_magic = 0x01,
  version_mismatch = 0x02,
  bad_header_crc = 0x03,
  payload_too_large = 0x04,
  bad_payload_crc = 0x05,
  internal_error = 0x06,  // the only one worth retrying: the daemon could not take it now
  empty_payload = 0x07,
  unknown_message = 0x08,
  reserved_flags_set = 0x09,
  bad_batch_framing = 0x0b,
};
/// The reason's name on the wire ("PayloadTooLarge"), or "Unknown(0x0a)"
/// for a byte this client does not know.
std::string nack_name(std::uint8_t reason);
/// The reason, when `reason` is one this client knows.
std::optional<nack_reason> known_nack(std::uint8_t reason);

/// Mutual TLS for connect_tcp: the CA that signed the daemon's certificate,
/// this client's certificate and key (PEM). The daemon's certificate must
/// name `server_name`, or the host dialled when it is empty.
struct tls_options {
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
  std::string server_name;
};

struct reply {
  std::uint8_t type = 0;
  std::vector<std::uint8_t> payload;
};

struct push_result {
  bool acked = false;
  std::uint8_t nack = 0;  // Nack reason byte when !acked, as sent (unknown ones too)
  bool retryable() const { return !acked && nack == static_cast<std::uint8_t>(nack_reason::internal_error); }
  std::optional<nack_reason> reason() const { return acked ? std::nullopt : known_nack(nack); }
};

struct tracked_result : push_result {
  std::uint64_t index = 0;
  std::string record_id_hex;
  std::string segment;
};

struct batch_result {
  std::optional<std::uint8_t> nack;  // the whole batch was refused
  std::vector<bool> accepted;        // one flag per record otherwise
  bool all_accepted() const;
};

class tls_channel;

class connection {
 public:
  /// Connects within `timeout`. Throws client_error (kind unreachable:
  /// nothing was sent) when nobody listens at `path`, or when the daemon's
  /// accept backlog stays full for `timeout` (a daemon that has stopped
  /// accepting: a Unix-socket connect then waits, not fails).
  static connection connect_unix(const std::string& path,
                                 std::chrono::milliseconds timeout = std::chrono::seconds(10));
  /// Connects to listen.tcp and handshakes, each within `timeout`. Throws
  /// client_error: unreachable (no connection, the connect timed out),
  /// timeout (connected, but no handshake within `timeout`), tls (the
  /// handshake failed, or the daemon's certificate is not trusted or names
  /// another host).
  /// With TLS 1.3 a daemon that refuses this client's certificate says so
  /// after the handshake: the first call then fails (kind tls).
  static connection connect_tcp(const std::string& host, std::uint16_t port, const tls_options& tls,
                                std::chrono::milliseconds timeout = std::chrono::seconds(10));
  connection(connection&& other) noexcept;
  connection& operator=(connection&& other) noexcept;
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;
  ~connection();

  /// A reply not read, or a frame not sent, within this long raises
  /// client_error (kind timeout); 0 (the default) waits forever.
  void set_timeout(std::chrono::milliseconds timeout);

  void health_check();
  push_result push(std::span<const std::uint8_t> payload, durability d);
  tracked_result push_tracked(std::span<const std::uint8_t> payload, durability d);
  batch_result push_batch(const std::vector<std::span<const std::uint8_t>>& records, durability d);

  // Low level, for tools and tests.
  void send_raw(std::span<const std::uint8_t> bytes);
  reply read_reply();
  /// True when the daemon has closed the connection (EOF within `wait`).
  bool closed_by_peer(std::chrono::milliseconds wait);
  int native_handle() const { return fd_; }

 private:
  friend class pipelined_producer;
  /// Whether a reply (or its first bytes) can be read within `wait`.
  bool readable(std::chrono::milliseconds wait);
  /// Whether reply bytes wait to be read, without waiting (plain sockets).
  bool reply_waiting();
  explicit connection(int fd);
  void read_exact(std::uint8_t* out, std::size_t n);
  push_result expect_ack(const reply& r);
  /// Marks the connection unusable and throws.
  [[noreturn]] void poison(const std::string& what, error_kind kind);
  void check_usable() const;

  int fd_ = -1;
  std::string poisoned_;  // the first error; empty while usable
  // Set when a send broke on a daemon that had answered first (a frame it
  // refused before reading all of it, then closed): the replies it sent are
  // still read, and the next send fails with this (connection_lost).
  std::string closed_after_reply_;
  std::unique_ptr<tls_channel> tls_;
  // Bytes received and not read yet: replies are read many at a time (a
  // pipelined producer's acks arrive in bursts), not 16 and 4 bytes per call.
  std::vector<std::uint8_t> inbox_;
  std::size_t inbox_at_ = 0;
};

/// Pushes over one connection with up to `window` frames in flight, instead
/// of one round trip per record: with `ingest.ack_mode: ordered` one fsync
/// then covers many frames (and with `ingest.max_inflight` at least
/// `window`, the daemon takes the whole window in before answering). The daemon answers a connection's frames in the
/// order they came; each push's completion runs in that order, on the
/// calling thread, inside push() or flush(). With `window` frames
/// unanswered, push() waits for the oldest answer (back-pressure). The
/// window is at most 8192 frames (the answers to a full window must fit in
/// what the daemon buffers for one connection).
///
///   weir::client::pipelined_producer p(conn, 1024);
///   for (auto& r : records) p.push(r, durability::durable, [](const push_result& res) { ... });
///   p.flush();  // every completion has run
///
/// A client_error from push() or flush() (the connection lost or out of
/// step) leaves the frames still in flight without a verdict: whether they
/// were written is unknown, and pushing them again is the safe course
/// (duplicates carry other record ids; nothing is lost). An exception from a
/// completion comes out of push() before that push's frame was sent.
class pipelined_producer {
 public:
  using completion = std::function<void(const push_result&)>;
  explicit pipelined_producer(connection& conn, std::size_t window = 256);
  pipelined_producer(const pipelined_producer&) = delete;
  pipelined_producer& operator=(const pipelined_producer&) = delete;

  void push(std::span<const std::uint8_t> payload, durability d, completion done = {});
  /// Waits for every answer still due.
  void flush();
  std::size_t in_flight() const { return waiting_.size(); }
  /// The most frames that were in flight at once.
  std::size_t peak_in_flight() const { return peak_; }

 private:
  void complete_one();

  connection& conn_;
  std::size_t window_;
  std::deque<completion> waiting_;
  std::size_t peak_ = 0;
};

}  // namespace weir::client
