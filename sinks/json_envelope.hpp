#pragma once
// One record as one line of JSON (the HTTP sink's ndjson format): its
// identity and coordinate, and its payload in the most readable form that
// cannot break the line or the JSON:
//
//   {"id":"…","shard":0,"seq":3,"idx":7,"segment":"shard_00/seg_00000003.wab","ts":…,
//    "encoding":"json","payload":{"a":1}}
//
// encoding "json": the payload is a JSON text, embedded as it is (line breaks
// between its tokens become spaces); "text": valid UTF-8 that is not JSON, as
// a JSON string; "base64": anything else, base64 in a JSON string. So no
// payload is ever refused for its bytes.
#include <string>

#include "wire/sink_record.hpp"

namespace weir {

/// The envelope, without a line end.
std::string json_envelope(const sink_record& r);

}  // namespace weir
