// Checks that involve more than one key, or a key and the platform.
#include <sys/un.h>

#include "config/credentials.hpp"
#include "config/loader.hpp"
#include "config/value_parsing.hpp"

namespace weir {

namespace {

[[noreturn]] void fail(const std::string& message) { throw config_error("config error: " + message); }

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

}  // namespace

void validate_config(const config& c) {
  if (c.data_dir.empty()) fail("data_dir = \"\": expected a directory path");

  if (c.listen.unix_path.empty() && c.listen.tcp.empty())
    fail("listen.unix and listen.tcp are both \"\": expected at least one listener");
  if (c.listen.unix_path.size() >= sizeof(sockaddr_un::sun_path))
    fail("listen.unix = \"" + c.listen.unix_path + "\": the path is " +
         std::to_string(c.listen.unix_path.size()) + " bytes; a Unix socket path must be under " +
         std::to_string(sizeof(sockaddr_un::sun_path)) + " bytes");
  if (!c.listen.socket_group.empty() && !account_name_ok(c.listen.socket_group))
    fail("listen.socket_group = \"" + c.listen.socket_group + "\": expected a group name or number, or \"\"");
  require_all_or_none("listen.tls", {{"cert", &c.listen.tls.cert},
                                     {"key", &c.listen.tls.key},
                                     {"client_ca", &c.listen.tls.client_ca}});
  if (!c.listen.tcp.empty() && c.listen.tls.cert.empty())
    fail("listen.tcp = \"" + c.listen.tcp +
         "\": TCP is served only with mutual TLS; set listen.tls.cert, listen.tls.key and "
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

  if (c.drain.retry.max_ms < c.drain.retry.initial_ms)
    fail("drain.retry.max_ms = " + std::to_string(c.drain.retry.max_ms) +
         ": expected at least drain.retry.initial_ms = " + std::to_string(c.drain.retry.initial_ms));

  if (c.sink.type == "http" && c.sink.http.url.empty())
    fail("sink.http.url = \"\": expected an http:// URL when sink.type is http");
  if (c.sink.type == "postgres" && c.sink.postgres.conninfo.empty())
    fail("sink.postgres.conninfo = \"\": expected a libpq connection string when sink.type is postgres");
  if (conninfo_has_password(c.sink.postgres.conninfo))
    fail("sink.postgres.conninfo: a password must not be written in the configuration; use "
         "sink.postgres.password_file or WEIR_SINK_POSTGRES_PASSWORD");
  if (c.sink.type == "file" && c.sink.file.path.empty())
    fail("sink.file.path = \"\": expected a file path when sink.type is file");
  if (c.sink.type == "sqlite" && c.sink.sqlite.path.empty())
    fail("sink.sqlite.path = \"\": expected a file path when sink.type is sqlite");

  require_all_or_none("cluster.tls", {{"cert", &c.cluster.tls.cert},
                                      {"key", &c.cluster.tls.key},
                                      {"ca", &c.cluster.tls.ca}});
  if (c.cluster.listen.empty() && !c.cluster.peers.empty())
    fail("cluster.peers is set but cluster.listen = \"\": expected this node's cluster address");
}

}  // namespace weir
