#include "transport/cluster_gate.hpp"

#include <openssl/ssl.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include <boost/asio/connect.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>

#include "transport/cluster_tls.hpp"
#include "transport/tcp_bind.hpp"
#include "observability/log.hpp"

namespace weir {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

/// Links of one node at once, at most (one each way, and one being replaced).
constexpr std::size_t max_links_per_node = 4;

}  // namespace

cluster_gate::cluster_gate(cluster_gate_options options, std::shared_ptr<asio::ssl::context> tls,
                           cluster_bridge& bridge, cluster_link_stats& stats)
    : options_(std::move(options)),
      bridge_(bridge),
      stats_(stats),
      tls_(std::move(tls)),
      work_(asio::make_work_guard(io_)),
      strand_(asio::make_strand(io_)),
      acceptor_(io_),
      accept_timer_(io_),
      handshakes_(io_, {options_.handshake_timeout, options_.max_pending, "cluster.handshake_timeout_ms", "cluster"},
                  stats.handshakes),
      dial_handshakes_(io_, {options_.handshake_timeout, 64, "cluster.handshake_timeout_ms", "cluster (calling)"},
                       stats.handshakes),
      cut_lines_(std::chrono::seconds(10)) {}

cluster_gate::~cluster_gate() { stop(); }

void cluster_gate::open() { bind_tcp_acceptor(acceptor_, "cluster.listen", options_.listen); }

void cluster_gate::start() {
  asio::post(strand_, [this] {
    accept_forever(acceptor_, strand_, accept_timer_, backoff_, "cluster", stats_.accept_errors,
                   [this](tcp::socket socket) { on_accepted(std::move(socket)); });
  });
  thread_ = std::thread([this] { io_.run(); });
}

void cluster_gate::stop() {
  if (!thread_.joinable()) return;
  asio::post(strand_, [this] {
    boost::system::error_code ignored;
    accept_timer_.cancel();
    acceptor_.close(ignored);
  });
  handshakes_.close_all();
  dial_handshakes_.close_all();
  asio::post(io_, [this] {
    for (auto& [id, weak] : links_)
      if (auto l = weak.lock()) l->close();
    links_.clear();
  });
  work_.reset();
  // Whatever is still pending (a resolve, a connect) ends with the loop.
  asio::post(io_, [this] { io_.stop(); });
  thread_.join();
}

void cluster_gate::use(std::shared_ptr<asio::ssl::context> tls) {
  std::lock_guard<std::mutex> guard(tls_mutex_);
  tls_ = std::move(tls);
}

std::shared_ptr<asio::ssl::context> cluster_gate::tls() const {
  std::lock_guard<std::mutex> guard(tls_mutex_);
  return tls_;
}

bool cluster_gate::alive(std::uint64_t link) const {
  const auto it = links_.find(link);
  if (it == links_.end()) return false;
  const auto l = it->second.lock();
  return l && !l->closed();
}

void cluster_gate::members(std::set<std::uint16_t> nodes) {
  std::lock_guard<std::mutex> guard(members_mutex_);
  members_ = std::move(nodes);
}

bool cluster_gate::is_member(std::uint16_t node) const {
  std::lock_guard<std::mutex> guard(members_mutex_);
  return members_.count(node) > 0;
}

bool cluster_gate::claim(const basp_frame_guard::caf_node& id, std::uint16_t node, std::uint64_t link) {
  const auto it = caf_nodes_.find(id);
  if (it != caf_nodes_.end() && it->second.node != node) {
    // A member's CAF node id is never another node's, even after its link
    // ended (CAF may still route to it); a stranger squatting one gives it up.
    if (is_member(it->second.node)) return false;
    if (alive(it->second.link))
      if (auto squatter = links_[it->second.link].lock()) squatter->close();
  }
  caf_nodes_[id] = {node, link};
  return true;
}

void cluster_gate::on_accepted(tcp::socket socket) {
  handshakes_.begin(std::move(socket), tls(), asio::ssl::stream_base::server,
                    [this](const std::shared_ptr<tls_handshakes::handshake>& h) { on_authenticated(h, false, {}); });
}

void cluster_gate::dial(const std::string& host, std::uint16_t port, std::function<void(std::string, std::string)> done) {
  asio::post(io_, [this, host, port, done = std::move(done)] {
    // The call as a whole (resolve, connect, handshake) is bounded; the
    // handshake has its own deadline on top.
    auto resolver = std::make_shared<tcp::resolver>(io_);
    auto socket = std::make_shared<tcp::socket>(io_);
    auto timer = std::make_shared<asio::steady_timer>(io_, options_.handshake_timeout);
    timer->async_wait([resolver, socket](const boost::system::error_code& ec) {
      if (ec) return;
      resolver->cancel();
      boost::system::error_code ignored;
      socket->close(ignored);
    });
    resolver->async_resolve(
        host, std::to_string(port),
        [this, resolver, socket, timer, done](const boost::system::error_code& ec, tcp::resolver::results_type at) {
          if (ec) {
            timer->cancel();
            return done("", "cannot resolve: " + ec.message());
          }
          asio::async_connect(*socket, at, [this, socket, timer, done](const boost::system::error_code& cec, const tcp::endpoint&) {
            timer->cancel();
            if (cec) return done("", cec == asio::error::operation_aborted ? "connect timed out" : cec.message());
            dial_handshakes_.begin(
                std::move(*socket), tls(), asio::ssl::stream_base::client,
                [this, done](const std::shared_ptr<tls_handshakes::handshake>& h) { on_authenticated(h, true, done); },
                [done](tls_failure why, const std::string& detail) {
                  done("", std::string("TLS handshake failed (") + name_of(why) + "): " + detail);
                });
          });
        });
  });
}

void cluster_gate::on_authenticated(const std::shared_ptr<tls_handshakes::handshake>& h, bool peer_answers,
                                    const std::function<void(std::string, std::string)>& done) {
  auto refuse = [&](tls_failure why, const std::string& detail) {
    handshakes_.refuse(*h, why, detail);
    boost::system::error_code ignored;
    h->tls.lowest_layer().close(ignored);
    if (done) done("", detail);
  };
  X509* cert = SSL_get1_peer_certificate(h->tls.native_handle());
  const auto node = node_named_by(cert);
  X509_free(cert);
  if (!node) return refuse(tls_failure::wrong_name, "its certificate names no weir-node-<id> (CN or DNS subjectAltName)");
  if (*node == options_.node)
    return refuse(tls_failure::wrong_name, "its certificate names this node, " + node_certificate_name(*node) +
                                               " (two nodes share a certificate, or a node called itself)");
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, fds) != 0)
    return refuse(tls_failure::other, std::string("cannot make a socket pair for the link: ") + std::strerror(errno));
  asio::local::stream_protocol::socket caf_side(io_, asio::local::stream_protocol(), fds[1]);
  // On the gate's one thread, as every handler here: no lock for the links.
  for (auto it = links_.begin(); it != links_.end();) it = alive(it->first) ? std::next(it) : links_.erase(it);
  // A stranger's claims go with its link; a member's stay (see claim).
  for (auto it = caf_nodes_.begin(); it != caf_nodes_.end();)
    it = alive(it->second.link) || is_member(it->second.node) ? std::next(it) : caf_nodes_.erase(it);
  // A few links per node at most: the oldest makes room.
  std::vector<std::uint64_t> of_node;
  for (const auto& [lid, weak] : links_)
    if (auto l = weak.lock(); l && l->who().node == *node) of_node.push_back(lid);
  if (of_node.size() >= max_links_per_node)
    if (auto oldest = links_[of_node.front()].lock()) {
      ++stats_.cut_crowded;
      oldest->close();
    }
  const auto id = next_link_++;
  const auto proven = *node;
  cluster_link::rules r;
  r.claim = [this, proven, id](const basp_frame_guard::caf_node& caf) { return claim(caf, proven, id); };
  // A node no member knows reaches membership only (its hello): the
  // replicators' requests go to members, so an answer from any other node is forged.
  r.reachable = [this, proven](std::uint64_t actor) {
    return actor == membership_actor_ || (reachable_.count(actor) > 0 && is_member(proven));
  };
  r.member = [this, proven] { return is_member(proven); };
  r.max_message_bytes = static_cast<std::uint32_t>(options_.max_message_bytes);
  r.grace = options_.handshake_timeout;
  auto link = std::make_shared<cluster_link>(std::move(h->tls), std::move(caf_side),
                                             cluster_link::identity{proven, h->peer, peer_answers}, std::move(r),
                                             stats_, cut_lines_);
  links_[id] = link;
  link->start();
  log::debug("cluster link authenticated", {{"node", std::to_string(*node)}, {"peer", h->peer},
                                             {"direction", peer_answers ? "out" : "in"}});
  if (peer_answers)
    done(bridge_.offer(fds[0], *node), "");
  else
    bridge_.accept(fds[0], *node);
}

}  // namespace weir
