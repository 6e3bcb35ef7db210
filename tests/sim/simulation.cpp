#include "sim/simulation.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <ostream>
#include <set>

#include <caf/scheduler/test_coordinator.hpp>
#include <caf/send.hpp>

#include "observability/log.hpp"
#include "wab/segment_format.hpp"
#include "sim/daemon_life.hpp"
#include "sim/invariants.hpp"
#include "sim/job_runner.hpp"
#include "sim/log_silencer.hpp"
#include "sim/scratch_dir.hpp"
#include "sim/sim_sink.hpp"
#include "sim/sim_world.hpp"
#include "sim/workload.hpp"

namespace weir::sim {

namespace {

using std::chrono::milliseconds;

/// The final phase gives the daemon this long, without faults, to deliver everything.
constexpr unsigned final_rounds = 400;
constexpr milliseconds final_tick{50};
/// Messages one round may run before the system counts as never quiet.
constexpr std::size_t quiet_limit = 500'000;

io_sabotage io_breakage(sabotage s) {
  if (s == sabotage::lying_fdatasync) return io_sabotage::lying_fdatasync;
  if (s == sabotage::lying_dir_fsync) return io_sabotage::lying_dir_fsync;
  return io_sabotage::none;
}

class simulation {
 public:
  explicit simulation(const sim_options& o)
      : o_(o),
        plan_rng_(sim_rng(o.seed).fork(2)),
        sched_rng_(sim_rng(o.seed).fork(3)),
        payload_rng_(sim_rng(o.seed).fork(4)) {
    w_.cfg = make_config(o.seed, o.steps, o.broken, o.wiring);
    w_.paths.root = dir_.path().string();
    w_.io = std::make_shared<sim_file_io>(w_.plan, sim_rng(o.seed).fork(5), io_breakage(o.broken));
    w_.view = std::make_unique<durable_view>(*w_.io);
    w_.io->on_event = [this](const std::string& e) { trace("  disk: " + e); };
    for (unsigned p = 0; p < w_.cfg.producers; ++p)
      w_.producers.push_back({static_cast<std::uint16_t>(p % w_.cfg.shards)});
    // The directories the daemon makes at startup (ensure_private_directory).
    for (std::uint16_t s = 0; s < w_.cfg.shards; ++s) make_dir(w_.paths.shard_dir(s));
    make_dir(w_.paths.root + "/wab");
    make_dir(w_.paths.quarantine());
    make_dir(w_.paths.dead_letters());
    sink_ = std::make_shared<sink_control>();
    sink_->rng = sim_rng(o.seed).fork(6);
    sink_->broken = o.broken;
    inv_ = std::make_unique<invariants>(w_);
    sink_->observer = inv_.get();
    factory_ = std::make_shared<sim_sink_factory>(sink_);
  }

  ~simulation() {
    w_.accepting = false;
    killing_ = true;
    life_.reset();
  }

  sim_result run() {
    trace("config: " + describe(w_.cfg));
    start_life(false);
    while (!w_.failed && w_.step < w_.cfg.steps) {
      ++w_.step;
      const auto faults_before = w_.plan.injected_total();
      step();
      if (w_.plan.injected_total() != faults_before)
        trace("  fault fired (" + std::to_string(w_.plan.injected_total()) + " so far)");
      if (!w_.failed) inv_->after_step();
      check_no_stray_replies();
    }
    if (!w_.failed) final_phase();
    return result();
  }

 private:
  void make_dir(const std::string& d) {
    std::filesystem::create_directories(d);
    w_.io->adopt_directory(d);
  }

  void trace(const std::string& line) {
    for (unsigned char c : line) digest_ = (digest_ ^ c) * 1099511628211ull;
    digest_ = (digest_ ^ '\n') * 1099511628211ull;
    if (o_.trace) *o_.trace << "step " << w_.step << " [life " << w_.life << "] " << line << '\n';
  }

  void start_life(bool after_crash) {
    w_.plan.enable(false);  // the daemon's startup runs on a healthy disk
    try {
      life_ = std::make_unique<daemon_life>(w_.cfg, w_.paths, w_.io, factory_, inv_.get(),
                                            [this](const std::string& who, const caf::error& why) {
                                              if (!killing_ && w_.accepting)
                                                w_.fail("actors-stay-up", who + " exited: " + caf::to_string(why));
                                            });
    } catch (const std::exception& e) {
      w_.fail("recovery-succeeds", e.what());
      return;
    }
    w_.plan.enable(!final_);
    w_.accepting = true;
    for (const auto& s : life_->started()) quarantined_ += s.recovery.quarantined_segments;
    for (const auto& s : life_->started())
      trace("  shard " + std::to_string(s.shard) + " recovered: " + std::to_string(s.recovery.segments.size()) +
            " segments, " + std::to_string(s.recovery.records) + " records, truncated " +
            std::to_string(s.recovery.truncated_segments) + ", quarantined " +
            std::to_string(s.recovery.quarantined_segments) + ", next sequence " + std::to_string(s.next_sequence) +
            (s.cursor ? ", cursor seg " + std::to_string(s.cursor->sequence) + " index " +
                            std::to_string(s.cursor->index)
                      : std::string(", no cursor")));
    if (after_crash) inv_->after_recovery(life_->started());
  }

  void step() {
    if (disk_full_left_ > 0 && --disk_full_left_ == 0) {
      w_.plan.set_disk_full(false);
      trace("disk has room again");
    }
    if (sink_mood_left_ > 0 && --sink_mood_left_ == 0) {
      sink_->mode = sink_mode::healthy;
      trace("sink healthy again");
    }
    unsigned roll = static_cast<unsigned>(plan_rng_.below(100));
    if (roll < w_.cfg.crash_percent && w_.crashes < w_.cfg.max_crashes) return crash();
    roll -= std::min(roll, w_.cfg.crash_percent);
    if (roll < w_.cfg.fault_percent) return arm_fault();
    roll -= std::min(roll, w_.cfg.fault_percent);
    if (roll < 4) return change_sink();
    if (roll < 34) return send();
    if (roll < 50) return advance_time();
    run_some();
  }

  void send() {
    const auto p = static_cast<std::size_t>(plan_rng_.below(w_.cfg.producers));
    const auto n = plan_rng_.between(1, 3);
    for (std::uint64_t i = 0; i < n; ++i) send_one(p, random_shape(plan_rng_));
  }

  std::size_t send_one(std::size_t p, const request_shape& shape) {
    auto req = make_request(w_, payload_rng_, p, shape);
    static const char* kinds[] = {"push", "tracked", "batch"};
    trace("send p" + std::to_string(p) + " tag " + std::to_string(req.tag) + " " +
          kinds[static_cast<int>(shape.kind)] + (shape.durable ? " durable" : " buffered") + " x" +
          std::to_string(shape.records));
    const auto first_record = w_.book.records().size() - shape.records;
    req.reply_to = caf::actor_cast<ingest_client_actor>(life_->producer(p));
    life_->connection(p).attach(req);
    caf::send_as(life_->producer(p), life_->writer(w_.producers[p].shard), std::move(req));
    return first_record;
  }

  bool run_jobs(std::size_t n, bool shuffled) {
    return sim::run_jobs(life_->sched(), sched_rng_, n, shuffled, [this] { return w_.failed.has_value(); });
  }

  void run_some() {
    const auto n = plan_rng_.between(1, 40);
    trace("run " + std::to_string(n));
    run_jobs(n, true);
  }

  void advance_time() {
    const auto r = plan_rng_.below(100);
    const auto ms = r < 40 ? plan_rng_.between(1, 5) : r < 70 ? plan_rng_.between(10, 100)
                    : r < 90                        ? plan_rng_.between(200, 400)
                                                    : plan_rng_.between(1000, 1500);
    trace("advance " + std::to_string(ms) + " ms");
    life_->sched().advance_time(milliseconds(ms));
  }

  void arm_fault() {
    static const std::pair<fault_kind, unsigned> weights[] = {
        {fault_kind::sync_eio, 20},    {fault_kind::write_enospc, 14}, {fault_kind::write_torn, 14},
        {fault_kind::rename_fail, 6},  {fault_kind::dir_fsync_fail, 10}, {fault_kind::unlink_fail, 8},
        {fault_kind::create_fail, 10}, {fault_kind::cursor_fail, 12},    {fault_kind::disk_full, 6}};
    unsigned total = 0;
    for (const auto& [k, wgt] : weights) total += wgt;
    auto pick = static_cast<unsigned>(plan_rng_.below(total));
    fault_kind kind = fault_kind::sync_eio;
    for (const auto& [k, wgt] : weights) {
      if (pick < wgt) {
        kind = k;
        break;
      }
      pick -= wgt;
    }
    if (kind == fault_kind::disk_full) {
      disk_full_left_ = static_cast<unsigned>(plan_rng_.between(2, 20));
      w_.plan.set_disk_full(true);
      trace("disk full for " + std::to_string(disk_full_left_) + " steps");
      return;
    }
    const auto nth = static_cast<unsigned>(plan_rng_.between(1, 4));
    w_.plan.arm(kind, nth);
    trace("arm " + std::string(name_of(kind)) + " on call " + std::to_string(nth));
  }

  void change_sink() {
    const auto r = plan_rng_.below(100);
    sink_->mode = r < 30 ? sink_mode::healthy : r < 70 ? sink_mode::flaky : sink_mode::down;
    sink_mood_left_ = static_cast<unsigned>(plan_rng_.between(5, 40));
    trace(std::string("sink ") + name_of(sink_->mode) + " for " + std::to_string(sink_mood_left_) + " steps");
  }

  /// The process dies at an arbitrary instant: nothing it does afterwards
  /// lands, every unanswered request's fate is unknown, and only what was
  /// durable is on disk when it starts again.
  /// A second reply to a request, or one to a request never sent, is
  /// dropped by the reply channel as the daemon's would: caught here.
  void check_no_stray_replies() {
    if (!w_.failed && life_ && life_->stray_replies() > 0)
      w_.fail("one-reply-per-request", "the reply channel ignored " + std::to_string(life_->stray_replies()) +
                                           " replies: a second one for a request, or one never asked for");
  }

  void crash() {
    check_no_stray_replies();
    const bool writeback = plan_rng_.percent(w_.cfg.writeback_percent);
    trace(std::string("CRASH") + (writeback ? " (part of the dirty pages reached the disk)" : ""));
    w_.accepting = false;
    w_.io->freeze();
    killing_ = true;
    life_->kill();
    handed_replies_ += life_->handed_replies();
    life_.reset();
    killing_ = false;
    w_.io->crash(writeback);
    w_.book.forget_pending();
    ++w_.crashes;
    ++w_.life;
    inv_->after_crash();
    if (!w_.failed) start_life(true);
  }

  /// Faults off, the sink healthy: the daemon must deliver every acked
  /// record, answer every request, and take new records again.
  void final_phase() {
    final_ = true;
    trace("final: faults off, sink healthy");
    w_.plan.clear();
    w_.plan.enable(false);
    disk_full_left_ = sink_mood_left_ = 0;
    sink_->mode = sink_mode::healthy;
    std::vector<std::size_t> probe(w_.cfg.producers, SIZE_MAX);
    bool done = false;
    for (unsigned round = 0; round < final_rounds && !done; ++round) {
      if (!run_jobs(quiet_limit, false)) {
        if (!w_.failed) w_.fail("quiescence", "the actors never went quiet (" + std::to_string(quiet_limit) +
                                                  " messages in one round)");
        return;
      }
      done = true;
      for (std::size_t p = 0; p < probe.size(); ++p) {
        const bool refused = probe[p] != SIZE_MAX && w_.book.record(probe[p]).status == record_status::refused;
        if (probe[p] == SIZE_MAX || refused) {
          request_shape shape{ingest_kind::push, true, 1, false};
          probe[p] = send_one(p, shape);
          done = false;
        } else if (!w_.book.record(probe[p]).delivered) {
          done = false;
        }
      }
      done = done && inv_->undelivered() == 0 && w_.book.pending_requests() == 0;
      if (!done) life_->sched().advance_time(final_tick);
    }
    if (w_.failed || !run_jobs(quiet_limit, false)) return;  // the last probes are answered
    for (std::size_t p = 0; p < probe.size(); ++p)
      if (!w_.book.record(probe[p]).delivered) {
        w_.fail("recovers-after-faults", "20 s after the last fault, a Durable push of producer " +
                                             std::to_string(p) + " (shard " + std::to_string(w_.producers[p].shard) +
                                             ") is still " + name_of(w_.book.record(probe[p]).status) +
                                             " and undelivered; " + wab_state());
        return;
      }
    inv_->at_end();
  }

  /// "WAB usage 15000 of cap 13676 (over); shard_00: seg_00000003.wab seg_00000007.wab"
  std::string wab_state() const {
    const auto& usage = *life_->usage();
    std::string out = "WAB usage " + std::to_string(usage.bytes()) + " of cap " + std::to_string(usage.cap()) +
                      (usage.over_cap() ? " (over)" : "");
    for (std::uint16_t s = 0; s < w_.cfg.shards; ++s) {
      out += "; " + wab::shard_dir_name(s) + ":";
      std::set<std::string> names;
      std::error_code ec;
      for (const auto& e : std::filesystem::directory_iterator(w_.paths.shard_dir(s), ec))
        names.insert(e.path().filename().string());
      for (const auto& n : names) out += " " + n;
    }
    return out;
  }

  sim_result result() {
    sim_result r;
    r.seed = o_.seed;
    r.steps = w_.step;
    r.crashes = w_.crashes;
    r.lives = w_.life + 1;
    r.faults = w_.plan.injected_total();
    for (std::size_t k = 0; k < fault_kinds; ++k) r.fault_counts[k] = w_.plan.injected(static_cast<fault_kind>(k));
    r.acked = inv_->acked();
    r.durable_by_writer = inv_->durable_acked_by_writer();
    r.durable_by_fsync_group = inv_->durable_acked_by_fsync_group();
    r.handed_replies = handed_replies_ + (life_ ? life_->handed_replies() : 0);
    r.delivered = inv_->first_deliveries();
    r.deliveries = inv_->deliveries();
    r.records = w_.book.records().size();
    r.quarantined = quarantined_;
    r.replay = "build/bin/weir-sim --seed " + std::to_string(o_.seed);
    if (o_.steps != sim_options{}.steps) r.replay += " --steps " + std::to_string(o_.steps);
    if (o_.broken != sabotage::none) r.replay += std::string(" --sabotage ") + name_of(o_.broken);
    if (o_.wiring == sync_wiring::daemon) r.replay += " --daemon-wiring";
    if (w_.failed) {
      r.ok = false;
      r.failed_step = w_.failed->step;
      r.invariant = w_.failed->invariant;
      r.details = w_.failed->details;
      trace("FAILED " + r.invariant + ": " + r.details);
    }
    trace("acked " + std::to_string(r.acked) + " delivered " + std::to_string(r.delivered) + " faults " +
          std::to_string(r.faults) + " crashes " + std::to_string(r.crashes));
    const auto& io = w_.io->counters();
    trace("disk calls: writes " + std::to_string(io.writes) + ", syncs " + std::to_string(io.syncs) +
          ", directory syncs " + std::to_string(io.dir_syncs) + ", creates " + std::to_string(io.creates) +
          ", renames " + std::to_string(io.renames) + ", unlinks " + std::to_string(io.unlinks) + ", truncates " +
          std::to_string(io.truncates));
    r.digest = digest_;
    return r;
  }

  sim_options o_;
  scratch_dir dir_;
  sim_world w_;
  sim_rng plan_rng_, sched_rng_, payload_rng_;
  std::shared_ptr<sink_control> sink_;
  std::unique_ptr<invariants> inv_;
  std::shared_ptr<sim_sink_factory> factory_;
  std::unique_ptr<daemon_life> life_;
  unsigned disk_full_left_ = 0, sink_mood_left_ = 0;
  bool killing_ = false;
  bool final_ = false;
  std::uint64_t quarantined_ = 0;
  std::uint64_t handed_replies_ = 0;  // by the lives before this one
  std::uint64_t digest_ = 1469598103934665603ull;
};

}  // namespace

std::string sim_result::failure_line() const {
  return "sim: FAILED seed=" + std::to_string(seed) + " step=" + std::to_string(failed_step) +
         " invariant=" + invariant + ": " + details + "; replay with: " + replay;
}

sim_result run_simulation(const sim_options& options) {
  log_silencer quiet(options.trace == nullptr);
  simulation s(options);
  return s.run();
}

}  // namespace weir::sim
