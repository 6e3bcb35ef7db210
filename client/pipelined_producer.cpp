#include <algorithm>
#include <stdexcept>

#include "wire/frame.hpp"
#include "weir/client.hpp"

namespace weir::client {

// Replies are read only between sends: the answers to a full window must fit
// in what the daemon buffers for a connection (its write backlog, 256 KiB, of
// 20-byte acks) or, blocked writing, it stops reading and a send never ends.
constexpr std::size_t max_window = 8192;

pipelined_producer::pipelined_producer(connection& conn, std::size_t window)
    : conn_(conn), window_(std::clamp<std::size_t>(window, 1, max_window)) {}

void pipelined_producer::push(std::span<const std::uint8_t> payload, durability d, completion done) {
  // Answers already here are taken first: a daemon whose replies are not
  // read stops reading frames, and a blocked write would then never end.
  while (!waiting_.empty() && conn_.readable(std::chrono::milliseconds(0))) complete_one();
  while (waiting_.size() >= window_) complete_one();
  conn_.send_raw(wire::encode_frame(wire::message_type::push, static_cast<wire::durability>(d),
                                    payload));
  waiting_.push_back(std::move(done));
  peak_ = std::max(peak_, waiting_.size());
}

void pipelined_producer::flush() {
  while (!waiting_.empty()) complete_one();
}

void pipelined_producer::complete_one() {
  const push_result r = conn_.expect_ack(conn_.read_reply());
  auto done = std::move(waiting_.front());
  waiting_.pop_front();
  if (done) done(r);  // one that throws leaves the rest waiting, in order
}

}  // namespace weir::client
