#include "sim/invariants.hpp"

#include <set>
#include <unordered_set>

#include "wire/batch.hpp"
#include "wire/coordinate.hpp"
#include "wire/frame.hpp"
#include "wab/segment_format.hpp"
#include "sim/segment_scan.hpp"

namespace weir::sim {

namespace {

std::string text_of(const byte_buffer& b) { return std::string(b.begin(), b.end()); }

const char* kind_name(ingest_kind k) {
  switch (k) {
    case ingest_kind::push: return "push";
    case ingest_kind::tracked: return "tracked";
    case ingest_kind::batch: return "batch";
  }
  return "?";
}

/// "p1/s17" of "p1/s17/xyz..." (and "!p1/s17" for a poison record).
std::string short_name(const std::string& payload) {
  const auto first = payload.find('/');
  const auto second = first == std::string::npos ? first : payload.find('/', first + 1);
  return payload.substr(0, second);
}

/// Every payload readable in `shard`'s recovered segments from its cursor
/// on: what the drain of the new life will deliver.
std::unordered_set<std::string> readable_from_cursor(wab::file_io& io, const shard_start& s) {
  std::unordered_set<std::string> out;
  for (const auto& seg : s.recovery.segments) {
    if (s.cursor && seg.sequence < s.cursor->sequence) continue;
    const bool at_cursor = s.cursor && seg.sequence == s.cursor->sequence;
    for (auto& [index, payload] : scan_segment(io, seg.path, at_cursor ? s.cursor->offset : 0,
                                               at_cursor ? s.cursor->index : 1))
      out.insert(std::move(payload));
  }
  return out;
}

/// index -> payload of a segment file read from its start.
std::map<std::uint64_t, std::string> records_of_file(wab::file_io& io, const std::string& path) {
  std::map<std::uint64_t, std::string> out;
  for (auto& [index, payload] : scan_segment(io, path)) out[index] = std::move(payload);
  return out;
}

}  // namespace

invariants::invariants(sim_world& w) : w_(w), last_first_seq_(w.cfg.producers, 0) {}

std::string invariants::describe(std::size_t i) const {
  const auto& r = w_.book.record(i);
  return "record " + short_name(r.payload) + " (" + (r.durable ? "Durable" : "Buffered") +
         (r.poison ? ", refused by the sink" : "") + ", shard " + std::to_string(r.shard) + ", " +
         name_of(r.status) + ": " + w_.book.history_of(i) + (r.delivered ? ", delivered" : ", not delivered") + ")";
}

void invariants::note_used(std::uint16_t shard, const std::string& segment) {
  const auto slash = segment.find('/');
  if (slash == std::string::npos) return;
  if (auto seq = wab::parse_segment_file_name(segment.substr(slash + 1)))
    used_sequence_[shard] = std::max(used_sequence_[shard], *seq);
}

bool invariants::dead_lettered(const record_info& r) {
  return r.poison && w_.view->dead_letters(w_.paths.dead_letters()).count(r.payload) > 0;
}

bool invariants::survives_crash(const record_info& r, std::string* where) {
  const auto& records = w_.view->shard_records(w_.paths.shard_dir(r.shard));
  auto it = records.find(r.payload);
  if (it != records.end()) {
    if (where) *where = it->second.segment + "#" + std::to_string(it->second.index);
    if (r.coordinate && (r.coordinate->segment != it->second.segment || r.coordinate->index != it->second.index))
      w_.fail("tracked-coordinate", short_name(r.payload) + " was acked at " + r.coordinate->segment + "#" +
                                        std::to_string(r.coordinate->index) + " but lies durably at " +
                                        it->second.segment + "#" + std::to_string(it->second.index));
    return true;
  }
  return dead_lettered(r);
}

void invariants::on_reply(std::size_t producer, const ingest_reply& reply, std::string_view from) {
  if (!w_.accepting || w_.failed) return;  // after the crash instant nothing is sent any more
  check_reply(producer, reply, from);
}

void invariants::check_reply(std::size_t producer, const ingest_reply& reply, std::string_view from) {
  auto* req = w_.book.pending_request(producer, reply.tag);
  if (!req) {
    w_.fail("one-reply-per-request", "producer " + std::to_string(producer) + " got a reply for tag " +
                                         std::to_string(reply.tag) +
                                         (w_.book.known_request(producer, reply.tag) ? ", already answered"
                                                                                     : ", never sent"));
    return;
  }
  w_.book.answer(*req);
  auto frame = wire::decode_frame(reply.frame);
  if (!frame) {
    w_.fail("one-reply-per-request", std::string("reply frame does not decode: ") +
                                         std::string(wire::name_of(frame.error())));
    return;
  }
  const auto type = frame.value().header.type;
  const std::size_t n = req->records.size();
  std::vector<bool> ok(n, false);
  std::optional<wire::record_coordinate> coordinate;
  bool expected = type == wire::message_type::nack;
  switch (req->kind) {
    case ingest_kind::push:
      if (type == wire::message_type::ack) expected = true, ok.assign(n, true);
      break;
    case ingest_kind::tracked:
      if (type == wire::message_type::ack_tracked) {
        auto c = wire::decode_coordinate(frame.value().payload);
        if (!c) break;
        expected = true;
        ok.assign(n, true);
        coordinate = c.value();
      }
      break;
    case ingest_kind::batch:
      expected = false;  // a batch is always answered with a bitmap
      if (type == wire::message_type::ack_batch) {
        auto bits = wire::decode_ack_batch(frame.value().payload, n);
        if (!bits) break;
        expected = true;
        ok = bits.value();
      }
      break;
  }
  if (!expected) {
    w_.fail("one-reply-per-request", std::string("a ") + kind_name(req->kind) + " request was answered with " +
                                         std::string(wire::name_of(type)));
    return;
  }
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t i = req->records[k];
    auto& r = w_.book.record(i);
    w_.book.note({w_.step, w_.life, i, ok[k]});
    if (!ok[k]) {
      r.status = record_status::refused;
      continue;
    }
    r.status = record_status::acked;
    r.acked_step = w_.step;
    r.acked_life = w_.life;
    ++acked_;
    if (coordinate) {
      const std::string shard_prefix = wab::shard_dir_name(r.shard) + "/";
      const auto id = wire::compute_record_id(coordinate->segment, coordinate->index,
                                              byte_span(reinterpret_cast<const std::uint8_t*>(r.payload.data()),
                                                        r.payload.size()));
      if (coordinate->segment.rfind(shard_prefix, 0) != 0 || coordinate->id != id)
        w_.fail("tracked-coordinate", "AckTracked for " + short_name(r.payload) + " names " + coordinate->segment +
                                          "#" + std::to_string(coordinate->index) +
                                          " with an id that is not that place's id");
      r.coordinate = coordinate;
      note_used(r.shard, coordinate->segment);
    }
    if (w_.cfg.broken == sabotage::buffered_as_durable) r.durable = true;
    if (!r.durable) continue;
    if (from == "shard_writer") ++durable_by_writer_;
    if (from == "fsync_group") ++durable_by_fsync_group_;
    awaiting_.push_back(i);
    if (!r.delivered && !survives_crash(r))
      w_.fail("no-ack-before-sync", "the Durable ack of " + describe(i) +
                                        " was sent while a crash would have lost it");
  }
}

void invariants::on_committed(const std::vector<sink_record>& batch, const std::vector<std::size_t>& rejected) {
  if (w_.failed) return;
  std::set<std::size_t> refused(rejected.begin(), rejected.end());
  std::map<std::size_t, std::uint64_t> in_batch;  // producer -> last seq in this batch
  std::map<std::string, std::map<std::uint64_t, std::string>> files;  // segment -> its records, read once
  for (std::size_t k = 0; k < batch.size(); ++k) {
    const auto& s = batch[k];
    const std::string payload = text_of(s.payload);
    const auto found = w_.book.find(payload);
    if (!found) {
      w_.fail("delivered-was-written", "the sink got a record no producer sent: " + s.segment + "#" +
                                           std::to_string(s.index) + " '" + payload.substr(0, 40) + "'");
      return;
    }
    auto& r = w_.book.record(*found);
    if (refused.count(k)) {
      if (!r.poison) w_.fail("delivered-was-written", "the sink refused a healthy record: " + describe(*found));
      continue;
    }
    if (s.id != wire::to_hex(wire::compute_record_id(s.segment, s.index, s.payload)))
      w_.fail("record-id-matches", "delivered " + short_name(payload) + " at " + s.segment + "#" +
                                       std::to_string(s.index) + " with id " + s.id.substr(0, 16) +
                                       "..., not the id of that place");
    if (s.shard != r.shard || s.segment.rfind(wab::shard_dir_name(r.shard) + "/", 0) != 0)
      w_.fail("record-id-matches", "delivered " + short_name(payload) + " from shard " + std::to_string(s.shard) +
                                       " / " + s.segment + ", but its producer writes to shard " +
                                       std::to_string(r.shard));
    note_used(r.shard, s.segment);
    // A segment exists until its records are confirmed: read it from its start.
    auto file = files.find(s.segment);
    if (file == files.end())
      file = files.emplace(s.segment, records_of_file(*w_.io, w_.paths.root + "/wab/" + s.segment)).first;
    if (auto at = file->second.find(s.index); at == file->second.end() || at->second != payload)
      w_.fail("record-at-its-place", "delivered " + short_name(payload) + " as " + s.segment + "#" +
                                         std::to_string(s.index) + ", but that place holds " +
                                         (at == file->second.end() ? std::string("no record")
                                                                   : short_name(at->second)));
    const auto place = std::make_pair(s.segment, s.index);
    auto [at, fresh] = coordinates_.emplace(place, *found);
    if (!fresh && at->second != *found)
      w_.fail("coordinate-unique", s.segment + "#" + std::to_string(s.index) + " was delivered as " +
                                       short_name(w_.book.record(at->second).payload) + " and now as " +
                                       short_name(payload) + ": a segment sequence was reused");
    if (r.coordinate && (r.coordinate->segment != s.segment || r.coordinate->index != s.index))
      w_.fail("tracked-coordinate", short_name(payload) + " was acked at " + r.coordinate->segment + "#" +
                                        std::to_string(r.coordinate->index) + " but delivered from " + s.segment +
                                        "#" + std::to_string(s.index));
    auto& last_in_batch = in_batch[r.producer];
    if (r.seq <= last_in_batch)
      w_.fail("producer-order", "one batch holds " + short_name(payload) + " after seq " +
                                    std::to_string(last_in_batch) + " of the same producer");
    last_in_batch = r.seq;
    ++deliveries_;
    if (r.delivered) continue;  // a redelivery may repeat anything
    // A refused record's outcome is unknown (docs/wire_protocol.md): its bytes
    // may have landed whole though the write call failed, and a recovery
    // that finds them delivers them, later than what followed, as the
    // producer's retry would be. The order is promised for what was taken.
    if (w_.cfg.sink_concurrency == 1 && r.status != record_status::refused && r.seq < last_first_seq_[r.producer])
      w_.fail("producer-order", "first delivery of " + short_name(payload) + " after seq " +
                                    std::to_string(last_first_seq_[r.producer]) + " of the same producer was delivered");
    last_first_seq_[r.producer] = std::max(last_first_seq_[r.producer], r.seq);
    r.delivered = true;
    ++first_deliveries_;
  }
}

void invariants::after_step() {
  if (w_.failed || !w_.accepting) return;
  std::size_t keep = 0;
  for (std::size_t i : awaiting_) {
    auto& r = w_.book.record(i);
    if (r.delivered || r.status != record_status::acked) continue;
    awaiting_[keep++] = i;
    if (!survives_crash(r))
      w_.fail("acked-durable-stays", describe(i) + " is neither delivered nor durable any more");
  }
  awaiting_.resize(keep);
}

void invariants::after_crash() {
  must_survive_.clear();
  for (std::size_t i = 0; i < w_.book.records().size(); ++i) {
    auto& r = w_.book.record(i);
    if (r.status != record_status::acked || r.delivered) continue;
    if (survives_crash(r)) {
      if (!dead_lettered(r)) must_survive_.push_back(i);
    } else if (r.durable) {
      w_.fail("acked-survives-crash", describe(i) + " did not survive the crash");
    } else {
      r.status = record_status::lost_in_crash;  // Buffered: the promise ends at the page cache
    }
  }
}

void invariants::after_recovery(const std::vector<shard_start>& started) {
  for (const auto& s : started) {
    const auto used = used_sequence_[s.shard];
    if (s.next_sequence <= used)
      w_.fail("sequence-not-reused",
              wab::shard_dir_name(s.shard) + " restarts numbering at seg " + std::to_string(s.next_sequence) +
                  " although seg " + std::to_string(used) + " already had records acked or delivered (" +
                  std::to_string(s.recovery.segments.size()) + " segments left, cursor " +
                  (s.cursor ? "seg " + std::to_string(s.cursor->sequence) + " index " + std::to_string(s.cursor->index)
                            : std::string("none")) +
                  "): new records would get ids the sink already has");
  }
  std::map<std::uint16_t, std::unordered_set<std::string>> readable;
  for (const auto& s : started) readable[s.shard] = readable_from_cursor(*w_.io, s);
  for (std::size_t i : must_survive_) {
    auto& r = w_.book.record(i);
    if (r.delivered || dead_lettered(r)) continue;
    if (!readable[r.shard].count(r.payload)) {
      std::string cursor = "none";
      for (const auto& s : started)
        if (s.shard == r.shard && s.cursor)
          cursor = "seg " + std::to_string(s.cursor->sequence) + " offset " + std::to_string(s.cursor->offset) +
                   " index " + std::to_string(s.cursor->index);
      w_.fail("acked-survives-recovery",
              describe(i) + " was durable at the crash but is not readable at or after the confirm cursor (" + cursor +
                  ") after recovery");
      return;
    }
    // Durable now whatever its tier: it must stay so until delivered.
    if (!r.durable) awaiting_.push_back(i);
  }
  must_survive_.clear();
}

std::size_t invariants::undelivered() {
  std::size_t n = 0;
  for (const auto& r : w_.book.records())
    if (r.status == record_status::acked && !r.delivered && !dead_lettered(r)) ++n;
  return n;
}

void invariants::at_end() {
  if (w_.failed) return;
  std::size_t missing = 0;
  std::string first;
  for (std::size_t i = 0; i < w_.book.records().size(); ++i) {
    const auto& r = w_.book.record(i);
    if (r.status != record_status::acked || r.delivered || dead_lettered(r)) continue;
    if (missing++ == 0) first = describe(i);
  }
  if (missing > 0) {
    w_.fail("every-acked-delivered", std::to_string(missing) + " acked record(s) never reached the sink" +
                                         " or the dead letters; first: " + first);
    return;
  }
  if (const auto pending = w_.book.pending_requests(); pending > 0)
    w_.fail("one-reply-per-request", std::to_string(pending) + " request(s) never answered although the daemon ran on");
}

}  // namespace weir::sim
