// The sink runner and its workers on CAF's test scheduler, with a scripted
// sink: the backoff sequence, Retry-After, a failed batch going first again,
// and delivery stopping while the dead letters are full and going on once
// space frees. Time moves only when a test advances the test clock.
#include <algorithm>
#include <chrono>
#include <deque>
#include <filesystem>
#include <memory>
#include <optional>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>
#include <catch2/catch.hpp>

#include "actors/sink_runner.hpp"
#include "actors/sink_worker.hpp"
#include "messages/drain_protocol.hpp"
#include "messages/ingest_protocol.hpp"
#include "support/test_scheduler.hpp"
#include "support/test_paths.hpp"
#include "wab/file_io.hpp"

using namespace weir;
using namespace std::chrono_literals;

namespace {

/// What the sink saw and what it answers next: one scripted result per
/// commit, then `committed` for good.
struct sink_script {
  std::deque<commit_result> answers;
  sink_health probe_answer = sink_health::healthy;
  std::string probe_why;  // the reason a probe that is not healthy gives
  std::size_t probes = 0;
  std::vector<std::vector<std::string>> commits;  // the record ids of each commit, in order
};

class scripted_sink : public sink {
 public:
  explicit scripted_sink(std::shared_ptr<sink_script> script) : script_(std::move(script)) {}
  commit_result commit(const std::vector<sink_record>& batch) override {
    std::vector<std::string> ids;
    for (const auto& r : batch) ids.push_back(r.id);
    script_->commits.push_back(std::move(ids));
    if (script_->answers.empty()) return commit_result::ok();
    auto r = script_->answers.front();
    script_->answers.pop_front();
    return r;
  }
  sink_health probe(std::string& why) override {
    ++script_->probes;
    if (script_->probe_answer != sink_health::healthy) why = script_->probe_why;
    return script_->probe_answer;
  }

 private:
  std::shared_ptr<sink_script> script_;
};

class scripted_factory : public sink_factory {
 public:
  explicit scripted_factory(std::shared_ptr<sink_script> script) : script_(std::move(script)) {}
  std::unique_ptr<sink> make() override { return std::make_unique<scripted_sink>(script_); }
  std::string type() const override { return "scripted"; }

 private:
  std::shared_ptr<sink_script> script_;
};

commit_result transient(std::optional<std::chrono::milliseconds> retry_after = std::nullopt, bool answered = false) {
  auto r = commit_result::retry("scripted outage", answered);
  r.retry_after = retry_after;
  return r;
}

struct runner_world : test::test_scheduler {
  test::temp_dir dir;
  std::shared_ptr<sink_script> script = std::make_shared<sink_script>();
  std::shared_ptr<delivery_status> status = std::make_shared<delivery_status>();
  std::shared_ptr<dead_letter_store> dead_letters;
  std::optional<caf::scoped_actor> drain;  // the test plays the drain
  sink_runner_actor runner;
  std::vector<std::string> handed_back;  // ids of the records delivered() got back

  explicit runner_world(sink_runner_settings s = defaults(), std::uint64_t dead_letter_bytes = 1 << 20) {
    std::filesystem::create_directories(dir / "dead_letter");
    dead_letters = std::make_shared<dead_letter_store>(wab::default_file_io(), (dir / "dead_letter").string(),
                                                       dead_letter_bytes);
    drain.emplace(sys());
    s.worker_thread = actor_thread::scheduler;
    runner = spawn_sink_runner(sys(), s, std::make_shared<scripted_factory>(script), dead_letters, status);
    run();
  }
  ~runner_world() {
    caf::anon_send_exit(runner, caf::exit_reason::user_shutdown);
    run();
  }

  static sink_runner_settings defaults() {
    sink_runner_settings s;
    s.concurrency = 1;
    s.retry_initial_ms = 100;
    s.retry_multiplier = 2.0;
    s.retry_max_ms = 1000;
    s.retry_jitter = 0;  // an exact sequence
    s.health_interval_ms = 3600 * 1000;  // no probe in the way
    s.dead_letter_recheck_ms = 300;
    return s;
  }


  /// Runs the runner alone: what it hands its workers waits in their mailboxes.
  void run_runner() { run_only(runner); }

  void send_batch(std::uint64_t id, std::vector<std::string> record_ids, bool then_run = true) {
    delivery_batch b;
    b.id = id;
    b.reply_to = caf::actor_cast<delivery_client_actor>(*drain);
    for (auto& r : record_ids) {
      sink_record rec;
      rec.id = std::move(r);
      rec.segment = "shard_00/seg_00000001.wab";
      rec.payload = {'p'};
      b.records.push_back(std::move(rec));
    }
    (*drain)->send(runner, std::move(b));
    if (then_run) run();
  }

  /// The batch ids the runner said were delivered since the last call.
  std::vector<std::uint64_t> delivered() {
    std::vector<std::uint64_t> out;
    bool more = true;
    while (more)
      (*drain)->receive([&](delivered_atom, std::uint64_t id, spent_batch& spent) {
                          out.push_back(id);
                          REQUIRE(spent.records);
                          // Once the runner's turn is over nothing else holds them
                          // (else the drain could not refill them).
                          CHECK(spent.records.use_count() == 1);
                          for (const auto& r : *spent.records) handed_back.push_back(r.id);
                        },
                        caf::after(std::chrono::seconds(0)) >> [&] { more = false; });
    return out;
  }
};

/// Puts the dead letters over their limit (a world made with 1 KiB of them).
void fill_dead_letters(runner_world& w) {
  sink_record big;
  big.id = "earlier";
  big.payload.assign(2048, 'x');
  std::string error;
  REQUIRE(w.dead_letters->store({{&big, "refused earlier"}}, error) == dead_letter_store::result::stored);
}

}  // namespace

TEST_CASE("sink runner: transient failures back off 100 then 200 400 800 and the cap and retry forever",
          "[actor][sink_runner]") {
  runner_world w;
  for (int i = 0; i < 6; ++i) w.script->answers.push_back(transient());
  w.send_batch(1, {"a"});
  REQUIRE(w.script->commits.size() == 1);
  CHECK(w.status->read().state == delivery_state::retrying);
  std::size_t commits = 1;
  for (std::chrono::milliseconds wait : {100ms, 200ms, 400ms, 800ms, 1000ms, 1000ms}) {
    CHECK(w.status->read().backoff_ms == static_cast<std::uint64_t>(wait.count()));
    w.advance(wait - 1ms);
    CHECK(w.script->commits.size() == commits);  // not a moment early
    w.advance(1ms);
    CHECK(w.script->commits.size() == ++commits);
  }
  CHECK(w.delivered() == std::vector<std::uint64_t>{1});
  CHECK(w.status->read().state == delivery_state::idle);
  CHECK(w.status->read().retries == 6);
  CHECK(w.status->read().health == sink_health::healthy);
}

TEST_CASE("sink runner: a Retry-After from the sink replaces the backoff", "[actor][sink_runner]") {
  runner_world w;
  w.script->answers.push_back(transient(2500ms));
  w.send_batch(7, {"a", "b"});
  CHECK(w.status->read().health == sink_health::degraded);
  w.advance(2499ms);
  CHECK(w.script->commits.size() == 1);
  CHECK(w.delivered().empty());
  w.advance(1ms);
  CHECK(w.script->commits.size() == 2);
  CHECK(w.delivered() == std::vector<std::uint64_t>{7});
}

TEST_CASE("sink runner: a delivered batch's records go back to its drain with the news even after a retry",
          "[actor][sink_runner]") {
  runner_world w;
  w.script->answers.push_back(transient());
  w.send_batch(3, {"r1", "r2"});
  w.send_batch(4, {"r3"});
  w.advance(100ms);
  CHECK(w.delivered() == std::vector<std::uint64_t>{3, 4});
  CHECK(w.handed_back == std::vector<std::string>{"r1", "r2", "r3"});
}

TEST_CASE("sink runner: a failed batch goes first again so order holds with one slot", "[actor][sink_runner]") {
  runner_world w;
  w.script->answers.push_back(transient());
  w.send_batch(1, {"first"});
  w.send_batch(2, {"second"});
  CHECK(w.script->commits.size() == 1);  // nothing else goes while the runner waits
  w.advance(100ms);
  REQUIRE(w.script->commits.size() == 3);
  CHECK(w.script->commits[0] == std::vector<std::string>{"first"});
  CHECK(w.script->commits[1] == std::vector<std::string>{"first"});
  CHECK(w.script->commits[2] == std::vector<std::string>{"second"});
  CHECK(w.delivered() == std::vector<std::uint64_t>{1, 2});
}

TEST_CASE("sink runner: with the dead letters full delivery stops and goes on once space frees",
          "[actor][sink_runner][dead-letter]") {
  // 1 KiB of dead-letter space, already over its limit.
  runner_world w(runner_world::defaults(), 1024);
  fill_dead_letters(w);
  commit_result refused;
  refused.rejected = {{0, "constraint violated"}};
  w.script->answers.push_back(refused);
  w.script->answers.push_back(refused);
  w.script->answers.push_back(refused);
  w.send_batch(3, {"poison"});
  CHECK(w.status->read().state == delivery_state::dead_letter_full);
  CHECK(w.status->read().backoff_ms == 300);
  CHECK(w.status->read().health == sink_health::healthy);  // the sink works: it is the dead letters that are full
  CHECK(w.delivered().empty());
  // Rechecked every dead_letter_recheck_ms, still full.
  w.advance(300ms);
  CHECK(w.script->commits.size() == 2);
  CHECK(w.status->read().state == delivery_state::dead_letter_full);
  // An operator makes room: the next recheck stores the letter and delivery goes on.
  for (const auto& e : std::filesystem::directory_iterator(w.dir / "dead_letter")) std::filesystem::remove(e.path());
  w.advance(300ms);
  CHECK(w.script->commits.size() == 3);
  CHECK(w.delivered() == std::vector<std::uint64_t>{3});
  CHECK(w.status->read().dead_lettered == 1);
  CHECK(w.status->read().state == delivery_state::idle);
}

TEST_CASE("sink runner: a commit beside the batch the full dead letters stopped leaves that reason standing",
          "[actor][sink_runner][dead-letter]") {
  auto s = runner_world::defaults();
  s.concurrency = 2;
  runner_world w(s, 1024);
  fill_dead_letters(w);
  commit_result refused;
  refused.rejected = {{0, "constraint violated"}};
  w.script->answers.push_back(refused);
  w.send_batch(1, {"poison"}, false);
  w.send_batch(2, {"fine"}, false);
  w.run_runner();
  REQUIRE(w.sched().jobs.size() == 2);  // both in flight at once
  w.run();
  // The refused batch's answer came first, then the other's commit.
  REQUIRE(w.script->commits == std::vector<std::vector<std::string>>{{"poison"}, {"fine"}});
  CHECK(w.delivered() == std::vector<std::uint64_t>{2});
  CHECK(w.status->read().state == delivery_state::dead_letter_full);
  CHECK(w.status->last_error() == "dead letters are over drain.dead_letter_max_bytes");
}

TEST_CASE("sink runner: a failed commit that settled its first records sends only the rest again",
          "[actor][sink_runner][dead-letter]") {
  runner_world w;
  // Records a and b stored, c refused for good, d failed: d and e go again.
  auto partial = transient(std::nullopt, true);
  partial.settled = 3;
  partial.rejected = {{2, "HTTP 422"}};
  w.script->answers.push_back(partial);
  auto again = transient(std::nullopt, true);  // then e fails once more, after d went through
  again.settled = 1;
  w.script->answers.push_back(again);
  w.send_batch(1, {"a", "b", "c", "d", "e"});
  CHECK(w.delivered().empty());  // confirmed to the drain only whole
  CHECK(w.status->read().dead_lettered == 1);
  CHECK(w.dead_letters->bytes() > 0);
  CHECK(w.status->read().backoff_ms == 100);
  w.advance(100ms);
  // A try that moved on starts the backoff over: 100 again, not 200.
  CHECK(w.status->read().backoff_ms == 100);
  w.advance(100ms);
  CHECK(w.delivered() == std::vector<std::uint64_t>{1});
  REQUIRE(w.script->commits.size() == 3);
  CHECK(w.script->commits[1] == std::vector<std::string>{"d", "e"});
  CHECK(w.script->commits[2] == std::vector<std::string>{"e"});
  CHECK(w.status->read().committed_records == 4);
  CHECK(w.status->read().dead_lettered == 1);
}

TEST_CASE("sink runner: a failed commit whose settled refusals find the dead letters full stops as they do and sends the whole batch again",
          "[actor][sink_runner][dead-letter]") {
  runner_world w(runner_world::defaults(), 1024);
  fill_dead_letters(w);
  auto partial = transient(std::nullopt, true);
  partial.settled = 2;
  partial.rejected = {{1, "HTTP 422"}};
  w.script->answers.push_back(partial);
  w.send_batch(1, {"a", "b", "c"});
  CHECK(w.status->read().state == delivery_state::dead_letter_full);
  CHECK(w.status->last_error() == "dead letters are over drain.dead_letter_max_bytes");
  CHECK(w.status->read().health == sink_health::healthy);  // not the sink's failure
  for (const auto& e : std::filesystem::directory_iterator(w.dir / "dead_letter")) std::filesystem::remove(e.path());
  w.advance(300ms);  // the recheck: room again
  REQUIRE(w.script->commits.size() == 2);
  CHECK(w.script->commits[1] == std::vector<std::string>{"a", "b", "c"});  // nothing was settled
  CHECK(w.delivered() == std::vector<std::uint64_t>{1});
}

TEST_CASE("sink runner: at most sink.concurrency commits are in flight and the rest wait for a free slot",
          "[actor][sink_runner][slots]") {
  auto s = runner_world::defaults();
  s.concurrency = 2;
  runner_world w(s);
  for (std::uint64_t id = 1; id <= 3; ++id) w.send_batch(id, {"r" + std::to_string(id)}, false);
  w.run_runner();
  // Two workers hold a commit each; the third batch waits in the runner.
  CHECK(w.sched().jobs.size() == 2);
  CHECK(w.script->commits.empty());
  CHECK(w.status->read().state == delivery_state::delivering);
  w.run();
  REQUIRE(w.script->commits.size() == 3);
  auto done = w.delivered();
  std::sort(done.begin(), done.end());
  CHECK(done == std::vector<std::uint64_t>{1, 2, 3});
  CHECK(w.status->read().state == delivery_state::idle);
  CHECK(w.status->read().committed_batches == 3);
}

TEST_CASE("sink runner: the commits of one attempt failing on every slot count as one failure",
          "[actor][sink_runner][health]") {
  auto s = runner_world::defaults();
  s.concurrency = 4;
  s.down_after_failures = 3;
  runner_world w(s);
  for (int i = 0; i < 12; ++i) w.script->answers.push_back(transient());
  for (std::uint64_t id = 1; id <= 4; ++id) w.send_batch(id, {"r" + std::to_string(id)}, false);
  w.run();
  // Four slots failed at once: one failed attempt, the first backoff step.
  REQUIRE(w.script->commits.size() == 4);
  CHECK(w.status->read().retries == 4);
  CHECK(w.status->read().backoff_ms == 100);
  CHECK(w.status->read().health == sink_health::degraded);
  w.advance(100ms);
  REQUIRE(w.script->commits.size() == 8);
  CHECK(w.status->read().backoff_ms == 200);
  CHECK(w.status->read().health == sink_health::degraded);
  w.advance(199ms);
  CHECK(w.script->commits.size() == 8);
  w.advance(1ms);
  REQUIRE(w.script->commits.size() == 12);
  // The third failed attempt in a row: down.
  CHECK(w.status->read().backoff_ms == 400);
  CHECK(w.status->read().health == sink_health::down);
  CHECK(w.status->last_error() == "scripted outage");
  w.advance(400ms);
  CHECK(w.script->commits.size() == 16);
  auto done = w.delivered();
  std::sort(done.begin(), done.end());
  CHECK(done == std::vector<std::uint64_t>{1, 2, 3, 4});
  // A commit went through: healthy, the error and the wait cleared.
  CHECK(w.status->read().health == sink_health::healthy);
  CHECK(w.status->last_error().empty());
  CHECK(w.status->read().backoff_ms == 0);
  CHECK(w.status->read().last_commit_unix_ns > 0);
}

TEST_CASE("sink runner: a probe that succeeds during a backoff retries at once but is no proof of health",
          "[actor][sink_runner][health]") {
  auto s = runner_world::defaults();
  s.retry_initial_ms = 10000;
  s.retry_max_ms = 60000;
  s.health_interval_ms = 1000;
  runner_world w(s);
  w.script->answers.push_back(transient());
  w.script->answers.push_back(transient());
  w.send_batch(1, {"a"});
  REQUIRE(w.script->commits.size() == 1);
  CHECK(w.status->read().backoff_ms == 10000);
  // The probe fails: the wait goes on.
  w.script->probe_answer = sink_health::down;
  w.advance(1000ms);
  CHECK(w.script->probes == 1);
  CHECK(w.script->commits.size() == 1);
  // The probe succeeds: the batch goes again now, not 9 s later; it fails,
  // and a probe never said healthy while commits fail.
  w.script->probe_answer = sink_health::healthy;
  w.advance(1000ms);
  CHECK(w.script->probes == 2);
  REQUIRE(w.script->commits.size() == 2);
  CHECK(w.status->read().health == sink_health::degraded);
  CHECK(w.status->read().backoff_ms == 20000);
  w.advance(1000ms);
  REQUIRE(w.script->commits.size() == 3);
  CHECK(w.delivered() == std::vector<std::uint64_t>{1});
  CHECK(w.status->read().health == sink_health::healthy);
}

namespace {

/// A failure whose wait is 3 s (the backoff's first step, or what the sink
/// asked for) is waited out whole while a probe connects every 500 ms.
void check_probes_do_not_cut_the_wait(const commit_result& failure) {
  auto s = runner_world::defaults();
  s.retry_initial_ms = 3000;
  s.retry_max_ms = 60000;
  s.health_interval_ms = 500;
  runner_world w(s);
  w.script->answers.push_back(failure);
  w.send_batch(1, {"a"});
  for (int i = 0; i < 5; ++i) w.advance(500ms);  // a probe every 500 ms, each answering healthy
  w.advance(499ms);
  CHECK(w.script->probes == 5);
  CHECK(w.script->commits.size() == 1);
  w.advance(1ms);
  CHECK(w.script->commits.size() == 2);
  CHECK(w.delivered() == std::vector<std::uint64_t>{1});
}

}  // namespace

TEST_CASE("sink runner: a failure the sink answered (a 503) is waited out whatever the probe says",
          "[actor][sink_runner][health]") {
  check_probes_do_not_cut_the_wait(transient(std::nullopt, true));
}

TEST_CASE("sink runner: a Retry-After is waited out whatever the probe says", "[actor][sink_runner][health]") {
  check_probes_do_not_cut_the_wait(transient(3000ms));
}

TEST_CASE("sink runner: with nothing to deliver the probe's answer is the health", "[actor][sink_runner][health]") {
  auto s = runner_world::defaults();
  s.health_interval_ms = 1000;
  runner_world w(s);
  w.script->probe_answer = sink_health::down;
  w.script->probe_why = "connecting to the sink: refused";
  w.advance(1000ms);
  CHECK(w.status->read().health == sink_health::down);
  CHECK(w.status->last_error() == "connecting to the sink: refused");  // status shows why
  w.script->probe_answer = sink_health::healthy;
  w.advance(1000ms);
  CHECK(w.status->read().health == sink_health::healthy);
  CHECK(w.status->last_error().empty());

  // A commit that goes through clears a failed probe's reason too.
  w.script->probe_answer = sink_health::down;
  w.advance(1000ms);
  REQUIRE_FALSE(w.status->last_error().empty());
  w.send_batch(1, {"a"});
  w.advance(10ms);
  CHECK(w.delivered() == std::vector<std::uint64_t>{1});
  CHECK(w.status->read().health == sink_health::healthy);
  CHECK(w.status->last_error().empty());
}

namespace {

class broken_factory : public sink_factory {
 public:
  std::unique_ptr<sink> make() override { throw std::runtime_error("cannot open the sink"); }
  std::string type() const override { return "broken"; }
};

}  // namespace

TEST_CASE("sink worker: refused records are stored as dead letters before it answers", "[actor][sink_worker]") {
  runner_world w;  // for its actor system, clock and dead-letter store
  commit_result refused;
  refused.rejected = {{1, "bad row"}};
  w.script->answers.push_back(refused);
  auto worker = spawn_sink_worker(w.sys(), std::make_shared<scripted_factory>(w.script), w.dead_letters, nullptr,
                                  actor_thread::scheduler);
  auto records = std::make_shared<std::vector<sink_record>>(2);
  (*records)[0].id = "good";
  (*records)[1].id = "bad";
  (*records)[1].payload = {'b'};
  (*w.drain)->send(worker, commit_job{records});
  w.run();
  std::optional<commit_outcome> out;
  (*w.drain)->receive([&](commit_outcome& o) { out = o; }, caf::after(std::chrono::seconds(0)) >> [] {});
  REQUIRE(out);
  CHECK(out->what == commit_outcome::kind::committed);
  CHECK(out->dead_lettered == 1);
  CHECK(w.dead_letters->bytes() > 0);  // on disk before the answer
  caf::anon_send_exit(worker, caf::exit_reason::user_shutdown);
}

TEST_CASE("sink worker: a sink that cannot be made is down and its commits are transient", "[actor][sink_worker]") {
  runner_world w;
  auto worker = spawn_sink_worker(w.sys(), std::make_shared<broken_factory>(), w.dead_letters, nullptr,
                                  actor_thread::scheduler);
  (*w.drain)->send(worker, probe_atom::value);
  (*w.drain)->send(worker, commit_job{std::make_shared<std::vector<sink_record>>(1)});
  w.run();
  std::optional<sink_health> health;
  std::string why;
  std::optional<commit_outcome> out;
  for (int i = 0; i < 2; ++i)
    (*w.drain)->receive([&](sink_health h, std::string& reason) { health = h, why = reason; },
                        [&](commit_outcome& o) { out = o; }, caf::after(std::chrono::seconds(0)) >> [] {});
  REQUIRE(health);
  CHECK(*health == sink_health::down);
  CHECK(why == "cannot open the sink");  // the probe says why
  REQUIRE(out);
  CHECK(out->what == commit_outcome::kind::transient);
  CHECK(out->error == "cannot open the sink");
  caf::anon_send_exit(worker, caf::exit_reason::user_shutdown);
}
