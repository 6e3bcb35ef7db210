#include "config/schema.hpp"

#include "config/credentials.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "config/credentials.hpp"
#include "config/http_url.hpp"
#include "config/value_parsing.hpp"

namespace weir {

namespace {

setting describe(std::string key, std::string allowed, std::string def, std::string help) {
  setting s;
  s.key = std::move(key);
  s.allowed = std::move(allowed);
  s.default_yaml = std::move(def);
  s.help = std::move(help);
  return s;
}

#define WEIR_FIELD(member) [](config& c) -> auto& { return c.member; }

/// A scalar key: `parse` turns the node into an optional value, `accept`
/// says whether that value is allowed, `show` renders it for --print-config.
template <class Get, class Parse, class Accept, class Show>
setting scalar(setting s, Get get, Parse parse, Accept accept, Show show) {
  s.assign = [get, parse, accept](config& c, const YAML::Node& n) {
    auto v = parse(n);
    if (!v || !accept(*v)) return false;
    get(c) = *v;
    return true;
  };
  s.show = [get, show](const config& c) { return YAML::Node(show(get(const_cast<config&>(c)))); };
  return s;
}

template <class T>
auto within(T lo, T hi) {
  return [lo, hi](T v) { return v >= lo && v <= hi; };
}

constexpr auto as_is = [](const auto& v) { return v; };

template <class Get>
setting integer(std::string key, Get get, std::int64_t lo, std::int64_t hi, std::string def,
                std::string help) {
  return scalar(describe(std::move(key), "an integer from " + std::to_string(lo) + " to " + std::to_string(hi),
                         std::move(def), std::move(help)),
                get, parse_integer, within(lo, hi), as_is);
}

template <class Get>
setting byte_size(std::string key, Get get, std::int64_t lo, std::int64_t hi, std::string def,
                  std::string help) {
  return scalar(describe(std::move(key),
                         "a byte count from " + format_bytes(lo) + " to " + format_bytes(hi) +
                             " (plain number or with KiB/MiB/GiB/TiB)",
                         std::move(def), std::move(help)),
                get, parse_byte_size, within(lo, hi), format_bytes);
}

template <class Get>
setting number(std::string key, Get get, double lo, double hi, std::string def, std::string help) {
  return scalar(describe(std::move(key), "a number from " + format_number(lo) + " to " + format_number(hi),
                         std::move(def), std::move(help)),
                get, parse_number, within(lo, hi), format_number);  // 0.2, not 0.20000000000000001
}

template <class Get>
setting boolean(std::string key, Get get, std::string def, std::string help) {
  return scalar(describe(std::move(key), "true or false", std::move(def), std::move(help)), get, parse_bool,
                [](bool) { return true; }, as_is);
}

template <class Get, class E>
setting choice(std::string key, Get get, std::vector<std::pair<std::string, E>> names,
               std::string def, std::string help) {
  std::string allowed = "one of";
  for (std::size_t i = 0; i < names.size(); ++i) allowed += (i ? ", " : " ") + names[i].first;
  setting s = describe(std::move(key), std::move(allowed), std::move(def), std::move(help));
  s.assign = [get, names](config& c, const YAML::Node& n) {
    if (!n.IsScalar()) return false;
    for (auto& [name, value] : names)
      if (n.Scalar() == name) {
        get(c) = value;
        return true;
      }
    return false;
  };
  s.show = [get, names](const config& c) {
    for (auto& [name, value] : names)
      if (get(const_cast<config&>(c)) == value) return YAML::Node(name);
    return YAML::Node();
  };
  return s;
}

enum class text_rule { any, path, address_or_empty, url_or_empty };

template <class Get>
setting text(std::string key, Get get, text_rule rule, std::string def, std::string help) {
  static const char* const allowed[] = {
      "a string", "a file system path (no NUL bytes)",
      "\"host:port\" with a port from 1 to 65535, or \"\" to disable",
      "an http:// or https:// URL (scheme://host[:port][/path]: no credentials, spaces or control characters), or \"\" when "
      "unused"};
  setting s = describe(std::move(key), allowed[static_cast<int>(rule)], std::move(def), std::move(help));
  s.assign = [get, rule](config& c, const YAML::Node& n) {
    if (!(n.IsScalar() || n.IsNull())) return false;
    std::string v = n.IsNull() ? "" : n.Scalar();
    if (rule == text_rule::path && v.find('\0') != std::string::npos) return false;
    if (rule == text_rule::address_or_empty && !v.empty() && !parse_address(v)) return false;
    std::string why;
    if (rule == text_rule::url_or_empty && !v.empty() && !parse_http_url(v, why)) return false;
    get(c) = std::move(v);
    return true;
  };
  s.show = [get](const config& c) { return YAML::Node(get(const_cast<config&>(c))); };
  return s;
}

/// A list of plain strings, each accepted by `item_ok`.
template <class Get, class ItemOk>
setting string_list(std::string key, Get get, std::string allowed, ItemOk item_ok, std::string def, std::string help) {
  setting s = describe(std::move(key), std::move(allowed), std::move(def), std::move(help));
  s.structured = true;
  s.assign = [get, item_ok](config& c, const YAML::Node& n) {
    if (n.IsNull()) {
      get(c).clear();
      return true;
    }
    if (!n.IsSequence()) return false;
    std::vector<std::string> out;
    for (const auto& item : n) {
      if (!item.IsScalar() || !item_ok(item.Scalar())) return false;
      out.push_back(item.Scalar());
    }
    get(c) = std::move(out);
    return true;
  };
  s.show = [get](const config& c) {
    YAML::Node n(YAML::NodeType::Sequence);
    for (auto& p : get(const_cast<config&>(c))) n.push_back(p);
    return n;
  };
  return s;
}

template <class Get>
setting address_list(std::string key, Get get, std::string def, std::string help) {
  return string_list(std::move(key), get, "a list of \"host:port\" strings",
                     [](const std::string& v) { return parse_address(v).has_value(); }, std::move(def), std::move(help));
}

template <class Get>
setting account_list(std::string key, Get get, const char* what, std::string def, std::string help) {
  return string_list(std::move(key), get, std::string("a list of ") + what + " names or numbers", account_name_ok,
                     std::move(def), std::move(help));
}

template <class Get>
setting string_map(std::string key, Get get, std::string def, std::string help) {
  setting s = describe(std::move(key), "a mapping of names, each given once, to string values", std::move(def),
            std::move(help));
  s.structured = true;
  s.assign = [get](config& c, const YAML::Node& n) {
    if (n.IsNull()) {
      get(c).clear();
      return true;
    }
    if (!n.IsMap()) return false;
    std::map<std::string, std::string> out;
    for (const auto& kv : n) {
      if (!kv.first.IsScalar() || !kv.second.IsScalar()) return false;
      if (!out.emplace(kv.first.Scalar(), kv.second.Scalar()).second) return false;  // YAML keeps both
    }
    get(c) = std::move(out);
    return true;
  };
  s.show = [get](const config& c) {
    YAML::Node n(YAML::NodeType::Map);
    for (auto& [k, v] : get(const_cast<config&>(c))) n[k] = v;
    return n;
  };
  return s;
}

/// A table or column name, checked by `ok` (config/value_parsing.hpp).
template <class Get>
setting sql_name(std::string key, Get get, bool (*ok)(std::string_view), std::string allowed, std::string def,
                 std::string help) {
  setting s = describe(std::move(key), std::move(allowed), std::move(def), std::move(help));
  s.assign = [get, ok](config& c, const YAML::Node& n) {
    if (!n.IsScalar() || !ok(n.Scalar())) return false;
    get(c) = n.Scalar();
    return true;
  };
  s.show = [get](const config& c) { return YAML::Node(get(const_cast<config&>(c))); };
  return s;
}

/// Columns of the user's table, each filled from a JSON pointer into the payload.
template <class Get>
setting column_map(std::string key, Get get, std::string help) {
  setting s = string_map(std::move(key), get, "{}", std::move(help));
  s.allowed = "a mapping of column names (a letter or _, then letters, digits or _; at most 63) to JSON pointers "
              "(\"\" or /field/sub..., RFC 6901)";
  auto assign = s.assign;
  s.assign = [assign, get](config& c, const YAML::Node& n) {
    if (!assign(c, n)) return false;
    for (const auto& [column, pointer] : get(c))
      if (!sql_identifier_ok(column) || !json_pointer_ok(pointer)) return false;
    return true;
  };
  return s;
}

/// The keys of `prefix` (sink.sqlite, sink.postgres, sink.mysql) that say
/// which table gets the records and how a record becomes its row.
/// `payload_as`: whether the sink stores weir_records' payloads as bytes or
/// text by choice (ClickHouse's String is both, and has no such key).
template <class Get>
void add_table_mapping(std::vector<setting>& s, const std::string& prefix, Get get, bool payload_as = true) {
  s.push_back(sql_name(prefix + ".table", [get](config& c) -> auto& { return get(c).table; }, sql_table_name_ok,
                       "a table name: a letter or _, then letters, digits or _ (at most 63), optionally after schema.",
                       "weir_records",
                       "The table the records go to. weir_records: weir's own table (one row per record with its "
                       "coordinate, id, ingest time and payload), made when missing. Any other name: a table of yours, "
                       "which must exist, filled through " + prefix + ".columns."));
  s.push_back(sql_name(prefix + ".id_column", [get](config& c) -> auto& { return get(c).id_column; },
                       sql_identifier_ok, "a column name: a letter or _, then letters, digits or _ (at most 63)",
                       "weir_id",
                       "In a table of yours, the column that gets each record's id (64 hex characters); it must be "
                       "unique (a primary key or a unique index): a record delivered again is skipped by it."));
  s.push_back(column_map(prefix + ".columns", [get](config& c) -> auto& { return get(c).columns; },
                         "In a table of yours, each column and the JSON pointer of its value in the payload, which "
                         "must then be a JSON object. A value goes as text (a string as itself, anything else as the "
                         "payload spells it) and the database casts it to the column's type."));
  s.push_back(choice(prefix + ".missing", [get](config& c) -> auto& { return get(c).missing; },
                     std::vector<std::pair<std::string, missing_field>>{{"error", missing_field::error},
                                                                        {"null", missing_field::null}},
                     "error",
                     "A payload without a mapped field: error: the record is a dead letter saying which; null: the "
                     "column gets NULL."));
  if (!payload_as) return;
  s.push_back(choice(prefix + ".payload_as", [get](config& c) -> auto& { return get(c).payload_as; },
                     std::vector<std::pair<std::string, payload_form>>{{"bytes", payload_form::bytes},
                                                                       {"text", payload_form::text}},
                     "bytes",
                     "weir_records only: bytes stores each payload as it came; text stores it as text, for "
                     "payloads that are UTF-8 (a payload that is not is a dead letter)."));
}

constexpr std::int64_t KiB = 1024, MiB = 1024 * KiB, GiB = 1024 * MiB, TiB = 1024 * GiB;

std::vector<setting> make_settings() {
  using tr = text_rule;
  std::vector<setting> s;
  s.push_back(text("data_dir", WEIR_FIELD(data_dir), tr::path, "var",
                   "Directory for the WAB, dead letters, quarantine and the lock file."));

  s.push_back(text("listen.unix", WEIR_FIELD(listen.unix_path), tr::path, "var/run/weir.sock",
                   "Unix socket producers connect to (\"\" disables it)."));
  s.push_back(text("listen.tcp", WEIR_FIELD(listen.tcp), tr::address_or_empty, "\"\"",
                   "TCP+TLS listener address (\"\" disables it)."));
  s.push_back(text("listen.tls.cert", WEIR_FIELD(listen.tls.cert), tr::path, "\"\"",
                   "Server certificate (PEM) for listen.tcp."));
  s.push_back(text("listen.tls.key", WEIR_FIELD(listen.tls.key), tr::path, "\"\"",
                   "Server private key (PEM) for listen.tcp."));
  s.push_back(text("listen.tls.client_ca", WEIR_FIELD(listen.tls.client_ca), tr::path, "\"\"",
                   "CA that must have signed every client certificate on listen.tcp."));
  s.push_back(integer("listen.tls.handshake_timeout_ms", WEIR_FIELD(listen.tls_handshake_timeout_ms), 100, 300000,
                      "10000", "A TLS client must finish its handshake within this long of connecting, or it "
                      "is closed (counted as reason timeout)."));
  s.push_back(integer("listen.max_connections", WEIR_FIELD(listen.max_connections), 1, 65536,
                      "256", "Connections served at once; a further one takes the place of the one "
                      "waiting longest on its peer, or is closed at accept if every one is busy."));
  s.push_back(integer("listen.read_timeout_ms", WEIR_FIELD(listen.read_timeout_ms), 100, 600000,
                      "30000", "A frame must arrive whole within this long of its first byte, or the "
                      "connection is closed."));
  s.push_back(boolean("listen.peer_uid_check", WEIR_FIELD(listen.peer_uid_check), "true",
                      "Refuse Unix-socket peers that are not root, the daemon's user, a user in listen.allowed_uids, "
                      "or in a group of listen.allowed_gids or listen.socket_group."));
  s.push_back(choice("listen.socket_mode", WEIR_FIELD(listen.socket_mode),
                     std::vector<std::pair<std::string, std::int64_t>>{{"0600", 0600}, {"0660", 0660}, {"0666", 0666}},
                     "0600",
                     "Permissions of the socket file: 0660 lets listen.socket_group connect (its directory "
                     "must let them through too)."));
  s.push_back(text("listen.socket_group", WEIR_FIELD(listen.socket_group), tr::any, "\"\"",
                   "Group (name or number) that owns the socket file; its members may push (\"\": the "
                   "daemon's group, no one else)."));
  s.push_back(account_list("listen.allowed_uids", WEIR_FIELD(listen.allowed_uids), "user", "[]",
                           "Further users (names or uids) whose processes may push."));
  s.push_back(account_list("listen.allowed_gids", WEIR_FIELD(listen.allowed_gids), "group", "[]",
                           "Groups (names or gids) whose members may push (the peer's primary or any "
                           "supplementary group)."));

  s.push_back(byte_size("limits.max_payload_bytes", WEIR_FIELD(limits.max_payload_bytes), 1,
                        16 * MiB, "16MiB", "Largest record (and frame payload) accepted."));
  s.push_back(integer("limits.max_batch_records", WEIR_FIELD(limits.max_batch_records), 1, 2048,
                      "1024", "Most records one PushBatch may carry."));
  s.push_back(byte_size("limits.wab_max_bytes", WEIR_FIELD(limits.wab_max_bytes), 16 * MiB,
                        64 * TiB, "8GiB",
                        "Undelivered bytes the WAB may hold; over it pushes get "
                        "Nack(InternalError) until it drains below 90 %."));
  s.push_back(byte_size("limits.frame_memory_bytes", WEIR_FIELD(limits.frame_memory_bytes), 64 * KiB,
                        64 * GiB, "256MiB",
                        "Memory all connections together may hold for frame payloads over 64KiB, from "
                        "header to reply; a connection that finds it spent waits."));
  s.push_back(integer("limits.frame_memory_retry_ms", WEIR_FIELD(limits.frame_memory_retry_ms), 1, 1000, "5",
                      "How often a connection waiting for frame memory asks for it again."));
  s.push_back(integer("limits.frame_memory_stall_ms", WEIR_FIELD(limits.frame_memory_stall_ms), 10, 3600000, "1000",
                      "A frame holding frame memory whose payload had no bytes this long (over TCP, at least "
                      "three of the connection's round trips) is closed when another connection waits for that "
                      "memory (so is one far too slow to arrive within listen.read_timeout_ms)."));

  s.push_back(integer("ingest.shards", WEIR_FIELD(ingest.shards), 1, 256, "2",
                      "Independent WAB shards; each connection is pinned to one."));
  s.push_back(choice("ingest.ack_mode", WEIR_FIELD(ingest.ack_mode),
                     std::vector<std::pair<std::string, ack_mode>>{{"strict", ack_mode::strict},
                                                                   {"ordered", ack_mode::ordered}},
                     "ordered",
                     "strict: reply before reading the next frame; ordered: pipeline up to "
                     "max_inflight frames, replies in order."));
  s.push_back(integer("ingest.max_inflight", WEIR_FIELD(ingest.max_inflight), 1, 65536, "256",
                      "Frames per connection awaiting their reply in ordered mode."));

  s.push_back(byte_size("wab.segment_max_bytes", WEIR_FIELD(wab.segment_max_bytes), 64 * KiB,
                        4 * GiB, "64MiB", "A segment is sealed and a new one started at this size."));
  s.push_back(byte_size("wab.min_free_bytes", WEIR_FIELD(wab.min_free_bytes), 0, 1024 * GiB, "16MiB",
                        "A segment is started only with this much free on the WAB's disk; below it "
                        "the shard refuses pushes (not ready) and retries every wab.segment_retry_ms."));
  s.push_back(integer("wab.segment_retry_ms", WEIR_FIELD(wab.segment_retry_ms), 10, 600000, "1000",
                      "How often an offline shard (no segment could be started) tries again."));
  s.push_back(integer("wab.spare_segments", WEIR_FIELD(wab.spare_segments), 0, 64, "1",
                      "Files per shard kept ready for the next segments: zero-filled ahead of need, "
                      "or delivered segments reused, so that a sync after an append flushes data "
                      "only. 0: every segment is a new file that grows as it is written."));

  s.push_back(choice("group_commit.policy", WEIR_FIELD(group_commit.policy),
                     std::vector<std::pair<std::string, commit_policy>>{
                         {"adaptive", commit_policy::adaptive},
                         {"deadline", commit_policy::deadline},
                         {"group", commit_policy::group}},
                     "adaptive",
                     "adaptive: sync at once when idle, batch what arrives during a sync; a shard's writer syncs "
                     "a group itself while its fsync group is idle and nothing else waits, or while the shard "
                     "has had only Durable pushes for a second; "
                     "deadline: the fsync group waits up to max_delay_us or max_records (the writer still syncs "
                     "a lone group itself); "
                     "group: as adaptive, but every sync is the fsync group's (one sync path)."));
  s.push_back(integer("group_commit.max_delay_us", WEIR_FIELD(group_commit.max_delay_us), 0,
                      1000000, "1000", "Longest wait before a sync under the deadline policy."));
  s.push_back(integer("group_commit.max_records", WEIR_FIELD(group_commit.max_records), 1,
                      1000000, "4096", "Records that trigger a sync at once under any policy."));
  s.push_back(byte_size("group_commit.max_bytes", WEIR_FIELD(group_commit.max_bytes), 4 * KiB, 1 * GiB, "4MiB",
                        "Queued bytes that make a shard writer write its group at once instead of "
                        "taking more from its mailbox first."));

  s.push_back(integer("drain.batch_max_records", WEIR_FIELD(drain.batch_max_records), 1, 100000,
                      "1000", "Most records in one sink commit."));
  s.push_back(byte_size("drain.batch_max_bytes", WEIR_FIELD(drain.batch_max_bytes), 1 * KiB,
                        256 * MiB, "4MiB", "Most payload bytes in one sink commit."));
  s.push_back(integer("drain.linger_ms", WEIR_FIELD(drain.linger_ms), 0, 60000, "5",
                      "How long the drain waits to fill a batch before committing it."));
  s.push_back(byte_size("drain.dead_letter_max_bytes", WEIR_FIELD(drain.dead_letter_max_bytes),
                        1 * MiB, 64 * TiB, "1GiB",
                        "Dead-letter space; when full, delivery stops until space frees."));
  s.push_back(integer("drain.dead_letter_recheck_ms", WEIR_FIELD(drain.dead_letter_recheck_ms), 10, 600000,
                      "1000", "With the dead letters full, how often delivery tries again."));
  s.push_back(integer("drain.cursor_persist_ms", WEIR_FIELD(drain.cursor_persist_ms), 1, 60000, "200",
                      "Longest time the confirm cursor trails delivery before it is stored (each store "
                      "costs an fdatasync; delivered segments are deleted only behind a stored cursor)."));

  s.push_back(choice("sink.type", WEIR_FIELD(sink.type),
                     std::vector<std::pair<std::string, std::string>>{{"noop", "noop"},
                                                                      {"file", "file"},
                                                                      {"sqlite", "sqlite"},
                                                                      {"http", "http"},
                                                                      {"postgres", "postgres"},
                                                                      {"mysql", "mysql"},
                                                                      {"clickhouse", "clickhouse"}},
                     "sqlite", "Where drained records go."));
  s.push_back(integer("sink.concurrency", WEIR_FIELD(sink.concurrency), 1, 1024, "4",
                      "Sink commits in flight at once (sqlite: batches ready per shard; it commits one at a time)."));
  s.push_back(integer("sink.timeout_ms", WEIR_FIELD(sink.timeout_ms), 100, 600000, "10000",
                      "A sink commit taking longer than this counts as a transient failure."));
  s.push_back(integer("sink.health_interval_ms", WEIR_FIELD(sink.health_interval_ms), 100,
                      3600000, "5000",
                      "How often the sink's health is probed. A probe that succeeds ends a backoff early when "
                      "the sink could not be reached (not after an answer such as an HTTP 503, nor a Retry-After)."));
  s.push_back(integer("sink.down_after_failures", WEIR_FIELD(sink.down_after_failures), 1, 1000, "3",
                      "Consecutive failed commit attempts after which the sink is reported down (degraded "
                      "before that; healthy again after a commit succeeds)."));
  s.push_back(integer("sink.retry.initial_ms", WEIR_FIELD(sink.retry.initial_ms), 1, 600000,
                      "100", "First delay after a transient sink failure."));
  s.push_back(number("sink.retry.multiplier", WEIR_FIELD(sink.retry.multiplier), 1.0, 10.0,
                     "2.0", "Growth of the delay after each further failure."));
  s.push_back(integer("sink.retry.max_ms", WEIR_FIELD(sink.retry.max_ms), 1, 3600000, "30000",
                      "Longest delay between retries."));
  s.push_back(number("sink.retry.jitter", WEIR_FIELD(sink.retry.jitter), 0.0, 1.0, "0.2",
                     "Random fraction added to or taken from each delay."));
  s.push_back(text("sink.sqlite.path", WEIR_FIELD(sink.sqlite.path), tr::path, "var/sink.db",
                   "SQLite database file; a relative path is taken from the working directory, not from `data_dir`."));
  add_table_mapping(s, "sink.sqlite", [](config& c) -> table_mapping& { return c.sink.sqlite; });
  s.push_back(text("sink.postgres.conninfo", WEIR_FIELD(sink.postgres.conninfo), tr::any, "\"\"",
                   "libpq connection string, without the password."));
  // Refused by validation when it holds a password; --print-config never shows one anyway.
  s.back().show = [](const config& c) {
    const auto& v = c.sink.postgres.conninfo;
    return YAML::Node(conninfo_has_password(v) ? std::string("(redacted: it holds a password)") : v);
  };
  s.push_back(text("sink.postgres.password_file", WEIR_FIELD(sink.postgres.password_file),
                   tr::path, "\"\"",
                   "File holding the PostgreSQL password (or set WEIR_SINK_POSTGRES_PASSWORD)."));
  add_table_mapping(s, "sink.postgres", [](config& c) -> table_mapping& { return c.sink.postgres; });
  s.push_back(text("sink.mysql.host", WEIR_FIELD(sink.mysql.host), tr::any, "127.0.0.1",
                   "MariaDB/MySQL server host (TCP)."));
  s.push_back(integer("sink.mysql.port", WEIR_FIELD(sink.mysql.port), 1, 65535, "3306",
                      "MariaDB/MySQL server port."));
  s.push_back(text("sink.mysql.socket", WEIR_FIELD(sink.mysql.socket), tr::path, "\"\"",
                   "The server's Unix socket; when set, it is used instead of sink.mysql.host and port."));
  s.push_back(text("sink.mysql.user", WEIR_FIELD(sink.mysql.user), tr::any, "weir",
                   "MariaDB/MySQL user."));
  s.push_back(text("sink.mysql.database", WEIR_FIELD(sink.mysql.database), tr::any, "\"\"",
                   "Database that holds weir_records (required when sink.type is mysql)."));
  s.push_back(text("sink.mysql.password_file", WEIR_FIELD(sink.mysql.password_file), tr::path, "\"\"",
                   "File holding the MariaDB/MySQL password (or set WEIR_SINK_MYSQL_PASSWORD)."));
  add_table_mapping(s, "sink.mysql", [](config& c) -> table_mapping& { return c.sink.mysql; });
  s.push_back(text("sink.http.url", WEIR_FIELD(sink.http.url), tr::url_or_empty, "\"\"",
                   "Endpoint records are POSTed to."));
  s.push_back(choice("sink.http.format", WEIR_FIELD(sink.http.format),
                     std::vector<std::pair<std::string, std::string>>{{"raw", "raw"},
                                                                      {"ndjson", "ndjson"}},
                     "raw", "raw: one POST per record; ndjson: one POST per batch."));
  s.push_back(integer("sink.http.pipeline", WEIR_FIELD(sink.http.pipeline), 1, 256, "16",
                      "raw: POSTs a commit slot sends on its connection before reading their answers "
                      "(HTTP/1.1 pipelining, answered in order); 1 waits for each answer."));
  s.push_back(string_map("sink.http.headers", WEIR_FIELD(sink.http.headers), "{}",
                         "Extra request headers."));
  s.push_back(text("sink.http.bearer_token_file", WEIR_FIELD(sink.http.bearer_token_file),
                   tr::path, "\"\"",
                   "File holding the bearer token (or set WEIR_SINK_BEARER_TOKEN)."));
  s.push_back(text("sink.http.ca_file", WEIR_FIELD(sink.http.ca_file), tr::path, "\"\"",
                   "CA certificates (PEM) an https:// endpoint's certificate must chain to (\"\": the system's)."));
  s.push_back(text("sink.http.tls.cert", WEIR_FIELD(sink.http.tls.cert), tr::path, "\"\"",
                   "Client certificate (PEM) for an https:// endpoint that asks for one."));
  s.push_back(text("sink.http.tls.key", WEIR_FIELD(sink.http.tls.key), tr::path, "\"\"",
                   "Private key (PEM) of sink.http.tls.cert."));
  s.push_back(text("sink.clickhouse.url", WEIR_FIELD(sink.clickhouse.url), tr::url_or_empty,
                   "http://127.0.0.1:8123/", "ClickHouse's HTTP interface (http:// or https://)."));
  s.push_back(sql_name("sink.clickhouse.database", WEIR_FIELD(sink.clickhouse.database), sql_identifier_ok,
                       "a database name: a letter or _, then letters, digits or _ (at most 63)", "default",
                       "Database of sink.clickhouse.table (unless the table names its own)."));
  s.push_back(text("sink.clickhouse.user", WEIR_FIELD(sink.clickhouse.user), tr::any, "default", "ClickHouse user."));
  s.push_back(text("sink.clickhouse.password_file", WEIR_FIELD(sink.clickhouse.password_file), tr::path, "\"\"",
                   "File holding the ClickHouse password (or set WEIR_SINK_CLICKHOUSE_PASSWORD)."));
  s.push_back(text("sink.clickhouse.ca_file", WEIR_FIELD(sink.clickhouse.ca_file), tr::path, "\"\"",
                   "CA certificates (PEM) an https:// server's certificate must chain to (\"\": the system's)."));
  add_table_mapping(
      s, "sink.clickhouse", [](config& c) -> table_mapping& { return c.sink.clickhouse; }, /*payload_as=*/false);
  s.push_back(text("sink.file.path", WEIR_FIELD(sink.file.path), tr::path, "var/sink.ndjson",
                   "NDJSON file records are appended to."));

  s.push_back(text("admin.listen", WEIR_FIELD(admin.listen), tr::address_or_empty,
                   "127.0.0.1:9185", "Admin HTTP server: metrics, health, status, dashboard."));

  s.push_back(integer("cluster.node_id", WEIR_FIELD(cluster.node_id), 0, 65535, "0",
                      "This node's number in the cluster, unique, 1-65535 (0 = no cluster)."));
  s.push_back(text("cluster.listen", WEIR_FIELD(cluster.listen), tr::address_or_empty, "\"\"",
                   "Address peers connect to (\"\" = no cluster)."));
  s.push_back(address_list("cluster.peers", WEIR_FIELD(cluster.peers), "[]",
                           "The other nodes' cluster.listen addresses."));
  s.push_back(integer("cluster.replicas", WEIR_FIELD(cluster.replicas), 1, 16, "2",
                      "Copies (this node included) a Replicated record needs before its ack."));
  s.push_back(integer("cluster.heartbeat_ms", WEIR_FIELD(cluster.heartbeat_ms), 10, 60000, "500",
                      "Heartbeat interval; a peer silent for three is suspect."));
  s.push_back(integer("cluster.failover_after_ms", WEIR_FIELD(cluster.failover_after_ms), 100,
                      3600000, "10000", "A peer unreachable this long has its replica drained."));
  s.push_back(integer("cluster.replication_timeout_ms", WEIR_FIELD(cluster.replication_timeout_ms), 10,
                      600000, "5000", "A Replicated push not confirmed by enough peers by then is refused."));
  s.push_back(integer("cluster.handshake_timeout_ms", WEIR_FIELD(cluster.handshake_timeout_ms), 100, 300000,
                      "5000", "A connection to cluster.listen not authenticated by then is closed."));
  s.push_back(integer("cluster.max_pending_handshakes", WEIR_FIELD(cluster.max_pending_handshakes), 1, 4096, "64",
                      "Connections to cluster.listen not yet authenticated, at most; past it the oldest is closed."));
  s.push_back(byte_size("cluster.max_message_bytes", WEIR_FIELD(cluster.max_message_bytes), 2 * MiB, 1024 * MiB,
                        "64MiB", "Largest message a peer may send; a link announcing more is closed."));
  s.push_back(text("cluster.tls.cert", WEIR_FIELD(cluster.tls.cert), tr::path, "\"\"",
                   "This node's certificate (PEM), naming it weir-node-<node_id> (CN or DNS subjectAltName)."));
  s.push_back(text("cluster.tls.key", WEIR_FIELD(cluster.tls.key), tr::path, "\"\"",
                   "Private key (PEM) of cluster.tls.cert."));
  s.push_back(text("cluster.tls.ca", WEIR_FIELD(cluster.tls.ca), tr::path, "\"\"",
                   "Private CA every cluster node's certificate is signed by."));

  s.push_back(choice("log.level", WEIR_FIELD(log.level),
                     std::vector<std::pair<std::string, log_level>>{{"trace", log_level::trace},
                                                                    {"debug", log_level::debug},
                                                                    {"info", log_level::info},
                                                                    {"warn", log_level::warn},
                                                                    {"error", log_level::error}},
                     "info", "Least severe level written to stderr."));
  s.push_back(choice("log.format", WEIR_FIELD(log.format),
                     std::vector<std::pair<std::string, log_format>>{{"text", log_format::text},
                                                                     {"json", log_format::json}},
                     "text", "text: one readable line per event; json: one JSON object per line."));

  s.push_back(integer("runtime.scheduler_threads", WEIR_FIELD(runtime.scheduler_threads), 0, 256,
                      "0", "Actor scheduler threads (0 = half the usable cores: CPU affinity, capped by a cgroup v2 CPU quota; 1 to 4; the ready line says how many)."));
  s.push_back(integer("runtime.io_threads", WEIR_FIELD(runtime.io_threads), 1, 64, "1",
                      "Threads serving client sockets."));
  s.push_back(choice("runtime.cpu_placement", WEIR_FIELD(runtime.cpu_placement),
                     std::vector<std::pair<std::string, cpu_placement_mode>>{{"adaptive", cpu_placement_mode::adaptive},
                                                                             {"spread", cpu_placement_mode::spread}},
                     "adaptive",
                     "adaptive: while at most 8 connections send and the daemon uses under 0.85 of a CPU, its threads gather on one CPU that takes the WAB disk's interrupts (fewer wake-ups of halted CPUs for few producers); more connections sending, a full CPU or threads queuing for it spread them over every usable CPU at once; off while runtime.keep_awake_us is on. spread: the kernel places them."));
  s.push_back(choice("runtime.read_batching", WEIR_FIELD(runtime.read_batching),
                     std::vector<std::pair<std::string, read_batching_mode>>{{"adaptive", read_batching_mode::adaptive},
                                                                             {"always", read_batching_mode::always},
                                                                             {"off", read_batching_mode::off}},
                     "adaptive",
                     "How the io threads learn that a Unix socket has bytes. adaptive: while more than 8 connections send (counted ten times a second; back at 4 or fewer), from one level-triggered epoll set that reports every ready socket at once, so a socket is read only when it has bytes; otherwise through Asio's reactor, which reads again after every read (fewer system calls for one or a few producers). always: the set, whatever the load. off: Asio's reactor. TLS connections always use Asio's reactor."));
  s.push_back(integer("runtime.buffered_spin_us", WEIR_FIELD(runtime.buffered_spin_us), 0, 1000, "50",
                      "While the last Buffered ack is less than this old, the io thread polls its sockets instead of sleeping in epoll_wait, so a Buffered producer's next frame is read as it lands rather than after a wake-up (0 = off; only with runtime.io_threads: 1; Durable-only traffic never polls, nor does it while more than 8 connections send): lower Buffered latency for few producers, paid in CPU time while they are active (weir_io_spin_seconds_total)."));
  s.push_back(boolean("runtime.direct_replies", WEIR_FIELD(runtime.direct_replies), "true",
                      "true: a request carries its connection's reply channel, and whoever answers it (the shard writer after its write or a sync it ran, the fsync group after a sync the writer ran, the replicator once peers hold the records) writes the reply onto the socket at once, in the connection's order. false: every reply goes by message to the connection's actor, which writes it (one scheduler hand-off more per reply; for measuring what the channel buys, decision 0004)."));
  s.push_back(integer("runtime.keep_awake_us", WEIR_FIELD(runtime.keep_awake_us), 0, 1000000, "0",
                      "After client bytes arrive, keep the usable cores out of their idle state this long (one SCHED_IDLE spinner per core, none on the cores that take the WAB disk's interrupts unless all do or they cannot be told; 0 = off; on, runtime.cpu_placement does not gather threads): lower latency for few producers, paid in CPU time."));

  s.push_back(integer("shutdown_timeout_ms", WEIR_FIELD(shutdown_timeout_ms), 100, 3600000,
                      "30000", "Longest a graceful shutdown may take."));
  return s;
}

#undef WEIR_FIELD

}  // namespace

const std::vector<setting>& settings() {
  static const std::vector<setting> all = make_settings();
  return all;
}

const setting* find_setting(const std::string& key) {
  for (auto& s : settings())
    if (s.key == key) return &s;
  return nullptr;
}

const std::vector<renamed_key>& renamed_keys() {
  // The sink runner's backoff was configured under drain.* (it is the
  // sink's retry, not the drain's).
  static const std::vector<renamed_key> renamed{{"drain.retry.initial_ms", "sink.retry.initial_ms"},
                                                {"drain.retry.multiplier", "sink.retry.multiplier"},
                                                {"drain.retry.max_ms", "sink.retry.max_ms"},
                                                {"drain.retry.jitter", "sink.retry.jitter"}};
  return renamed;
}

const setting* renamed_setting(const std::string& old_key) {
  for (const auto& r : renamed_keys())
    if (old_key == r.old_key) return find_setting(r.new_key);
  return nullptr;
}

bool is_section(const std::string& key) {
  const std::string prefix = key + ".";
  return std::any_of(settings().begin(), settings().end(),
                     [&](const setting& s) { return s.key.rfind(prefix, 0) == 0; }) ||
         std::any_of(renamed_keys().begin(), renamed_keys().end(),
                     [&](const renamed_key& r) { return std::string(r.old_key).rfind(prefix, 0) == 0; });
}

std::string env_name(const std::string& key) {
  std::string out = "WEIR_";
  for (char c : key) {
    if (c == '.')
      out += "__";
    else
      out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return out;
}

config default_config() {
  config c{};
  for (auto& s : settings())
    if (!s.assign(c, YAML::Load(s.default_yaml)))
      throw std::logic_error("bad built-in default for " + s.key);
  return c;
}

}  // namespace weir
