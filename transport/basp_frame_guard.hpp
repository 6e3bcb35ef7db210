#pragma once
// What a cluster peer may send into this node's CAF middleman, judged on the
// bytes before CAF reads them. CAF's BASP sizes a buffer by the payload
// length a frame header announces, sizes a vector by the count a message
// announces (before it checks that many bytes follow), delivers a message to
// any actor whose id it names (system messages too: an exit kills the actor),
// and lets a connected node speak for other nodes (routed messages, down
// notices naming another node, handshakes naming another node's CAF id). A
// link carries only its own node's traffic, and only weir's:
//   - handshakes first: the server's (when this node called the peer), or
//     the client's twice (when the peer called: CAF repeats it to select
//     the connection), all naming one CAF node id, which `claim` must
//     accept (the cluster gate refuses one another member's link uses);
//   - then direct messages, to the actors `reachable` allows only, each one
//     of the cluster protocol's messages (messages/cluster_protocol.hpp) or
//     answers, with every count and length in it within the frame; a
//     message to a named actor (CAF asks a new node's "SpawnServ" for remote
//     spawning, which weir does not offer) is dropped, not passed on;
//   - monitor and down notices naming this link's own node; heartbeats;
//   - every payload at most the bound (`max_payload`, settable: a link of a
//     node not taken as a member gets a small one).
//
// The BASP frame (CAF 0.17, network byte order): a 32-byte header,
//   operation (1), padding (2), flags (1), payload length (4),
//   operation data (8), source actor (8), destination actor (8),
// then the payload. A handshake's, a monitor's and a down notice's payload
// starts with a CAF node id: its kind (8), process id (4) and host id (20).
// A direct message's payload is a forwarding stack (a count), then the
// message: 0 (2), its type names ("@<>+name+..."), its elements.
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace weir {

class basp_frame_guard {
 public:
  enum class verdict : std::uint8_t { ok, too_large, forbidden };
  static constexpr std::size_t caf_node_size = 32;
  using caf_node = std::array<std::uint8_t, caf_node_size>;
  /// Whether the link may go on as the CAF node it named.
  using claim_fn = std::function<bool(const caf_node&)>;
  /// Whether a direct message may go to the actor with this id.
  using reachable_fn = std::function<bool(std::uint64_t actor)>;

  /// `peer_answers`: this node called the peer (its first frame is the
  /// server handshake); else the peer called (client handshakes first).
  basp_frame_guard(std::uint32_t max_payload, bool peer_answers, claim_fn claim, reachable_fn reachable);

  /// Judges `n` more bytes of the peer's stream and appends to `out` the
  /// ones to pass on to CAF (all but dropped frames; a frame's header only
  /// once it is judged). Once a verdict is not ok, it stays; the link must
  /// be closed, and `out` not passed on.
  verdict feed(const std::uint8_t* data, std::size_t n, std::vector<std::uint8_t>& out);
  /// Frames dropped so far.
  std::uint64_t dropped() const { return dropped_; }

  /// The largest payload from now on.
  void set_max_payload(std::uint32_t max_payload) { max_payload_ = max_payload; }
  /// The BASP handshake is done (the node it names was claimed).
  bool handshaken() const { return node_.has_value(); }

  /// Why the stream was refused, for the log ("" while ok).
  const std::string& why() const { return why_; }

  /// One step of reading a message's elements (see the .cpp's programs).
  struct step {
    enum kind : std::uint8_t { fixed, count_of, text, empty_message_or_end } what;
    std::uint32_t size = 0;  // fixed: bytes; count_of: bytes per element
  };

 private:
  static constexpr std::size_t header_size = 32;
  verdict judge_header();
  verdict judge_node();
  verdict refuse(verdict v, std::string why);
  /// Consumes payload bytes of the frame under way (what it reads, and skips).
  verdict read_payload(const std::uint8_t*& data, std::size_t& n);
  verdict read_message(const std::uint8_t*& data, std::size_t& n);

  std::uint32_t max_payload_;
  bool peer_answers_;
  claim_fn claim_;
  reachable_fn reachable_;
  std::array<std::uint8_t, header_size> header_{};
  std::size_t header_have_ = 0;
  std::uint64_t payload_left_ = 0;
  std::uint64_t frames_ = 0;
  std::uint8_t operation_ = 0;
  bool dropping_ = false;  // the frame under way is not passed on
  std::uint64_t dropped_ = 0;
  caf_node named_{};          // the node id a payload starts with, read into here
  std::size_t named_have_ = 0;
  std::optional<caf_node> node_;  // the one the first handshake named
  // A direct message's reading: where it is, and what it read so far.
  enum class phase : std::uint8_t { stack, zero, name_length, name, steps, done } phase_ = phase::done;
  std::uint64_t number_ = 0;  // a varbyte count or a fixed field being read
  unsigned number_bytes_ = 0;
  bool bad_count_ = false;  // a count longer than CAF reads it the same
  std::string name_;
  const std::vector<step>* program_ = nullptr;
  std::size_t step_ = 0;
  std::uint64_t skip_ = 0;  // bytes of the current step still to pass
  bool counting_ = false;   // the current step's count is being read
  verdict verdict_ = verdict::ok;
  std::string why_;
};

}  // namespace weir
