// sqlite: one transaction per batch into weir_records, keyed by the record's
// coordinate and ingest time (node, shard, segment sequence, index, ts),
// with INSERT OR IGNORE, so a redelivered record (same coordinate, same
// ingest time: both are read from the WAB) changes nothing. A coordinate used
// again by another record (a wiped data_dir writing into the same database,
// two daemons sharing it) comes with another ingest time and is a second
// row, not a silent drop. The key is all integers and its leading columns
// grow with every record: inserts append to a compact index. With the
// 64-character id in the key instead of ts, delivering a backlog was
// slower (decision 0018). WAL mode, so
// readers never block the drain. Every SQLite error is transient here (a
// busy or full database heals; a record cannot violate this schema).
//
// Or a table of the user's (sink.sqlite.table, sinks/row_mapping.hpp):
// used as it is, checked at start to have the mapped columns and a unique id
// column, filled one statement a row with ON CONFLICT(id) DO NOTHING, so a
// row the table refuses (a constraint, a value its column will not take) is
// a dead letter with SQLite's reason and takes no other row with it.
//
// A table from before (id TEXT PRIMARY KEY, no sequence column) is rebuilt
// in one transaction the first time the sink opens it. A table keyed with the
// id is used as it is (it deduplicates as well, only slower); docs/sinks.md
// shows how to re-key it.
//
// SQLite takes one writer at a time, so the factory says one_writer() and
// the runner gives it one commit slot. Every sink the factory makes still
// shares one connection behind a mutex (make() can be called more than once,
// and each sink may be used from its own thread): queueing here beats
// SQLite's busy handler (which sleeps in steps of up to 100 ms), and one
// connection keeps one warm page cache (each connection's cache is dropped
// whenever another one writes).
#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>

#include "sinks/row_mapping.hpp"
#include "wire/coordinate.hpp"
#include "sinks/sink_types.hpp"
#include "sinks/sqlite_table_check.hpp"

namespace weir {

namespace {

#define WEIR_RECORDS_COLUMNS                                                                                   \
  "node INTEGER NOT NULL DEFAULT 0, shard INTEGER NOT NULL, seq INTEGER NOT NULL, idx INTEGER NOT NULL, "      \
  "id TEXT NOT NULL, segment TEXT NOT NULL, ts INTEGER NOT NULL, payload BLOB, PRIMARY KEY (node, shard, seq, idx, ts)"
constexpr const char* create_table = "CREATE TABLE IF NOT EXISTS weir_records(" WEIR_RECORDS_COLUMNS ")";
/// Rows per INSERT statement. One statement per row spends more in SQLite's
/// per-statement work than in the B-trees: 50 rows a statement delivered
/// more than one (decision 0009).
constexpr int rows_per_insert = 50;
constexpr int columns_per_row = 8;

/// "INSERT OR IGNORE … VALUES(?,…),(?,…)…" for `rows` rows of the
/// columns bind_row binds, in that order.
std::string insert_rows(int rows) {
  std::string sql = "INSERT OR IGNORE INTO weir_records(node, shard, seq, idx, id, segment, ts, payload) VALUES";
  for (int r = 0; r < rows; ++r) sql += r == 0 ? "(?,?,?,?,?,?,?,?)" : ",(?,?,?,?,?,?,?,?)";
  return sql;
}

/// Binds `r` to row `row` of an insert_rows statement, its payload as a
/// blob or as text. The record outlives the statement's step, so nothing is
/// copied.
void bind_row(sqlite3_stmt* st, int row, const sink_record& r, payload_form payload_as) {
  const int at = row * columns_per_row;
  sqlite3_bind_int(st, at + 1, r.node);
  sqlite3_bind_int(st, at + 2, r.shard);
  sqlite3_bind_int64(st, at + 3, static_cast<sqlite3_int64>(r.sequence));
  sqlite3_bind_int64(st, at + 4, static_cast<sqlite3_int64>(r.index));
  sqlite3_bind_text(st, at + 5, r.id.c_str(), static_cast<int>(r.id.size()), SQLITE_STATIC);
  sqlite3_bind_text(st, at + 6, r.segment.c_str(), static_cast<int>(r.segment.size()), SQLITE_STATIC);
  sqlite3_bind_int64(st, at + 7, r.ts_ns);
  if (payload_as == payload_form::text)
    sqlite3_bind_text(st, at + 8, reinterpret_cast<const char*>(r.payload.data()), static_cast<int>(r.payload.size()),
                      SQLITE_STATIC);
  else
    sqlite3_bind_blob(st, at + 8, r.payload.data(), static_cast<int>(r.payload.size()), SQLITE_STATIC);
}
/// A weir_records table from before the coordinate key: it has no seq column.
constexpr const char* is_first_schema =
    "SELECT count(*) = 0 FROM pragma_table_info('weir_records') WHERE name = 'seq'";
/// Rebuilds it with the coordinate key, the sequence parsed from the segment
/// name ("shard_NN/seg_SSSSSSSS.wab"), rows in their order of arrival.
constexpr const char* migrate_first_schema =
    "ALTER TABLE weir_records RENAME TO weir_records_before_coordinate_key;"
    "CREATE TABLE weir_records(" WEIR_RECORDS_COLUMNS ");"
    "INSERT INTO weir_records(node, shard, seq, idx, id, segment, ts, payload) "
    "SELECT 0, shard, CAST(substr(segment, instr(segment, 'seg_') + 4, "
    "length(segment) - instr(segment, 'seg_') - 7) AS INTEGER), idx, id, segment, coalesce(ts, 0), payload "
    "FROM weir_records_before_coordinate_key ORDER BY rowid;"
    "DROP TABLE weir_records_before_coordinate_key;";
#undef WEIR_RECORDS_COLUMNS

/// "INSERT … ON CONFLICT(id) DO NOTHING" of one row of a table of the user's.
std::string insert_mapped_row(const row_mapping& m) {
  std::string columns, marks;
  for (const auto& c : m.columns()) {
    columns += (columns.empty() ? "" : ", ") + quoted_sql_name(c);
    marks += marks.empty() ? "?" : ",?";
  }
  return "INSERT INTO " + quoted_sql_name(m.table()) + "(" + columns + ") VALUES(" + marks + ") ON CONFLICT(" +
         quoted_sql_name(m.columns().front()) + ") DO NOTHING";
}

/// A statement's failure that is the row's own (a constraint, a value the
/// column will not take), not the database's.
bool refuses_the_row(int rc) {
  const int primary = rc & 0xff;
  return primary == SQLITE_CONSTRAINT || primary == SQLITE_MISMATCH || primary == SQLITE_TOOBIG;
}

class sqlite_db {
 public:
  /// `mapping`: into a table of the user's; none: into weir_records, the
  /// payloads as `payload_as`.
  sqlite_db(const std::string& path, int timeout_ms, std::optional<row_mapping> mapping, payload_form payload_as)
      : path_(path), timeout_ms_(timeout_ms), payload_as_(payload_as), mapping_(std::move(mapping)) {}
  ~sqlite_db() { close(); }

  commit_result commit(const std::vector<sink_record>& batch) {
    std::lock_guard<std::mutex> one_writer(mutex_);
    if (!db_ && !open()) return commit_result::retry(error_);
    if (!exec("BEGIN IMMEDIATE")) return fail();
    if (mapping_) return commit_mapped(batch);
    commit_result result;
    std::vector<const sink_record*> taken;  // the records that go in, in order
    taken.reserve(batch.size());
    for (std::size_t i = 0; i < batch.size(); ++i) {
      const auto& p = batch[i].payload;
      if (payload_as_ == payload_form::text &&
          !wire::is_valid_utf8({reinterpret_cast<const char*>(p.data()), p.size()}))
        result.rejected.emplace_back(i, "the payload is not UTF-8 text (sink.sqlite.payload_as is text)");
      else
        taken.push_back(&batch[i]);
    }
    std::size_t next = 0;
    while (next < taken.size()) {
      // Whole statements of rows_per_insert rows, then one row at a time.
      const bool whole = taken.size() - next >= static_cast<std::size_t>(rows_per_insert);
      sqlite3_stmt* st = whole ? insert_many_ : insert_one_;
      const int rows = whole ? rows_per_insert : 1;
      sqlite3_reset(st);
      for (int row = 0; row < rows; ++row) bind_row(st, row, *taken[next + row], payload_as_);
      if (sqlite3_step(st) != SQLITE_DONE) {
        error_ = sqlite3_errmsg(db_);
        exec("ROLLBACK");
        return fail();
      }
      next += rows;
    }
    if (!exec("COMMIT")) {
      exec("ROLLBACK");
      return fail();
    }
    return result;
  }

  /// One statement a row (a refused row must not take others with it); a
  /// row the mapping or the table refuses is a dead letter with the reason.
  /// A refusal that ends the whole transaction (a trigger's RAISE(ROLLBACK))
  /// undid the rows before it too: the batch starts again without that row.
  commit_result commit_mapped(const std::vector<sink_record>& batch) {
    commit_result result;
    std::vector<bool> refused(batch.size(), false);
    std::vector<std::optional<std::string>> row;
    for (std::size_t i = 0; i < batch.size(); ++i) {
      if (refused[i]) continue;
      if (auto why = mapping_->values(batch[i], row); !why.empty()) {
        result.rejected.emplace_back(i, std::move(why));
        refused[i] = true;
        continue;
      }
      const int rc = insert_mapped(row);
      if (rc == SQLITE_DONE) continue;
      const std::string why = sqlite3_errmsg(db_);  // before row_fault compiles anything
      if (!row_fault(rc)) {
        error_ = why;
        exec("ROLLBACK");
        return fail();
      }
      result.rejected.emplace_back(i, "sqlite refused the row: " + why);
      refused[i] = true;
      if (sqlite3_get_autocommit(db_)) {  // the transaction is gone: again from the top
        if (!exec("BEGIN IMMEDIATE")) return fail();
        i = static_cast<std::size_t>(-1);
      }
    }
    if (!exec("COMMIT")) {
      const int rc = sqlite3_extended_errcode(db_);
      exec("ROLLBACK");
      if ((rc & 0xff) == SQLITE_CONSTRAINT) return commit_mapped_each(batch);  // a deferred foreign key
      return fail();
    }
    std::sort(result.rejected.begin(), result.rejected.end());
    return result;
  }

  /// A deferred foreign key refused the batch at COMMIT, which names no row:
  /// each row alone, in a transaction of its own, to find which. Slow (a
  /// commit a row), and only for a batch that holds such a row.
  commit_result commit_mapped_each(const std::vector<sink_record>& batch) {
    commit_result result;
    std::vector<std::optional<std::string>> row;
    for (std::size_t i = 0; i < batch.size(); ++i) {
      if (auto why = mapping_->values(batch[i], row); !why.empty()) {
        result.rejected.emplace_back(i, std::move(why));
        continue;
      }
      if (!exec("BEGIN IMMEDIATE")) return fail();
      int rc = insert_mapped(row);
      std::string why = rc == SQLITE_DONE ? std::string() : sqlite3_errmsg(db_);
      if (rc == SQLITE_DONE && exec("COMMIT")) continue;
      if (rc == SQLITE_DONE) {
        rc = sqlite3_extended_errcode(db_);
        why = error_;
      }
      if (!sqlite3_get_autocommit(db_)) exec("ROLLBACK");
      if (!row_fault(rc)) {
        error_ = why;
        return fail();
      }
      result.rejected.emplace_back(i, "sqlite refused the row: " + why);
    }
    return result;
  }

  sink_health probe(std::string& why) {
    std::lock_guard<std::mutex> one_writer(mutex_);
    if ((db_ || open()) && exec("SELECT 1")) return sink_health::healthy;
    why = error_;
    return sink_health::down;
  }

 private:
  bool open() {
    std::filesystem::path p(path_);
    std::error_code ec;
    if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
    if (sqlite3_open_v2(path_.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                        nullptr) != SQLITE_OK) {
      error_ = "cannot open " + path_ + ": " + (db_ ? sqlite3_errmsg(db_) : "out of memory");
      close();
      return false;
    }
    sqlite3_busy_timeout(db_, timeout_ms_);
    if (mapping_) return open_mapped();
    if (!exec("PRAGMA journal_mode=WAL") || !exec("PRAGMA synchronous=FULL") || !exec("PRAGMA cache_size=-65536") ||
        !exec(create_table) || !migrate() ||
        !prepare(insert_rows(1), &insert_one_) || !prepare(insert_rows(rows_per_insert), &insert_many_)) {
      if (error_.empty()) error_ = sqlite3_errmsg(db_);
      close();
      return false;
    }
    return true;
  }

  /// A table of the user's: used as it is, once it has what the mapping
  /// needs (its journal mode, too, is the user's).
  bool open_mapped() {
    // Foreign keys are the table's own rules: a row that breaks one is refused.
    if (!exec("PRAGMA synchronous=FULL") || !exec("PRAGMA foreign_keys=ON")) {
      close();
      return false;
    }
    if (auto why = check_sqlite_table(db_, *mapping_); !why.empty()) {
      error_ = why;
      close();
      return false;
    }
    if (!prepare(insert_mapped_row(*mapping_), &insert_mapped_)) {
      error_ = sqlite3_errmsg(db_);
      close();
      return false;
    }
    return true;
  }

  /// Rebuilds a table of the first schema, all or nothing.
  bool migrate() {
    sqlite3_stmt* check = nullptr;
    bool first = false;
    if (sqlite3_prepare_v2(db_, is_first_schema, -1, &check, nullptr) == SQLITE_OK && sqlite3_step(check) == SQLITE_ROW)
      first = sqlite3_column_int(check, 0) != 0;
    sqlite3_finalize(check);
    if (!first) return true;
    if (!exec("BEGIN IMMEDIATE")) return false;
    if (!exec(migrate_first_schema) || !exec("COMMIT")) {
      const std::string why = error_;
      exec("ROLLBACK");
      error_ = "cannot move weir_records to the coordinate key: " + why;
      return false;
    }
    return true;
  }

  void close() {
    for (sqlite3_stmt** st : {&insert_one_, &insert_many_, &insert_mapped_}) {
      if (*st) sqlite3_finalize(*st);
      *st = nullptr;
    }
    if (db_) sqlite3_close(db_);
    db_ = nullptr;
  }

  /// Binds a row's values to the mapped INSERT and runs it: SQLite's answer.
  int insert_mapped(const std::vector<std::optional<std::string>>& row) {
    sqlite3_reset(insert_mapped_);
    for (std::size_t c = 0; c < row.size(); ++c) {
      const int at = static_cast<int>(c + 1);
      if (row[c]) sqlite3_bind_text(insert_mapped_, at, row[c]->data(), static_cast<int>(row[c]->size()), SQLITE_STATIC);
      else sqlite3_bind_null(insert_mapped_, at);
    }
    return sqlite3_step(insert_mapped_);
  }

  /// Whether a failed INSERT of a row was the row's own doing: a constraint
  /// or a value the table refuses, or a plain SQL error (a generated
  /// column's or a trigger's function given this row's value: json_extract
  /// of text that is not JSON) while the INSERT still compiles against the
  /// table as it is — when it does not, the table changed, and that is
  /// retried, never dead-lettered.
  bool row_fault(int rc) {
    if (refuses_the_row(rc)) return true;
    if ((rc & 0xff) != SQLITE_ERROR) return false;
    sqlite3_stmt* again = nullptr;
    const bool compiles = prepare(insert_mapped_row(*mapping_), &again);
    sqlite3_finalize(again);
    return compiles;
  }

  bool prepare(const std::string& sql, sqlite3_stmt** st) {
    return sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), st, nullptr) == SQLITE_OK;
  }

  bool exec(const char* sql) {
    char* msg = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &msg) == SQLITE_OK) return true;
    error_ = msg ? msg : sqlite3_errmsg(db_);
    sqlite3_free(msg);
    return false;
  }

  commit_result fail() {
    auto r = commit_result::retry("sqlite " + path_ + ": " + error_, true);  // local: its probe cannot tell more
    // A connection in an unknown state is reopened on the next try.
    close();
    return r;
  }

  std::mutex mutex_;
  std::string path_;
  int timeout_ms_;
  payload_form payload_as_;
  sqlite3* db_ = nullptr;
  sqlite3_stmt* insert_one_ = nullptr;
  sqlite3_stmt* insert_many_ = nullptr;
  std::optional<row_mapping> mapping_;
  sqlite3_stmt* insert_mapped_ = nullptr;
  std::string error_;
};

class sqlite_sink final : public sink {
 public:
  explicit sqlite_sink(std::shared_ptr<sqlite_db> db) : db_(std::move(db)) {}
  commit_result commit(const std::vector<sink_record>& batch) override { return db_->commit(batch); }
  sink_health probe(std::string& why) override { return db_->probe(why); }

 private:
  std::shared_ptr<sqlite_db> db_;
};

class sqlite_factory final : public sink_factory {
 public:
  sqlite_factory(std::string path, int timeout_ms, std::optional<row_mapping> mapping, payload_form payload_as)
      : db_(std::make_shared<sqlite_db>(path, timeout_ms, std::move(mapping), payload_as)) {}
  std::unique_ptr<sink> make() override { return std::make_unique<sqlite_sink>(db_); }
  std::string type() const override { return "sqlite"; }
  bool one_writer() const override { return true; }

 private:
  std::shared_ptr<sqlite_db> db_;
};

/// A path that can never hold the sink's database is a mistake in the
/// configuration: said before the daemon starts (and by --check-config),
/// not found by the first commit while ingest goes on. Reads a header and
/// creates nothing (SQLite itself, even read-only, would make a WAL
/// database's -shm file). Only a file that is no database at all is
/// refused: a locked one, or one a crash left with a hot journal, is the
/// sink's to open.
void check_database_path(const std::string& path) {
  namespace fs = std::filesystem;
  // In-memory databases, and URI file names (which SQLite here understands):
  // nothing on disk to look at under that name.
  if (path == ":memory:" || path.rfind("file:", 0) == 0) return;
  auto refuse = [&](const std::string& why) {
    throw std::runtime_error("sink.sqlite.path = " + path + ": " + why +
                             "; expected an SQLite database, or a path where one can be made");
  };
  std::error_code ec;
  const auto here = fs::status(path, ec);
  if (fs::exists(here)) {
    if (!fs::is_regular_file(here)) refuse("not a regular file");
    // Every SQLite database starts with these 16 bytes; an empty file is a
    // database SQLite has yet to write. A crash during the first write can
    // leave the header torn beside the journal that will undo it.
    if (fs::exists(path + "-journal", ec) || fs::exists(path + "-wal", ec)) return;
    static constexpr char magic[] = "SQLite format 3";  // 16 bytes with its NUL
    char head[sizeof magic] = {};
    std::ifstream in(path, std::ios::binary);
    if (!in) refuse(std::string("cannot read it: ") + std::strerror(errno));
    in.read(head, sizeof head);
    const auto got = in.gcount();
    if (got != 0 && (got != sizeof head || std::memcmp(head, magic, sizeof magic) != 0)) refuse("file is not a database");
    return;
  }
  // Not there yet: the sink makes it, and any directory above it missing;
  // the nearest one that exists must be a directory it can write in.
  fs::path up = fs::path(path).parent_path();
  while (!up.empty() && !fs::exists(fs::status(up, ec)) && up != up.parent_path()) up = up.parent_path();
  if (up.empty()) up = ".";
  if (!fs::is_directory(fs::status(up, ec))) refuse(up.string() + " is not a directory");
  // As the daemon's effective ids and capabilities allow, not its real ids.
  // (glibc asks faccessat2 for that, which older container seccomp profiles
  // refuse with EPERM: then the plain check.)
  int rc = ::faccessat(AT_FDCWD, up.c_str(), W_OK | X_OK, AT_EACCESS);
  if (rc != 0 && (errno == EPERM || errno == ENOSYS)) rc = ::access(up.c_str(), W_OK | X_OK);
  if (rc != 0) refuse("cannot create it in " + up.string() + ": " + std::strerror(errno));
}

}  // namespace

/// A table of the user's is there before weir starts, with what the
/// mapping needs: else the configuration is wrong, said at start (and by
/// --check-config) in one line. Opens the database read-only.
void check_user_table(const std::string& path, const row_mapping& m) {
  auto refuse = [&](const std::string& why) {
    throw std::runtime_error("sink.sqlite.table = " + m.table() + ": " + why);
  };
  if (path == ":memory:") refuse("an in-memory database has no table of yours");
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr) != SQLITE_OK) {
    const std::string why = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    refuse("cannot open " + path + " to look at it: " + why);
  }
  const std::string why = check_sqlite_table(db, m);
  sqlite3_close(db);
  if (!why.empty()) refuse(why + " (in " + path + ")");
}

std::shared_ptr<sink_factory> make_sqlite_sink_factory(const config& cfg) {
  const auto& s = cfg.sink.sqlite;
  check_database_path(s.path);
  std::optional<row_mapping> mapping;
  if (!s.writes_weir_records()) {
    mapping.emplace(s);
    check_user_table(s.path, *mapping);
  }
  return std::make_shared<sqlite_factory>(s.path, static_cast<int>(cfg.sink.timeout_ms), std::move(mapping),
                                          s.payload_as);
}

}  // namespace weir
