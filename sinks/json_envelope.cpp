#include "sinks/json_envelope.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "sinks/base64.hpp"

namespace weir {

namespace {

/// The payload as JSON, and the name of the form it took.
std::pair<std::string, const char*> embedded_payload(const byte_buffer& payload) {
  const std::string_view bytes(reinterpret_cast<const char*>(payload.data()), payload.size());
  // nlohmann's parser skips a leading byte order mark, which may not appear
  // inside a JSON line: such a payload goes as text, its bytes kept.
  const bool bom = bytes.substr(0, 3) == "\xEF\xBB\xBF";
  if (!bom && nlohmann::json::accept(bytes)) {
    // A JSON text holds a raw line break only between tokens (inside a string
    // it must be escaped), where a space means the same.
    std::string text(bytes);
    std::replace_if(text.begin(), text.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
    return {std::move(text), "json"};
  }
  try {
    return {nlohmann::json(std::string(bytes)).dump(), "text"};  // throws on invalid UTF-8
  } catch (const nlohmann::json::type_error&) {
    return {nlohmann::json(base64_encode(payload)).dump(), "base64"};
  }
}

}  // namespace

std::string json_envelope(const sink_record& r) {
  auto [payload, encoding] = embedded_payload(r.payload);
  std::string line = nlohmann::ordered_json{{"id", r.id},
                                    {"shard", r.shard},
                                    {"seq", r.sequence},
                                    {"idx", r.index},
                                    {"segment", r.segment},
                                    {"ts", r.ts_ns},
                                    {"encoding", encoding}}
                         .dump();
  line.pop_back();  // the closing brace: the payload goes last, as it is
  line += ",\"payload\":" + payload + "}";
  return line;
}

}  // namespace weir
