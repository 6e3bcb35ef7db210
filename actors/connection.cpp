#include "actors/connection.hpp"

#include "actors/reply_queue.hpp"

#include <algorithm>
#include <chrono>

#include <caf/actor_system.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "messages/ingest_protocol.hpp"
#include "observability/metrics.hpp"
#include "wire/batch.hpp"
#include "wire/frame_reader.hpp"

namespace weir {

namespace {

tier_label label_of(wire::tier t) {
  switch (t) {
    case wire::tier::buffered: return tier_label::buffered;
    case wire::tier::durable: return tier_label::durable;
    case wire::tier::replicated: return tier_label::replicated;
  }
  return tier_label::none;
}

class connection_state {
 public:
  static inline const char* name = "connection";

  using pointer = connection_actor::stateful_pointer<connection_state>;

  void init(pointer self, connection_io_ptr io, connection_settings s) {
    self_ = self;
    io_ = std::move(io);
    settings_ = std::move(s);
    replies_ = std::make_shared<reply_queue>(io_, settings_.stats, settings_.budget);
    replies_->set_owner(self_->address());
    reader_.emplace(settings_.payload_cap, settings_.budget ? settings_.budget_above : SIZE_MAX);
    if (settings_.writer) self_->monitor(settings_.writer);
  }

  ~connection_state() {
    leave_line();
    if (settings_.budget && frame_budget_ > 0) settings_.budget->release(frame_budget_);
    // Requests still at a writer hold the queue: nothing more goes out once
    // the connection is gone, and the frame memory is given back now.
    if (replies_) replies_->abandon();
  }

  /// Ends the actor. The writer's monitor list would keep this actor's
  /// memory until the writer itself ends: take the entry out.
  void finish() {
    if (finished_) return;
    finished_ = true;
    // Whatever is still owed cannot reach the peer now (the close went out,
    // or the socket is gone): a late sync writes nothing, and the frame
    // memory and the socket are let go at once.
    replies_->abandon();
    if (settings_.writer) self_->demonitor(settings_.writer.address());
    self_->quit();
  }

  void on_writable() { pump(); }

  /// Asks again even with nothing more to decode: a peer that sent only a
  /// header still waits in line, and the head of the line must keep asking
  /// (and taking back stalled shares), or every waiter behind it would wait.
  void on_budget_retry() {
    budget_retry_scheduled_ = false;
    if (!closing_ && reader_->awaiting_admission() && !admit_payload()) return;
    pump();
  }

  /// A reply went out and freed a slot this actor waited for, or a close
  /// went out from the thread that completed the replies ahead of it.
  void on_replies_written() {
    if (replies_->closed()) finish();
    else pump();
  }

  /// A writer answered by message (one whose requests carry no queue).
  void on_reply(ingest_reply& r) {
    if (replies_->fill(r.tag, std::move(r.frame), r.acked)) finish();
    else pump();  // a freed reply slot may let the next buffered frame in
  }

  /// The writer is gone: nothing owed can be made durable any more.
  void on_writer_down() {
    settings_.writer = nullptr;  // gone: nothing to demonitor
    if (replies_->fill_open(wire::encode_nack(wire::nack_reason::internal_error))) finish();
    else pump();
  }

  /// The peer sent its last byte. Frames read ahead of it may still wait
  /// for the ack mode: each is answered before the close (pump()).
  void on_eof() {
    peer_done_ = true;
    pump();
  }

  /// Frames are decoded and submitted while the ack mode lets them in
  /// (`paused` in the header is may_take_frame() saying no).
  connection_actor::behavior_type reading() {
    return {
        [this](socket_data_atom, byte_buffer& bytes) { on_bytes(std::move(bytes)); },
        [this](ingest_reply& r) { on_reply(r); },
        [this](shutdown_atom) { on_shutdown(); },
        [this](socket_eof_atom) { on_eof(); },
        [this](socket_closed_atom) { finish(); },
        [this](socket_writable_atom) { on_writable(); },
        [this](budget_retry_atom) { on_budget_retry(); },
        [this](replies_written_atom) { on_replies_written(); },
    };
  }

  /// A protocol error or a shutdown: no frame is decoded any more; the
  /// replies already owed are written, then the close.
  connection_actor::behavior_type closing() {
    return {
        [](socket_data_atom, byte_buffer&) {},  // read ahead of the close: never decoded
        [this](ingest_reply& r) { on_reply(r); },
        [](shutdown_atom) {},
        [](socket_eof_atom) {},
        [this](socket_closed_atom) { finish(); },
        [](socket_writable_atom) {},  // replies leave from their queue's own writes
        [](budget_retry_atom) {},
        [this](replies_written_atom) { on_replies_written(); },
    };
  }

  /// Stops reading; closes once the replies already owed are written.
  void on_shutdown() {
    if (closing_) return;
    start_closing();
    if (replies_->answer({}, {}, true)) finish();
  }

  /// The socket reads ahead, so bytes may arrive while earlier ones still
  /// wait to be decoded: they queue behind them.
  void on_bytes(byte_buffer bytes) {
    if (frame_hold_) frame_hold_->arrived(bytes.size(), now_ns());
    ++chunks_held_;
    if (unread_pos_ == unread_.size()) {
      unread_ = std::move(bytes);
    } else {
      unread_.erase(unread_.begin(), unread_.begin() + static_cast<std::ptrdiff_t>(unread_pos_));
      unread_.insert(unread_.end(), bytes.begin(), bytes.end());
    }
    unread_pos_ = 0;
    pump();
  }

  void start() { tell_socket(false, 0); }

 private:
  /// Whether the ack mode lets another frame in now. When it does not
  /// because of the replies owed, the next reply written wakes this actor.
  bool may_take_frame() {
    if (io_->write_blocked()) return false;
    return replies_->has_room(settings_.mode == ack_mode::strict ? 1 : settings_.max_inflight);
  }

  /// Tells the socket once every byte it handed over is decoded, even while
  /// replies are owed: it reads on meanwhile, so a strict producer's next
  /// frame finds a read waiting. What arrives stays undecoded until the ack
  /// mode lets the next frame in, and the socket stops at two chunks held
  /// here; a closing connection consumes nothing more.
  void report_consumed() {
    if (closing_) return;
    if (chunks_held_ > 0 && unread_pos_ == unread_.size()) {
      tell_socket(reader_->mid_frame(), std::exchange(chunks_held_, 0));
    } else if (told_mid_frame_ && frames_done_ != told_frames_) {
      // The frame whose deadline runs is whole, and what follows it waits on
      // the daemon, not on the peer: its deadline must not run on.
      tell_socket(false, 0);
    }
  }

  void tell_socket(bool mid_frame, std::uint64_t chunks) {
    told(mid_frame);
    io_->consumed(mid_frame, frames_done_, chunks);
  }

  /// What the socket knows of the frame its deadline times.
  void told(bool mid_frame) {
    told_mid_frame_ = mid_frame;
    told_frames_ = frames_done_;
  }

  /// A large payload's memory, from the shared budget; false (and a retry
  /// soon, in line) when it is spent. At the head of the line, shares whose
  /// peers stopped sending, or send too slowly to finish in time, are taken
  /// back (actors/frame_budget.hpp).
  bool admit_payload() {
    const std::uint64_t n = reader_->declared_payload();
    if (!settings_.budget->try_acquire(n, budget_ticket_)) {
      if (budget_ticket_ == 0) budget_ticket_ = settings_.budget->wait();
      settings_.budget->reclaim_stalled(n, budget_ticket_, reclaim_rule_now());
      told(true);
      io_->hold_frame(frames_done_);
      if (!budget_retry_scheduled_) {
        budget_retry_scheduled_ = true;
        self_->delayed_send(self_, std::chrono::milliseconds(settings_.budget_retry_ms), budget_retry_atom::value);
      }
      return false;
    }
    budget_ticket_ = 0;
    frame_budget_ = n;
    // The rest of the bytes at hand are this payload's first ones.
    const std::uint64_t already = std::min<std::uint64_t>(n, unread_.size() - unread_pos_);
    frame_hold_ = std::make_shared<frame_hold>(n, now_ns(), already, io_, reclaim_rule_now());
    settings_.budget->track(frame_hold_);
    reader_->admit();
    return true;
  }

  /// A closing connection takes no more frames: it waits for frame memory no longer.
  void leave_line() {
    if (settings_.budget && budget_ticket_ != 0) settings_.budget->leave(std::exchange(budget_ticket_, 0));
  }

  reclaim_rule reclaim_rule_now() const {
    const std::chrono::nanoseconds stall = std::chrono::milliseconds(settings_.budget_stall_ms);
    const std::chrono::nanoseconds timeout = std::chrono::milliseconds(settings_.budget_read_timeout_ms);
    return {now_ns(), stall.count(), timeout.count()};
  }

  /// The actor clock (the test scheduler's in tests), for frame_hold stamps.
  std::int64_t now_ns() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(self_->clock().now().time_since_epoch()).count();
  }

  /// Decodes buffered bytes while the ack mode allows another frame.
  void pump() {
    while (!closing_ && unread_pos_ < unread_.size() && may_take_frame()) {
      byte_span input(unread_.data() + unread_pos_, unread_.size() - unread_pos_);
      const auto status = reader_->feed(input);
      unread_pos_ = unread_.size() - input.size();
      if (status == wire::frame_reader::status::need_more) {
        if (reader_->awaiting_admission() && admit_payload()) continue;
        break;
      }
      if (status == wire::frame_reader::status::failed) {
        reject(*wire::nack_for(reader_->error()));
        break;
      }
      ++frames_done_;
      handle(reader_->take());
    }
    report_consumed();
    if (peer_done_ && unread_pos_ == unread_.size()) on_shutdown();
  }

  void handle(wire::stream_frame frame) {
    using wire::message_type;
    switch (frame.header.type) {
      case message_type::health_check:
        reply(wire::encode_health_check_response());
        return;
      case message_type::push:
        submit(frame, ingest_kind::push, {});
        return;
      case message_type::push_tracked:
        submit(frame, ingest_kind::tracked, {});
        return;
      case message_type::push_batch: {
        // Every record is validated before any is written.
        auto records = wire::decode_batch_body(frame.payload, settings_.max_batch_records,
                                               settings_.payload_cap);
        if (!records) {
          reject(wire::nack_for(records.error()));
          return;
        }
        std::vector<std::uint32_t> bounds;
        bounds.reserve(records.value().size() * 2);
        for (auto r : records.value()) {
          bounds.push_back(static_cast<std::uint32_t>(r.data() - frame.payload.data()));
          bounds.push_back(static_cast<std::uint32_t>(r.size()));
        }
        submit(frame, ingest_kind::batch, std::move(bounds));
        return;
      }
      default:
        // A daemon-to-client type sent by a client.
        reject(wire::nack_reason::unknown_message);
        return;
    }
  }

  void submit(wire::stream_frame& frame, ingest_kind kind, std::vector<std::uint32_t> bounds) {
    const auto tier = wire::tier_of(frame.header.dur);
    const auto records = static_cast<std::uint32_t>(kind == ingest_kind::batch ? bounds.size() / 2 : 1);
    const reply_queue::answers what{label_of(tier), records, std::chrono::steady_clock::now(), take_frame_budget()};
    if (!settings_.writer || (tier == wire::tier::replicated && !settings_.replicated_tier)) {
      // No writer (stopped), or a tier this node cannot honour without a
      // cluster: nothing can be promised, so the answer is the transient Nack.
      replies_->answer(what, kind == ingest_kind::batch ? wire::encode_ack_batch(std::vector<bool>(records, false))
                                                        : wire::encode_nack(wire::nack_reason::internal_error));
      return;
    }
    if (settings_.stats) settings_.stats->tier(what.tier).accepted->Increment(records);
    ingest_request req;
    req.reply_to = caf::actor_cast<ingest_client_actor>(self_);
    req.tag = replies_->open(what);
    req.kind = kind;
    req.durable = tier != wire::tier::buffered;
    req.replicated = tier == wire::tier::replicated;
    req.body = std::move(frame.payload);
    req.bounds = std::move(bounds);
    if (settings_.direct_replies) req.replies = replies_;
    self_->send(settings_.writer, std::move(req));
  }

  void reply(byte_buffer bytes) { replies_->answer({tier_label::none, 0, {}, take_frame_budget()}, std::move(bytes)); }

  /// The share the frame just taken holds; it goes with its reply.
  std::uint64_t take_frame_budget() {
    frame_hold_.reset();  // whole now: it waits on the daemon, not on its peer
    return std::exchange(frame_budget_, 0);
  }

  /// Decodes nothing more (closing()).
  void start_closing() {
    closing_ = true;
    leave_line();
    if (!finished_) self_->become(closing());
  }

  /// A protocol violation: answer it after every reply already owed, then close.
  void reject(wire::nack_reason reason) {
    start_closing();
    if (settings_.stats) settings_.stats->tier(tier_label::none).nack[static_cast<std::uint8_t>(reason)]->Increment();
    if (replies_->answer({tier_label::none, 0, {}, take_frame_budget()}, wire::encode_nack(reason), true)) finish();
  }

  pointer self_ = nullptr;
  connection_io_ptr io_;
  connection_settings settings_;
  std::optional<wire::frame_reader> reader_;
  std::shared_ptr<reply_queue> replies_;
  byte_buffer unread_;
  std::size_t unread_pos_ = 0;
  std::uint64_t chunks_held_ = 0;  // handed over and not reported consumed
  bool told_mid_frame_ = false;     // what the socket was last told
  std::uint64_t told_frames_ = 0;
  bool peer_done_ = false;          // end of input seen
  bool closing_ = false;   // the behaviour is closing(): what reading() calls checks it too
  bool finished_ = false;
  std::uint64_t frames_done_ = 0;
  std::uint64_t frame_budget_ = 0;  // held by the frame being read
  std::shared_ptr<frame_hold> frame_hold_;  // the same share, while its payload is read
  std::uint64_t budget_ticket_ = 0;         // its place in line while it waits (0: none)
  bool budget_retry_scheduled_ = false;
};

connection_actor::behavior_type connection_behavior(connection_state::pointer self, connection_io_ptr io,
                                                    connection_settings settings) {
  self->state.init(self, std::move(io), std::move(settings));
  self->set_down_handler([=](caf::down_msg&) { self->state.on_writer_down(); });
  self->state.start();
  return self->state.reading();
}

}  // namespace

connection_actor spawn_connection(caf::actor_system& sys, connection_io_ptr io,
                            const connection_settings& settings) {
  return sys.spawn(connection_behavior, std::move(io), settings);
}

}  // namespace weir
