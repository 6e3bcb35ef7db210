#pragma once
// The HTTP yardstick: what the endpoint the scenario's sink POSTs to answers
// with no daemon in between, measured in the same run against the same
// endpoint (`weir-bench run ... --http URL`).
#include <string>

#include "bench/baselines.hpp"

namespace weir::bench {

/// `connections` keep-alive connections to `url` (http:// only), each
/// POSTing a body of `payload_bytes` and waiting for the answer before the
/// next, as wrk does; answers per second, all connections together.
/// Throws when the URL is not http:// or the endpoint does not answer 2xx.
baseline_result measure_http_post(const std::string& url, int connections, std::size_t payload_bytes, double seconds);

}  // namespace weir::bench
