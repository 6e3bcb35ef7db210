#pragma once
// weir-ctl's commands, one function each, and what they share: the global
// options, usage errors that name the command, a connection that says how
// to find the daemon when there is none, and the data-dir check.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wire/bytes.hpp"
#include "weir/client.hpp"

namespace weir::ctl {

struct options {
  std::string socket = "var/run/weir.sock";
  std::string admin = "127.0.0.1:9185";
  std::string data_dir = "var";
  std::string tcp;  // "host:port" of listen.tcp; set, it is used instead of the socket
  client::tls_options tls;
  bool json = false;
  std::string config_file;  // the daemon configuration read (tools/ctl_config.hpp), if any
  std::int64_t max_payload_bytes = 0;  // its limits.max_payload_bytes (0: no configuration read)
  std::string config_unreadable;  // the default configuration is there but this user may not read it: why
};

/// "weir-ctl <command>: <message> (see weir-ctl <command> --help)"; returns 2.
int usage_error(const std::string& command, const std::string& message);

/// A connection to the daemon's socket; a client_error whose message says
/// how to point weir-ctl at the daemon when nothing answers.
client::connection connect(const options& o);

/// True when o.data_dir is a weir data directory (it has a wab/ directory);
/// otherwise says so on stderr, naming --data-dir.
bool require_data_dir(const options& o);

/// Turns a status document into what a person reads.
using status_renderer = std::string (*)(const nlohmann::json&);

/// GET http://<admin>/<path>; prints the body, or what `summarize` makes of
/// it (unless `json`). Exit status: 0; 1 when the answer is not 200 or not a
/// status document; 2 when the admin server cannot be reached.
int admin_get(const std::string& admin, const std::string& path, status_renderer summarize, bool json);

/// GET /metrics; prints the Prometheus text, or with `json` one array of
/// {"name", "labels", "value"} per sample. Exit status as admin_get.
int admin_metrics(const std::string& admin, bool json);

/// The samples of a Prometheus text exposition as JSON (comments skipped).
nlohmann::json exposition_json(const std::string& text);

/// `weir-ctl cluster certs ARGS`: a private CA and node certificates.
int cluster_certs(const std::vector<std::string>& args);
extern const char* cluster_certs_help;

/// Lists each shard's segments (records, bytes) and its confirm cursor,
/// and what the next start would repair (as `segments` says it); 1 when
/// anything is damaged or the cursor would not be trusted.
int wab_list(const std::string& data_dir, bool json);

/// What the next start does with one of the node's own shard directories
/// (recovery run on a file layer that changes nothing, and the confirm
/// cursor judged as the drain judges it): its "repairs", each {level, what,
/// fields}, and whether any is an error.
struct next_start_report {
  nlohmann::json repairs;
  bool errors = false;
};
next_start_report next_start_of(const std::string& shard_dir, const std::string& quarantine_dir);
/// One repair as a line of text: "what k=v k=v".
std::string repair_text(const nlohmann::json& repair);

/// Checks every record of every segment (WAB shards and replicas) and says
/// what startup recovery would repair; 1 when anything is damaged.
int segments_check(const std::string& data_dir, bool json);

enum class dump_format { text, hex, json };
struct dump_request {
  std::string segment;  // a file path, or "shard_NN/seg_….wab" under the data dir's wab/
  std::uint64_t from = 1;  // first record index shown
  std::uint64_t count = UINT64_MAX;
  dump_format format = dump_format::text;
  // cluster.node_id of the daemon whose WAB this is (record ids carry it);
  // 0: the one data_dir/cluster_node_id names, if any
  std::uint16_t node = 0;
};
/// Prints a segment's records with index, offset, ingest time and record id;
/// 1 when it holds damage, 2 when the file cannot be opened.
int dump_segment(const std::string& data_dir, dump_request req);

/// The files in the data dir's quarantine/, each checked as a segment.
int quarantine_list(const std::string& data_dir, bool json);

/// At most `max` bytes of `p`, with every byte outside printable ASCII as '.'.
std::string printable(const byte_buffer& p, std::size_t max = 60);

/// Lists dead letters: where each record came from, why it was refused, its payload.
int dead_letter_list(const std::string& letters_dir, bool json);

/// Pushes every dead letter's payload back through the daemon (Durable; it gets
/// a new record id) and deletes each dead-letter file once all of its records
/// were acked. Without `act` it only says what it would do.
int dead_letter_requeue(const options& o, const std::string& letters_dir, bool act);

/// Deletes the dead-letter files `names` (all of them when empty) for good.
/// Without `act` it only says what it would delete. 2 when a name is not one.
int dead_letter_drop(const std::string& letters_dir, const std::vector<std::string>& names, bool act, bool json);

/// weir-ctl drain [--timeout S]: retires the daemon (tools/ctl_drain.cpp).
int drain_command(const options& o, const std::vector<std::string>& args);

extern const char* const push_help;
extern const char* const top_help;
extern const char* const tail_help;
int tail_command(const options& o, const std::vector<std::string>& args);
int top_command(const options& o, const std::vector<std::string>& args);
int push_command(const options& o, const std::vector<std::string>& args);

}  // namespace weir::ctl
