#include "transport/cluster_link.hpp"

#include <boost/asio/buffer.hpp>
#include <boost/asio/write.hpp>

#include "observability/log.hpp"

namespace weir {

namespace asio = boost::asio;

cluster_link::cluster_link(tls_stream tls, asio::local::stream_protocol::socket caf_side, identity who, rules r,
                           cluster_link_stats& stats, log_throttle& cut_lines)
    : tls_(std::move(tls)),
      caf_(std::move(caf_side)),
      who_(std::move(who)),
      rules_(std::move(r)),
      guard_(rules_.max_stranger_bytes, who_.peer_answers, rules_.claim, rules_.reachable),
      grace_timer_(caf_.get_executor()),
      stats_(stats),
      cut_lines_(cut_lines) {
  ++stats_.open;
}

cluster_link::~cluster_link() { --stats_.open; }

void cluster_link::start() {
  read_peer();
  read_caf();
  // A node that does not become a member (an unlisted node, or one whose
  // CAF never finishes its handshake) does not keep its link.
  grace_timer_.expires_after(rules_.grace);
  grace_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (ec || self->closed_ || self->rules_.member()) return;
    self->cut("its node did not become a member within cluster.handshake_timeout_ms", self->stats_.cut_stranger);
  });
}

void cluster_link::cut(const std::string& why, std::atomic<std::uint64_t>& counter) {
  ++counter;
  if (const auto cuts = cut_lines_.admit())
    log::error("a cluster link is closed", {{"node", std::to_string(who_.node)},
                                             {"peer", who_.peer},
                                             {"why", why},
                                             {"cuts_since_last_log", std::to_string(cuts)}});
  close();
}

void cluster_link::close() {
  if (closed_) return;
  closed_ = true;
  boost::system::error_code ignored;
  grace_timer_.cancel();
  tls_.lowest_layer().close(ignored);
  caf_.close(ignored);
}

void cluster_link::read_peer() {
  tls_.async_read_some(asio::buffer(from_peer_), [self = shared_from_this()](const boost::system::error_code& ec,
                                                                               std::size_t n) {
    if (ec || self->closed_) return self->close();
    // Large messages are a member's only: CAF sizes a buffer by the length.
    self->guard_.set_max_payload(self->rules_.member() ? self->rules_.max_message_bytes : self->rules_.max_stranger_bytes);
    self->to_caf_.clear();
    const auto verdict = self->guard_.feed(self->from_peer_.data(), n, self->to_caf_);
    if (verdict != basp_frame_guard::verdict::ok)
      return self->cut("it sent what a node may not: " + self->guard_.why(),
                       verdict == basp_frame_guard::verdict::too_large ? self->stats_.cut_too_large
                                                                         : self->stats_.cut_forbidden);
    if (self->to_caf_.empty()) return self->read_peer();
    asio::async_write(self->caf_, asio::buffer(self->to_caf_),
                      [self](const boost::system::error_code& wec, std::size_t) {
                        if (wec) return self->close();
                        self->read_peer();
                      });
  });
}

void cluster_link::read_caf() {
  caf_.async_read_some(asio::buffer(from_caf_), [self = shared_from_this()](const boost::system::error_code& ec,
                                                                              std::size_t n) {
    if (ec || self->closed_) return self->close();
    asio::async_write(self->tls_, asio::buffer(self->from_caf_.data(), n),
                      [self](const boost::system::error_code& wec, std::size_t) {
                        if (wec) return self->close();
                        self->read_caf();
                      });
  });
}

}  // namespace weir
