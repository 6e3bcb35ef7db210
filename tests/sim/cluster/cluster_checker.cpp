#include "sim/cluster/cluster_checker.hpp"

#include <filesystem>
#include <set>

#include "actors/replica_store.hpp"
#include "wire/batch.hpp"
#include "wire/coordinate.hpp"
#include "wire/frame.hpp"
#include "wab/segment_format.hpp"
#include "sim/segment_scan.hpp"

namespace weir::sim {

namespace {

std::string text_of(const byte_buffer& b) { return std::string(b.begin(), b.end()); }

/// "n2p5/s17" of "n2p5/s17/xyz...".
std::string short_name(const std::string& payload) {
  const auto first = payload.find('/');
  const auto second = first == std::string::npos ? first : payload.find('/', first + 1);
  return payload.substr(0, second);
}

}  // namespace

void cluster_checker::set_life(std::uint16_t node, unsigned life, bool up) { lives_[node] = {life, up}; }

std::string cluster_checker::describe(std::size_t i) const {
  const auto& r = book.record(i);
  const auto& x = extra[i];
  return "record " + short_name(r.payload) + " (node " + std::to_string(x.node) + " shard " +
         std::to_string(r.shard) + ", " + (x.replicated ? "Replicated" : "Durable") +
         (x.cut_off ? ", sent while its node reached no peer" : "") + ", " + name_of(r.status) + ": " +
         book.history_of(i) + (r.delivered ? ", delivered" : ", not delivered") + ")";
}

durable_view& cluster_checker::view(std::uint16_t node) {
  auto& v = views_[node];
  if (!v) v = std::make_unique<durable_view>(*disks_.at(node - 1)->io);
  return *v;
}

bool cluster_checker::wab_holds(std::uint16_t node, std::uint16_t shard, const std::string& payload) {
  const std::string dir = disks_.at(node - 1)->root + "/wab/" + wab::shard_dir_name(shard);
  return view(node).shard_records(dir).count(payload) > 0;
}

std::string cluster_checker::wab_place(std::uint16_t node, std::uint16_t shard, const std::string& payload) {
  const std::string dir = disks_.at(node - 1)->root + "/wab/" + wab::shard_dir_name(shard);
  const auto& records = view(node).shard_records(dir);
  const auto it = records.find(payload);
  return it == records.end() ? "nowhere" : it->second.segment + "#" + std::to_string(it->second.index);
}

bool cluster_checker::copy_holds(std::uint16_t holder, std::uint16_t origin, std::uint16_t shard,
                                 const std::string& payload) {
  const std::string root = disks_.at(holder - 1)->root + "/replica";
  std::vector<std::string> dirs{replica_shard_dir(root, origin, shard)};
  // A copy retired meanwhile (the origin began another life) still counts.
  std::error_code ec;
  const std::string retired_prefix = "node_" + std::to_string(origin) + "-";
  for (const auto& e : std::filesystem::directory_iterator(root + "/retired", ec))
    if (e.path().filename().string().rfind(retired_prefix, 0) == 0)
      dirs.push_back((e.path() / wab::shard_dir_name(shard)).string());
  for (const auto& d : dirs)
    if (view(holder).shard_records(d).count(payload) > 0) return true;
  return false;
}

std::string cluster_checker::cached_copies(std::uint16_t origin, std::uint16_t shard, const std::string& payload) {
  std::string out;
  for (std::uint16_t holder = 1; holder <= disks_.size(); ++holder) {
    if (holder == origin) continue;
    const std::string dir = replica_shard_dir(disks_.at(holder - 1)->root + "/replica", origin, shard);
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec))
      for (const auto& [index, p] : scan_segment(*disks_.at(holder - 1)->io, e.path().string()))
        if (p == payload) out += " node " + std::to_string(holder) + " " + e.path().filename().string() + "#" + std::to_string(index);
  }
  return out.empty() ? " on no node either" : out;
}

void cluster_checker::on_reply(std::uint16_t node, unsigned life, std::size_t p, const ingest_reply& reply) {
  if (!life_up(node, life) || failed) return;
  auto* req = book.pending_request(p, reply.tag);
  if (!req) {
    fail("one-reply-per-request", "producer " + std::to_string(p) + " got a reply for tag " +
                                      std::to_string(reply.tag) +
                                      (book.known_request(p, reply.tag) ? ", already answered" : ", never sent"));
    return;
  }
  book.answer(*req);
  auto frame = wire::decode_frame(reply.frame);
  if (!frame) return fail("one-reply-per-request", "a reply frame does not decode");
  const auto type = frame.value().header.type;
  const std::size_t n = req->records.size();
  std::vector<bool> ok(n, false);
  if (req->kind == ingest_kind::batch) {
    if (type != wire::message_type::ack_batch) return fail("one-reply-per-request", "a batch was not answered with a bitmap");
    auto bits = wire::decode_ack_batch(frame.value().payload, n);
    if (!bits) return fail("one-reply-per-request", "a batch bitmap does not decode");
    ok = bits.value();
  } else if (type == wire::message_type::ack) {
    ok.assign(n, true);
  } else if (type != wire::message_type::nack) {
    return fail("one-reply-per-request", "a push was answered with " + std::string(wire::name_of(type)));
  }
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t i = req->records[k];
    auto& r = book.record(i);
    auto& x = extra[i];
    book.note({step, life, i, ok[k]});
    if (!ok[k]) {
      r.status = record_status::refused;
      ++refused;
      if (x.cut_off) ++refused_cut_off;
      continue;
    }
    r.status = record_status::acked;
    r.acked_step = step;
    r.acked_life = life;
    ++(x.replicated ? replicated_acked : durable_acked);
    if (r.delivered) continue;  // delivered before its ack: nothing a crash can take
    if (!wab_holds(node, r.shard, r.payload))
      return fail(x.replicated ? "replicated-ack-is-replicated" : "durable-ack-is-durable",
                  "the ack of " + describe(i) + " left while its origin's WAB did not hold it durably");
    x.holders = {{node, disks_.at(node - 1)->disks}};
    if (!x.replicated) continue;
    std::uint32_t copies = 0;
    std::string holders;
    for (std::uint16_t other = 1; other <= disks_.size(); ++other)
      if (other != node && copy_holds(other, node, r.shard, r.payload)) {
        ++copies;
        holders += " " + std::to_string(other);
        x.holders.emplace_back(other, disks_.at(other - 1)->disks);
      }
    if (copies + 1 < replicas_)
      return fail("replicated-ack-is-replicated",
                  "the ack of " + describe(i) + " left while " + std::to_string(copies) +
                      " other node(s) held it durably (" + (holders.empty() ? "none" : "nodes" + holders) +
                      "), cluster.replicas " + std::to_string(replicas_) + "; in its WAB at " + wab_place(node, r.shard, r.payload) + "; not yet durable:" +
                      cached_copies(node, r.shard, r.payload));
  }
}

void cluster_checker::on_committed(const std::vector<sink_record>& batch, const std::vector<std::size_t>& rejected) {
  if (failed) return;
  const std::set<std::size_t> refused_here(rejected.begin(), rejected.end());
  for (std::size_t k = 0; k < batch.size(); ++k) {
    if (refused_here.count(k)) continue;
    const auto& s = batch[k];
    const std::string payload = text_of(s.payload);
    const auto found = book.find(payload);
    if (!found)
      return fail("delivered-was-written", "the sink got a record no producer sent: node " + std::to_string(s.node) +
                                               " " + s.segment + "#" + std::to_string(s.index));
    const std::string place = std::to_string(s.node) + ":" + s.segment + "#" + std::to_string(s.index);
    auto first_payload = [&](std::map<std::string, std::string>& index, const std::string& key, const char* what) {
      auto [it, fresh] = index.emplace(key, payload);
      if (!fresh && it->second != payload)
        fail("one-place-one-payload", std::string("the ") + what + " " + key + " reached the sink with " +
                                          short_name(it->second) + " and with " + short_name(payload));
      return fresh || it->second == payload;
    };
    if (!first_payload(by_place_, place, "place") || !first_payload(by_id_, s.id, "record id")) return;
    auto& r = book.record(*found);
    ++deliveries;
    if (!r.delivered) ++first_deliveries;
    r.delivered = true;
  }
}

bool cluster_checker::must_deliver(std::size_t i) const {
  const auto& r = book.record(i);
  if (r.status != record_status::acked || r.delivered) return false;
  for (const auto& [node, disk] : extra[i].holders)
    if (disks_.at(node - 1)->disks == disk) return true;
  return false;
}

std::size_t cluster_checker::owed() const {
  std::size_t n = 0;
  for (std::size_t i = 0; i < book.records().size(); ++i) n += must_deliver(i);
  return n;
}

void cluster_checker::at_end() {
  for (std::size_t i = 0; i < book.records().size(); ++i) {
    const auto& r = book.record(i);
    if (must_deliver(i)) return fail("every-acked-delivered", describe(i) + " was never delivered");
    if (r.status == record_status::acked && !r.delivered) ++lost_with_every_holder;
  }
}

}  // namespace weir::sim
