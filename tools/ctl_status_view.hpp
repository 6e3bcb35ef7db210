#pragma once
// The daemon's status document (/api/v1/status) as text for a person: the
// same fields the dashboard shows, in human units. `weir-ctl status` prints
// it once, `weir-ctl top` redraws it in place.
#include <string>

#include <nlohmann/json.hpp>

namespace weir::ctl {

/// 8589934592 -> "8.0 GiB".
std::string human_bytes(double bytes);
/// 76 -> "1m 16s"; 0.4 -> "0.4s".
std::string human_duration(double seconds);
/// 12345.6 -> "12.3k".
std::string human_count(double n);

/// Every line of the view, each ending in "\n".
std::string render_status(const nlohmann::json& status);
/// The cluster section of a status document, for `weir-ctl cluster status`.
std::string render_cluster(const nlohmann::json& status);

}  // namespace weir::ctl
