// Checks that involve more than one key, or a key and the platform.
#include <sys/un.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>

#include "config/credentials.hpp"
#include "config/loader.hpp"
#include "config/sink_list.hpp"
#include "config/value_parsing.hpp"

namespace weir {

namespace {

[[noreturn]] void fail(const std::string& message) { throw config_error("config error: " + message); }

/// An extra request header must be one header: a token for a name, no line
/// break in the value (either would let a value write headers of its own),
/// and none of the fields that frame the request or name the record.
void validate_header(const std::string& name, const std::string& value) {
  static const std::string tchar = "!#$%&'*+-.^_`|~";
  const bool token = !name.empty() && std::all_of(name.begin(), name.end(), [](unsigned char ch) {
    return std::isalnum(ch) || tchar.find(static_cast<char>(ch)) != std::string::npos;
  });
  if (!token)
    fail("sink.http.headers: " + quoted_text(name) + ": expected a header name (letters, digits and !#$%&'*+-.^_`|~)");
  // RFC 9110 field-value: visible characters, spaces and tabs; no control character.
  if (std::any_of(value.begin(), value.end(), [](unsigned char ch) { return (ch < 0x20 && ch != '\t') || ch == 0x7f; }))
    fail("sink.http.headers." + name + ": expected a value without control characters (line breaks, NUL, ESC...)");
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return std::tolower(ch); });
  for (const char* reserved : {"content-length", "transfer-encoding", "connection", "idempotency-key", "expect", "te",
                               "upgrade", "trailer"})
    if (lower == reserved)
      fail("sink.http.headers." + name + ": set by the sink itself; expected another header");
}

/// The table keys of `prefix` (sink.sqlite, ...) agree with each other.
void validate_table_mapping(const std::string& prefix, const table_mapping& m) {
  if (m.writes_weir_records()) {
    if (!m.columns.empty())
      fail(prefix + ".columns: set, but " + prefix +
           ".table is weir_records, whose columns are weir's; name a table of yours in " + prefix + ".table");
    return;
  }
  if (m.columns.empty())
    fail(prefix + ".table = " + m.table + ": expected " + prefix +
         ".columns too (which payload field goes into which column of it)");
  // Databases match column names whatever their case: Kind and kind are one column.
  auto folded = [](std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  std::map<std::string, std::string> seen{{folded(m.id_column), m.id_column}};
  for (const auto& [column, pointer] : m.columns) {
    const auto [it, fresh] = seen.emplace(folded(column), column);
    if (fresh) continue;
    if (it->second == m.id_column)
      fail(prefix + ".columns: " + column + " is " + prefix +
           ".id_column, which gets the record id; map the payload to other columns");
    fail(prefix + ".columns: " + it->second + " and " + column +
         " name one column (names match whatever their case); map it once");
  }
  if (m.payload_as == payload_form::text)
    fail(prefix + ".payload_as = text: applies to weir_records only; with " + prefix +
         ".columns each value goes as text already");
}

void require_all_or_none(const std::string& section,
                         std::initializer_list<std::pair<const char*, const std::string*>> keys) {
  std::size_t set = 0;
  for (auto& [name, value] : keys) set += !value->empty();
  if (set == 0 || set == keys.size()) return;
  std::string missing;
  for (auto& [name, value] : keys)
    if (value->empty()) missing += (missing.empty() ? "" : ", ") + section + "." + name;
  fail(section + " is half configured: " + missing +
       " must be set too (all of them or none; a partial TLS setup would fall back to no "
       "authentication)");
}

/// A node that joins a cluster: who it is, who its peers are, and that the
/// cluster port is not open to a network unauthenticated.
void validate_cluster(const config& c) {
  if (c.cluster.node_id < 1)
    fail("cluster.node_id = " + std::to_string(c.cluster.node_id) +
         ": expected this node's number, 1 to 65535, unique in the cluster, when cluster.listen is set");
  if (c.cluster.tls.cert.empty())
    fail("cluster.listen = " + c.cluster.listen +
         ": a cluster needs cluster.tls.cert, cluster.tls.key and cluster.tls.ca, on any address (a node is "
         "a member only by a certificate the cluster's CA signed for weir-node-<id>); make them with "
         "`weir-ctl cluster certs --out DIR --nodes 1,2,3`");
  const auto biggest_chunk = std::max<std::int64_t>(c.limits.max_payload_bytes, 1 << 20) + (1 << 20);
  if (c.cluster.max_message_bytes < biggest_chunk)
    fail("cluster.max_message_bytes = " + std::to_string(c.cluster.max_message_bytes) + ": expected at least " +
         std::to_string(biggest_chunk) +
         " (limits.max_payload_bytes or 1 MiB, whichever is larger, plus 1 MiB: a replica chunk carries a whole "
         "record)");
  for (const auto& p : c.cluster.peers)
    if (p == c.cluster.listen)
      fail("cluster.peers lists " + p + ", which is this node's own cluster.listen: expected the other nodes only");
  const auto copies = static_cast<std::int64_t>(c.cluster.peers.size()) + 1;
  if (c.cluster.replicas > copies)
    fail("cluster.replicas = " + std::to_string(c.cluster.replicas) + ": expected at most " + std::to_string(copies) +
         " (this node and its " + std::to_string(copies - 1) + " cluster.peers)");
  if (c.cluster.failover_after_ms < 2 * c.cluster.heartbeat_ms)
    fail("cluster.failover_after_ms = " + std::to_string(c.cluster.failover_after_ms) +
         ": expected at least two cluster.heartbeat_ms (" + std::to_string(2 * c.cluster.heartbeat_ms) +
         "), or a peer late by one heartbeat would be failed over");
}

}  // namespace

namespace {

/// The `sink:` section's keys, as one sink (c.sink) uses them.
void validate_sink(const config& c) {
  if (c.sink.retry.max_ms < c.sink.retry.initial_ms)
    fail("sink.retry.max_ms = " + std::to_string(c.sink.retry.max_ms) +
         ": expected at least sink.retry.initial_ms = " + std::to_string(c.sink.retry.initial_ms));

  if (c.sink.type == "http" && c.sink.http.url.empty())
    fail("sink.http.url = \"\": expected an http:// or https:// URL when sink.type is http");
  require_all_or_none("sink.http.tls", {{"cert", &c.sink.http.tls.cert}, {"key", &c.sink.http.tls.key}});
  std::map<std::string, std::string> header_names;  // lower case → as written: names ignore case
  for (const auto& [name, value] : c.sink.http.headers) {
    validate_header(name, value);
    std::string lower(name);
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return std::tolower(ch); });
    if (const auto [other, fresh] = header_names.emplace(lower, name); !fresh)
      fail("sink.http.headers: " + quoted_text(other->second) + " and " + quoted_text(name) +
           " name the same header; expected each header once");
  }
  const bool https = c.sink.http.url.rfind("https://", 0) == 0;
  if (!https && !c.sink.http.url.empty() && (!c.sink.http.ca_file.empty() || !c.sink.http.tls.cert.empty()))
    fail("sink.http.url = " + quoted_text(c.sink.http.url) +
         ": sink.http.ca_file and sink.http.tls.* apply to https:// only; use an https:// URL or unset them");
  // The sink's own type's table keys: another type's are not read (and, in
  // the sink: section under a sinks: list, are there for other sinks).
  if (c.sink.type == "sqlite") validate_table_mapping("sink.sqlite", c.sink.sqlite);
  if (c.sink.type == "postgres") validate_table_mapping("sink.postgres", c.sink.postgres);
  if (c.sink.type == "mysql") validate_table_mapping("sink.mysql", c.sink.mysql);
  if (c.sink.type == "clickhouse") validate_table_mapping("sink.clickhouse", c.sink.clickhouse);
  for (char ch : c.sink.clickhouse.user)
    if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f)
      fail("sink.clickhouse.user: holds a control character (not shown); expected a user name, which goes in an "
           "HTTP header");
  if (c.sink.type == "clickhouse" && c.sink.clickhouse.url.empty())
    fail("sink.clickhouse.url = \"\": expected ClickHouse's HTTP interface (http://host:8123/) when sink.type is "
         "clickhouse");
  if (!c.sink.clickhouse.ca_file.empty() && c.sink.clickhouse.url.rfind("https://", 0) != 0)
    fail("sink.clickhouse.ca_file: applies to an https:// sink.clickhouse.url only; use one or unset it");
  if (c.sink.type == "postgres" && c.sink.postgres.conninfo.empty())
    fail("sink.postgres.conninfo = \"\": expected a libpq connection string when sink.type is postgres");
  if (conninfo_has_password(c.sink.postgres.conninfo))
    fail("sink.postgres.conninfo: a password must not be written in the configuration; use "
         "sink.postgres.password_file or WEIR_SINK_POSTGRES_PASSWORD");
  // What libpq cannot read would fail at every connect, with libpq's
  // message echoing the piece it choked on (a password among them): refused
  // here, without echoing any of it.
  if (!c.sink.postgres.conninfo.empty() && !conninfo_readable(c.sink.postgres.conninfo))
    fail("sink.postgres.conninfo: libpq cannot read it (a malformed keyword, value or percent-encoding; not shown); "
         "expected key=value pairs or a postgresql:// URI");
  if (c.sink.type == "mysql" && c.sink.mysql.database.empty())
    fail("sink.mysql.database = \"\": expected the name of a database when sink.type is mysql");
  if (c.sink.type == "mysql" && c.sink.mysql.user.empty())
    fail("sink.mysql.user = \"\": expected a user name when sink.type is mysql");
  if (c.sink.type == "mysql" && c.sink.mysql.socket.empty() && c.sink.mysql.host.empty())
    fail("sink.mysql.host = \"\": expected a host name or address when sink.type is mysql and "
         "sink.mysql.socket is not set");
  if (c.sink.type == "file" && c.sink.file.path.empty())
    fail("sink.file.path = \"\": expected a file path when sink.type is file");
  if (c.sink.type == "sqlite" && c.sink.sqlite.path.empty())
    fail("sink.sqlite.path = \"\": expected a file path when sink.type is sqlite");
}

/// The file a path names, however it is spelled: ./x, a//x, a/../x, a
/// link to it, an SQLite file: URI (what can be resolved now; the rest as
/// written, made absolute).
std::string same_file_key(std::string path) {
  if (path.rfind("file:", 0) == 0) {
    path = path.substr(5, path.find('?') == std::string::npos ? std::string::npos : path.find('?') - 5);
    if (path.rfind("//", 0) == 0) path = path.substr(path.find('/', 2) == std::string::npos ? 2 : path.find('/', 2));
  }
  std::error_code ec;
  const auto canonical = std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
  return ec ? std::filesystem::absolute(path).lexically_normal().string() : canonical.string();
}

/// A database file or an output file written by two sinks would get each
/// record twice over, interleaved: one file, one sink.
void refuse_shared_files(const std::vector<sink_config>& sinks) {
  std::map<std::string, std::pair<std::string, std::string>> written;  // file -> (sink, path as written)
  for (const auto& s : sinks) {
    const std::string* path = s.type == "sqlite" ? &s.sqlite.path : s.type == "file" ? &s.file.path : nullptr;
    if (!path) continue;
    if (const auto [other, fresh] = written.emplace(same_file_key(*path), std::pair{s.name, *path}); !fresh)
      fail("sinks: " + other->second.first + " and " + s.name + " both write " + quoted_text(other->second.second) +
           (other->second.second == *path ? "" : " (as " + quoted_text(*path) + ")") +
           "; expected a file of its own for each sink");
  }
}

/// Each sink as it will run: the `sink:` section alone, or each `sinks:`
/// element (the `sink:` section is then what they start from, not a sink).
void validate_sinks(const config& c) {
  if (c.sinks.empty()) return validate_sink(c);
  for (std::size_t i = 0; i < c.sinks.size(); ++i) {
    try {
      validate_sink(with_only_sink(c, c.sinks[i]));
    } catch (const config_error& e) {
      const std::string what = e.what(), head = "config error: ";
      fail("sinks[" + std::to_string(i) + "] (" + c.sinks[i].name + "): " + what.substr(head.size()));
    }
  }
  refuse_shared_files(c.sinks);
}

}  // namespace

void validate_config(const config& c) {
  if (c.data_dir.empty()) fail("data_dir = \"\": expected a directory path");

  if (c.listen.unix_path.empty() && c.listen.tcp.empty())
    fail("listen.unix and listen.tcp are both \"\": expected at least one listener");
  if (c.listen.unix_path.size() >= sizeof(sockaddr_un::sun_path))
    fail("listen.unix = " + quoted_text(c.listen.unix_path) + ": the path is " +
         std::to_string(c.listen.unix_path.size()) + " bytes; a Unix socket path must be under " +
         std::to_string(sizeof(sockaddr_un::sun_path)) + " bytes");
  if (!c.listen.socket_group.empty() && !account_name_ok(c.listen.socket_group))
    fail("listen.socket_group = " + quoted_text(c.listen.socket_group) + ": expected a group name or number, or \"\"");
  require_all_or_none("listen.tls", {{"cert", &c.listen.tls.cert},
                                     {"key", &c.listen.tls.key},
                                     {"client_ca", &c.listen.tls.client_ca}});
  if (!c.listen.tcp.empty() && c.listen.tls.cert.empty())
    fail("listen.tcp = " + quoted_text(c.listen.tcp) +
         ": TCP is served only with mutual TLS; set listen.tls.cert, listen.tls.key and "
         "listen.tls.client_ca");

  const double cap_floor = static_cast<double>(c.ingest.shards) * c.wab.segment_max_bytes;
  if (c.limits.wab_max_bytes * 0.9 <= cap_floor)
    fail("limits.wab_max_bytes = " + format_bytes(c.limits.wab_max_bytes) +
         ": expected 90 % of it to exceed ingest.shards x wab.segment_max_bytes = " +
         std::to_string(c.ingest.shards) + " x " + format_bytes(c.wab.segment_max_bytes) +
         " (every shard's open segment must fit under the cap)");

  if (c.limits.frame_memory_bytes < c.limits.max_payload_bytes)
    fail("limits.frame_memory_bytes = " + format_bytes(c.limits.frame_memory_bytes) +
         ": expected at least limits.max_payload_bytes = " + format_bytes(c.limits.max_payload_bytes) +
         " (a frame of the largest allowed payload must fit)");

  validate_sinks(c);

  require_all_or_none("cluster.tls", {{"cert", &c.cluster.tls.cert},
                                      {"key", &c.cluster.tls.key},
                                      {"ca", &c.cluster.tls.ca}});
  if (c.cluster.listen.empty() && !c.cluster.peers.empty())
    fail("cluster.peers is set but cluster.listen = \"\": expected this node's cluster address");
  if (!c.cluster.listen.empty()) validate_cluster(c);
}

}  // namespace weir
