#include <algorithm>
#include <stdexcept>

#include "messages/wire/frame.hpp"
#include "weir/client.hpp"

namespace weir::client {

pipelined_producer::pipelined_producer(connection& conn, std::size_t window)
    : conn_(conn), window_(std::max<std::size_t>(window, 1)) {}

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
  if (done) done(r);
}

}  // namespace weir::client
