#pragma once
// libweir-client: a small blocking client for the weir v1 wire protocol.
//
//   auto c = weir::client::connection::connect_unix("var/run/weir.sock");
//   c.health_check();
//   auto r = c.push(bytes, weir::client::durability::durable);
//   if (!r.acked) ...  // r.nack names the reason; InternalError is retryable
//
// A connection that has seen a protocol error is poisoned: build a new one.
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace weir::client {

enum class durability : std::uint8_t { durable = 0x01, buffered = 0x03, replicated = 0x04 };

/// A transport or protocol failure; the connection is unusable afterwards.
struct client_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct reply {
  std::uint8_t type = 0;
  std::vector<std::uint8_t> payload;
};

struct push_result {
  bool acked = false;
  std::uint8_t nack = 0;  // Nack reason byte when !acked
  bool retryable() const { return !acked && nack == 0x06; }
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

class connection {
 public:
  static connection connect_unix(const std::string& path);
  connection(connection&& other) noexcept;
  connection& operator=(connection&& other) noexcept;
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;
  ~connection();

  /// Replies slower than this raise client_error (default: wait forever).
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
  explicit connection(int fd) : fd_(fd) {}
  void read_exact(std::uint8_t* out, std::size_t n);
  push_result expect_ack(const reply& r);

  int fd_ = -1;
  bool poisoned_ = false;
};

/// Pushes over one connection with up to `window` frames in flight, instead
/// of one round trip per record: with `ingest.ack_mode: ordered` one fsync
/// then covers many frames. The daemon answers a connection's frames in the
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
