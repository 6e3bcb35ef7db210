#pragma once
// A value inside a JSON text, found by a JSON pointer (RFC 6901) and taken
// as the text spells it: a number keeps every digit it was written with
// (no trip through a double), an object keeps its keys' order. Reads the
// text in place, without building a document; the nesting it skips is
// walked without recursion, so no payload can exhaust the stack.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace weir {

/// A JSON pointer split into its reference tokens, ~1 and ~0 undone.
std::vector<std::string> json_pointer_tokens(std::string_view pointer);

/// The value at `tokens` in `json`, which must be a valid JSON text
/// (nlohmann::json::accept): its exact span, or nullopt when there is none.
/// Of an object's repeated keys the last counts, as JSON parsers keep it.
std::optional<std::string_view> json_value_at(std::string_view json, const std::vector<std::string>& tokens);

}  // namespace weir
