#pragma once
// What the simulated producers send: pushes, tracked pushes and batches,
// Durable or Buffered, with unique payloads whose length the seed picks. Each
// record is entered in the ledger before the request leaves.
#include <cstddef>

#include "messages/ingest_protocol.hpp"
#include "sim/sim_rng.hpp"
#include "sim/sim_world.hpp"

namespace weir::sim {

struct request_shape {
  ingest_kind kind = ingest_kind::push;
  bool durable = true;
  std::size_t records = 1;
  bool may_poison = true;  // the final liveness probes are never refused on purpose
};

request_shape random_shape(sim_rng& rng);

/// The next request of `producer`, registered in the ledger.
ingest_request make_request(sim_world& w, sim_rng& rng, std::size_t producer, const request_shape& shape);

}  // namespace weir::sim
