#pragma once
// The cluster's network side: the only socket on cluster.listen, and every
// call to a peer. A connection is a member's link only once its TLS
// handshake verified a certificate that chains to cluster.tls.ca and names a
// node other than this one (cluster_tls.hpp), within
// cluster.handshake_timeout_ms; at most cluster.max_pending_handshakes are
// unauthenticated at once (the oldest is closed for a newer one), and a
// failed accept (EMFILE) backs off. Nothing a peer sends reaches CAF before
// that, and after it only what basp_frame_guard allows: a stranger at the
// port costs the members no link, no memory and no CPU to speak of.
// Authenticated links go to CAF through the cluster bridge. All of it runs
// on one thread of its own.
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include "transport/accept_backoff.hpp"
#include "transport/cluster_bridge.hpp"
#include "transport/cluster_link.hpp"
#include "transport/tls_handshakes.hpp"
#include "observability/cluster_metrics.hpp"
#include "observability/log_throttle.hpp"

namespace weir {

struct cluster_gate_options {
  std::uint16_t node = 0;
  std::string listen;  // cluster.listen
  std::chrono::milliseconds handshake_timeout{5000};
  std::size_t max_pending = 64;
  std::uint32_t max_message_bytes = 64u << 20;
};

class cluster_gate {
 public:
  cluster_gate(cluster_gate_options options, std::shared_ptr<boost::asio::ssl::context> tls, cluster_bridge& bridge,
               cluster_link_stats& stats);
  ~cluster_gate();
  cluster_gate(const cluster_gate&) = delete;
  cluster_gate& operator=(const cluster_gate&) = delete;

  /// Binds cluster.listen; throws startup_error naming it.
  void open();
  /// Accepts, on the gate's own thread.
  void start();
  /// Closes the port, the handshakes and every link; joins the thread.
  void stop();
  /// Links from now on use `tls` (SIGHUP: rotated certificates); links
  /// already made keep theirs.
  void use(std::shared_ptr<boost::asio::ssl::context> tls);
  /// The actors a peer's messages may go to: membership (every peer), and
  /// the replicators (members only); before start().
  void reachable(std::uint64_t membership, std::set<std::uint64_t> replicators) {
    membership_actor_ = membership;
    reachable_ = std::move(replicators);
  }
  /// The nodes membership knows as members (from any thread): their links
  /// may send large messages and stay; a link of any other node is closed
  /// after cluster.handshake_timeout_ms, and loses a CAF node id to a member.
  void members(std::set<std::uint16_t> nodes);

  /// Makes a link to host:port; `done` gets the name the bridge offers it
  /// under, or "" and why not (on the gate's thread).
  void dial(const std::string& host, std::uint16_t port, std::function<void(std::string, std::string)> done);

 private:
  void on_accepted(boost::asio::ip::tcp::socket socket);
  /// After a handshake: the peer's node from its certificate, or it is refused.
  void on_authenticated(const std::shared_ptr<tls_handshakes::handshake>& h, bool peer_answers,
                        const std::function<void(std::string, std::string)>& done);
  std::shared_ptr<boost::asio::ssl::context> tls() const;
  /// Whether link `link` of `node` may be CAF node `id`: not while a live
  /// link of another node is (it would take that node's route).
  bool claim(const basp_frame_guard::caf_node& id, std::uint16_t node, std::uint64_t link);
  bool alive(std::uint64_t link) const;
  bool is_member(std::uint16_t node) const;

  cluster_gate_options options_;
  cluster_bridge& bridge_;
  cluster_link_stats& stats_;
  mutable std::mutex tls_mutex_;
  std::shared_ptr<boost::asio::ssl::context> tls_;
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  boost::asio::strand<boost::asio::io_context::executor_type> strand_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer accept_timer_;
  accept_backoff backoff_;
  tls_handshakes handshakes_;       // connections to cluster.listen
  tls_handshakes dial_handshakes_;  // this node's own calls: strangers cannot crowd them out
  std::uint64_t membership_actor_ = 0;
  std::set<std::uint64_t> reachable_;
  mutable std::mutex members_mutex_;
  std::set<std::uint16_t> members_;
  log_throttle cut_lines_;
  // On the gate's thread: the links, and which CAF node each one named.
  std::map<std::uint64_t, std::weak_ptr<cluster_link>> links_;
  std::uint64_t next_link_ = 0;
  struct named_by {
    std::uint16_t node;
    std::uint64_t link;
  };
  std::map<basp_frame_guard::caf_node, named_by> caf_nodes_;
  std::thread thread_;
};

}  // namespace weir
