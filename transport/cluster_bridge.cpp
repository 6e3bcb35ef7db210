#include "transport/cluster_bridge.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <optional>

#include <caf/actor_system.hpp>
#include <caf/io/basp_broker.hpp>
#include <caf/io/doorman.hpp>
#include <caf/io/middleman.hpp>
#include <caf/io/middleman_actor_impl.hpp>
#include <caf/io/network/default_multiplexer.hpp>
#include <caf/io/network/scribe_impl.hpp>
#include <caf/scoped_actor.hpp>

#include "transport/cluster_tls.hpp"

namespace weir {

namespace {

namespace io = caf::io;
namespace net = caf::io::network;

/// The port CAF files the published actor under; no socket has it.
constexpr std::uint16_t gate_port = 1;

/// A connection over one end of a socket pair, named by the node the other
/// end authenticated: CAF asks a scribe for its peer's address and port.
class node_scribe : public net::scribe_impl {
 public:
  node_scribe(net::default_multiplexer& mx, net::native_socket fd, std::uint16_t node)
      : scribe_impl(mx, fd), node_(node) {}
  std::string addr() const override { return node_certificate_name(node_); }
  std::uint16_t port() const override { return node_; }

 private:
  std::uint16_t node_;
};

/// A doorman with no socket: the gate feeds it connections it authenticated.
class fed_doorman : public io::doorman {
 public:
  fed_doorman(net::default_multiplexer& mx, int handle_fd)
      : doorman(net::accept_hdl_from_socket(handle_fd)), mx_(mx) {}

  bool new_connection() override { return false; }  // nothing to accept: see take()
  void graceful_shutdown() override { detach(&mx_, false); }
  void launch() override {}
  std::string addr() const override { return "weir-cluster-gate"; }
  std::uint16_t port() const override { return gate_port; }
  void add_to_loop() override {}
  void remove_from_loop() override {}

  /// On the multiplexer's thread: `fd` is a new connection from `node`.
  void take(int fd, std::uint16_t node) {
    if (detached()) {
      ::close(fd);
      return;
    }
    auto scribe = caf::make_counted<node_scribe>(mx_, fd, node);
    const auto hdl = scribe->hdl();
    parent()->add_scribe(std::move(scribe));
    doorman::new_connection(&mx_, hdl);
  }

 private:
  net::default_multiplexer& mx_;
};

}  // namespace

struct cluster_bridge::shared {
  explicit shared(net::default_multiplexer& m) : mx(m), handle_fd(::eventfd(0, EFD_CLOEXEC)) {
    // The fd only makes the doorman's handle unique among the broker's.
    doorman = caf::make_counted<fed_doorman>(mx, handle_fd);
  }
  ~shared() {
    if (handle_fd >= 0) ::close(handle_fd);
  }

  struct link {
    int fd;
    std::uint16_t node;
  };
  std::optional<link> take(const std::string& name) {
    std::lock_guard<std::mutex> guard(mutex);
    auto it = offers.find(name);
    if (it == offers.end()) return std::nullopt;
    auto l = it->second;
    offers.erase(it);
    return l;
  }

  net::default_multiplexer& mx;
  int handle_fd;
  caf::intrusive_ptr<fed_doorman> doorman;
  std::mutex mutex;
  std::map<std::string, link> offers;
  std::uint64_t next_offer = 0;
};

namespace {

/// CAF's middleman actor, but for links the gate made.
class bridge_middleman : public io::middleman_actor_impl {
 public:
  bridge_middleman(caf::actor_config& cfg, caf::actor broker, std::shared_ptr<cluster_bridge::shared> s)
      : middleman_actor_impl(cfg, std::move(broker)), shared_(std::move(s)) {}
  const char* name() const override { return "weir_cluster_middleman"; }

 protected:
  caf::expected<io::scribe_ptr> connect(const std::string& name, std::uint16_t) override {
    auto l = shared_->take(name);
    if (!l) return caf::make_error(caf::sec::cannot_connect_to_node, "no cluster link offered as " + name);
    return io::scribe_ptr{caf::make_counted<node_scribe>(shared_->mx, l->fd, l->node)};
  }
  caf::expected<io::doorman_ptr> open(std::uint16_t, const char*, bool) override {
    return io::doorman_ptr{shared_->doorman};
  }

 private:
  std::shared_ptr<cluster_bridge::shared> shared_;
};

}  // namespace

cluster_bridge::cluster_bridge(caf::actor_system& sys)
    : sys_(sys),
      shared_(std::make_shared<shared>(dynamic_cast<net::default_multiplexer&>(sys.middleman().backend()))) {
  // Asked once, here: the middleman's broker registry is not thread-safe.
  broker_ = sys.middleman().named_broker<io::basp_broker>(caf::atom("BASP"));
  middleman_ = sys.spawn<bridge_middleman, caf::hidden>(broker_, shared_);
}

cluster_bridge::~cluster_bridge() { stop(); }

void cluster_bridge::stop() {
  if (!middleman_) return;
  // CAF 0.17's middleman actor ignores every exit but kill (its constructor
  // sets an exit handler that does nothing): user_shutdown left it running,
  // held by the BASP broker for any connect in flight, until the middleman
  // itself stopped in the actor system's teardown. kill ends it here; its
  // on_exit answers the connects still pending.
  {
    caf::scoped_actor self{sys_};
    self->send_exit(middleman_, caf::exit_reason::kill);
    self->wait_for(middleman_);
  }
  middleman_ = nullptr;
  std::lock_guard<std::mutex> guard(shared_->mutex);
  for (auto& [name, l] : shared_->offers) ::close(l.fd);
  shared_->offers.clear();
}

caf::actor cluster_bridge::broker() const { return broker_; }

caf::io::middleman_actor cluster_bridge::middleman() const { return middleman_; }

std::string cluster_bridge::publish(const caf::actor& whom) {
  caf::scoped_actor self{sys_};
  std::string why;
  self->request(middleman_, caf::infinite, caf::publish_atom::value, gate_port,
                caf::actor_cast<caf::strong_actor_ptr>(whom), std::set<std::string>{}, std::string{}, false)
      .receive([](std::uint16_t) {}, [&](caf::error& e) { why = sys_.render(e); });
  return why;
}

void cluster_bridge::accept(int fd, std::uint16_t node) {
  auto d = shared_->doorman;
  shared_->mx.post([d, fd, node] { d->take(fd, node); });
}

std::string cluster_bridge::offer(int fd, std::uint16_t node) {
  std::lock_guard<std::mutex> guard(shared_->mutex);
  // A name never reused: CAF's middleman caches what it connected to by name.
  std::string name = "weir-link-" + std::to_string(++shared_->next_offer);
  shared_->offers[name] = {fd, node};
  return name;
}

}  // namespace weir
