#include "bench/scenario.hpp"

#include <algorithm>
#include <initializer_list>
#include <utility>
#include <stdexcept>

#include <yaml-cpp/yaml.h>

namespace weir::bench {

namespace {

std::runtime_error bad(const std::string& path, const std::string& key, const std::string& why) {
  return std::runtime_error(path + ": " + key + ": " + why);
}

/// Reads `parent[key]` into `out` when present; a value of the wrong kind
/// is refused naming the key (`dotted`) and what it should be.
template <typename T>
void read(const std::string& path, const YAML::Node& parent, const char* key, const std::string& dotted, T& out,
          const char* expected) {
  const auto n = parent[key];
  if (!n) return;
  try {
    out = n.as<T>();
  } catch (const YAML::Exception&) {
    throw bad(path, dotted, std::string("expected ") + expected + ", got " + YAML::Dump(n));
  }
}

std::vector<std::uint32_t> one_or_many(const std::string& path, const YAML::Node& parent, const char* key,
                                       std::uint32_t fallback) {
  const auto n = parent[key];
  if (!n) return {fallback};
  try {
    if (n.IsSequence() && n.size() > 0) return n.as<std::vector<std::uint32_t>>();
    if (n.IsScalar()) return {n.as<std::uint32_t>()};
  } catch (const YAML::Exception&) {
  }
  throw bad(path, std::string("load.") + key, "expected a whole number or a list of them, got " + YAML::Dump(n));
}

/// Refuses a key that is not one of `known` (a typo would silently leave a default).
void only_known(const std::string& path, const YAML::Node& map, const std::string& prefix,
                std::initializer_list<const char*> known) {
  for (auto kv : map) {
    const auto key = kv.first.as<std::string>();
    if (std::find_if(known.begin(), known.end(), [&](const char* k) { return key == k; }) != known.end()) continue;
    std::string list;
    for (const char* k : known) list += (list.empty() ? "" : ", ") + std::string(k);
    throw bad(path, prefix + key, "not a key here (expected one of " + list + ")");
  }
}

/// The enum value whose name is `value`, or a refusal listing the names.
template <typename E, std::size_t N>
E one_of(const std::string& path, const std::string& key, const std::string& value, const std::pair<const char*, E> (&names)[N]) {
  std::string list;
  for (const auto& [name, kind] : names) {
    if (value == name) return kind;
    list += (list.empty() ? "" : ", ") + std::string(name);
  }
  throw bad(path, key, "'" + value + "' is not one of " + list);
}

constexpr std::pair<const char*, baseline_kind> baseline_names[] = {
    {"fsync", baseline_kind::fsync},
    {"overwrite_fsync", baseline_kind::overwrite_fsync},
    {"socket", baseline_kind::socket},
    {"minimal_server", baseline_kind::minimal_server},
    {"sqlite_insert", baseline_kind::sqlite_insert},
    {"sqlite_bulk", baseline_kind::sqlite_bulk},
    {"postgres_insert", baseline_kind::postgres_insert},
    {"postgres_bulk", baseline_kind::postgres_bulk},
    {"postgres_copy", baseline_kind::postgres_copy},
    {"postgres_copy_table", baseline_kind::postgres_copy_table},
    {"clickhouse_insert", baseline_kind::clickhouse_insert},
    {"mysql_load", baseline_kind::mysql_load},
    {"http_post", baseline_kind::http_post},
    {"fsync_post", baseline_kind::fsync_post},
    {"redis_lpush", baseline_kind::redis_lpush},
    {"no_outage", baseline_kind::no_outage},
    {"durable_tier", baseline_kind::durable_tier},
    {"none", baseline_kind::none}};

constexpr std::pair<const char*, measure_kind> measure_names[] = {
    {"ingest", measure_kind::ingest},       {"delivery", measure_kind::delivery}, {"backlog", measure_kind::backlog},
    {"recovery", measure_kind::recovery},
    {"sustained", measure_kind::sustained}, {"outage", measure_kind::outage},     {"latency", measure_kind::latency},
    {"startup", measure_kind::startup}};

}  // namespace

scenario load_scenario(const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
  if (!root.IsMap()) throw std::runtime_error(path + ": expected a scenario (a YAML map with name and load)");
  only_known(path, root, "",
             {"name", "description", "daemon", "load", "cluster", "measure", "baseline", "endpoint", "outage_seconds",
              "sample_seconds"});
  scenario s;
  read(path, root, "name", "name", s.name, "a name");
  if (s.name.empty()) throw bad(path, "name", "missing");
  read(path, root, "description", "description", s.description, "a line of text");
  if (auto d = root["daemon"]) {
    if (!d.IsMap()) throw bad(path, "daemon", "expected a map of config keys to values");
    for (auto kv : d) {
      if (!kv.second.IsScalar()) throw bad(path, "daemon." + kv.first.as<std::string>(), "expected a single value");
      s.daemon_settings[kv.first.as<std::string>()] = kv.second.as<std::string>();
    }
    if (auto list = s.daemon_settings.find("sinks"); list != s.daemon_settings.end()) {
      YAML::Node sinks;
      try {
        sinks = YAML::Load(list->second);
      } catch (const YAML::Exception& e) {
        throw bad(path, "daemon.sinks", std::string("not YAML flow text: ") + e.what());
      }
      if (!sinks.IsSequence() || sinks.size() == 0)
        throw bad(path, "daemon.sinks", "expected a list of sinks as YAML flow text (\"[{name: a, ...}, ...]\")");
    }
  }
  const auto load = root["load"];
  if (!load || !load.IsMap()) throw bad(path, "load", "missing (producers, durability, payload_bytes, ...)");
  only_known(path, load, "load.",
             {"producers", "durability", "payload_bytes", "batch", "pipeline", "seconds", "warmup_seconds", "rate",
              "backlog_mib", "payload"});
  read(path, load, "producers", "load.producers", s.load.producers, "a whole number");
  std::string durability = "durable";
  read(path, load, "durability", "load.durability", durability, "a tier");
  if (durability != "durable" && durability != "buffered" && durability != "replicated")
    throw bad(path, "load.durability", "'" + durability + "' is not one of durable, buffered, replicated");
  s.load.durable = durability != "buffered";
  s.load.replicated = durability == "replicated";
  s.payload_sizes = one_or_many(path, load, "payload_bytes", 64);
  s.batches = one_or_many(path, load, "batch", 0);
  s.backlogs_mib = one_or_many(path, load, "backlog_mib", 0);
  read(path, load, "pipeline", "load.pipeline", s.load.pipeline, "a whole number");
  read(path, load, "seconds", "load.seconds", s.load.seconds, "a number of seconds");
  read(path, load, "warmup_seconds", "load.warmup_seconds", s.load.warmup_seconds, "a number of seconds");
  read(path, load, "rate", "load.rate", s.load.rate, "records per second");
  std::string payload = "bytes";
  read(path, load, "payload", "load.payload", payload, "bytes or json");
  if (payload != "bytes" && payload != "json")
    throw bad(path, "load.payload", "'" + payload + "' is not one of bytes, json");
  s.load.json = payload == "json";
  if (auto e = root["endpoint"]) {
    if (!e.IsMap()) throw bad(path, "endpoint", "expected a map (delay_ms, tcp_nodelay)");
    only_known(path, e, "endpoint.", {"delay_ms", "tcp_nodelay"});
    s.own_endpoint = true;
    read(path, e, "delay_ms", "endpoint.delay_ms", s.endpoint_delay_ms, "milliseconds");
    read(path, e, "tcp_nodelay", "endpoint.tcp_nodelay", s.endpoint_no_delay, "true or false");
  }
  read(path, root, "outage_seconds", "outage_seconds", s.outage_seconds, "a number of seconds");
  read(path, root, "sample_seconds", "sample_seconds", s.sample_seconds, "a number of seconds");
  std::string baseline = "fsync", measure = "ingest";
  read(path, root, "baseline", "baseline", baseline, "a baseline name");
  read(path, root, "measure", "measure", measure, "a measure name");
  s.baseline = one_of(path, "baseline", baseline, baseline_names);
  s.measure = one_of(path, "measure", measure, measure_names);
  if (auto c = root["cluster"]) {
    if (!c.IsMap()) throw bad(path, "cluster", "expected a map (nodes, replicas)");
    only_known(path, c, "cluster.", {"nodes", "replicas"});
    s.cluster_nodes = 3;
    read(path, c, "nodes", "cluster.nodes", s.cluster_nodes, "a whole number");
    read(path, c, "replicas", "cluster.replicas", s.cluster_replicas, "a whole number");
  }
  if (s.load.warmup_seconds < 0) throw bad(path, "load.warmup_seconds", "expected 0 or more");
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
  if (s.load.rate < 0) throw bad(path, "load.rate", "expected 0 (unpaced) or more records per second");
  if (s.load.seconds <= 0) throw bad(path, "load.seconds", "expected more than 0");
  for (auto m : s.backlogs_mib)
    if (m > 65536) throw bad(path, "load.backlog_mib", "expected 0 to 65536");
  if (s.backlogs_mib != std::vector<std::uint32_t>{0} && s.measure != measure_kind::recovery)
    throw bad(path, "load.backlog_mib",
              "only a recovery scenario sizes its backlog (measure backlog loads for load.seconds)");
  if (s.endpoint_delay_ms < 0 || s.endpoint_delay_ms > 10000)
    throw bad(path, "endpoint.delay_ms", "expected 0 to 10000");
  if (s.outage_seconds <= 0) throw bad(path, "outage_seconds", "expected more than 0");
  if (s.sample_seconds < 0.1) throw bad(path, "sample_seconds", "expected 0.1 or more");
  const bool needs_endpoint = s.measure == measure_kind::outage || s.measure == measure_kind::latency;
  if (needs_endpoint) s.own_endpoint = true;
  if (s.own_endpoint && !s.sinks_to_http() && !s.lists_http_sink())
    throw bad(path, "daemon.sink.type", "an endpoint (and measure outage or latency) needs sink.type http");
  if (s.measure == measure_kind::latency && s.load.rate <= 0)
    throw bad(path, "load.rate", "measure latency needs a rate (records per second)");
  if (s.measure == measure_kind::latency) {
    // The endpoint times one record per POST.
    const auto format = s.daemon_settings.find("sink.http.format");
    if (format != s.daemon_settings.end() && format->second != "raw")
      throw bad(path, "daemon.sink.http.format", "measure latency needs raw (one record per POST)");
    if (s.batches != std::vector<std::uint32_t>{0}) throw bad(path, "load.batch", "measure latency sends single pushes");
  }
  if (s.load.rate > 0 && s.load.pipeline != 1)
    throw bad(path, "load.pipeline", "a paced load (load.rate) keeps one frame in flight");
  if (s.baseline == baseline_kind::no_outage && s.measure != measure_kind::outage)
    throw bad(path, "baseline", "no_outage is the baseline of measure outage");
  if (s.baseline == baseline_kind::fsync_post && !s.sinks_to_http())
    throw bad(path, "baseline", "fsync_post needs sink.type http");
  s.load.stamp = s.measure == measure_kind::latency;
  s.load.payload_bytes = s.payload_sizes.front();
  s.load.batch = s.batches.front();
  return s;
}

const char* name_of(baseline_kind b) {
  for (const auto& [name, kind] : baseline_names)
    if (kind == b) return name;
  return "?";
}

const char* name_of(measure_kind m) {
  for (const auto& [name, kind] : measure_names)
    if (kind == m) return name;
  return "?";
}

bool scenario::sinks_to_postgres() const {
  auto it = daemon_settings.find("sink.type");
  return it != daemon_settings.end() && it->second == "postgres";
}

bool scenario::sinks_to_clickhouse() const {
  auto it = daemon_settings.find("sink.type");
  return it != daemon_settings.end() && it->second == "clickhouse";
}

bool scenario::sinks_to_mysql() const {
  auto it = daemon_settings.find("sink.type");
  return it != daemon_settings.end() && it->second == "mysql";
}

bool scenario::sinks_to_http() const {
  auto it = daemon_settings.find("sink.type");
  return it != daemon_settings.end() && it->second == "http";
}

bool scenario::baseline_needs_postgres() const {
  return baseline == baseline_kind::postgres_insert || baseline == baseline_kind::postgres_bulk ||
         baseline == baseline_kind::postgres_copy || baseline == baseline_kind::postgres_copy_table;
}

std::string scenario::sink_table() const {
  auto type = daemon_settings.find("sink.type");
  if (type == daemon_settings.end()) return "weir_records";
  auto table = daemon_settings.find("sink." + type->second + ".table");
  return table == daemon_settings.end() ? "weir_records" : table->second;
}

std::size_t scenario::sink_count() const {
  auto it = daemon_settings.find("sinks");
  if (it == daemon_settings.end()) return 1;
  const YAML::Node list = YAML::Load(it->second);
  return list.IsSequence() && list.size() > 0 ? list.size() : 1;
}

bool scenario::lists_http_sink() const {
  auto it = daemon_settings.find("sinks");
  if (it == daemon_settings.end()) return false;
  for (const auto& sink : YAML::Load(it->second))
    if (sink["type"] && sink["type"].as<std::string>() == "http") return true;
  return false;
}

int scenario::sink_concurrency() const {
  auto it = daemon_settings.find("sink.concurrency");
  return it == daemon_settings.end() ? 4 : std::stoi(it->second);
}

}  // namespace weir::bench
