#include "soak/producer.hpp"

#include <optional>
#include <random>
#include <string_view>
#include <thread>
#include <vector>

#include "support/test_helpers.hpp"
#include "weir/client.hpp"

namespace weir::soak {

namespace {

using weir::test::as_bytes;
using weir::test::spans_of;

client::durability wire_tier(tier t) { return t == tier::durable ? client::durability::durable : client::durability::buffered; }

std::uint32_t now_cycle(const producer_settings& s) { return s.cycle->load(std::memory_order_relaxed); }

/// One push of a kind and tier chosen by `rng`. Throws client_error when the
/// connection fails; the records in flight then stay "unknown" in the ledger.
void push_one(client::connection& c, std::mt19937_64& rng, const producer_settings& s, ledger& log) {
  const auto t = rng() % 2 == 0 ? tier::durable : tier::buffered;
  const auto k = static_cast<push_kind>(rng() % 3);
  const std::uint32_t cycle = now_cycle(s);

  if (k == push_kind::batch) {
    const std::size_t n = 1 + rng() % 16;
    std::vector<std::uint64_t> seqs;
    std::vector<std::string> payloads;
    for (std::size_t i = 0; i < n; ++i) {
      seqs.push_back(log.begin(t, k, cycle));
      payloads.push_back(make_payload({log.producer(), seqs.back(), t, k}));
    }
    const auto r = c.push_batch(spans_of(payloads), wire_tier(t));
    for (std::size_t i = 0; i < n; ++i) {
      // Only a set bit is an ack; a whole-batch Nack or a clear bit is not.
      const bool ok = !r.nack && i < r.accepted.size() && r.accepted[i];
      log.settle(seqs[i], ok ? outcome::acked : outcome::nacked, now_cycle(s));
    }
    return;
  }

  const std::uint64_t seq = log.begin(t, k, cycle);
  const std::string payload = make_payload({log.producer(), seq, t, k});
  if (k == push_kind::tracked) {
    auto r = c.push_tracked(as_bytes(payload), wire_tier(t));
    if (r.acked) log.note_tracked(seq, {std::move(r.segment), r.index, std::move(r.record_id_hex)});
    log.settle(seq, r.acked ? outcome::acked : outcome::nacked, now_cycle(s));
  } else {
    const auto r = c.push(as_bytes(payload), wire_tier(t));
    log.settle(seq, r.acked ? outcome::acked : outcome::nacked, now_cycle(s));
  }
}

bool is_timeout(const client::client_error& e) {
  // SO_RCVTIMEO / SO_SNDTIMEO surface as EAGAIN from recv/send.
  return std::string_view(e.what()).find("temporarily unavailable") != std::string_view::npos;
}

}  // namespace

void run_producer(const producer_settings& s, ledger& log) {
  std::mt19937_64 rng(s.seed);
  while (!s.stop->load()) {
    std::optional<client::connection> c;
    try {
      c.emplace(client::connection::connect_unix(s.socket));
      c->set_timeout(s.reply_timeout);
    } catch (const client::client_error&) {
      // The daemon is down or restarting: try again shortly.
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      continue;
    }
    try {
      while (!s.stop->load()) push_one(*c, rng, s, log);
    } catch (const client::client_error& e) {
      log.note_connection_lost(is_timeout(e));
    }
  }
}

}  // namespace weir::soak
