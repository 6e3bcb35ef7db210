#pragma once
// A raw peer for live tests: send arbitrary bytes, then collect what the
// daemon answers and whether it closed the connection.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace weir::test {

struct peer_outcome {
  std::vector<std::vector<std::uint8_t>> replies;  // complete frames received
  bool closed = false;                             // EOF seen
  std::size_t stray_bytes = 0;                     // bytes that did not form a frame
};

class wire_peer {
 public:
  explicit wire_peer(const std::string& socket_path);
  ~wire_peer();
  wire_peer(const wire_peer&) = delete;
  wire_peer& operator=(const wire_peer&) = delete;

  bool connected() const { return fd_ >= 0; }
  /// False if the daemon already closed the connection.
  bool send(const std::vector<std::uint8_t>& bytes);
  void half_close();  // shutdown(SHUT_WR): the daemon sees EOF
  /// Reads until EOF or until `quiet` passes with nothing arriving.
  peer_outcome collect(std::chrono::milliseconds quiet = std::chrono::milliseconds(1500));
  /// Reads until `n` frames arrived (or EOF, or `limit`).
  peer_outcome collect_frames(std::size_t n, std::chrono::milliseconds limit = std::chrono::seconds(5));

 private:
  int fd_ = -1;
  std::vector<std::uint8_t> pending_;
};

/// Message type and first payload byte of a reply frame.
inline std::uint8_t reply_type(const std::vector<std::uint8_t>& f) { return f.at(5); }
inline std::uint8_t nack_reason(const std::vector<std::uint8_t>& f) { return f.at(16); }

}  // namespace weir::test
