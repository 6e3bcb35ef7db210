#include "sim/cluster/cluster_simulation.hpp"

#include <algorithm>
#include <chrono>
#include <ostream>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <caf/send.hpp>

#include "config/schema.hpp"
#include "messages/cluster_protocol.hpp"
#include "sim/cluster/cluster_checker.hpp"
#include "sim/cluster/cluster_node.hpp"
#include "sim/cluster/sim_network.hpp"
#include "sim/job_runner.hpp"
#include "sim/log_silencer.hpp"
#include "sim/scratch_dir.hpp"
#include "sim/sim_sink.hpp"

namespace weir::sim {

namespace {

using std::chrono::milliseconds;

constexpr unsigned final_rounds = 600;     // of final_tick each: 30 s of simulated time
constexpr milliseconds final_tick{50};
constexpr std::size_t quiet_limit = 2'000'000;  // messages before the system counts as never quiet
constexpr unsigned max_crashes = 4;

/// Membership's identity seam: which node a CAF node id stands for (the
/// gate proves it with a certificate; the simulated network is honest).
caf::behavior identity(caf::event_based_actor*, const sim_network* net) {
  return {[net](caf::get_atom, const caf::node_id& id) -> caf::result<caf::node_id, std::string, std::uint16_t> {
    return {id, std::string(), net->node_of(id)};
  }};
}

struct producer_state {
  std::uint16_t node = 0;
  std::uint16_t shard = 0;
  std::uint64_t next_seq = 1;
  std::uint64_t next_tag = 1;
};

class cluster_simulation {
 public:
  explicit cluster_simulation(const cluster_sim_options& o)
      : o_(o),
        plan_rng_(sim_rng(o.seed).fork(12)),
        sched_rng_(sim_rng(o.seed).fork(13)),
        payload_rng_(sim_rng(o.seed).fork(14)),
        disk_rng_(sim_rng(o.seed).fork(15)),
        net_rng_(sim_rng(o.seed).fork(16)) {
    shape();
    caf_cfg_.set("scheduler.policy", caf::atom("testing"));
    caf_cfg_.add_message_types<caf::id_block::weir>();
    caf_cfg_.add_message_types<caf::id_block::weir_cluster>();
    sys_ = std::make_unique<caf::actor_system>(caf_cfg_);
    sched_ = &dynamic_cast<caf::scheduler::test_coordinator&>(sys_->scheduler());
    net_ = std::make_unique<sim_network>(*sys_);
    net_->on_event = [this](const std::string& e) { trace("  net: " + e); };
    identity_ = sys_->spawn(identity, net_.get());
    sink_ = std::make_shared<sink_control>();
    sink_->rng = sim_rng(o.seed).fork(17);
    for (std::uint16_t n = 1; n <= o.nodes; ++n) {
      auto d = std::make_unique<node_disk>();
      d->node = n;
      d->root = (dir_.path() / ("node" + std::to_string(n))).string();
      d->fresh(disk_rng_.fork(n));
      disks_.push_back(std::move(d));
    }
    checker_ = std::make_unique<cluster_checker>(expected_replicas_, disks_);
    sink_->observer = checker_.get();
    lives_.resize(o.nodes);
    life_.assign(o.nodes, 0);
    down_left_.assign(o.nodes, 0);
    cut_off_.assign(o.nodes, false);
  }

  ~cluster_simulation() {
    // Every actor must end before the actor system can (whatever failed).
    auto run_out = [this] {
      while (sched_->try_run_once()) {
      }
    };
    for (std::uint16_t n = 1; n <= o_.nodes; ++n)
      if (lives_[n - 1]) stop_life(n);
    run_out();
    lives_.clear();
    net_.reset();
    caf::anon_send_exit(identity_, caf::exit_reason::kill);
    identity_ = nullptr;
    run_out();
  }

  cluster_sim_result run() {
    trace("cluster: " + std::to_string(o_.nodes) + " nodes, shards " + std::to_string(shards_) + ", replicas " +
          std::to_string(replicas_) + ", segment " + std::to_string(segment_bytes_) + " B, failover after " +
          std::to_string(failover_after_ms_) + " ms, " + std::to_string(producers_.size()) + " producers");
    for (std::uint16_t n = 1; n <= o_.nodes; ++n) start_life(n);
    while (!failed() && checker_->step < o_.steps) {
      ++checker_->step;
      step();
      check_no_stray_replies();
    }
    if (!failed()) final_phase();
    return result();
  }

 private:
  bool failed() const { return checker_->failed.has_value(); }

  void trace(const std::string& line) {
    for (unsigned char c : line) digest_ = (digest_ ^ c) * 1099511628211ull;
    digest_ = (digest_ ^ '\n') * 1099511628211ull;
    if (o_.trace) *o_.trace << "step " << checker_->step << " " << line << '\n';
  }

  /// The run's shape, from its seed.
  void shape() {
    sim_rng r = sim_rng(o_.seed).fork(11);
    shards_ = static_cast<std::uint16_t>(r.between(1, 2));
    replicas_ = o_.nodes >= 3 && r.percent(25) ? 3 : 2;
    expected_replicas_ = replicas_;
    if (o_.broken == cluster_sabotage::acks_without_peers) replicas_ = 1, expected_replicas_ = 2;
    segment_bytes_ = r.between(700, 3000);
    failover_after_ms_ = static_cast<std::int64_t>(r.between(1200, 3000));
    batch_records_ = static_cast<std::int64_t>(r.between(2, 16));
    const auto producers = r.between(o_.nodes, 2 * o_.nodes);
    for (std::uint64_t p = 0; p < producers; ++p) {
      const auto node = static_cast<std::uint16_t>(1 + p % o_.nodes);
      producers_.push_back({node, static_cast<std::uint16_t>((p / o_.nodes) % shards_)});
    }
  }

  static std::string listen_of(std::uint16_t n) { return "127.0.0.1:" + std::to_string(7100 + n); }

  config node_config(std::uint16_t n) const {
    config c = default_config();
    c.data_dir = disks_[n - 1]->root;
    c.ingest.shards = shards_;
    c.wab.segment_max_bytes = static_cast<std::int64_t>(segment_bytes_);
    c.wab.spare_segments = 0;
    c.wab.min_free_bytes = 0;
    c.limits.wab_max_bytes = std::int64_t{1} << 30;
    c.drain.batch_max_records = batch_records_;
    c.drain.linger_ms = 2;
    c.sink.retry.initial_ms = 10;
    c.sink.retry.max_ms = 400;
    c.sink.retry.jitter = 0;  // the runner's jitter comes from std::random_device: it would break replay
    c.sink.concurrency = 1;
    c.cluster.node_id = n;
    c.cluster.listen = listen_of(n);
    for (std::uint16_t m = 1; m <= o_.nodes; ++m)
      if (m != n) c.cluster.peers.push_back(listen_of(m));
    c.cluster.replicas = replicas_;
    c.cluster.heartbeat_ms = 100;
    c.cluster.failover_after_ms = failover_after_ms_;
    c.cluster.replication_timeout_ms = 1000;
    return c;
  }

  std::uint64_t now_us() const {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(sched_->clock().now().time_since_epoch()).count());
  }

  // --- lives -----------------------------------------------------------------

  void start_life(std::uint16_t n) {
    auto& life = life_[n - 1];
    ++life;
    observers_.push_back(std::make_unique<life_observer>(*checker_, n, life));
    auto sink = std::make_shared<sim_sink_factory>(sink_, observers_.back().get());
    std::vector<std::size_t> mine;
    for (std::size_t p = 0; p < producers_.size(); ++p)
      if (producers_[p].node == n) mine.push_back(p);
    const std::uint64_t first = o_.broken == cluster_sabotage::renumbers_new_life ? 1 : 1 + now_us();
    try {
      lives_[n - 1] = std::make_unique<cluster_node_life>(*sys_, node_config(n), *disks_[n - 1], *net_, identity_,
                                                          sink, observers_.back().get(), mine, first, disk_rng_);
    } catch (const std::exception& e) {
      checker_->fail("recovery-succeeds", "node " + std::to_string(n) + " did not start: " + e.what());
      return;
    }
    checker_->set_life(n, life, true);
    ++lives_started_;
    trace("node " + std::to_string(n) + " starts life " + std::to_string(life) +
          (lives_[n - 1]->new_life() ? " (its WAB holds nothing: a new life)" : ""));
  }

  /// The process dies at an arbitrary instant: nothing it does afterwards
  /// lands or leaves, and its unanswered requests' fate is unknown.
  /// A second reply to a request, or one to a request never sent, is
  /// dropped by the reply channel as the daemon's would: caught here.
  void check_no_stray_replies() {
    for (std::uint16_t n = 1; n <= o_.nodes; ++n)
      if (!failed() && lives_[n - 1] && lives_[n - 1]->stray_replies() > 0)
        checker_->fail("one-reply-per-request", "node " + std::to_string(n) + "'s reply channels ignored " +
                                                    std::to_string(lives_[n - 1]->stray_replies()) +
                                                    " replies: a second one for a request, or one never asked for");
  }

  void stop_life(std::uint16_t n) {
    check_no_stray_replies();
    checker_->set_life(n, life_[n - 1], false);
    disks_[n - 1]->io->freeze();
    net_->crash(n);
    lives_[n - 1]->kill();
  }

  /// A process takes time to start again: the clock, which numbers a new
  /// life's segments, moves on meanwhile. (weir trusts it to: a new life
  /// numbered from a clock behind an earlier life's would reuse its places.
  /// docs/cluster.md, "Node lives"; the renumbers-new-life sabotage shows
  /// the checker catching that.)
  void restart(std::uint16_t n) {
    const auto ms = plan_rng_.between(1, 50);
    const auto fired = sched_->advance_time(milliseconds(ms));
    trace("node " + std::to_string(n) + " takes " + std::to_string(ms) + " ms to start (" + std::to_string(fired) +
          " timers)");
    start_life(n);
  }

  void crash(std::uint16_t n, bool lose_disk) {
    const bool writeback = plan_rng_.percent(50);
    trace("CRASH node " + std::to_string(n) + (lose_disk ? ", its disk is lost" : "") +
          (!lose_disk && writeback ? " (part of the dirty pages reached the disk)" : ""));
    stop_life(n);
    if (!drain_jobs()) return;
    lives_[n - 1].reset();
    if (!drain_jobs()) return;  // every actor of the life has ended before the disk comes back
    for (std::size_t i = 0; i < checker_->book.records().size(); ++i) {
      auto& r = checker_->book.record(i);
      if (checker_->extra[i].node == n && r.status == record_status::pending) r.status = record_status::unknown;
    }
    auto& disk = *disks_[n - 1];
    if (lose_disk) {
      ++disk.disks;
      ++disks_lost_;
      disk.fresh(disk_rng_.fork(1000 + disk.disks));
      checker_->disk_replaced(n);
    } else {
      disk.io->crash(writeback);
    }
    ++crashes_;
    down_left_[n - 1] = static_cast<unsigned>(plan_rng_.between(3, 60));
  }

  // --- steps -----------------------------------------------------------------

  void step() {
    for (std::uint16_t n = 1; n <= o_.nodes; ++n)
      if (!lives_[n - 1] && down_left_[n - 1] > 0 && --down_left_[n - 1] == 0) restart(n);
    if (partition_left_ > 0 && --partition_left_ == 0) heal();
    if (sink_mood_left_ > 0 && --sink_mood_left_ == 0) {
      sink_->mode = sink_mode::healthy;
      trace("sink healthy again");
    }
    update_cut_off();
    const auto roll = static_cast<unsigned>(plan_rng_.below(1000));
    if (roll < 15) return crash_some();
    if (roll < 30) return partition_some();
    if (roll < 60) return change_sink();
    if (roll < 330) return send();
    if (roll < 580) return deliver_some();
    if (roll < 720) return advance_time();
    run_some();
  }

  void crash_some() {
    if (crashes_ >= max_crashes) return;
    const auto n = static_cast<std::uint16_t>(plan_rng_.between(1, o_.nodes));
    if (!lives_[n - 1]) return;
    crash(n, plan_rng_.percent(35));
  }

  void partition_some() {
    if (partition_left_ > 0) return;
    std::vector<std::set<std::uint16_t>> groups;
    const auto alone = static_cast<std::uint16_t>(plan_rng_.between(1, o_.nodes));
    std::string what;
    if (plan_rng_.percent(70)) {
      // One node alone: the minority; the rest together.
      std::set<std::uint16_t> rest;
      for (std::uint16_t n = 1; n <= o_.nodes; ++n)
        if (n != alone) rest.insert(n);
      groups = {{alone}, rest};
      what = "node " + std::to_string(alone) + " apart from the others";
    } else {
      for (std::uint16_t n = 1; n <= o_.nodes; ++n) groups.push_back({n});
      what = "every node apart";
    }
    partition_left_ = static_cast<unsigned>(plan_rng_.between(5, 80));
    ++partitions_;
    trace("PARTITION " + what + " for " + std::to_string(partition_left_) + " steps");
    net_->partition(groups);
  }

  void heal() {
    partition_left_ = 0;
    net_->heal();
    trace("partition healed");
  }

  /// Which nodes can reach no live peer now: a push they take is owed a refusal.
  void update_cut_off() {
    for (std::uint16_t n = 1; n <= o_.nodes; ++n) {
      bool alone = true;
      for (std::uint16_t m = 1; m <= o_.nodes; ++m)
        if (m != n && lives_[m - 1] && net_->reachable(n, m)) alone = false;
      cut_off_[n - 1] = alone;
    }
  }

  void change_sink() {
    const auto r = plan_rng_.below(100);
    sink_->mode = r < 30 ? sink_mode::healthy : r < 70 ? sink_mode::flaky : sink_mode::down;
    sink_mood_left_ = static_cast<unsigned>(plan_rng_.between(5, 40));
    trace(std::string("sink ") + name_of(sink_->mode) + " for " + std::to_string(sink_mood_left_) + " steps");
  }

  void send() {
    const auto p = static_cast<std::size_t>(plan_rng_.below(producers_.size()));
    if (!lives_[producers_[p].node - 1]) return;
    const auto n = plan_rng_.between(1, 3);
    for (std::uint64_t i = 0; i < n; ++i) {
      const bool replicated = plan_rng_.percent(80);
      const bool batch = plan_rng_.percent(25);
      send_one(p, replicated, batch ? static_cast<std::size_t>(plan_rng_.between(1, 6)) : 0);
    }
  }

  /// A push (`batch_records` 0) or a batch from producer `p`; returns the first record's index.
  std::size_t send_one(std::size_t p, bool replicated, std::size_t batch_records) {
    auto& ps = producers_[p];
    ingest_request req;
    req.tag = ps.next_tag++;
    req.kind = batch_records > 0 ? ingest_kind::batch : ingest_kind::push;
    req.durable = true;
    req.replicated = replicated;
    const auto life = life_[ps.node - 1];
    request_info info{p, req.tag, req.kind, true, {}, life, false};
    const std::size_t first = checker_->book.records().size();
    for (std::size_t k = 0; k < std::max<std::size_t>(1, batch_records); ++k) {
      record_info r;
      r.producer = p;
      r.seq = ps.next_seq++;
      r.shard = ps.shard;
      r.durable = true;
      r.tag = req.tag;
      r.payload = "n" + std::to_string(ps.node) + "p" + std::to_string(p) + "/s" + std::to_string(r.seq) + "/";
      const auto filler = payload_rng_.below(100);
      for (std::uint64_t i = 0; i < filler; ++i) r.payload.push_back(static_cast<char>('a' + payload_rng_.below(26)));
      if (batch_records > 0) {
        req.bounds.push_back(static_cast<std::uint32_t>(req.body.size()));
        req.bounds.push_back(static_cast<std::uint32_t>(r.payload.size()));
      }
      req.body.insert(req.body.end(), r.payload.begin(), r.payload.end());
      info.records.push_back(checker_->book.add_record(std::move(r)));
      checker_->extra.push_back({ps.node, replicated, cut_off_[ps.node - 1], {}});
    }
    checker_->book.add_request(std::move(info));
    trace("send p" + std::to_string(p) + " -> node " + std::to_string(ps.node) + " tag " + std::to_string(req.tag) +
          (replicated ? " replicated" : " durable") + " x" + std::to_string(std::max<std::size_t>(1, batch_records)) +
          (cut_off_[ps.node - 1] ? " (its node reaches no peer)" : ""));
    const auto& node = *lives_[ps.node - 1];
    const auto producer = node.producer(p);
    req.reply_to = caf::actor_cast<ingest_client_actor>(producer);
    node.connection(p)->attach(req);
    caf::send_as(producer, node.writer(ps.shard), std::move(req));
    return first;
  }

  bool run_jobs(std::size_t n, bool shuffled) {
    return sim::run_jobs(*sched_, sched_rng_, n, shuffled, [this] { return failed(); });
  }

  /// Everything runs until nothing is left; false (and a failure) if it never ends.
  bool drain_jobs() {
    if (run_jobs(quiet_limit, false)) return true;
    if (!failed())
      checker_->fail("quiescence", "the actors never went quiet (" + std::to_string(quiet_limit) + " messages)");
    return false;
  }

  void run_some() {
    const auto n = plan_rng_.between(1, 60);
    trace("run " + std::to_string(n));
    run_jobs(n, true);
  }

  void deliver_some() {
    const auto n = plan_rng_.between(1, 25);
    trace("deliver " + std::to_string(n));
    for (std::uint64_t i = 0; i < n; ++i) {
      run_jobs(2, true);  // the network actor files what proxies were sent
      if (!net_->deliver_one(net_rng_, 2, 1)) break;
    }
  }

  void advance_time() {
    const auto r = plan_rng_.below(100);
    const auto ms = r < 40 ? plan_rng_.between(1, 20) : r < 75 ? plan_rng_.between(20, 150)
                    : r < 95                        ? plan_rng_.between(150, 600)
                                                    : plan_rng_.between(600, 2500);
    const auto fired = sched_->advance_time(milliseconds(ms));
    trace("advance " + std::to_string(ms) + " ms (" + std::to_string(fired) + " timers)");
  }

  // --- the end ---------------------------------------------------------------

  /// Runs until no actor has anything to do and no packet is in flight.
  bool settle() {
    for (std::size_t rounds = 0; rounds < 100'000; ++rounds) {
      if (!drain_jobs()) return false;
      if (!net_->deliver_one(net_rng_, 0, 0)) return true;
    }
    checker_->fail("quiescence", "the network never went quiet");
    return false;
  }

  /// The network healed, every node up, the sink healthy: every node must
  /// take a Replicated push again, and every acked record owed to the sink
  /// must reach it.
  void final_phase() {
    trace("final: network healed, every node up, sink healthy");
    if (partition_left_ > 0) heal();
    sink_mood_left_ = 0;
    sink_->mode = sink_mode::healthy;
    for (std::uint16_t n = 1; n <= o_.nodes; ++n)
      if (!lives_[n - 1]) restart(n);
    if (failed()) return;
    update_cut_off();
    std::vector<std::size_t> probe(o_.nodes, SIZE_MAX);
    bool done = false;
    for (unsigned round = 0; round < final_rounds && !done && !failed(); ++round) {
      if (!settle()) return;
      done = checker_->owed() == 0;
      for (std::uint16_t n = 1; n <= o_.nodes; ++n) {
        const auto p = first_producer_of(n);
        if (p == SIZE_MAX) continue;
        auto& slot = probe[n - 1];
        const auto status = slot == SIZE_MAX ? record_status::pending : checker_->book.record(slot).status;
        if (slot == SIZE_MAX || status == record_status::refused) {
          if (slot != SIZE_MAX) trace("probe on node " + std::to_string(n) + " refused; again");
          slot = send_one(p, true, 0);
          done = false;
        } else if (!checker_->book.record(slot).delivered) {
          done = false;
        }
      }
      if (!done) sched_->advance_time(final_tick);
    }
    if (failed()) return;
    for (std::uint16_t n = 1; n <= o_.nodes; ++n)
      if (probe[n - 1] != SIZE_MAX && !checker_->book.record(probe[n - 1]).delivered)
        return checker_->fail("serves-replicated-again",
                              "30 s after the last fault, node " + std::to_string(n) + " has not delivered " +
                                  checker_->describe(probe[n - 1]));
    checker_->at_end();
  }

  std::size_t first_producer_of(std::uint16_t n) const {
    for (std::size_t p = 0; p < producers_.size(); ++p)
      if (producers_[p].node == n) return p;
    return SIZE_MAX;
  }

  cluster_sim_result result() {
    cluster_sim_result r;
    r.seed = o_.seed;
    r.steps = checker_->step;
    r.crashes = crashes_;
    r.disks_lost = disks_lost_;
    r.partitions = partitions_;
    r.lives = lives_started_;
    r.records = checker_->book.records().size();
    r.replicated_acked = checker_->replicated_acked;
    r.durable_acked = checker_->durable_acked;
    r.refused = checker_->refused;
    r.refused_cut_off = checker_->refused_cut_off;
    r.deliveries = checker_->deliveries;
    r.lost_with_every_holder = checker_->lost_with_every_holder;
    r.delivered = checker_->first_deliveries;
    const auto& c = net_->counters();
    r.packets = c.delivered;
    r.duplicated = c.duplicated;
    r.lost = c.lost;
    r.cuts = c.cuts;
    r.replay = "build/bin/weir-cluster-sim --seed " + std::to_string(o_.seed);
    if (o_.steps != cluster_sim_options{}.steps) r.replay += " --steps " + std::to_string(o_.steps);
    if (o_.nodes != cluster_sim_options{}.nodes) r.replay += " --nodes " + std::to_string(o_.nodes);
    if (o_.broken != cluster_sabotage::none) r.replay += std::string(" --sabotage ") + name_of(o_.broken);
    if (const auto& f = checker_->failed) {
      r.ok = false;
      r.failed_step = f->step;
      r.invariant = f->invariant;
      r.details = f->details;
      trace("FAILED " + r.invariant + ": " + r.details);
    }
    trace("records " + std::to_string(r.records) + ", acked Replicated " + std::to_string(r.replicated_acked) +
          ", acked Durable " + std::to_string(r.durable_acked) + " (lost with every disk that held it " +
          std::to_string(r.lost_with_every_holder) + ")" + ", refused " + std::to_string(r.refused) +
          " (cut off " + std::to_string(r.refused_cut_off) + "), delivered " + std::to_string(r.delivered) +
          ", packets " + std::to_string(r.packets) + " of " + std::to_string(c.sent) + " sent (" + std::to_string(c.dropped) + " dropped), links cut " +
          std::to_string(r.cuts) + ", dials " + std::to_string(c.dials) + " (refused " + std::to_string(c.dials_refused) +
          ")");
    r.digest = digest_;
    return r;
  }

  cluster_sim_options o_;
  scratch_dir dir_;
  sim_rng plan_rng_, sched_rng_, payload_rng_, disk_rng_, net_rng_;
  std::uint16_t shards_ = 1;
  std::int64_t replicas_ = 2;
  std::uint32_t expected_replicas_ = 2;
  std::uint64_t segment_bytes_ = 1024;
  std::int64_t failover_after_ms_ = 2000;
  std::int64_t batch_records_ = 8;
  std::vector<producer_state> producers_;

  caf::actor_system_config caf_cfg_;
  std::unique_ptr<caf::actor_system> sys_;
  caf::scheduler::test_coordinator* sched_ = nullptr;
  std::unique_ptr<sim_network> net_;
  caf::actor identity_;
  std::shared_ptr<sink_control> sink_;
  std::vector<std::unique_ptr<node_disk>> disks_;
  std::unique_ptr<cluster_checker> checker_;
  std::vector<std::unique_ptr<life_observer>> observers_;
  std::vector<std::unique_ptr<cluster_node_life>> lives_;
  std::vector<unsigned> life_;
  std::vector<unsigned> down_left_;
  std::vector<bool> cut_off_;
  unsigned partition_left_ = 0, sink_mood_left_ = 0;
  unsigned crashes_ = 0, disks_lost_ = 0, partitions_ = 0, lives_started_ = 0;
  std::uint64_t digest_ = 1469598103934665603ull;
};

}  // namespace

const char* name_of(cluster_sabotage s) {
  switch (s) {
    case cluster_sabotage::none: return "none";
    case cluster_sabotage::acks_without_peers: return "acks-without-peers";
    case cluster_sabotage::renumbers_new_life: return "renumbers-new-life";
  }
  return "?";
}

bool parse_cluster_sabotage(const std::string& name, cluster_sabotage& out) {
  for (auto s : {cluster_sabotage::none, cluster_sabotage::acks_without_peers, cluster_sabotage::renumbers_new_life})
    if (name == name_of(s)) {
      out = s;
      return true;
    }
  return false;
}

std::string cluster_sim_result::failure_line() const {
  return "cluster-sim: FAILED seed=" + std::to_string(seed) + " step=" + std::to_string(failed_step) +
         " invariant=" + invariant + ": " + details + "; replay with: " + replay;
}

cluster_sim_result run_cluster_simulation(const cluster_sim_options& options) {
  log_silencer quiet(options.trace == nullptr);
  cluster_simulation s(options);
  return s.run();
}

}  // namespace weir::sim
