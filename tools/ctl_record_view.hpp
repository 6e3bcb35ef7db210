#pragma once
// How weir-ctl shows one WAB record (dump, tail): its coordinate — the
// segment string the daemon gives it, index, offset, ingest time — the
// record id the sink receives, and its payload.
#include <cstdint>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "wab/segment_format.hpp"
#include "wab/segment_reader.hpp"

namespace weir::ctl {

/// "[node_<id>/]shard_NN/seg_….wab", from the segment's own header (a copy
/// in quarantine or a backup has the ids it had in place). A replica's file
/// carries its origin in its path; a node's own WAB needs `node` in a cluster.
std::string coordinate_segment(const std::filesystem::path& file, const wab::segment_header& header,
                               std::uint16_t node);

/// segment, index, offset, ingest_ts_ns, record_id, payload_bytes, payload_hex.
nlohmann::json record_json(const std::string& segment, const wab::stored_record& r);

/// One line (and the payload in hex lines below it with `hex`) on stdout.
void print_record(const std::string& segment, const wab::stored_record& r, bool hex);

}  // namespace weir::ctl
