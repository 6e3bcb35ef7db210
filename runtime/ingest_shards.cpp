#include "runtime/ingest_shards.hpp"

#include <caf/actor_system.hpp>
#include <caf/scoped_actor.hpp>

#include "actors/fsync_group.hpp"
#include "actors/shard_writer.hpp"
#include "messages/atoms.hpp"
#include "runtime/log.hpp"
#include "runtime/wab/segment_format.hpp"

namespace weir {

ingest_shards::ingest_shards(caf::actor_system& sys, const config& cfg, const wab_startup& recovered,
                             std::shared_ptr<wab::file_io> io, std::shared_ptr<wab::wab_usage> usage)
    : sys_(sys) {
  for (std::int64_t i = 0; i < cfg.ingest.shards; ++i) {
    const auto shard = static_cast<std::uint16_t>(i);
    fsync_group_settings fs;
    fs.policy = cfg.group_commit.policy;
    fs.max_delay_us = static_cast<std::uint32_t>(cfg.group_commit.max_delay_us);
    fs.max_records = static_cast<std::uint32_t>(cfg.group_commit.max_records);
    fs.shard = shard;
    shard_writer_settings ws;
    ws.shard = shard;
    ws.shard_dir = cfg.data_dir + "/wab/" + wab::shard_dir_name(shard);
    auto seq = recovered.next_sequence.find(shard);
    ws.first_sequence = seq == recovered.next_sequence.end() ? 1 : seq->second;
    ws.segment_max_bytes = static_cast<std::uint64_t>(cfg.wab.segment_max_bytes);
    ws.max_group_records = static_cast<std::uint32_t>(cfg.group_commit.max_records);
    ws.io = io;
    ws.usage = usage;
    writers_.push_back(spawn_shard_writer(sys, std::move(ws), spawn_fsync_group(sys, fs)));
  }
}

caf::actor ingest_shards::writer_for_new_connection() {
  return writers_[next_.fetch_add(1, std::memory_order_relaxed) % writers_.size()];
}

bool ingest_shards::shut_down(std::chrono::milliseconds timeout) {
  caf::scoped_actor self{sys_};
  bool all = true;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (auto& w : writers_) self->send(w, shutdown_atom::value);
  for (std::size_t i = 0; i < writers_.size(); ++i) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    self->receive([](done_atom) {}, caf::after(std::max(left, std::chrono::milliseconds(0))) >> [&] { all = false; });
    if (!all) break;
  }
  for (auto& w : writers_) self->send_exit(w, caf::exit_reason::user_shutdown);
  return all;
}

}  // namespace weir
