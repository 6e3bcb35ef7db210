#include "actors/connection.hpp"

#include <algorithm>
#include <deque>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>

#include "messages/wire/batch.hpp"
#include "messages/wire/frame_reader.hpp"

namespace weir {

namespace {

struct reply_slot {
  bool ready = false;
  bool close_after = false;
  byte_buffer bytes;
};

class connection_state {
 public:
  static inline const char* name = "connection";

  void init(caf::event_based_actor* self, connection_io_ptr io, connection_settings s) {
    self_ = self;
    io_ = std::move(io);
    settings_ = s;
    reader_.emplace(s.payload_cap);
  }

  void on_bytes(byte_buffer bytes) {
    read_pending_ = false;
    unread_ = std::move(bytes);
    unread_pos_ = 0;
    pump();
  }

  void start() { request_read(); }

 private:
  bool may_take_frame() const {
    const std::size_t owed = replies_.size();
    return settings_.mode == ack_mode::strict ? owed == 0 : owed < settings_.max_inflight;
  }

  void request_read() {
    if (closing_ || read_pending_ || unread_pos_ < unread_.size() || !may_take_frame()) return;
    read_pending_ = true;
    io_->read_more(reader_->mid_frame());
  }

  /// Decodes buffered bytes while the ack mode allows another frame.
  void pump() {
    while (!closing_ && may_take_frame() && unread_pos_ < unread_.size()) {
      byte_span input(unread_.data() + unread_pos_, unread_.size() - unread_pos_);
      const auto status = reader_->feed(input);
      unread_pos_ = unread_.size() - input.size();
      if (status == wire::frame_reader::status::need_more) break;
      if (status == wire::frame_reader::status::failed) {
        reject(*wire::nack_for(reader_->error()));
        break;
      }
      handle(reader_->take());
    }
    request_read();
  }

  void handle(wire::stream_frame frame) {
    using wire::message_type;
    switch (frame.header.type) {
      case message_type::health_check:
        reply(wire::encode_health_check_response());
        return;
      case message_type::push:
      case message_type::push_tracked:
        // No WAB is attached yet: nothing can be made durable, so the only
        // honest answer is the transient InternalError.
        reply(wire::encode_nack(wire::nack_reason::internal_error));
        return;
      case message_type::push_batch: {
        auto records = wire::decode_batch_body(frame.payload, settings_.max_batch_records,
                                               settings_.payload_cap);
        if (!records) {
          reject(wire::nack_for(records.error()));
          return;
        }
        reply(wire::encode_ack_batch(std::vector<bool>(records.value().size(), false)));
        return;
      }
      default:
        // A daemon-to-client type sent by a client.
        reject(wire::nack_reason::unknown_message);
        return;
    }
  }

  void reply(byte_buffer bytes) {
    replies_.push_back({true, false, std::move(bytes)});
    flush();
  }

  /// A protocol violation: answer it after every reply already owed, then close.
  void reject(wire::nack_reason reason) {
    closing_ = true;
    replies_.push_back({true, true, wire::encode_nack(reason)});
    flush();
  }

  void flush() {
    while (!replies_.empty() && replies_.front().ready) {
      reply_slot slot = std::move(replies_.front());
      replies_.pop_front();
      io_->write(std::move(slot.bytes));
      if (slot.close_after) {
        io_->close();
        self_->quit();
        return;
      }
    }
  }

  caf::event_based_actor* self_ = nullptr;
  connection_io_ptr io_;
  connection_settings settings_;
  std::optional<wire::frame_reader> reader_;
  std::deque<reply_slot> replies_;
  byte_buffer unread_;
  std::size_t unread_pos_ = 0;
  bool read_pending_ = false;
  bool closing_ = false;
};

caf::behavior connection_actor(caf::stateful_actor<connection_state>* self, connection_io_ptr io,
                               connection_settings settings) {
  self->state.init(self, std::move(io), settings);
  self->state.start();
  return {
      [=](socket_data_atom, byte_buffer& bytes) { self->state.on_bytes(std::move(bytes)); },
      [=](socket_closed_atom) { self->quit(); },
  };
}

}  // namespace

connection_settings connection_settings_from(const config& cfg) {
  connection_settings s;
  s.payload_cap = static_cast<std::uint32_t>(cfg.limits.max_payload_bytes);
  s.max_batch_records = static_cast<std::uint32_t>(cfg.limits.max_batch_records);
  s.mode = cfg.ingest.ack_mode;
  s.max_inflight = static_cast<std::uint32_t>(cfg.ingest.max_inflight);
  return s;
}

caf::actor spawn_connection(caf::actor_system& sys, connection_io_ptr io,
                            const connection_settings& settings) {
  return sys.spawn(connection_actor, std::move(io), settings);
}

}  // namespace weir
