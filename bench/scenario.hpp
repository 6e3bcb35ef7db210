#pragma once
// A benchmark scenario, read from bench/scenarios/<name>.yaml:
//
//   name: durable-64
//   description: 64 concurrent producers, Durable, single pushes
//   daemon:                      # settings for the daemon weir-bench starts
//     ingest.shards: 2           # (any config key; ignored with --socket)
//   load:
//     producers: 64              # connections, one thread each
//     durability: durable        # durable | buffered | replicated (needs cluster)
//     payload_bytes: [64]        # one run per size
//     batch: [0]                 # records per PushBatch; 0 = single pushes; one run per value
//     pipeline: 1                # frames in flight per connection
//     payload: bytes             # bytes | json: {"user": …, "kind": …, "at": …, "pad": …}
//                                #   padded to payload_bytes, for a table of yours
//     seconds: 5
//     warmup_seconds: 1          # load before measuring (ingest; the minimal server too),
//                                #   so a round measures the steady state, not a fresh
//                                #   daemon preparing its spare segments
//   cluster:                     # optional: that many daemons on loopback ports, one
//     nodes: 3                   #   cluster; the load goes to the first
//     replicas: 2                #   (cluster.replicas)
//   measure: ingest              # ingest: acked records/s
//                                # delivery: records/s until the sink holds every acked record
//                                # backlog: the load while no sink can take it, then a
//                                #   restart with the scenario's sink: records/s from that
//                                #   exec until the sink holds every acked record
//                                # recovery: the load builds a backlog the sink cannot take
//                                #   (load.backlog_mib, else for load.seconds), kill -9, then
//                                #   the time from exec to the socket accepting again
//                                # sustained: ingest for load.seconds, sampling every
//                                #   sample_seconds: throughput, mean fdatasync time, RSS
//                                # outage: ingest while the sink answers 503 for
//                                #   outage_seconds, then the catch-up once it answers again
//                                # latency: load.rate stamped records/s, push to arrival at
//                                #   the bench's own endpoint
//                                # startup: exec to accepting on an empty data dir, then the
//                                #   resident memory after load.seconds idle
//   endpoint:                    # optional: the sink POSTs to weir-bench's own endpoint
//     delay_ms: 1                #   answering each request after this long (outage and
//                                #   latency always use it)
//     tcp_nodelay: true          #   false: Nagle's algorithm left on (default: on, as nginx)
//   outage_seconds: 10           # outage: how long the endpoint refuses, from the first push
//   sample_seconds: 5            # sustained: the sampling interval
//   baseline: fsync              # the physical reference, measured in the same run,
//                                #   interleaved with the scenario:
//                                #   fsync: append + fdatasync of a frame's records
//                                #   overwrite_fsync: the same over a preallocated file
//                                #   socket: a Unix-socket round trip
//                                #   minimal_server: the same load against bench/minimal_server
//                                #   sqlite_insert: one INSERT per transaction
//                                #   sqlite_bulk: 1000-row transactions, sequential key
//                                #   postgres_insert: load.producers clients, one INSERT per
//                                #     transaction (needs --postgres)
//                                #   postgres_bulk: 1000-row transactions of INSERTs, one
//                                #     client (needs --postgres)
//                                #   postgres_copy: COPY of 10,000 rows at a time (needs --postgres)
//                                #   postgres_copy_table: COPY of 10,000 rows at a time into a
//                                #     table like bench_events, the json payload's values
//                                #     typed, random ids (needs --postgres)
//                                #   clickhouse_insert: INSERT … FORMAT TabSeparated of 10,000
//                                #     rows at a time over HTTP (needs --clickhouse)
//                                #   mysql_load: LOAD DATA LOCAL INFILE of 10,000 rows at a
//                                #     time (needs --mysql)
//                                #   http_post: sink.concurrency keep-alive connections, each
//                                #     POSTing and waiting for the answer, as wrk does (needs
//                                #     --http, or an endpoint)
//                                #   fsync_post: one fdatasync plus one POST to the same
//                                #     endpoint, the least a delivered record waits (latency)
//                                #   redis_lpush: a peer: redis-server with appendfsync
//                                #     always, load.producers clients with load.pipeline
//                                #     LPUSHes in flight (needs redis-server)
//                                #   no_outage: the same scenario with a sink that never refuses
//                                #   durable_tier: the same load at Durable on the same
//                                #     kind of cluster (what Replicated costs over Durable)
//                                #   none: no reference (recovery, startup)
//
// load also takes rate (records/s over all producers; 0: unpaced) and
// backlog_mib (recovery: [100, 512, 2048], one run per size).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace weir::bench {

enum class baseline_kind {
  fsync,
  overwrite_fsync,
  socket,
  minimal_server,
  sqlite_insert,
  sqlite_bulk,
  postgres_insert,
  postgres_copy,
  mysql_load,
  http_post,
  fsync_post,
  postgres_bulk,
  postgres_copy_table,
  clickhouse_insert,
  redis_lpush,
  no_outage,
  durable_tier,
  none
};
enum class measure_kind { ingest, delivery, backlog, recovery, sustained, outage, latency, startup };

struct load_spec {
  int producers = 1;
  bool durable = true;
  bool replicated = false;  // durable too, acked once peers hold it
  std::uint32_t payload_bytes = 64;
  std::uint32_t batch = 0;
  std::uint32_t pipeline = 1;
  double seconds = 5;
  double warmup_seconds = 1;
  /// Records per second over all producers; 0: as fast as replies allow.
  double rate = 0;
  /// Each payload starts with its send time (steady clock, ns, decimal and
  /// a ';'), which the bench's own endpoint reads back: delivery latency.
  bool stamp = false;
  /// Stop sending once this many records were sent in all (0: no limit).
  std::uint64_t max_records = 0;
  /// Payloads are JSON objects a table of the user's takes its columns from.
  bool json = false;
};

struct scenario {
  std::string name, description;
  std::map<std::string, std::string> daemon_settings;
  load_spec load;                          // with the first size and batch
  std::vector<std::uint32_t> payload_sizes;
  std::vector<std::uint32_t> batches;
  std::vector<std::uint32_t> backlogs_mib;  // recovery; {0}: the backlog load.seconds builds
  /// The sink's endpoint is weir-bench's own, answering after this long.
  bool own_endpoint = false;
  double endpoint_delay_ms = 0;
  bool endpoint_no_delay = true;
  double outage_seconds = 10;
  double sample_seconds = 5;
  baseline_kind baseline = baseline_kind::fsync;
  measure_kind measure = measure_kind::ingest;
  int cluster_nodes = 0;  // 0: one daemon, no cluster
  int cluster_replicas = 2;
  /// The PostgreSQL server of a scenario whose sink is postgres, and of the
  /// postgres_* baselines (weir-bench --postgres); empty otherwise.
  std::string postgres;
  /// The MariaDB/MySQL server of a scenario whose sink is mysql, and of the
  /// mysql_load baseline (weir-bench --mysql, parsed); empty otherwise.
  std::map<std::string, std::string> mysql;
  /// The endpoint of a scenario whose sink is http, and of the http_post
  /// baseline (weir-bench --http); empty otherwise.
  std::string http;
  /// The ClickHouse HTTP interface of a scenario whose sink is clickhouse,
  /// and of the clickhouse_insert baseline (weir-bench --clickhouse).
  std::string clickhouse;

  bool sinks_to_postgres() const;
  bool sinks_to_clickhouse() const;
  /// The table the scenario's SQL sink writes (sink.<type>.table): weir_records, or bench_events.
  std::string sink_table() const;
  bool sinks_to_mysql() const;
  bool sinks_to_http() const;
  /// The baseline needs a PostgreSQL server (--postgres).
  bool baseline_needs_postgres() const;
  /// sink.concurrency as the scenario sets it (the daemon's default otherwise).
  int sink_concurrency() const;
  /// How many sinks the daemon delivers to (daemon.sinks: a `sinks:` list,
  /// as YAML flow text), and whether one of them is an HTTP sink (it posts
  /// to the endpoint weir-bench runs, through sink.http.url).
  std::size_t sink_count() const;
  bool lists_http_sink() const;
};

const char* name_of(baseline_kind b);
const char* name_of(measure_kind m);

/// Throws std::runtime_error naming the key and the problem.
scenario load_scenario(const std::string& path);

}  // namespace weir::bench
