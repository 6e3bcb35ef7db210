#pragma once
// weir-ctl commands beyond the wire protocol: reading the admin HTTP server
// and reading the data directory directly (the daemon may be down).
#include <string>
#include <vector>

namespace weir::ctl {

/// GET http://<admin>/<path>; prints the body. Exit status: 0, or 1 when unreachable or not 200.
int admin_get(const std::string& admin, const std::string& path, bool summarize_status, bool json);

/// Lists each shard's segments (records, bytes) and its confirm cursor.
int wab_list(const std::string& data_dir, bool json);

/// Lists dead letters: where each record came from, why it was refused, its payload.
int dead_letter_list(const std::string& data_dir, bool json);

/// Pushes every dead letter's payload back through the daemon (Durable; it gets
/// a new record id) and deletes each dead-letter file once all of its records
/// were acked. Without `act` it only says what it would do.
int dead_letter_requeue(const std::string& data_dir, const std::string& socket, bool act);

}  // namespace weir::ctl
