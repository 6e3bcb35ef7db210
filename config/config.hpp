#pragma once
// The effective configuration of one weir-server process. Defaults live in
// config/schema.cpp next to each key's range and description, so that the
// docs, --print-config and validation all come from one table.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace weir {

enum class ack_mode { strict, ordered };
/// group_commit.policy (docs/architecture.md, "Group commit"): who syncs a
/// Durable group, and when.
enum class commit_policy { adaptive, deadline, group };
enum class log_format { text, json };
enum class log_level { trace, debug, info, warn, error };
enum class cpu_placement_mode { adaptive, spread };
enum class read_batching_mode { adaptive, always, off };
/// A mapped JSON field the payload lacks: a dead letter, or SQL NULL.
enum class missing_field { error, null };
/// How weir_records stores a payload: as bytes, or as UTF-8 text.
enum class payload_form { bytes, text };

/// Which table an SQL sink writes and how a record becomes a row of it.
struct table_mapping {
  std::string table = "weir_records";  // weir's own table
  std::string id_column = "weir_id";    // the record id's column in a table of the user's: unique, the dedup key
  std::map<std::string, std::string> columns;  // column -> JSON pointer into the payload
  missing_field missing = missing_field::error;
  payload_form payload_as = payload_form::bytes;  // weir_records only

  bool writes_weir_records() const { return table == "weir_records"; }
};

/// Where one sink delivers, and how (the keys under `sink.`).
struct sink_config {
  /// Not a key of the section: a `sinks:` element's `name`; "default" for
  /// the `sink:` section's one sink. Names its cursor, dead letters and
  /// metrics.
  std::string name = "default";
  std::string type;
  std::int64_t concurrency;
  std::int64_t timeout_ms;
  std::int64_t health_interval_ms;
  std::int64_t down_after_failures;
  struct {
    std::int64_t initial_ms;
    double multiplier;
    std::int64_t max_ms;
    double jitter;
  } retry;
  struct : table_mapping { std::string path; } sqlite;
  struct : table_mapping { std::string conninfo; std::string password_file; } postgres;
  struct : table_mapping {
    std::string host;
    std::int64_t port;
    std::string socket;  // a Unix socket path; when set, host and port are not used
    std::string user;
    std::string database;
    std::string password_file;
  } mysql;
  struct {
    std::string url;
    std::string format;
    std::int64_t pipeline;  // raw: POSTs sent on a connection before their answers are read
    std::map<std::string, std::string> headers;
    std::string bearer_token_file;
    std::string ca_file;                     // "" : the system's CA store
    struct { std::string cert, key; } tls;  // a client certificate, for https:// endpoints that ask
  } http;
  struct : table_mapping {
    std::string url;  // its HTTP interface
    std::string database;
    std::string user;
    std::string password_file;
    std::string ca_file;  // https:// only; "" : the system's CA store
  } clickhouse;
  struct { std::string path; } file;
};

struct config {
  /// Not a setting: one line for each earlier name of a key the sources
  /// used (config/schema.hpp, renamed_keys), logged at start and printed by
  /// --check-config.
  std::vector<std::string> deprecations;

  std::string data_dir;

  struct tls_files {
    std::string cert, key, client_ca;
  };
  struct {
    std::string unix_path;
    std::string tcp;
    tls_files tls;
    std::int64_t tls_handshake_timeout_ms;
    std::int64_t max_connections;
    std::int64_t read_timeout_ms;
    bool peer_uid_check;
    std::int64_t socket_mode;  // 0600, 0660 or 0666
    std::string socket_group;
    std::vector<std::string> allowed_uids, allowed_gids;  // names or numbers, resolved at start
  } listen;

  struct {
    std::int64_t max_payload_bytes;
    std::int64_t max_batch_records;
    std::int64_t wab_max_bytes;
    std::int64_t frame_memory_bytes;
    std::int64_t frame_memory_retry_ms;
    std::int64_t frame_memory_stall_ms;
  } limits;

  struct {
    std::int64_t shards;
    weir::ack_mode ack_mode;
    std::int64_t max_inflight;
  } ingest;

  struct {
    std::int64_t segment_max_bytes;
    std::int64_t min_free_bytes;
    std::int64_t segment_retry_ms;
    std::int64_t spare_segments;
  } wab;

  struct {
    commit_policy policy;
    std::int64_t max_delay_us;
    std::int64_t max_records;
    std::int64_t max_bytes;
  } group_commit;

  struct {
    std::int64_t batch_max_records;
    std::int64_t batch_max_bytes;
    std::int64_t linger_ms;
    std::int64_t dead_letter_max_bytes;
    std::int64_t dead_letter_recheck_ms;
    std::int64_t cursor_persist_ms;
  } drain;

  /// The `sink:` section: the one sink, or, with a `sinks:` list, what each
  /// listed sink starts from.
  sink_config sink;
  /// The `sinks:` list, each element the `sink:` section with its own keys
  /// on top; empty: the `sink:` section is the one sink (config/sink_list.hpp).
  std::vector<sink_config> sinks;

  struct {
    std::string listen;
  } admin;

  struct {
    std::int64_t node_id;  // 0: not in a cluster
    std::string listen;
    std::vector<std::string> peers;
    std::int64_t replicas;
    std::int64_t heartbeat_ms;
    std::int64_t failover_after_ms;
    std::int64_t replication_timeout_ms;
    std::int64_t handshake_timeout_ms;    // a connection not authenticated by then is closed
    std::int64_t max_pending_handshakes;  // connections not yet authenticated, at most
    std::int64_t max_message_bytes;       // the largest message a peer may send
    struct { std::string cert, key, ca; } tls;
  } cluster;

  struct {
    log_level level;
    log_format format;
  } log;

  struct {
    std::int64_t scheduler_threads;
    std::int64_t io_threads;
    std::int64_t keep_awake_us;  // 0: off
    cpu_placement_mode cpu_placement;
    read_batching_mode read_batching;
    std::int64_t buffered_spin_us;  // 0: off
    bool direct_replies;
  } runtime;

  std::int64_t shutdown_timeout_ms;
};

}  // namespace weir
