#include "sim/cluster/sim_network.hpp"

#include <algorithm>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/make_actor.hpp>
#include <caf/send.hpp>

#include "sim/cluster/remote_proxy.hpp"

namespace weir::sim {

namespace {

constexpr std::uint32_t process_id = 4242;

/// The network actor: files every packet a proxy was sent. A function with
/// an argument: CAF 0.17 spawning one without binds a reference to a null
/// pointer (UBSan stops the run).
caf::behavior network_actor(caf::event_based_actor*, sim_network* net) {
  return {[net](const std::shared_ptr<packet>& p) { net->accept(*p); }};
}

}  // namespace

sim_network::sim_network(caf::actor_system& sys) : sys_(sys) { actor_ = sys.spawn(network_actor, this); }

sim_network::~sim_network() {
  drop_proxies([](const proxy_key&) { return true; });
  caf::anon_send_exit(actor_, caf::exit_reason::kill);
}

caf::node_id sim_network::node_id_of(std::uint16_t node) {
  caf::node_id::default_data::host_id_type host{};
  host[0] = static_cast<std::uint8_t>(node >> 8);
  host[1] = static_cast<std::uint8_t>(node & 0xff);
  host[19] = 0x5a;  // not an all-zero host (an invalid id)
  return caf::make_node_id(process_id, host);
}

std::uint16_t sim_network::node_of(const caf::node_id& id) const {
  for (const auto& [node, at] : published_)
    if (node_id_of(node) == id) return node;
  return 0;
}

void sim_network::publish(std::uint16_t node, const std::string& listen, caf::actor published) {
  published_[node] = {listen, std::move(published)};
}

void sim_network::crash(std::uint16_t node) {
  published_.erase(node);
  std::vector<link_key> gone;
  for (const auto& [k, connection] : links_)
    if (k.first == node || k.second == node) gone.push_back(k);
  for (const auto& k : gone) cut(k.first, k.second, "node " + std::to_string(node) + " crashed");
  // Its own view of others' actors goes with it.
  drop_proxies([node](const proxy_key& k) { return k.viewer == node || k.owner == node; });
}

caf::strong_actor_ptr sim_network::dial(std::uint16_t from, const std::string& listen) {
  ++counters_.dials;
  auto it = std::find_if(published_.begin(), published_.end(), [&](const auto& e) { return e.second.first == listen; });
  if (it == published_.end() || it->first == from || !up(from) || !reachable(from, it->first)) {
    ++counters_.dials_refused;
    return nullptr;
  }
  const auto to = it->first;
  if (links_.emplace(key(from, to), next_link_).second) {
    ++next_link_;
    event("link " + std::to_string(from) + "-" + std::to_string(to) + " up");
  }
  return proxy(from, to, caf::actor_cast<caf::strong_actor_ptr>(it->second.second));
}

void sim_network::partition(const std::vector<std::set<std::uint16_t>>& groups) {
  groups_ = groups;
  std::vector<link_key> gone;
  for (const auto& [k, connection] : links_)
    if (!reachable(k.first, k.second)) gone.push_back(k);
  for (const auto& k : gone) cut(k.first, k.second, "partition");
}

void sim_network::heal() { groups_.clear(); }

bool sim_network::reachable(std::uint16_t a, std::uint16_t b) const {
  if (groups_.empty()) return true;
  for (const auto& g : groups_)
    if (g.count(a) > 0) return g.count(b) > 0;
  return false;
}

void sim_network::accept(packet p) {
  // From a node that crashed, or on a link cut meanwhile: never sent.
  const auto link = links_.find(key(p.from, p.to));
  if (!up(p.from) || link == links_.end() || link->second != p.link) {
    ++counters_.dropped;
    return;
  }
  ++counters_.sent;
  queues_[{p.from, p.to}].push_back(std::move(p));
}

std::size_t sim_network::in_flight() const {
  std::size_t n = 0;
  for (const auto& [k, q] : queues_) n += q.size();
  return n;
}

bool sim_network::deliver_one(sim_rng& rng, unsigned duplicate_percent, unsigned loss_percent) {
  std::vector<std::pair<std::uint16_t, std::uint16_t>> busy;
  for (const auto& [k, q] : queues_)
    if (!q.empty()) busy.push_back(k);
  if (busy.empty()) return false;
  const auto which = busy[rng.below(busy.size())];
  auto& q = queues_[which];
  if (rng.percent(loss_percent)) {
    ++counters_.lost;
    cut(which.first, which.second, "a packet was lost");
    return true;
  }
  packet p = q.front();
  if (rng.percent(duplicate_percent)) {
    ++counters_.duplicated;  // the copy stays first in line and arrives again
  } else {
    q.pop_front();
  }
  ++counters_.delivered;
  auto sender = proxy(p.to, p.sender_node, p.sender);
  p.receiver->enqueue(std::move(sender), p.mid, std::move(p.content), nullptr);
  return true;
}

void sim_network::cut(std::uint16_t a, std::uint16_t b, const std::string& why) {
  if (links_.erase(key(a, b)) == 0) return;
  ++counters_.cuts;
  event("link " + std::to_string(std::min(a, b)) + "-" + std::to_string(std::max(a, b)) + " cut: " + why);
  queues_.erase({a, b});
  queues_.erase({b, a});
  drop_proxies([a, b](const proxy_key& k) {
    return (k.viewer == a && k.owner == b) || (k.viewer == b && k.owner == a);
  });
}

void sim_network::drop_proxies(const std::function<bool(const proxy_key&)>& which) {
  std::vector<caf::strong_actor_ptr> dead;
  for (auto it = proxies_.begin(); it != proxies_.end();) {
    if (!which(it->first)) {
      ++it;
      continue;
    }
    dead.push_back(std::move(it->second));
    it = proxies_.erase(it);
  }
  for (auto& d : dead)
    static_cast<remote_proxy*>(caf::actor_cast<caf::abstract_actor*>(d))
        ->kill_proxy(nullptr, caf::exit_reason::remote_link_unreachable);
}

caf::strong_actor_ptr sim_network::proxy(std::uint16_t viewer, std::uint16_t owner,
                                         const caf::strong_actor_ptr& target) {
  if (!target) return nullptr;
  if (viewer == owner) return target;
  const auto link = links_.find(key(viewer, owner));
  if (link == links_.end()) return nullptr;
  const proxy_key k{viewer, owner, target->id()};
  auto it = proxies_.find(k);
  if (it != proxies_.end()) return it->second;
  caf::actor_config cfg;
  auto p = caf::make_actor<remote_proxy, caf::strong_actor_ptr>(target->id(), node_id_of(owner), &sys_, cfg, actor_,
                                                                viewer, owner, link->second, target);
  proxies_.emplace(k, p);
  return p;
}

}  // namespace weir::sim
