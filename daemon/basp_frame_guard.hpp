#pragma once
// What a cluster peer may send into this node's CAF middleman, judged on the
// bytes before CAF reads them. CAF's BASP sizes a buffer by the payload
// length a frame header announces, and lets a connected node speak for other
// nodes: routed messages, and handshakes that name another node's CAF id
// (which moves that node's route onto the sender's link). A link carries
// only its own node's traffic:
//   - handshakes first: the server's (when this node called the peer), or
//     the client's twice (when the peer called: CAF repeats it to select
//     the connection), all naming one CAF node id, which `claim` must
//     accept (the cluster gate refuses one another member's link uses);
//   - then direct messages, monitor and down notices and heartbeats;
//   - every payload at most the bound.
//
// The BASP frame (CAF 0.17, network byte order): a 32-byte header,
//   operation (1), padding (2), flags (1), payload length (4),
//   operation data (8), source actor (8), destination actor (8),
// then the payload; a handshake's payload starts with the sender's CAF node
// id: its kind (8), process id (4) and host id (20).
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace weir {

class basp_frame_guard {
 public:
  enum class verdict : std::uint8_t { ok, too_large, forbidden };
  static constexpr std::size_t caf_node_size = 32;
  using caf_node = std::array<std::uint8_t, caf_node_size>;
  /// Whether the link may go on as the CAF node it named.
  using claim_fn = std::function<bool(const caf_node&)>;

  /// `peer_answers`: this node called the peer (its first frame is the
  /// server handshake); else the peer called (client handshakes first).
  basp_frame_guard(std::uint32_t max_payload, bool peer_answers, claim_fn claim);

  /// Judges `n` more bytes of the peer's stream. Once a verdict is not ok,
  /// it stays; the link must be closed before the bytes reach CAF.
  verdict feed(const std::uint8_t* data, std::size_t n);

  /// Why the stream was refused, for the log ("" while ok).
  const std::string& why() const { return why_; }

 private:
  static constexpr std::size_t header_size = 32;
  verdict judge_header();
  verdict judge_node();
  verdict refuse(verdict v, std::string why);

  std::uint32_t max_payload_;
  bool peer_answers_;
  claim_fn claim_;
  std::array<std::uint8_t, header_size> header_{};
  std::size_t header_have_ = 0;
  std::uint64_t payload_left_ = 0;
  std::uint64_t frames_ = 0;
  bool handshake_ = false;    // the payload under way is a handshake's
  caf_node named_{};          // ... whose node id is read into here
  std::size_t named_have_ = 0;
  std::optional<caf_node> node_;  // the one the first handshake named
  verdict verdict_ = verdict::ok;
  std::string why_;
};

}  // namespace weir
