// clickhouse: batches through ClickHouse's HTTP interface, one
// INSERT … FORMAT TabSeparated per batch — a block ClickHouse writes whole
// or not at all — into weir_records (made when missing) or a table of the
// user's (sink.clickhouse.table with columns: each value as text, which
// ClickHouse reads as its column's type).
//
// ClickHouse has no unique keys: exactly-once by record id comes from the
// table's engine, a ReplacingMergeTree with the id in its ORDER BY
// (sinks/clickhouse_table_check.hpp), which folds a redelivered record into
// one row — at once for a query with FINAL, in storage when it merges.
//
// A value the server cannot read as its column's type fails the whole
// block: the batch is split in halves, and halves again, until the refused
// rows stand alone, are dead letters with ClickHouse's message, and the rest
// went in (k bad rows cost about k·log2(n) inserts, not n). Every other
// error is retried; the table is looked at again after one, so a table
// dropped or changed under the sink is named in the sink's error.
#include <optional>
#include <stdexcept>

#include "config/http_url.hpp"
#include "sinks/clickhouse_client.hpp"
#include "sinks/clickhouse_errors.hpp"
#include "sinks/clickhouse_table_check.hpp"
#include "sinks/row_mapping.hpp"
#include "sinks/sink_types.hpp"
#include "sinks/tsv.hpp"

namespace weir {

namespace {

const std::vector<std::string> weir_records_columns{"id", "node", "shard", "seq", "idx", "segment", "ts", "payload"};

std::string create_weir_records(const std::string& database) {
  return "CREATE TABLE IF NOT EXISTS `" + database +
         "`.weir_records (id String, node UInt16, shard UInt16, seq UInt64, idx UInt64, segment String, ts Int64, "
         "payload String) ENGINE = ReplacingMergeTree ORDER BY (node, shard, seq, idx, id)";
}

/// The database and the table a configured name means ("db.t", or "t" in `database`).
std::pair<std::string, std::string> split_table(const std::string& name, const std::string& database) {
  const auto dot = name.find('.');
  if (dot == std::string::npos) return {database, name};
  return {name.substr(0, dot), name.substr(dot + 1)};
}

class clickhouse_sink final : public sink {
 public:
  clickhouse_sink(std::shared_ptr<const clickhouse_settings> s, std::optional<row_mapping> mapping)
      : client_(std::move(s)), mapping_(std::move(mapping)) {
    std::tie(database_, table_) =
        split_table(mapping_ ? mapping_->table() : std::string("weir_records"), client_.database());
    columns_ = mapping_ ? mapping_->columns() : weir_records_columns;
    std::string list;
    for (const auto& c : columns_) list += (list.empty() ? "`" : ", `") + c + "`";
    insert_ = "INSERT INTO `" + database_ + "`.`" + table_ + "` (" + list + ") FORMAT TabSeparated";
  }

  commit_result commit(const std::vector<sink_record>& batch) override {
    if (!checked_ && !check()) return commit_result::retry(error_, reached_);
    commit_result out;
    batch_ = &batch;
    std::vector<std::size_t> kept;
    if (mapping_) rows_.resize(batch.size());
    for (std::size_t i = 0; i < batch.size(); ++i) {
      if (!mapping_) kept.push_back(i);
      else if (auto why = mapping_->values(batch[i], rows_[i]); !why.empty()) out.rejected.emplace_back(i, std::move(why));
      else kept.push_back(i);
    }
    clickhouse_client::answer failure;
    if (!insert(kept, 0, kept.size(), out, failure)) {
      checked_ = false;  // the table may have changed: look again before the next try
      return commit_result::retry(failure.error, failure.reached);
    }
    std::sort(out.rejected.begin(), out.rejected.end());
    return out;
  }

  sink_health probe(std::string& why) override {
    std::vector<std::vector<std::string>> rows;
    const auto a = client_.select("SELECT 1", rows);
    if (a.ok) return sink_health::healthy;
    why = a.error;
    return sink_health::down;
  }

 private:
  /// Makes weir_records when it is the table, then checks the table.
  bool check() {
    if (!mapping_) {
      std::string none;
      const auto a = client_.run(create_weir_records(database_), none);
      reached_ = a.reached;
      if (!a.ok) {
        error_ = "clickhouse: cannot make weir_records: " + a.error;
        return false;
      }
    }
    const auto why = check_clickhouse_table(client_, database_, table_, columns_, reached_);
    if (!why.empty()) {
      error_ = "clickhouse: sink.clickhouse.table = " + database_ + "." + table_ + ": " + why;
      return false;
    }
    checked_ = true;
    return true;
  }

  /// Appends the TabSeparated row of the batch's i-th record, its values
  /// in the order of columns_.
  void append_row(std::size_t i) {
    if (mapping_) {
      const auto& row = rows_[i];
      for (std::size_t c = 0; c < row.size(); ++c) {
        if (c) body_ += '\t';
        append_tsv_value(body_, row[c]);
      }
    } else {
      const auto& r = (*batch_)[i];
      append_tsv_value(body_, std::string_view(r.id));
      for (const std::uint64_t n : {std::uint64_t{r.node}, std::uint64_t{r.shard}, r.sequence, r.index}) {
        body_ += '\t';
        body_ += std::to_string(n);
      }
      body_ += '\t';
      append_tsv_value(body_, std::string_view(r.segment));
      body_ += '\t';
      body_ += std::to_string(r.ts_ns);
      body_ += '\t';
      append_tsv_value(body_, std::string_view(reinterpret_cast<const char*>(r.payload.data()), r.payload.size()));
    }
    body_ += '\n';
  }

  /// Inserts rows_[kept[from..to)] as one block; a block refused for a
  /// row's value goes again as two halves. False on any other failure.
  bool insert(const std::vector<std::size_t>& kept, std::size_t from, std::size_t to, commit_result& out,
              clickhouse_client::answer& failure) {
    if (from == to) return true;
    body_.clear();
    for (std::size_t k = from; k < to; ++k) append_row(kept[k]);
    auto a = client_.run(insert_, body_);
    if (a.ok) return true;
    if (!clickhouse_row_error(a.code, a.error)) {
      failure = std::move(a);
      return false;
    }
    if (to - from == 1) {
      out.rejected.emplace_back(kept[from], a.error);
      return true;
    }
    const std::size_t mid = from + (to - from) / 2;
    return insert(kept, from, mid, out, failure) && insert(kept, mid, to, out, failure);
  }

  clickhouse_client client_;
  std::optional<row_mapping> mapping_;
  std::string database_, table_, insert_;
  std::vector<std::string> columns_;  // the id column first
  bool checked_ = false;
  bool reached_ = false;  // the last check's server answered
  std::string error_;
  const std::vector<sink_record>* batch_ = nullptr;            // the batch being committed
  std::vector<std::vector<std::optional<std::string>>> rows_;  // a mapped batch's values, kept between batches
  std::string body_;
};

class clickhouse_factory final : public sink_factory {
 public:
  clickhouse_factory(std::shared_ptr<const clickhouse_settings> s, std::optional<table_mapping> mapping)
      : s_(std::move(s)), mapping_(std::move(mapping)) {}
  std::unique_ptr<sink> make() override {
    return std::make_unique<clickhouse_sink>(s_, mapping_ ? std::optional<row_mapping>(*mapping_) : std::nullopt);
  }
  std::string type() const override { return "clickhouse"; }
  secret_reload reload_secrets() override { return reload_each({s_->password.get()}); }

 private:
  std::shared_ptr<const clickhouse_settings> s_;
  std::optional<table_mapping> mapping_;
};

}  // namespace

std::shared_ptr<sink_factory> make_clickhouse_sink_factory(const config& cfg) {
  const auto& ch = cfg.sink.clickhouse;
  std::string why;
  auto url = parse_http_url(ch.url, why);
  if (!url) throw std::runtime_error("sink.clickhouse.url: " + why);
  auto s = std::make_shared<clickhouse_settings>();
  s->url = *url;
  s->database = ch.database;
  s->user = ch.user;
  s->password = std::make_shared<reloadable_secret>("sink.clickhouse.password_file", ch.password_file,
                                                    "WEIR_SINK_CLICKHOUSE_PASSWORD");
  s->timeout_ms = static_cast<int>(cfg.sink.timeout_ms);
  if (url->tls) s->tls = make_client_tls_context("sink.clickhouse", ch.ca_file, "", "");
  std::optional<table_mapping> mapping;
  if (!ch.writes_weir_records()) {
    mapping = ch;
    // Looked at once now, briefly: a table that is wrong is a configuration
    // to fix before starting; a server that is not up yet is not.
    auto brief = std::make_shared<clickhouse_settings>(*s);
    brief->timeout_ms = std::min(s->timeout_ms, 2000);
    clickhouse_client look(brief);
    const row_mapping m(ch);
    const auto [database, table] = split_table(m.table(), ch.database);
    bool reached = false;
    const auto wrong = check_clickhouse_table(look, database, table, m.columns(), reached);
    if (reached && !wrong.empty() && wrong.rfind("cannot ", 0) != 0)
      throw std::runtime_error("sink.clickhouse.table = " + ch.table + ": " + wrong);
  }
  return std::make_shared<clickhouse_factory>(std::move(s), std::move(mapping));
}

}  // namespace weir
