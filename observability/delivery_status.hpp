#pragma once
// What delivery is doing, shared by the sink runner (which writes it) and
// whoever reports it (logs, admin endpoints).
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "wire/sink_record.hpp"

namespace weir {

enum class delivery_state : std::uint8_t {
  idle,              // nothing to deliver
  delivering,        // commits in flight
  retrying,          // the sink failed transiently; waiting out the backoff
  dead_letter_full,  // a rejected record cannot be stored: delivery stopped until space frees
};

inline std::string_view name_of(delivery_state s) {
  switch (s) {
    case delivery_state::idle: return "idle";
    case delivery_state::delivering: return "delivering";
    case delivery_state::retrying: return "retrying";
    case delivery_state::dead_letter_full: return "dead_letter_full";
  }
  return "?";
}

/// What delivery_status says at one moment.
struct delivery_status_view {
  delivery_state state = delivery_state::idle;
  sink_health health = sink_health::healthy;
  std::uint64_t committed_batches = 0, committed_records = 0, dead_lettered = 0, retries = 0;
  std::uint64_t backoff_ms = 0;          // the current wait, while retrying or dead letters are full
  std::int64_t last_commit_unix_ns = 0;  // wall clock of the last commit that went through; 0: none yet
  std::string last_error;
};

/// What delivery is doing: written by the sink runner alone, through the
/// verbs below (one per event of its protocol), and read whole by whoever
/// reports it (metrics, status, logs). A lock, not atomics: it changes once
/// per batch or failure, and a reader gets one consistent picture.
class delivery_status {
 public:
  using view = delivery_status_view;

  view read() const {
    std::lock_guard<std::mutex> guard(mutex_);
    return now_;
  }
  sink_health health() const { return read_one(&view::health); }
  delivery_state state() const { return read_one(&view::state); }
  std::string last_error() const { return read_one(&view::last_error); }

  // The sink runner's side.

  /// A batch went to a worker.
  void delivering() { change([](view& v) { v.state = delivery_state::delivering; }); }
  /// Nothing queued, no commit in flight.
  void idle() { change([](view& v) { v.state = delivery_state::idle; }); }
  /// `records` reached the sink, `dead_lettered` of them refused by it for
  /// good; `whole_batch`: they ended a batch (not the first part of one
  /// whose commit failed after them).
  void settled(std::uint64_t records, std::uint64_t dead_lettered, bool whole_batch) {
    change([&](view& v) {
      v.committed_records += records - dead_lettered;
      v.dead_lettered += dead_lettered;
      if (whole_batch) ++v.committed_batches;
    });
  }
  /// A commit went through at `now_unix_ns`; `streak_ended`: after failures.
  /// The sink is healthy; the last error is cleared unless delivery stopped
  /// because dead letters are full (a batch committed beside the refused
  /// one does not end that).
  void commit_went_through(std::int64_t now_unix_ns, bool streak_ended) {
    change([&](view& v) {
      v.last_commit_unix_ns = now_unix_ns;
      if (streak_ended) v.backoff_ms = 0;
      if (v.state != delivery_state::dead_letter_full) v.last_error.clear();
      v.health = sink_health::healthy;
    });
  }
  /// A commit failed with `error`; its batch goes again.
  void commit_failed(const std::string& error) {
    change([&](view& v) {
      ++v.retries;
      v.last_error = one_line(error);
    });
  }
  /// Waiting `backoff_ms` before the next attempt.
  void retrying(std::uint64_t backoff_ms) {
    change([&](view& v) {
      v.state = delivery_state::retrying;
      v.backoff_ms = backoff_ms;
    });
  }
  /// Stopped: a refused record has nowhere to go; rechecked every `recheck_ms`.
  void dead_letters_full(std::uint64_t recheck_ms) {
    change([&](view& v) {
      v.state = delivery_state::dead_letter_full;
      v.backoff_ms = recheck_ms;
    });
  }
  /// A health probe's reason becomes the last error while nothing fails
  /// (none when healthy), but not while dead letters are full.
  void probe_answered(sink_health h, const std::string& why) {
    change([&](view& v) {
      if (v.state == delivery_state::dead_letter_full) return;
      if (h == sink_health::healthy) v.last_error.clear();
      else if (!why.empty()) v.last_error = one_line(why);
    });
  }
  /// The health now `h`; what it was before.
  sink_health set_health(sink_health h) {
    std::lock_guard<std::mutex> guard(mutex_);
    return std::exchange(now_.health, h);
  }

 private:
  /// A sink's error as one line: libpq's and others' come on several
  /// ("...\nHINT: ..."), and the status, the log and weir-ctl show one.
  static std::string one_line(const std::string& error) {
    std::string out;
    for (char c : error) {
      if (c == '\n' || c == '\r') {
        while (!out.empty() && out.back() == ' ') out.pop_back();
        if (!out.empty() && out.back() != ';') out += ";";
        out += ' ';
      } else if (c != ' ' || (!out.empty() && out.back() != ' ')) {
        out += c;
      }
    }
    while (!out.empty() && (out.back() == ' ' || out.back() == ';')) out.pop_back();
    return out;
  }

  template <class Change>
  void change(Change&& c) {
    std::lock_guard<std::mutex> guard(mutex_);
    c(now_);
  }
  template <class T>
  T read_one(T view::*field) const {
    std::lock_guard<std::mutex> guard(mutex_);
    return now_.*field;
  }

  mutable std::mutex mutex_;
  view now_;
};

}  // namespace weir
