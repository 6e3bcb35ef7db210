#pragma once
// The soak's records name themselves: producer, sequence, tier and push kind
// are in the payload, so a row read back from the sink says where it came
// from without any side table, and a damaged payload is recognisable.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace weir::soak {

enum class tier : std::uint8_t { durable, buffered };
enum class push_kind : std::uint8_t { push, tracked, batch };

const char* name_of(tier t);
const char* name_of(push_kind k);

struct record_origin {
  std::uint32_t producer = 0;
  std::uint64_t seq = 0;
  tier durability = tier::durable;
  push_kind kind = push_kind::push;
};

/// "weir-soak p=3 s=1207 t=durable k=batch |" followed by a filler whose
/// length and letter follow from the sequence (sizes vary, so segments fill
/// at uneven record boundaries).
std::string make_payload(const record_origin& o);

/// The origin of a payload made by make_payload; nullopt for anything else,
/// including a payload whose filler or fields do not match exactly.
std::optional<record_origin> parse_payload(std::string_view payload);

}  // namespace weir::soak
