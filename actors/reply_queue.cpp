#include "actors/reply_queue.hpp"

#include <caf/actor_cast.hpp>
#include <caf/send.hpp>

#include "actors/frame_budget.hpp"
#include "wire/frame.hpp"

namespace weir {

reply_queue::reply_queue(connection_io_ptr io, metrics* stats, std::shared_ptr<frame_budget> budget)
    : io_(std::move(io)), stats_(stats), budget_(std::move(budget)) {}

reply_queue::~reply_queue() { abandon(); }

void reply_queue::set_owner(caf::actor_addr owner) {
  std::lock_guard<std::mutex> guard(mutex_);
  owner_ = std::move(owner);
}

std::uint64_t reply_queue::open(const answers& what) {
  std::lock_guard<std::mutex> guard(mutex_);
  const bool before = !slots_.empty();
  slot s;
  s.what = what;
  slots_.push_back(std::move(s));
  owed_changed(before);
  return next_tag_++;
}

bool reply_queue::fill(std::uint64_t tag, byte_buffer bytes, std::uint32_t acked, bool close_after) {
  caf::actor_addr wake;
  bool closed_here = false;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    if (tag < first_tag_ || tag - first_tag_ >= slots_.size() || slots_[tag - first_tag_].ready) {
      if (!closed_) ++ignored_fills_;  // written, filled, or never opened
      return false;
    }
    auto& s = slots_[tag - first_tag_];
    s.ready = true;
    s.bytes = std::move(bytes);
    s.acked = acked;
    s.close_after = close_after;
    const std::size_t owed = slots_.size();
    closed_here = write_ready();
    owed_changed(true);
    // The owner learns of a close too: written from another thread, it is
    // the owner's cue to stop.
    if (closed_here || (wake_wanted_ && slots_.size() < owed)) {
      wake_wanted_ = false;
      wake = owner_;
    }
  }
  // Outside the lock: the owner's mailbox is the scheduler's business.
  if (wake)
    if (auto owner = caf::actor_cast<connection_actor>(wake)) caf::anon_send(owner, replies_written_atom::value);
  return closed_here;
}

bool reply_queue::answer(const answers& what, byte_buffer bytes, bool close_after) {
  return fill(open(what), std::move(bytes), 0, close_after);
}

bool reply_queue::fill_open(const byte_buffer& bytes) {
  std::lock_guard<std::mutex> guard(mutex_);
  const bool before = !slots_.empty();
  for (auto& s : slots_)
    if (!s.ready) {
      s.ready = true;
      s.bytes = bytes;
    }
  const bool closed_here = write_ready();
  owed_changed(before);
  return closed_here;
}

bool reply_queue::has_room(std::size_t limit) {
  std::lock_guard<std::mutex> guard(mutex_);
  if (slots_.size() < limit) return true;
  wake_wanted_ = true;
  return false;
}

std::uint64_t reply_queue::ignored_fills() {
  std::lock_guard<std::mutex> guard(mutex_);
  return ignored_fills_;
}

bool reply_queue::closed() {
  std::lock_guard<std::mutex> guard(mutex_);
  return closed_;
}

void reply_queue::abandon() {
  connection_io_ptr io;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    if (budget_)
      for (const auto& s : slots_) budget_->release(s.what.budget);
    slots_.clear();
    first_tag_ = next_tag_;
    closed_ = true;
    io = std::move(io_);  // requests still at a writer need not keep the socket alive
  }
  // Released outside the lock: the socket's last reference may go here.
}

bool reply_queue::write_ready() {
  while (!slots_.empty() && slots_.front().ready) {
    slot s = std::move(slots_.front());
    slots_.pop_front();
    ++first_tag_;
    if (budget_ && s.what.budget > 0) budget_->release(s.what.budget);
    if (closed_) continue;  // after a close: nothing more goes out
    count(s);
    if (!s.bytes.empty()) io_->write(std::move(s.bytes));
    if (s.close_after) {
      io_->close();
      closed_ = true;
      return true;
    }
  }
  return false;
}

void reply_queue::count(const slot& s) {
  if (!stats_ || s.what.records == 0) return;
  auto& t = stats_->tier(s.what.tier);
  if (s.acked > 0) {
    t.acked->Increment(s.acked);
    t.ack_latency.observe(std::chrono::duration<double>(clock::now() - s.what.decoded).count());
  }
  if (s.acked < s.what.records)
    t.nack[static_cast<std::uint8_t>(wire::nack_reason::internal_error)]->Increment(s.what.records - s.acked);
}

/// Tells the socket when the connection starts or stops owing replies (who
/// it waits on: the daemon, or its peer). Under the lock, so that two
/// threads' changes reach it in the order they happened.
void reply_queue::owed_changed(bool before) {
  const bool now = !slots_.empty();
  if (now != before && !closed_) io_->set_replies_owed(now);
}

}  // namespace weir
