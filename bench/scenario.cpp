#include "bench/scenario.hpp"

#include <stdexcept>

#include <yaml-cpp/yaml.h>

namespace weir::bench {

namespace {

std::runtime_error bad(const std::string& path, const std::string& key, const std::string& why) {
  return std::runtime_error(path + ": " + key + ": " + why);
}

std::vector<std::uint32_t> one_or_many(const YAML::Node& n, std::uint32_t fallback) {
  if (!n) return {fallback};
  if (n.IsSequence()) return n.as<std::vector<std::uint32_t>>();
  return {n.as<std::uint32_t>()};
}

}  // namespace

scenario load_scenario(const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
  scenario s;
  try {
    s.name = root["name"].as<std::string>();
    s.description = root["description"] ? root["description"].as<std::string>() : "";
    if (auto d = root["daemon"])
      for (auto kv : d) s.daemon_settings[kv.first.as<std::string>()] = kv.second.as<std::string>();
    const auto load = root["load"];
    if (!load) throw bad(path, "load", "missing");
    if (load["producers"]) s.load.producers = load["producers"].as<int>();
    if (load["durability"]) {
      const auto d = load["durability"].as<std::string>();
      if (d != "durable" && d != "buffered" && d != "replicated")
        throw bad(path, "load.durability", "expected durable, buffered or replicated");
      s.load.durable = d != "buffered";
      s.load.replicated = d == "replicated";
    }
    s.payload_sizes = one_or_many(load["payload_bytes"], 64);
    s.batches = one_or_many(load["batch"], 0);
    if (load["pipeline"]) s.load.pipeline = load["pipeline"].as<std::uint32_t>();
    if (load["seconds"]) s.load.seconds = load["seconds"].as<double>();
    if (load["warmup_seconds"]) s.load.warmup_seconds = load["warmup_seconds"].as<double>();
    if (s.load.warmup_seconds < 0) throw bad(path, "load.warmup_seconds", "expected 0 or more");
    const auto b = root["baseline"] ? root["baseline"].as<std::string>() : "fsync";
    if (b == "fsync") s.baseline = baseline_kind::fsync;
    else if (b == "overwrite_fsync") s.baseline = baseline_kind::overwrite_fsync;
    else if (b == "socket") s.baseline = baseline_kind::socket;
    else if (b == "minimal_server") s.baseline = baseline_kind::minimal_server;
    else if (b == "sqlite_insert") s.baseline = baseline_kind::sqlite_insert;
    else if (b == "sqlite_bulk") s.baseline = baseline_kind::sqlite_bulk;
    else if (b == "postgres_insert") s.baseline = baseline_kind::postgres_insert;
    else if (b == "postgres_copy") s.baseline = baseline_kind::postgres_copy;
    else if (b == "mysql_load") s.baseline = baseline_kind::mysql_load;
    else if (b == "http_post") s.baseline = baseline_kind::http_post;
    else if (b == "durable_tier") s.baseline = baseline_kind::durable_tier;
    else if (b == "none") s.baseline = baseline_kind::none;
    else throw bad(path, "baseline",
                   "expected fsync, overwrite_fsync, socket, minimal_server, sqlite_insert, sqlite_bulk, "
                   "postgres_insert, postgres_copy, mysql_load, http_post, durable_tier or none");
    if (auto c = root["cluster"]) {
      s.cluster_nodes = c["nodes"] ? c["nodes"].as<int>() : 3;
      s.cluster_replicas = c["replicas"] ? c["replicas"].as<int>() : 2;
    }
    const auto m = root["measure"] ? root["measure"].as<std::string>() : "ingest";
    if (m == "ingest") s.measure = measure_kind::ingest;
    else if (m == "delivery") s.measure = measure_kind::delivery;
    else if (m == "recovery") s.measure = measure_kind::recovery;
    else throw bad(path, "measure", "expected ingest, delivery or recovery");
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
  if (s.cluster_nodes != 0 && (s.cluster_nodes < 2 || s.cluster_nodes > 9))
    throw bad(path, "cluster.nodes", "expected 2 to 9");
  if (s.cluster_nodes != 0 && (s.cluster_replicas < 1 || s.cluster_replicas > s.cluster_nodes))
    throw bad(path, "cluster.replicas", "expected 1 to cluster.nodes");
  if (s.cluster_nodes != 0 && s.measure != measure_kind::ingest)
    throw bad(path, "cluster", "a cluster scenario measures ingest");
  if ((s.load.replicated || s.baseline == baseline_kind::durable_tier) && s.cluster_nodes == 0)
    throw bad(path, "cluster", "replicated load and the durable_tier baseline need a cluster");
  if (s.load.producers < 1 || s.load.producers > 1024) throw bad(path, "load.producers", "expected 1 to 1024");
  if (s.load.pipeline < 1) throw bad(path, "load.pipeline", "expected at least 1");
  for (auto p : s.payload_sizes)
    if (p < 1) throw bad(path, "load.payload_bytes", "expected at least 1");
  for (auto b : s.batches)
    if (b > 2048) throw bad(path, "load.batch", "expected 0 to 2048");
  s.load.payload_bytes = s.payload_sizes.front();
  s.load.batch = s.batches.front();
  return s;
}

const char* name_of(baseline_kind b) {
  switch (b) {
    case baseline_kind::fsync: return "fsync";
    case baseline_kind::overwrite_fsync: return "overwrite_fsync";
    case baseline_kind::minimal_server: return "minimal_server";
    case baseline_kind::socket: return "socket";
    case baseline_kind::sqlite_insert: return "sqlite_insert";
    case baseline_kind::sqlite_bulk: return "sqlite_bulk";
    case baseline_kind::postgres_insert: return "postgres_insert";
    case baseline_kind::postgres_copy: return "postgres_copy";
    case baseline_kind::mysql_load: return "mysql_load";
    case baseline_kind::http_post: return "http_post";
    case baseline_kind::durable_tier: return "durable_tier";
    case baseline_kind::none: return "none";
  }
  return "?";
}

const char* name_of(measure_kind m) {
  switch (m) {
    case measure_kind::ingest: return "ingest";
    case measure_kind::delivery: return "delivery";
    case measure_kind::recovery: return "recovery";
  }
  return "?";
}

bool scenario::sinks_to_postgres() const {
  auto it = daemon_settings.find("sink.type");
  return it != daemon_settings.end() && it->second == "postgres";
}

bool scenario::sinks_to_mysql() const {
  auto it = daemon_settings.find("sink.type");
  return it != daemon_settings.end() && it->second == "mysql";
}

bool scenario::sinks_to_http() const {
  auto it = daemon_settings.find("sink.type");
  return it != daemon_settings.end() && it->second == "http";
}

int scenario::sink_concurrency() const {
  auto it = daemon_settings.find("sink.concurrency");
  return it == daemon_settings.end() ? 4 : std::stoi(it->second);
}

}  // namespace weir::bench
