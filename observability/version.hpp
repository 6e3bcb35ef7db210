#pragma once
#include <string_view>

namespace weir {
inline constexpr std::string_view version_string = "0.1.0";
}
