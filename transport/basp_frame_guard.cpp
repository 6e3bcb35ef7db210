#include "transport/basp_frame_guard.hpp"

#include <algorithm>
#include <map>

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

using step = basp_frame_guard::step;

/// The messages of the cluster protocol and their answers, by the type
/// names CAF sends them under, with how to read past their elements (fixed
/// fields, and every count or length checked against what the frame holds).
/// A replica_position is 37 bytes: origin, shard, incarnation, sequence,
/// offset, next_index, sealed.
const std::map<std::string, std::vector<step>>& programs() {
  static const std::map<std::string, std::vector<step>> known{
      // (hello_atom, from, listen, protocol) and its answer (node, protocol, taken)
      {"@<>+@atom+@u16+@str+@u16", {{step::fixed, 10}, {step::text}, {step::fixed, 2}}},
      {"@<>+@u16+@u16+bool", {{step::fixed, 5}}},
      // from, incarnation, held, held_known, delivering
      {"@<>+weir::peer_heartbeat", {{step::fixed, 10}, {step::count_of, 37}, {step::fixed, 1}, {step::count_of, 37}}},
      // origin .. records (44 bytes), bytes, sealed, skips
      {"@<>+weir::replica_chunk", {{step::fixed, 44}, {step::count_of, 1}, {step::fixed, 2}}},
      {"@<>+@atom+@u16+@u16", {{step::fixed, 12}}},
      {"@<>+weir::replica_position", {{step::fixed, 37}}},
      {"@<>+weir::replica_trim", {{step::fixed, 20}}},
      // an error answer: code, category, and no context
      {"@<>+@error", {{step::fixed, 9}, {step::empty_message_or_end}}},
  };
  return known;
}

}  // namespace

basp_frame_guard::basp_frame_guard(std::uint32_t max_payload, bool peer_answers, claim_fn claim,
                                   reachable_fn reachable)
    : max_payload_(max_payload),
      peer_answers_(peer_answers),
      claim_(std::move(claim)),
      reachable_(std::move(reachable)) {}

basp_frame_guard::verdict basp_frame_guard::feed(const std::uint8_t* data, std::size_t n,
                                                 std::vector<std::uint8_t>& out) {
  while (n > 0 && verdict_ == verdict::ok) {
    if (payload_left_ > 0) {
      const std::uint8_t* from = data;
      verdict_ = read_payload(data, n);
      if (!dropping_) out.insert(out.end(), from, data);
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
    if (verdict_ == verdict::ok && !dropping_) out.insert(out.end(), header_.begin(), header_.end());
  }
  return verdict_;
}

basp_frame_guard::verdict basp_frame_guard::refuse(verdict v, std::string why) {
  why_ = std::move(why);
  return v;
}

basp_frame_guard::verdict basp_frame_guard::judge_header() {
  const std::uint8_t op = header_[0];
  auto big_endian = [&](std::size_t at, std::size_t bytes) {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < bytes; ++i) v = (v << 8) | header_[at + i];
    return v;
  };
  const auto length = static_cast<std::uint32_t>(big_endian(4, 4));
  const auto frame = ++frames_;
  const bool handshake_due = peer_answers_ ? frame == 1 : frame <= 2;
  const bool handshake = op == server_handshake || op == client_handshake;
  const bool allowed = handshake_due ? op == (peer_answers_ ? server_handshake : client_handshake)
                                     : op == direct_message || op == monitor_message || op == down_message ||
                                           op == heartbeat;
  if (!allowed)
    return refuse(verdict::forbidden,
                  "operation " + std::to_string(op) + " as frame " + std::to_string(frame) +
                      (op == routed_message ? " (a message routed for another node)"
                       : handshake         ? " (a handshake out of turn)"
                                           : ""));
  if (length > max_payload_)
    return refuse(verdict::too_large, "a message of " + std::to_string(length) + " bytes, over the " +
                                          std::to_string(max_payload_) + " bytes this link may send");
  if ((handshake || op == monitor_message || op == down_message) && length < caf_node_size)
    return refuse(verdict::forbidden, "a frame too short to name its node");
  dropping_ = false;
  constexpr std::uint8_t named_receiver_flag = 0x01;
  if (op == direct_message && (header_[3] & named_receiver_flag) != 0) {
    // To an actor by name: CAF's request to a new node's spawn server.
    dropping_ = true;
    ++dropped_;
    operation_ = op;
    payload_left_ = length;
    phase_ = phase::done;
    return verdict::ok;
  }
  if (op == direct_message) {
    const auto dest = big_endian(24, 8);
    if (!reachable_ || !reachable_(dest))
      return refuse(verdict::forbidden, "a message to actor " + std::to_string(dest) + ", which peers do not reach");
    if (length == 0) return refuse(verdict::forbidden, "an empty message");
    phase_ = phase::stack;
    number_ = number_bytes_ = 0;
    bad_count_ = false;
    name_.clear();
  }
  operation_ = op;
  payload_left_ = length;
  named_have_ = 0;
  return verdict::ok;
}

basp_frame_guard::verdict basp_frame_guard::read_payload(const std::uint8_t*& data, std::size_t& n) {
  if (operation_ == direct_message) return read_message(data, n);
  auto take = static_cast<std::size_t>(std::min<std::uint64_t>(payload_left_, n));
  verdict v = verdict::ok;
  const bool names_node = operation_ == server_handshake || operation_ == client_handshake ||
                          operation_ == monitor_message || operation_ == down_message;
  if (names_node && named_have_ < caf_node_size) {
    take = std::min(take, caf_node_size - named_have_);
    std::copy_n(data, take, named_.begin() + static_cast<std::ptrdiff_t>(named_have_));
    named_have_ += take;
    if (named_have_ == caf_node_size) v = judge_node();
  }
  payload_left_ -= take;
  data += take;
  n -= take;
  return v;
}

basp_frame_guard::verdict basp_frame_guard::judge_node() {
  if (operation_ == monitor_message || operation_ == down_message) {
    if (!node_ || *node_ != named_) return refuse(verdict::forbidden, "a monitor or down notice naming another node");
    return verdict::ok;
  }
  if (!node_) {
    node_ = named_;
    if (claim_ && !claim_(named_))
      return refuse(verdict::forbidden, "a handshake naming the CAF node of another member's link");
    return verdict::ok;
  }
  if (*node_ != named_) return refuse(verdict::forbidden, "a second handshake naming another CAF node");
  return verdict::ok;
}

basp_frame_guard::verdict basp_frame_guard::read_message(const std::uint8_t*& data, std::size_t& n) {
  auto next_byte = [&]() {
    const std::uint8_t b = *data++;
    --n;
    --payload_left_;
    return b;
  };
  // A varbyte count (7 bits a byte, least significant first): true when
  // whole. CAF reads on while the high bit is set, into 32 bits: a count
  // longer than 5 bytes, or one past 32 bits, would be read there as
  // another number than here, so it is refused (`bad_count_`).
  auto count_done = [&](std::uint8_t b) {
    number_ |= static_cast<std::uint64_t>(b & 0x7f) << (7 * number_bytes_++);
    if (number_bytes_ == 5 && ((b & 0x80) != 0 || (b & 0x7f) > 0x0f)) bad_count_ = true;
    return (b & 0x80) == 0 || bad_count_;
  };
  auto start_count = [&] {
    number_ = number_bytes_ = 0;
    bad_count_ = false;
  };
  while (n > 0 && payload_left_ > 0) {
    switch (phase_) {
      case phase::stack:
        if (next_byte() != 0) return refuse(verdict::forbidden, "a message with a forwarding stack");
        phase_ = phase::zero;
        start_count();
        break;
      case phase::zero:
        if (next_byte() != 0) return refuse(verdict::forbidden, "a message not in CAF's layout");
        if (++number_bytes_ == 2) {
          phase_ = phase::name_length;
          start_count();
        }
        break;
      case phase::name_length:
        if (count_done(next_byte())) {
          if (bad_count_) return refuse(verdict::forbidden, "a count CAF would read otherwise");
          if (number_ > 200) return refuse(verdict::forbidden, "a message type name too long");
          phase_ = phase::name;
          if (number_ == 0) return refuse(verdict::forbidden, "a message without a type");
        }
        break;
      case phase::name:
        name_.push_back(static_cast<char>(next_byte()));
        if (name_.size() == number_) {
          const auto it = programs().find(name_);
          if (it == programs().end()) return refuse(verdict::forbidden, "a message of type " + name_);
          program_ = &it->second;
          step_ = 0;
          skip_ = 0;
          counting_ = false;
          phase_ = phase::steps;
        }
        break;
      case phase::steps: {
        if (skip_ > 0) {
          const auto take = static_cast<std::size_t>(std::min<std::uint64_t>({skip_, n, payload_left_}));
          skip_ -= take;
          data += take;
          n -= take;
          payload_left_ -= take;
          break;
        }
        if (step_ == program_->size()) {
          phase_ = phase::done;
          if (payload_left_ > 0) return refuse(verdict::forbidden, "bytes after a message's last field");
          break;
        }
        const auto& s = (*program_)[step_];
        if (s.what == step::fixed) {
          skip_ = s.size;
          ++step_;
          break;
        }
        if (s.what == step::empty_message_or_end) {
          // Two zero bytes and the name "@<>": 00 00 03 '@' '<' '>'.
          static constexpr std::uint8_t empty[] = {0, 0, 3, '@', '<', '>'};
          if (!counting_) {
            counting_ = true;
            number_bytes_ = 0;
          }
          if (next_byte() != empty[number_bytes_++]) return refuse(verdict::forbidden, "an error with a context");
          if (number_bytes_ == sizeof empty) {
            counting_ = false;
            ++step_;
          }
          break;
        }
        if (!counting_) {
          counting_ = true;
          start_count();
        }
        if (!count_done(next_byte())) break;
        if (bad_count_) return refuse(verdict::forbidden, "a count CAF would read otherwise");
        counting_ = false;
        const std::uint64_t bytes = s.what == step::text ? number_ : number_ * s.size;
        if (bytes > payload_left_)
          return refuse(verdict::forbidden, "a " + name_ + " announcing " + std::to_string(number_) +
                                                " elements its frame does not hold");
        skip_ = bytes;
        ++step_;
        break;
      }
      case phase::done: {
        // A dropped frame's bytes pass by; a message's own end is its last field.
        if (!dropping_) return refuse(verdict::forbidden, "bytes after a message's last field");
        const auto take = static_cast<std::size_t>(std::min<std::uint64_t>(n, payload_left_));
        data += take;
        n -= take;
        payload_left_ -= take;
        break;
      }
    }
  }
  if (payload_left_ == 0 && phase_ != phase::done) {
    const bool finished = phase_ == phase::steps && skip_ == 0 &&
                          (step_ == program_->size() ||
                           (step_ + 1 == program_->size() && (*program_)[step_].what == step::empty_message_or_end &&
                            !counting_));
    if (!finished) return refuse(verdict::forbidden, "a message shorter than its type says");
    phase_ = phase::done;
  }
  return verdict::ok;
}

}  // namespace weir
