// The connection actor's protocol with a scripted socket: replies in order,
// the exact Nack for each violation, close after it, and read requests that
// carry the mid-frame flag the read timeout depends on. Deterministic: every
// actor runs on CAF's test scheduler, one message at a time, in this thread,
// and time moves only when a test advances it.
#include <atomic>
#include <chrono>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/send.hpp>
#include <catch2/catch.hpp>

#include <caf/typed_event_based_actor.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/stateful_actor.hpp>

#include "actors/connection.hpp"
#include "actors/reply_queue.hpp"
#include "messages/ingest_protocol.hpp"
#include "wire/batch.hpp"
#include "wire/coordinate.hpp"
#include "wire/frame.hpp"

#include "support/test_scheduler.hpp"

using namespace weir;
using namespace weir::wire;

namespace {

/// Records what the actor asked of its socket. Everything runs in the test's
/// thread, so no lock is needed.
class scripted_socket : public connection_io {
 public:
  void write(byte_buffer bytes) override {
    writes.push_back(std::move(bytes));
    if (writes.size() >= block_after_writes) blocked = true;
  }
  void consumed(bool mid_frame, std::uint64_t frames_done, std::uint64_t chunks_consumed) override {
    reads.push_back(mid_frame);
    frames.push_back(frames_done);
    chunks.push_back(chunks_consumed);
  }
  void hold_frame(std::uint64_t frames_done) override { holds.push_back(frames_done); }
  void set_replies_owed(bool is_owed) override {
    CHECK(is_owed != owed);  // told of changes only
    owed = is_owed;
  }
  bool write_blocked() const override { return blocked; }
  void close() override { closed = true; }
  void abort() override { closed = aborted = true; }
  bool unread_input() const override { return unread; }
  std::chrono::nanoseconds loss_recovery_time() const override { return recovery; }

  std::vector<byte_buffer> writes;
  std::vector<bool> reads;  // mid_frame of each consumed() call
  std::vector<std::uint64_t> frames;
  std::vector<std::uint64_t> chunks;
  std::vector<std::uint64_t> holds;  // frames_done of each hold_frame call
  std::chrono::nanoseconds recovery{};  // what TCP would say
  bool closed = false;
  bool aborted = false;
  bool unread = false;  // what unread_input() says
  bool owed = false;
  /// A peer that stops reading its replies after this many.
  std::size_t block_after_writes = SIZE_MAX;
  bool blocked = false;
};

/// A shard writer that holds every request until told to answer them all,
/// last first: the connection must still write replies in submission order.
/// It speaks the writer's whole typed interface.
struct held_count {
  std::atomic<std::size_t> held{0};
  std::atomic<std::size_t> most_held{0};
  /// Answer into the request's reply queue, as the daemon's writers do for a
  /// lone request, instead of by message.
  bool direct = false;
  /// Requests that brought their connection's reply channel.
  std::atomic<std::size_t> with_channel{0};
};
struct held_state {
  std::shared_ptr<held_count> load;
  std::vector<std::pair<ingest_client_actor, ingest_request>> held;
};
shard_writer_actor::behavior_type held_writer(shard_writer_actor::stateful_pointer<held_state> self,
                                              std::shared_ptr<held_count> load) {
  self->state.load = std::move(load);
  auto count = [=] {
    auto& l = *self->state.load;
    l.held = self->state.held.size();
    l.most_held = std::max(l.most_held.load(), l.held.load());
  };
  return {
      [=](ingest_request& r) {
        CHECK(r.reply_to);  // the connection names itself
        if (r.replies) ++self->state.load->with_channel;
        self->state.held.emplace_back(r.reply_to, std::move(r));
        count();
      },
      [=](flush_atom) {
        auto& held = self->state.held;
        for (auto it = held.rbegin(); it != held.rend(); ++it) {
          wire::record_coordinate c;
          c.index = it->second.tag + 1;
          c.segment = "shard_00/seg_00000001.wab";
          if (self->state.load->direct) it->second.replies->fill(it->second.tag, wire::encode_ack_tracked(c), 1);
          else self->send(it->first, ingest_reply{it->second.tag, wire::encode_ack_tracked(c), 1});
        }
        held.clear();
        count();
      },
      [=](retry_open_atom) {},
      [=](started_atom) { return done_atom::value; },
      [=](shutdown_atom) { return done_atom::value; },
  };
}

struct harness : test::test_scheduler {
  std::shared_ptr<scripted_socket> socket = std::make_shared<scripted_socket>();
  connection_actor conn;
  shard_writer_actor writer;
  std::shared_ptr<held_count> load = std::make_shared<held_count>();


  explicit harness(connection_settings s = {}, bool with_writer = false) {
    if (with_writer) s.writer = writer = sys().spawn(held_writer, load);
    conn = spawn_connection(sys(), socket, s);
    run();
  }

  /// Runs, then says whether `pred` holds.
  template <class Pred>
  bool settled(Pred pred) {
    run();
    return pred();
  }

  /// (held now, most ever held at once)
  std::pair<std::size_t, std::size_t> writer_load() {
    run();
    return {load->held.load(), load->most_held.load()};
  }
  std::uint64_t index_of(std::size_t i) {
    auto f = decode_frame(socket->writes.at(i));
    REQUIRE(f);
    auto c = decode_coordinate(f.value().payload);
    REQUIRE(c);
    return c.value().index;
  }
  ~harness() {
    if (conn) caf::anon_send_exit(conn, caf::exit_reason::user_shutdown);
    if (writer) caf::anon_send_exit(writer, caf::exit_reason::user_shutdown);
    run();
  }
  void send(const byte_buffer& bytes) { caf::anon_send(conn, socket_data_atom::value, bytes); }

  std::uint8_t reply_type(std::size_t i) { return socket->writes.at(i).at(5); }
  std::uint8_t nack_reason_of(std::size_t i) { return socket->writes.at(i).at(header_size); }
};

byte_buffer health() { return encode_frame(message_type::health_check, durability::durable, {}); }

/// Sends `bytes` to `h`, whose frame then waits in line for frame memory.
void wait_in_line(harness& h, const byte_buffer& bytes) {
  h.send(bytes);
  REQUIRE(h.settled([&] { return !h.socket->holds.empty(); }));
}

/// Connections sharing `budget`, payloads over 1 KiB drawing on it.
connection_settings budgeted(const std::shared_ptr<frame_budget>& budget, std::uint32_t retry_ms) {
  connection_settings s;
  s.budget = budget;
  s.budget_above = 1024;
  s.budget_retry_ms = retry_ms;  // limits.frame_memory_retry_ms
  return s;
}

/// An 80 KiB Durable push, which draws on the budget.
byte_buffer big_push() { return encode_frame(message_type::push, durability::durable, byte_buffer(80 * 1024, 'b')); }

/// Sends `frame` to `h`, whose writer holds its request and so its share
/// of the budget until the writer is flushed.
void held_by_writer(harness& h, const byte_buffer& frame) {
  h.send(frame);
  REQUIRE(h.writer_load().first == 1);
}

/// Moves the harnesses' clocks on together, `times` steps of `step`.
void advance_together(std::initializer_list<harness*> hs, std::chrono::milliseconds step, int times = 1) {
  for (int i = 0; i < times; ++i)
    for (harness* h : hs) h->advance(step);
}

}  // namespace

TEST_CASE("connection asks for the first read and answers a HealthCheck", "[actor][connection]") {
  harness h;
  REQUIRE(h.settled([&] { return h.socket->reads.size() == 1; }));
  CHECK_FALSE(h.socket->reads[0]);
  h.send(health());
  REQUIRE(h.settled([&] { return h.socket->writes.size() == 1 && h.socket->reads.size() == 2; }));
  CHECK(h.socket->writes[0] == encode_health_check_response());
  CHECK_FALSE(h.socket->closed);
}

TEST_CASE("pipelined frames are answered in submission order", "[actor][connection]") {
  for (auto mode : {ack_mode::strict, ack_mode::ordered}) {
    connection_settings s;
    s.mode = mode;
    harness h(s);
    byte_buffer stream = health();
    append_frame(stream, message_type::push, durability::durable, byte_buffer{'x'});
    append_frame(stream, message_type::health_check, durability::durable, {});
    h.send(stream);
    REQUIRE(h.settled([&] { return h.socket->writes.size() == 3; }));
    CHECK(h.reply_type(0) == 0x05);
    CHECK(h.reply_type(1) == 0x03);  // no shard writer: a push is refused transiently...
    CHECK(h.nack_reason_of(1) == 0x06);
    CHECK(h.reply_type(2) == 0x05);
    CHECK_FALSE(h.socket->closed);  // ...and InternalError keeps the connection open
  }
}

TEST_CASE("a partial frame asks for more with the mid-frame flag", "[actor][connection]") {
  harness h;
  auto frame = health();
  h.send(byte_buffer(frame.begin(), frame.begin() + 7));
  REQUIRE(h.settled([&] { return h.socket->reads.size() == 2; }));
  CHECK(h.socket->reads[1]);
  h.send(byte_buffer(frame.begin() + 7, frame.end()));
  REQUIRE(h.settled([&] { return h.socket->writes.size() == 1 && h.socket->reads.size() == 3; }));
  CHECK_FALSE(h.socket->reads[2]);
}

TEST_CASE("a violation after a good frame gets reply then Nack then close and no further read", "[actor][connection]") {
  harness h;
  byte_buffer stream = health();
  auto bad = encode_frame(message_type::push, durability::durable, byte_buffer{'x'});
  bad[0] = 'X';
  stream.insert(stream.end(), bad.begin(), bad.end());
  const auto unanswered = health();  // follows the violation: never answered
  stream.insert(stream.end(), unanswered.begin(), unanswered.end());
  h.send(stream);
  REQUIRE(h.settled([&] { return h.socket->closed; }));
  REQUIRE(h.socket->writes.size() == 2);
  CHECK(h.reply_type(0) == 0x05);
  CHECK(h.socket->writes[1] == encode_nack(nack_reason::bad_magic));
  CHECK(h.socket->reads.size() == 1);
}

TEST_CASE("daemon-to-client types from a client get UnknownMessage and a close", "[actor][connection]") {
  for (auto t : {message_type::ack, message_type::nack, message_type::health_check_response,
                 message_type::ack_tracked, message_type::ack_batch}) {
    harness h;
    h.send(encode_frame(t, durability::durable, t == message_type::nack ? byte_buffer{1} : byte_buffer{}));
    REQUIRE(h.settled([&] { return h.socket->closed; }));
    REQUIRE(h.socket->writes.size() == 1);
    CHECK(h.socket->writes[0] == encode_nack(nack_reason::unknown_message));
  }
}

TEST_CASE("PushBatch bodies are validated before anything else happens", "[actor][connection]") {
  struct bad_body {
    byte_buffer body;
    nack_reason expected;
  };
  const byte_buffer one{'a'};
  std::vector<bad_body> cases{
      {{2, 1, 0, 1, 0, 0, 0, 'a'}, nack_reason::bad_batch_framing},           // version 2
      {{1, 2, 0, 1, 0, 0, 0, 'a', 0, 0, 0, 0}, nack_reason::empty_payload},   // empty record
      {{1, 5, 0}, nack_reason::payload_too_large},                            // over max_batch_records
      {{1, 1, 0, 9, 0, 0, 0, 'a'}, nack_reason::bad_batch_framing},           // truncated record
  };
  connection_settings s;
  s.max_batch_records = 4;
  for (auto& c : cases) {
    harness h(s);
    h.send(encode_frame(message_type::push_batch, durability::durable, c.body));
    REQUIRE(h.settled([&] { return h.socket->closed; }));
    REQUIRE(h.socket->writes.size() == 1);
    CHECK(h.socket->writes[0] == encode_nack(c.expected));
  }
}

TEST_CASE("a record over the configured payload cap is refused from its header", "[actor][connection]") {
  connection_settings s;
  s.payload_cap = 8;
  harness h(s);
  auto frame = encode_frame(message_type::push, durability::durable, byte_buffer(9, 'z'));
  h.send(byte_buffer(frame.begin(), frame.begin() + header_size));
  REQUIRE(h.settled([&] { return h.socket->closed; }));
  CHECK(h.socket->writes.at(0) == encode_nack(nack_reason::payload_too_large));
}

namespace {

byte_buffer pushes(int n) {
  byte_buffer stream;
  for (int i = 0; i < n; ++i) append_frame(stream, message_type::push_tracked, durability::durable, byte_buffer{'p'});
  return stream;
}

/// Answers whatever the writer holds until `total` replies were written.
void answer_until(harness& h, std::size_t total) {
  for (int i = 0; i < 200; ++i) {
    caf::anon_send(h.writer, flush_atom::value);
    if (h.settled([&] { return h.socket->writes.size() >= total; })) return;
  }
}

}  // namespace

TEST_CASE("ordered mode keeps max_inflight requests in flight and replies in submission order",
          "[actor][connection][ordered]") {
  connection_settings s;
  s.mode = ack_mode::ordered;
  s.max_inflight = 4;
  harness h(s, true);
  h.send(pushes(10));
  CHECK(h.writer_load().first == 4);  // the fifth waits for a reply slot
  CHECK(h.socket->writes.empty());
  answer_until(h, 10);
  REQUIRE(h.socket->writes.size() == 10);
  for (std::size_t i = 0; i < 10; ++i) CHECK(h.index_of(i) == i + 1);  // answered last-first, written in order
  CHECK(h.writer_load().second == 4);
  CHECK(h.load->with_channel.load() == 10);
}

TEST_CASE("with runtime.direct_replies off requests bring no reply channel and replies by message keep their order",
          "[actor][connection][ordered]") {
  connection_settings s;
  s.mode = ack_mode::ordered;
  s.max_inflight = 4;
  s.direct_replies = false;
  harness h(s, true);
  h.send(pushes(6));
  CHECK(h.writer_load().first == 4);
  answer_until(h, 6);
  REQUIRE(h.socket->writes.size() == 6);
  for (std::size_t i = 0; i < 6; ++i) CHECK(h.index_of(i) == i + 1);
  CHECK(h.load->with_channel.load() == 0);
}

TEST_CASE("strict mode has one request in flight at a time", "[actor][connection][strict]") {
  connection_settings s;
  s.mode = ack_mode::strict;
  harness h(s, true);
  h.send(pushes(5));
  answer_until(h, 5);
  REQUIRE(h.socket->writes.size() == 5);
  for (std::size_t i = 0; i < 5; ++i) CHECK(h.index_of(i) == i + 1);
  CHECK(h.writer_load().second == 1);
}

TEST_CASE("when the shard writer stops every owed and later push is refused transiently", "[actor][connection]") {
  harness h({}, true);
  h.send(pushes(3));
  caf::anon_send_exit(h.writer, caf::exit_reason::user_shutdown);
  REQUIRE(h.settled([&] { return h.socket->writes.size() == 3; }));
  h.send(pushes(1));
  REQUIRE(h.settled([&] { return h.socket->writes.size() == 4; }));
  for (std::size_t i = 0; i < 4; ++i) CHECK(h.socket->writes[i] == encode_nack(nack_reason::internal_error));
  CHECK_FALSE(h.socket->closed);
}

TEST_CASE("end of input still gets every owed reply before the close", "[actor][connection]") {
  harness h({}, true);
  h.send(pushes(3));
  caf::anon_send(h.conn, socket_eof_atom::value);
  h.run();
  CHECK_FALSE(h.socket->closed);
  caf::anon_send(h.writer, flush_atom::value);
  REQUIRE(h.settled([&] { return h.socket->closed; }));
  CHECK(h.socket->writes.size() == 3);
}

TEST_CASE("end of input read ahead of frames the ack mode holds still gets all of them answered",
          "[actor][connection][strict]") {
  connection_settings s;
  s.mode = ack_mode::strict;
  harness h(s, true);
  h.send(pushes(3));  // one read: the second and third wait for the first reply
  caf::anon_send(h.conn, socket_eof_atom::value);  // and the socket read on, to the end
  h.run();
  CHECK_FALSE(h.socket->closed);
  answer_until(h, 3);
  REQUIRE(h.settled([&] { return h.socket->closed; }));
  REQUIRE(h.socket->writes.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) CHECK(h.index_of(i) == i + 1);
}

TEST_CASE("a frame completed while the next one waits for a reply stops its read deadline",
          "[actor][connection][strict]") {
  connection_settings s;
  s.mode = ack_mode::strict;
  harness h(s, true);
  const auto two = pushes(2);
  h.send(byte_buffer(two.begin(), two.begin() + 7));  // the first frame starts
  REQUIRE(h.settled([&] { return h.socket->reads.size() == 2; }));
  CHECK(h.socket->reads.back());  // its deadline runs
  h.send(byte_buffer(two.begin() + 7, two.end()));  // it ends, and the second waits whole
  REQUIRE(h.writer_load().first == 1);
  REQUIRE(h.socket->reads.size() == 3);
  CHECK_FALSE(h.socket->reads.back());  // no frame of the peer's is half-read now
  CHECK(h.socket->frames.back() == 1);
  CHECK(h.socket->chunks.back() == 0);  // the second read is still held
  answer_until(h, 2);
  CHECK(h.socket->writes.size() == 2);
}

TEST_CASE("a closed connection leaves nothing behind in its shard writer", "[actor][connection]") {
  harness h({}, true);
  REQUIRE(h.settled([&] { return h.socket->reads.size() == 1; }));
  const caf::actor_addr addr = h.conn.address();  // a weak reference, as a monitor holds
  auto* block = caf::actor_cast<caf::actor_control_block*>(addr);
  {
    caf::scoped_actor self{h.sys()};
    self->monitor(h.conn);
    caf::anon_send(h.conn, socket_closed_atom::value);
    h.run();
    bool down = false;
    self->receive([&](caf::down_msg&) { down = true; }, caf::after(std::chrono::seconds(0)) >> [] {});
    REQUIRE(down);
  }
  h.conn = nullptr;
  h.run();
  REQUIRE(block->strong_refs.load() == 0);
  // Only this test's own address is left: the writer, which lives as long as
  // the daemon, keeps no reference that would pin the connection's memory.
  CHECK(block->weak_refs.load() == 1);
}

TEST_CASE("a peer that does not read its replies is not read from either", "[actor][connection][backpressure]") {
  harness h;
  h.socket->block_after_writes = 3;
  byte_buffer stream;
  for (int i = 0; i < 50; ++i) append_frame(stream, message_type::health_check, durability::durable, {});
  h.send(stream);
  REQUIRE(h.settled([&] { return h.socket->writes.size() == 3; }));
  // Blocked: the 47 frames already read wait, and nothing more is read.
  CHECK_FALSE(h.settled([&] { return h.socket->writes.size() > 3; }));
  CHECK(h.socket->reads.size() == 1);
  h.socket->block_after_writes = SIZE_MAX;
  h.socket->blocked = false;
  caf::anon_send(h.conn, socket_writable_atom::value);
  REQUIRE(h.settled([&] { return h.socket->writes.size() == 50 && h.socket->reads.size() == 2; }));
}

TEST_CASE("large frames share a memory budget: one waits until another's reply is written",
          "[actor][connection][budget]") {
  auto budget = std::make_shared<frame_budget>(100 * 1024);
  const auto s = budgeted(budget, 7);
  harness holder(s, true);  // its writer holds the request, and so the memory
  harness waiter(s);
  const auto big = big_push();
  held_by_writer(holder, big);
  CHECK(budget->in_use() == 80 * 1024);

  waiter.send(big);
  // While it waits for memory it reads nothing, and its frame's deadline
  // runs all the same: it asks the socket to hold the frame.
  REQUIRE(waiter.settled([&] { return !waiter.socket->holds.empty(); }));
  CHECK(waiter.socket->holds.front() == 0);
  CHECK(budget->waits() == 1);
  // It asks again every budget_retry_ms, and waits on: one wait, however many asks.
  waiter.advance(std::chrono::milliseconds(6));
  waiter.advance(std::chrono::milliseconds(1));
  CHECK(budget->waits() == 1);
  CHECK(waiter.socket->writes.empty());
  CHECK(budget->in_use() == 80 * 1024);

  caf::anon_send(holder.writer, flush_atom::value);  // the holder's reply goes out and frees its share
  holder.run();
  CHECK(budget->in_use() == 0);
  waiter.advance(std::chrono::milliseconds(7));  // the next ask gets it
  REQUIRE(waiter.socket->writes.size() == 1);
  CHECK(waiter.socket->writes[0] == encode_nack(nack_reason::internal_error));  // no writer: refused, after all
  REQUIRE(holder.settled([&] { return holder.socket->writes.size() == 1; }));
  CHECK(budget->in_use() == 0);

  // A connection that goes away mid-frame gives its share back.
  waiter.send(byte_buffer(big.begin(), big.begin() + 100));
  waiter.run();
  CHECK(budget->in_use() == 80 * 1024);
  caf::anon_send(waiter.conn, socket_closed_atom::value);
  waiter.run();
  CHECK(budget->in_use() == 0);
}

TEST_CASE("a share whose peer stopped sending is taken back for a connection that waits",
          "[actor][connection][budget]") {
  auto budget = std::make_shared<frame_budget>(100 * 1024);
  auto s = budgeted(budget, 5);
  s.budget_stall_ms = 1000;  // limits.frame_memory_stall_ms
  s.budget_read_timeout_ms = 3600000;  // slow as they are, its bytes would be in time
  harness holder(s);
  harness waiter(s);
  const auto big = big_push();
  // The holder announces 80 KiB and sends a part of it.
  holder.send(byte_buffer(big.begin(), big.begin() + 1000));
  holder.run();
  REQUIRE(budget->in_use() == 80 * 1024);
  wait_in_line(waiter, big);

  // Bytes keep coming to the holder: it is not stalled, whoever waits.
  advance_together({&holder, &waiter}, std::chrono::milliseconds(900));
  holder.send(byte_buffer(big.begin() + 1000, big.begin() + 2000));
  holder.run();
  advance_together({&holder, &waiter}, std::chrono::milliseconds(900));
  CHECK_FALSE(holder.socket->closed);
  CHECK(budget->reclaims() == 0);

  // Bytes of its that wait unread mean the daemon is behind, not the peer.
  holder.socket->unread = true;
  advance_together({&holder, &waiter}, std::chrono::milliseconds(200));
  CHECK_FALSE(holder.socket->closed);
  // Unless the daemon stopped reading because the peer does not read its
  // replies: then the waiter's next ask closes it at once, replies or not.
  holder.socket->blocked = true;
  waiter.advance(std::chrono::milliseconds(5));
  CHECK(holder.socket->aborted);
  CHECK(budget->reclaims() == 1);
  CHECK(waiter.socket->writes.empty());
  // One connection closed is enough: its share is counted as coming back.
  waiter.advance(std::chrono::milliseconds(50));
  CHECK(budget->reclaims() == 1);
  // Its socket closes, the share comes back, and the waiter's frame goes in.
  caf::anon_send(holder.conn, socket_closed_atom::value);
  holder.run();
  CHECK(budget->in_use() == 0);
  waiter.advance(std::chrono::milliseconds(5));
  REQUIRE(waiter.socket->writes.size() == 1);
  CHECK(waiter.socket->writes[0] == encode_nack(nack_reason::internal_error));  // no writer: refused, after all
  CHECK_FALSE(waiter.socket->closed);
}

namespace {

/// Two connections hold 40 KiB each of a 100 KiB budget while a third waits
/// for `wanted`. The read timeout is 10 s: a share is judged after 1.67 s.
/// Each tick (100 ms) both send 10 bytes of their payload (never quiet for
/// the stall time): a fortieth of the pace that brings 40 KiB in 10 s; but
/// the one `ahead` sent 39 KiB with its header, before its share was
/// granted, so that pace brings the rest in time.
struct slow_and_ahead {
  std::shared_ptr<frame_budget> budget = std::make_shared<frame_budget>(100 * 1024);
  connection_settings s = [this] {
    auto c = budgeted(budget, 5);
    c.budget_stall_ms = 1000;          // limits.frame_memory_stall_ms
    c.budget_read_timeout_ms = 10000;  // listen.read_timeout_ms
    return c;
  }();
  harness slow{s}, ahead{s}, waiter{s};
  const byte_buffer part = encode_frame(message_type::push, durability::durable, byte_buffer(40 * 1024, 'p'));
  std::size_t slow_sent = header_size + 100, ahead_sent = header_size + 39 * 1024;

  explicit slow_and_ahead(std::size_t wanted) {
    slow.send(byte_buffer(part.begin(), part.begin() + static_cast<std::ptrdiff_t>(slow_sent)));
    ahead.send(byte_buffer(part.begin(), part.begin() + static_cast<std::ptrdiff_t>(ahead_sent)));
    slow.run();
    ahead.run();
    REQUIRE(budget->in_use() == 80 * 1024);
    wait_in_line(waiter, encode_frame(message_type::push, durability::durable, byte_buffer(wanted, 'b')));
  }
  void tick() {
    advance_together({&slow, &ahead, &waiter}, std::chrono::milliseconds(100));
    for (auto [h, sent] : {std::pair{&slow, &slow_sent}, std::pair{&ahead, &ahead_sent}}) {
      const std::size_t to = std::min(part.size(), *sent + 10);
      if (!h->socket->closed)
        h->send(byte_buffer(part.begin() + static_cast<std::ptrdiff_t>(*sent), part.begin() + static_cast<std::ptrdiff_t>(to)));
      *sent = to;
      h->run();
    }
  }
};

}  // namespace

TEST_CASE("a share whose bytes come hopelessly slowly for its read timeout is taken back for a waiter",
          "[actor][connection][budget]") {
  slow_and_ahead t(60 * 1024);  // 20 KiB are free: the slow one's 40 make room
  // Held for less than a sixth of the timeout, nobody is judged on its pace.
  for (int i = 0; i < 16; ++i) t.tick();
  CHECK_FALSE(t.slow.socket->closed);
  CHECK(t.budget->reclaims() == 0);
  // Then the slow one is far behind and goes; the one ahead stays.
  int ticks = 0;
  while (!t.slow.socket->aborted && ticks < 5) {
    t.tick();
    ++ticks;
  }
  CHECK(t.slow.socket->aborted);
  CHECK(ticks <= 2);
  CHECK(t.budget->reclaims() == 1);
  CHECK_FALSE(t.ahead.socket->closed);
  caf::anon_send(t.slow.conn, socket_closed_atom::value);
  t.slow.run();
  t.waiter.advance(std::chrono::milliseconds(5));
  REQUIRE(t.waiter.socket->writes.size() == 1);  // its frame went in (no writer: refused, after all)
  // The one ahead finishes its frame in time and is answered.
  t.ahead.send(byte_buffer(t.part.begin() + static_cast<std::ptrdiff_t>(t.ahead_sent), t.part.end()));
  t.ahead.run();
  CHECK(t.ahead.socket->writes.size() == 1);
  CHECK_FALSE(t.ahead.socket->closed);
  CHECK(t.budget->reclaims() == 1);
}

TEST_CASE("a slow share is not taken back when that would not make room", "[actor][connection][budget]") {
  slow_and_ahead t(80 * 1024);  // the slow one's 40 KiB and the free 20 are not enough
  for (int i = 0; i < 30; ++i) t.tick();
  CHECK(t.budget->reclaims() == 0);
  CHECK_FALSE(t.slow.socket->closed);
  CHECK_FALSE(t.ahead.socket->closed);  // its bytes sent before the grant count
}

TEST_CASE("a share quiet while its TCP connection recovers a lost packet is not taken for stalled",
          "[actor][connection][budget]") {
  auto budget = std::make_shared<frame_budget>(100 * 1024);
  auto s = budgeted(budget, 5);
  s.budget_stall_ms = 1000;
  harness holder(s);
  harness waiter(s);
  const auto big = big_push();
  holder.send(byte_buffer(big.begin(), big.begin() + 60 * 1024));
  holder.run();
  REQUIRE(budget->in_use() == 80 * 1024);
  holder.socket->recovery = std::chrono::seconds(3);  // a long, congested link: retransmissions take seconds
  wait_in_line(waiter, big);
  advance_together({&holder, &waiter}, std::chrono::milliseconds(100), 29);
  CHECK_FALSE(holder.socket->closed);  // quiet 2.9 s: within its recovery time
  advance_together({&holder, &waiter}, std::chrono::milliseconds(100), 2);
  CHECK(holder.socket->aborted);  // quiet past it: stalled after all
  CHECK(budget->reclaims() == 1);
}

TEST_CASE("a waiter that sent only a header cannot hold up the line", "[actor][connection][budget]") {
  auto budget = std::make_shared<frame_budget>(100 * 1024);
  auto s = budgeted(budget, 5);
  s.budget_stall_ms = 1000;
  harness holder(s, true);  // its writer holds the request, and so the memory
  harness silent(s);
  harness honest(s);
  const auto big = big_push();
  held_by_writer(holder, big);
  wait_in_line(silent, byte_buffer(big.begin(), big.begin() + header_size));  // first in line, then nothing
  wait_in_line(honest, big);

  caf::anon_send(holder.writer, flush_atom::value);  // the holder's share comes back
  holder.run();
  REQUIRE(budget->in_use() == 0);
  // The silent one keeps asking at the head and takes it, with nothing to fill it.
  silent.advance(std::chrono::milliseconds(5));
  CHECK(budget->in_use() == 80 * 1024);
  // Now the honest one heads the line, and takes the share back once it stalls.
  for (int i = 0; i < 220 && !silent.socket->aborted; ++i) {
    silent.advance(std::chrono::milliseconds(5));
    honest.advance(std::chrono::milliseconds(5));
  }
  REQUIRE(silent.socket->aborted);
  caf::anon_send(silent.conn, socket_closed_atom::value);
  silent.run();
  honest.advance(std::chrono::milliseconds(5));
  REQUIRE(honest.socket->writes.size() == 1);
  CHECK(honest.socket->writes[0] == encode_nack(nack_reason::internal_error));  // no writer: refused, after all
}

TEST_CASE("frame memory goes to the connection that waited first", "[actor][connection][budget]") {
  auto budget = std::make_shared<frame_budget>(100 * 1024);
  const auto s = budgeted(budget, 5);
  harness holder(s, true);  // its writer holds the request, and so the memory
  harness first(s);
  harness second(s);
  const auto big = big_push();
  held_by_writer(holder, big);
  wait_in_line(first, big);
  wait_in_line(second, big);
  CHECK(budget->waits() == 2);

  caf::anon_send(holder.writer, flush_atom::value);  // the holder's reply frees its share
  holder.run();
  REQUIRE(budget->in_use() == 0);
  // The later waiter asks first, and does not get it.
  second.advance(std::chrono::milliseconds(5));
  CHECK(second.socket->writes.empty());
  CHECK(budget->in_use() == 0);
  first.advance(std::chrono::milliseconds(5));
  REQUIRE(first.socket->writes.size() == 1);
  // The first's share went with its reply; now the second's turn.
  second.advance(std::chrono::milliseconds(5));
  CHECK(second.socket->writes.size() == 1);

  SECTION("a waiter that goes away leaves the line") {
    harness third(s);
    harness fourth(s);
    harness blocker(s, true);
    held_by_writer(blocker, big);
    third.send(big);
    REQUIRE(third.settled([&] { return !third.socket->holds.empty(); }));
    fourth.send(big);
    REQUIRE(fourth.settled([&] { return !fourth.socket->holds.empty(); }));
    caf::anon_send(third.conn, socket_closed_atom::value);
    third.run();
    caf::anon_send(blocker.writer, flush_atom::value);
    blocker.run();
    fourth.advance(std::chrono::milliseconds(5));
    CHECK(fourth.socket->writes.size() == 1);
  }
}

TEST_CASE("strict mode reads ahead while a reply is owed and decodes nothing before it is written",
          "[actor][connection][strict]") {
  connection_settings s;
  s.mode = ack_mode::strict;
  harness h(s, true);
  h.send(pushes(1));
  REQUIRE(h.writer_load().first == 1);
  // The next read is asked for at once (no hand-off once the reply is out),
  // and the socket knows the connection now waits on the daemon.
  CHECK(h.socket->reads.size() == 2);
  CHECK(h.socket->owed);
  // An impatient peer's next frames arrive early, in two reads that split
  // the third frame: the socket reads ahead while the first reply is owed.
  const auto early = pushes(2);
  const auto cut = early.size() - 3;
  h.send(byte_buffer(early.begin(), early.begin() + cut));
  h.send(byte_buffer(early.begin() + cut, early.end()));
  CHECK(h.writer_load().first == 1);  // held, not decoded
  CHECK(h.socket->reads.size() == 2);  // and not reported consumed while they wait
  caf::anon_send(h.writer, flush_atom::value);
  REQUIRE(h.settled([&] { return h.socket->writes.size() == 1; }));
  CHECK(h.writer_load().first == 1);  // the second frame went in after the first reply
  CHECK(h.socket->owed);
  answer_until(h, 3);
  REQUIRE(h.socket->writes.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) CHECK(h.index_of(i) == i + 1);
  CHECK_FALSE(h.socket->owed);  // waits on its peer again
  REQUIRE(h.socket->reads.size() == 3);  // the held bytes are decoded: the socket is told once,
  CHECK(h.socket->chunks == std::vector<std::uint64_t>{0, 1, 2});  // for both reads
  CHECK(h.socket->frames.back() == 3);
  CHECK_FALSE(h.socket->reads.back());
}

TEST_CASE("replies written straight into the queue wake a connection that waits to decode its next frame",
          "[actor][connection][replies]") {
  for (auto mode : {ack_mode::strict, ack_mode::ordered}) {
    connection_settings s;
    s.mode = mode;
    s.max_inflight = 2;
    harness h(s, true);
    h.load->direct = true;
    h.send(pushes(5));  // pipelined: the frames past the limit wait, decoded only once a slot frees
    CHECK(h.writer_load().first == (mode == ack_mode::strict ? 1u : 2u));
    answer_until(h, 5);  // no ingest_reply ever reaches the connection
    REQUIRE(h.socket->writes.size() == 5);
    for (std::size_t i = 0; i < 5; ++i) CHECK(h.index_of(i) == i + 1);
    CHECK_FALSE(h.socket->owed);
  }
}

TEST_CASE("a close written from another thread behind an owed ack ends the connection", "[actor][connection][replies]") {
  harness h({}, true);
  h.load->direct = true;
  byte_buffer stream = pushes(1);
  auto bad = encode_frame(message_type::push, durability::durable, byte_buffer{'x'});
  bad[0] = 'X';
  stream.insert(stream.end(), bad.begin(), bad.end());
  caf::scoped_actor watcher{h.sys()};
  watcher->monitor(h.conn);
  h.send(stream);
  h.run();
  CHECK_FALSE(h.socket->closed);  // the Nack waits behind the owed ack
  caf::anon_send(h.writer, flush_atom::value);
  REQUIRE(h.settled([&] { return h.socket->closed; }));
  REQUIRE(h.socket->writes.size() == 2);
  CHECK(h.socket->writes[1] == encode_nack(nack_reason::bad_magic));
  bool down = false;
  watcher->receive([&](caf::down_msg&) { down = true; }, caf::after(std::chrono::seconds(0)) >> [] {});
  CHECK(down);  // it stopped without waiting for the socket to say it closed
}
