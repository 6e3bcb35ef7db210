#include "daemon/basp_frame_guard.hpp"

#include <algorithm>

namespace weir {

namespace {

enum operation : std::uint8_t {
  server_handshake = 0x00,
  client_handshake = 0x01,
  direct_message = 0x02,
  routed_message = 0x03,
  monitor_message = 0x04,
  down_message = 0x05,
  heartbeat = 0x06,
};

}  // namespace

basp_frame_guard::basp_frame_guard(std::uint32_t max_payload, bool peer_answers, claim_fn claim)
    : max_payload_(max_payload), peer_answers_(peer_answers), claim_(std::move(claim)) {}

basp_frame_guard::verdict basp_frame_guard::feed(const std::uint8_t* data, std::size_t n) {
  while (n > 0 && verdict_ == verdict::ok) {
    if (payload_left_ > 0) {
      auto take = static_cast<std::size_t>(std::min<std::uint64_t>(payload_left_, n));
      if (handshake_ && named_have_ < caf_node_size) {
        take = std::min(take, caf_node_size - named_have_);
        std::copy_n(data, take, named_.begin() + static_cast<std::ptrdiff_t>(named_have_));
        named_have_ += take;
        if (named_have_ == caf_node_size) verdict_ = judge_node();
      }
      payload_left_ -= take;
      data += take;
      n -= take;
      continue;
    }
    const auto take = std::min(header_size - header_have_, n);
    std::copy_n(data, take, header_.begin() + static_cast<std::ptrdiff_t>(header_have_));
    header_have_ += take;
    data += take;
    n -= take;
    if (header_have_ < header_size) break;
    header_have_ = 0;
    verdict_ = judge_header();
  }
  return verdict_;
}

basp_frame_guard::verdict basp_frame_guard::refuse(verdict v, std::string why) {
  why_ = std::move(why);
  return v;
}

basp_frame_guard::verdict basp_frame_guard::judge_header() {
  const std::uint8_t op = header_[0];
  const std::uint32_t length = (std::uint32_t{header_[4]} << 24) | (std::uint32_t{header_[5]} << 16) |
                               (std::uint32_t{header_[6]} << 8) | std::uint32_t{header_[7]};
  const auto frame = ++frames_;
  const bool handshake_due = peer_answers_ ? frame == 1 : frame <= 2;
  handshake_ = op == server_handshake || op == client_handshake;
  const bool allowed = handshake_due ? op == (peer_answers_ ? server_handshake : client_handshake)
                                     : op == direct_message || op == monitor_message || op == down_message ||
                                           op == heartbeat;
  if (!allowed)
    return refuse(verdict::forbidden,
                  "operation " + std::to_string(op) + " as frame " + std::to_string(frame) +
                      (op == routed_message ? " (a message routed for another node)"
                       : handshake_        ? " (a handshake out of turn)"
                                           : ""));
  if (length > max_payload_)
    return refuse(verdict::too_large, "a message of " + std::to_string(length) +
                                          " bytes, over cluster.max_message_bytes " + std::to_string(max_payload_));
  if (handshake_ && length < caf_node_size)
    return refuse(verdict::forbidden, "a handshake too short to name a node");
  payload_left_ = length;
  named_have_ = 0;
  return verdict::ok;
}

basp_frame_guard::verdict basp_frame_guard::judge_node() {
  if (!node_) {
    node_ = named_;
    if (claim_ && !claim_(named_))
      return refuse(verdict::forbidden, "a handshake naming the CAF node of another member's link");
    return verdict::ok;
  }
  if (*node_ != named_) return refuse(verdict::forbidden, "a second handshake naming another CAF node");
  return verdict::ok;
}

}  // namespace weir
