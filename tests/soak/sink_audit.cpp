#include "soak/sink_audit.hpp"

#include <sqlite3.h>

#include <map>
#include <stdexcept>
#include <string_view>

#include "soak/payload.hpp"

namespace weir::soak {

namespace {

constexpr std::size_t max_examples = 20;

class database {
 public:
  explicit database(const std::filesystem::path& path) {
    if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
      sqlite3_close(db_);
      db_ = nullptr;
      return;
    }
    // The daemon may be committing (WAL): wait for it rather than fail.
    sqlite3_busy_timeout(db_, 10000);
  }
  ~database() { sqlite3_close(db_); }
  database(const database&) = delete;
  database& operator=(const database&) = delete;
  sqlite3* get() const { return db_; }

 private:
  sqlite3* db_ = nullptr;
};

class statement {
 public:
  statement(sqlite3* db, const char* sql) {
    if (!db || sqlite3_prepare_v2(db, sql, -1, &st_, nullptr) != SQLITE_OK) st_ = nullptr;
  }
  ~statement() { sqlite3_finalize(st_); }
  statement(const statement&) = delete;
  statement& operator=(const statement&) = delete;
  sqlite3_stmt* get() const { return st_; }

 private:
  sqlite3_stmt* st_ = nullptr;
};

std::string_view text_column(sqlite3_stmt* st, int col) {
  const auto* p = static_cast<const char*>(sqlite3_column_blob(st, col));
  return {p ? p : "", static_cast<std::size_t>(sqlite3_column_bytes(st, col))};
}

std::string describe(const record_origin& o, const ledger_entry& e) {
  return "p=" + std::to_string(o.producer) + " s=" + std::to_string(o.seq) + " " + name_of(e.durability) + " " +
         name_of(e.kind) + " acked in cycle " + std::to_string(e.cycle);
}

void note(audit_result& r, std::string what) {
  if (r.examples.size() < max_examples) r.examples.push_back(std::move(what));
}

/// Per record, after the scan: lost, duplicated, delivered without an ack,
/// or acked by AckTracked at a coordinate no row has.
void finish(audit_result& r, const std::vector<std::unique_ptr<ledger>>& ledgers,
            const std::vector<std::vector<std::uint8_t>>& copies, const std::vector<std::vector<bool>>& tracked_matched) {
  for (std::size_t p = 0; p < ledgers.size(); ++p) {
    const auto& entries = ledgers[p]->entries();
    for (std::uint64_t seq = 0; seq < entries.size(); ++seq) {
      const auto& e = entries[seq];
      const auto n = copies[p][seq];
      if (n > 1) {
        ++r.duplicates;
        note(r, "duplicate (" + std::to_string(n) + " rows): p=" + std::to_string(p) + " s=" + std::to_string(seq));
      }
      const record_origin o{static_cast<std::uint32_t>(p), seq, e.durability, e.kind};
      if (e.result == outcome::unknown && n > 0) ++r.unknown_delivered;
      if (e.result == outcome::nacked && n > 0) ++r.nacked_delivered;
      if (e.result != outcome::acked) continue;
      ++r.acked;
      if (n == 0) {
        ++r.lost;
        note(r, "lost: " + describe(o, e));
        if (r.lost_records.size() < max_examples) r.lost_records.push_back(o);
      } else if (e.kind == push_kind::tracked && !tracked_matched[p][seq]) {
        ++r.tracked_mismatches;
        const auto& t = ledgers[p]->tracked().at(seq);
        note(r, "AckTracked mismatch: " + describe(o, e) + " acked as " + t.segment + " idx " +
                    std::to_string(t.index) + " id " + t.record_id_hex);
      }
    }
  }
}

}  // namespace

std::int64_t sink_row_count(const std::filesystem::path& db_path) {
  if (!std::filesystem::exists(db_path)) return -1;
  database db(db_path);
  statement st(db.get(), "SELECT count(*) FROM weir_records");
  if (!st.get() || sqlite3_step(st.get()) != SQLITE_ROW) return -1;
  return sqlite3_column_int64(st.get(), 0);
}

audit_result audit_sink(const std::filesystem::path& db_path, const std::vector<std::unique_ptr<ledger>>& ledgers) {
  audit_result r;
  // copies[p][seq]: rows seen so far for that record (saturating).
  std::vector<std::vector<std::uint8_t>> copies(ledgers.size());
  std::vector<std::vector<bool>> tracked_matched(ledgers.size());
  for (std::size_t p = 0; p < ledgers.size(); ++p) {
    copies[p].assign(ledgers[p]->entries().size(), 0);
    tracked_matched[p].assign(ledgers[p]->entries().size(), false);
  }
  // (shard, producer) -> highest acked sequence seen so far in write order.
  std::map<std::pair<std::int64_t, std::uint32_t>, std::uint64_t> last_acked;

  if (std::filesystem::exists(db_path)) {
    database db(db_path);
    // Write order within a shard is (segment sequence, index); names are
    // fixed-width numbers, and ordering by length first keeps that true past
    // eight digits.
    statement st(db.get(),
                 "SELECT shard, segment, idx, id, payload FROM weir_records "
                 "ORDER BY shard, length(segment), segment, idx");
    if (!st.get()) {
      // The file can exist a moment before the sink has made its table.
      const std::string why = db.get() ? sqlite3_errmsg(db.get()) : "cannot open";
      if (why.find("no such table") != std::string::npos) {
        finish(r, ledgers, copies, tracked_matched);
        return r;
      }
      throw std::runtime_error("cannot read weir_records in " + db_path.string() + ": " + why);
    }
    int rc;
    while ((rc = sqlite3_step(st.get())) == SQLITE_ROW) {
      ++r.rows;
      const std::int64_t shard = sqlite3_column_int64(st.get(), 0);
      const std::string_view segment = text_column(st.get(), 1);
      const auto index = static_cast<std::uint64_t>(sqlite3_column_int64(st.get(), 2));
      const std::string_view id = text_column(st.get(), 3);
      const auto origin = parse_payload(text_column(st.get(), 4));
      if (!origin || origin->producer >= ledgers.size() || origin->seq >= copies[origin->producer].size()) {
        ++r.foreign_rows;
        note(r, "foreign or damaged row at " + std::string(segment) + " idx " + std::to_string(index));
        continue;
      }
      const auto p = origin->producer;
      const auto& entry = ledgers[p]->entries()[origin->seq];
      auto& seen = copies[p][origin->seq];
      const bool first_copy = seen == 0;
      if (seen < 255) ++seen;

      if (entry.result == outcome::acked) {
        if (entry.kind == push_kind::tracked) {
          const auto& t = ledgers[p]->tracked().at(origin->seq);
          if (t.segment == segment && t.index == index && t.record_id_hex == id) tracked_matched[p][origin->seq] = true;
        }
        // Only a record's first copy speaks for its position: a redelivered
        // copy at another coordinate is counted as a duplicate instead.
        if (first_copy) {
          auto [it, fresh] = last_acked.try_emplace({shard, p}, origin->seq);
          if (!fresh) {
            if (origin->seq < it->second) {
              ++r.order_violations;
              note(r, "order: " + describe(*origin, entry) + " at " + std::string(segment) + " idx " +
                          std::to_string(index) + " after s=" + std::to_string(it->second) + " on shard " +
                          std::to_string(shard));
            } else {
              it->second = origin->seq;
            }
          }
        }
      }
    }
    if (rc != SQLITE_DONE) throw std::runtime_error(std::string("reading the sink failed: ") + sqlite3_errmsg(db.get()));
  }

  finish(r, ledgers, copies, tracked_matched);
  return r;
}

}  // namespace weir::soak
