#pragma once
// The dashboard served at `/`: one self-contained HTML page (inline CSS and
// JavaScript, no external assets) that polls /api/v1/status every second and
// draws the pipeline live.
#include <string_view>

namespace weir {

std::string_view dashboard_page();

}  // namespace weir
