#include "daemon/cluster_link.hpp"

#include <boost/asio/buffer.hpp>
#include <boost/asio/write.hpp>

#include "observability/log.hpp"

namespace weir {

namespace asio = boost::asio;

cluster_link::cluster_link(tls_stream tls, asio::local::stream_protocol::socket caf_side, identity who,
                           std::uint32_t max_message_bytes, basp_frame_guard::claim_fn claim,
                           cluster_link_stats& stats, log_throttle& cut_lines)
    : tls_(std::move(tls)),
      caf_(std::move(caf_side)),
      who_(std::move(who)),
      guard_(max_message_bytes, who_.peer_answers, std::move(claim)),
      stats_(stats),
      cut_lines_(cut_lines) {
  ++stats_.open;
}

cluster_link::~cluster_link() { --stats_.open; }

void cluster_link::start() {
  read_peer();
  read_caf();
}

void cluster_link::close() {
  if (closed_) return;
  closed_ = true;
  boost::system::error_code ignored;
  tls_.lowest_layer().close(ignored);
  caf_.close(ignored);
}

void cluster_link::read_peer() {
  tls_.async_read_some(asio::buffer(from_peer_), [self = shared_from_this()](const boost::system::error_code& ec,
                                                                               std::size_t n) {
    if (ec || self->closed_) return self->close();
    const auto verdict = self->guard_.feed(self->from_peer_.data(), n);
    if (verdict != basp_frame_guard::verdict::ok) {
      ++(verdict == basp_frame_guard::verdict::too_large ? self->stats_.cut_too_large : self->stats_.cut_forbidden);
      if (const auto cuts = self->cut_lines_.admit())
        log::error("a cluster peer sent what a node may not; its link is closed",
                   {{"node", std::to_string(self->who_.node)},
                    {"peer", self->who_.peer},
                    {"why", self->guard_.why()},
                    {"cuts_since_last_log", std::to_string(cuts)}});
      return self->close();
    }
    asio::async_write(self->caf_, asio::buffer(self->from_peer_.data(), n),
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
