#include "sim/workload.hpp"

#include <string>

namespace weir::sim {

request_shape random_shape(sim_rng& rng) {
  request_shape s;
  const auto k = rng.below(100);
  s.kind = k < 40 ? ingest_kind::push : k < 70 ? ingest_kind::tracked : ingest_kind::batch;
  s.durable = rng.percent(60);
  s.records = s.kind == ingest_kind::batch ? static_cast<std::size_t>(rng.between(1, 8)) : 1;
  return s;
}

ingest_request make_request(sim_world& w, sim_rng& rng, std::size_t producer, const request_shape& shape) {
  auto& p = w.producers[producer];
  ingest_request req;
  req.tag = p.next_tag++;
  req.kind = shape.kind;
  req.durable = shape.durable;
  request_info info{producer, req.tag, shape.kind, shape.durable, {}, w.life, false};
  for (std::size_t k = 0; k < shape.records; ++k) {
    record_info r;
    r.producer = producer;
    r.seq = p.next_seq++;
    r.shard = p.shard;
    r.durable = shape.durable;
    r.poison = shape.may_poison && rng.percent(w.cfg.poison_percent);
    r.tag = req.tag;
    r.payload = (r.poison ? "!p" : "p") + std::to_string(producer) + "/s" + std::to_string(r.seq) + "/";
    const std::size_t filler = static_cast<std::size_t>(rng.below(w.cfg.max_payload));
    for (std::size_t i = 0; i < filler; ++i) r.payload.push_back(static_cast<char>('a' + rng.below(26)));
    if (shape.kind == ingest_kind::batch) {
      req.bounds.push_back(static_cast<std::uint32_t>(req.body.size()));
      req.bounds.push_back(static_cast<std::uint32_t>(r.payload.size()));
    }
    req.body.insert(req.body.end(), r.payload.begin(), r.payload.end());
    info.records.push_back(w.book.add_record(std::move(r)));
  }
  w.book.add_request(std::move(info));
  return req;
}

}  // namespace weir::sim
