#pragma once
// One authenticated cluster link: bytes relayed between the peer's TLS
// stream and this node's CAF middleman (one end of a socket pair, see
// cluster_bridge.hpp). What the peer sends is judged before CAF reads it
// (basp_frame_guard.hpp); a link that breaks a rule is closed and logged.
// Either side closing closes both: CAF then sees its connection end and
// membership the peer go, as for a lost TCP connection.
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>

#include "transport/basp_frame_guard.hpp"
#include "observability/cluster_metrics.hpp"
#include "observability/log_throttle.hpp"

namespace weir {

class cluster_link : public std::enable_shared_from_this<cluster_link> {
 public:
  using tls_stream = boost::asio::ssl::stream<boost::asio::ip::tcp::socket>;

  struct identity {
    std::uint16_t node = 0;  // as its certificate names it
    std::string peer;        // host:port
    bool peer_answers = false;  // this node called it
  };

  /// What the link may do: `claim` says whether it may go on as the CAF
  /// node its handshake names, `reachable` which actors it may send to,
  /// `member` whether its node is a member (else its messages are small,
  /// and it is closed after `grace` if it has not become one).
  struct rules {
    basp_frame_guard::claim_fn claim;
    basp_frame_guard::reachable_fn reachable;
    std::function<bool()> member;
    std::uint32_t max_message_bytes = 0;
    std::uint32_t max_stranger_bytes = 2u << 20;  // a chunk of ordinary records (1 MiB) fits
    std::chrono::milliseconds grace{5000};
  };

  cluster_link(tls_stream tls, boost::asio::local::stream_protocol::socket caf_side, identity who, rules r,
               cluster_link_stats& stats, log_throttle& cut_lines);
  ~cluster_link();

  /// Relays both ways until either side ends (on the io_context's one thread).
  void start();
  const identity& who() const { return who_; }
  /// Closes both sides; from the io_context's thread.
  void close();
  bool closed() const { return closed_; }

 private:
  void read_peer();
  void read_caf();

  void cut(const std::string& why, std::atomic<std::uint64_t>& counter);

  tls_stream tls_;
  boost::asio::local::stream_protocol::socket caf_;
  identity who_;
  rules rules_;
  basp_frame_guard guard_;
  boost::asio::steady_timer grace_timer_;
  cluster_link_stats& stats_;
  log_throttle& cut_lines_;
  bool closed_ = false;
  std::array<std::uint8_t, 64 * 1024> from_peer_{};
  std::vector<std::uint8_t> to_caf_;  // what the guard passed on of from_peer_
  std::array<std::uint8_t, 64 * 1024> from_caf_{};
};

}  // namespace weir
