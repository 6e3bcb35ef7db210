#pragma once
// Hands authenticated cluster links to CAF's middleman. CAF 0.17 listens
// and connects itself, and its TLS module checks no names, leaves OpenSSL
// errors behind that break other links, never times out a handshake, and
// sizes buffers by what a peer announces (docs/decisions/0001). So CAF gets
// no port: weir's cluster gate (cluster_gate.hpp) does TCP and TLS, checks
// who a peer is, and gives CAF one end of a socket pair per authenticated
// link, the other end relayed to the peer. Inbound links reach CAF through
// a doorman fed here; outbound ones through a middleman actor whose
// connect() takes the link offered under the name it is given. CAF's BASP
// broker then answers (get_atom, node_id) with the link's node: its address
// is "weir-node-<id>" and its port the id, as the certificate proved it.
#include <cstdint>
#include <memory>
#include <string>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>
#include <caf/io/middleman_actor.hpp>

namespace weir {

class cluster_bridge {
 public:
  explicit cluster_bridge(caf::actor_system& sys);
  ~cluster_bridge();
  cluster_bridge(const cluster_bridge&) = delete;
  cluster_bridge& operator=(const cluster_bridge&) = delete;

  /// Makes `whom` the actor every inbound link reaches; "" or why not.
  std::string publish(const caf::actor& whom);
  /// A peer that called proved to be `node`: CAF serves `fd` as a new connection.
  void accept(int fd, std::uint16_t node);
  /// This node's call reached a peer that proved to be `node`: the name to
  /// connect to through middleman() to have CAF take `fd`.
  std::string offer(int fd, std::uint16_t node);
  /// Answers (connect_atom, name, port) for an offered name, as CAF's does.
  caf::io::middleman_actor middleman() const;
  /// CAF's BASP broker (see above).
  caf::actor broker() const;
  /// Ends the middleman actor (with kill: it ignores any other exit) and
  /// waits for it; links close with the actor system.
  void stop();

  struct shared;

 private:
  caf::actor_system& sys_;
  std::shared_ptr<shared> shared_;
  caf::actor broker_;
  caf::io::middleman_actor middleman_;
};

}  // namespace weir
