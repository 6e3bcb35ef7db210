#include "bench/load_driver.hpp"

#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "bench/unix_socket.hpp"
#include "wire/batch.hpp"
#include "wire/frame.hpp"
#include "wire/frame_reader.hpp"

namespace weir::bench {

namespace {

using clock = std::chrono::steady_clock;

constexpr int reply_timeout_s = 30;

int connect_unix(const std::string& path) {
  const sockaddr_un addr = unix_address(path);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    if (fd >= 0) ::close(fd);
    throw std::runtime_error("cannot connect to " + path + ": " + std::strerror(errno));
  }
  // A reply that never comes must end the round, not hang it: the frames
  // still waiting then count as not acked.
  // (A daemon that stops reading stops a write too.)
  timeval limit{reply_timeout_s, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
  return fd;
}

bool write_all(int fd, const byte_buffer& b) {
  std::size_t done = 0;
  while (done < b.size()) {
    const ssize_t n = ::write(fd, b.data() + done, b.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

/// The frame one producer sends over and over (the payload content does not
/// matter to the daemon; each copy is a distinct record). Stamped, each
/// payload begins with the time it is sent.
byte_buffer make_frame(const load_spec& spec) {
  const auto dur = spec.replicated ? wire::durability::replicated
                   : spec.durable  ? wire::durability::durable
                                   : wire::durability::buffered;
  byte_buffer payload(spec.payload_bytes, 'w');
  if (spec.json) {
    const std::string head = R"({"user": 4711, "kind": "click", "at": "2026-12-07 10:00:00", "pad": ")";
    std::string json = head + std::string(spec.payload_bytes > head.size() + 2 ? spec.payload_bytes - head.size() - 2 : 0,
                                          'w') + "\"}";
    payload.assign(json.begin(), json.end());
  }
  if (spec.stamp) {
    const auto stamp = std::to_string(clock::now().time_since_epoch().count()) + ";";
    payload.assign(stamp.begin(), stamp.end());
    if (payload.size() < spec.payload_bytes) payload.resize(spec.payload_bytes, 'w');
  }
  if (spec.batch == 0) return wire::encode_frame(wire::message_type::push, dur, payload);
  std::vector<byte_span> records(spec.batch, byte_span(payload));
  return wire::encode_frame(wire::message_type::push_batch, dur, wire::encode_batch_body(records));
}

/// Records acked by one reply frame.
std::uint64_t acked_in(const wire::stream_frame& f, std::uint32_t batch) {
  if (f.header.type == wire::message_type::ack || f.header.type == wire::message_type::ack_tracked) return 1;
  if (f.header.type != wire::message_type::ack_batch) return 0;
  auto bits = wire::decode_ack_batch(f.payload, batch);
  if (!bits) return 0;
  return static_cast<std::uint64_t>(std::count(bits.value().begin(), bits.value().end(), true));
}

/// What the producers share: when to stop, and how many records went out.
struct load_plan {
  clock::time_point start, stop_at;
  std::atomic<std::uint64_t> sent{0};
  /// The time between one producer's frames at spec.rate; zero: unpaced.
  clock::duration interval{};
};

/// Whether another frame may go now; a paced producer sleeps until its slot.
bool may_send(const load_spec& spec, load_plan& plan, clock::time_point& next_slot, std::uint64_t per_frame) {
  if (clock::now() >= plan.stop_at) return false;
  if (plan.interval.count() > 0) {
    std::this_thread::sleep_until(std::min(next_slot, plan.stop_at));
    next_slot += plan.interval;
    if (clock::now() >= plan.stop_at) return false;
  }
  if (spec.max_records == 0) return true;
  return plan.sent.fetch_add(per_frame) + per_frame <= spec.max_records;
}

void produce(const std::string& socket_path, const load_spec& spec, load_plan& plan, load_result& out,
             std::mutex& merge) {
  load_result mine;
  const int fd = connect_unix(socket_path);
  byte_buffer frame = make_frame(spec);
  const std::uint64_t per_frame = spec.batch == 0 ? 1 : spec.batch;
  auto next_slot = clock::now();
  std::deque<clock::time_point> sent;
  wire::frame_reader reader(16u * 1024 * 1024);
  std::vector<std::uint8_t> buf(64 * 1024);
  mine.latency_us.reserve(1 << 16);
  // Set when the daemon ends the conversation before the load does: it
  // died, closed the connection, sent what is no reply, or kept a reply
  // longer than reply_timeout_s.
  std::string lost;
  while (lost.empty()) {
    while (sent.size() < spec.pipeline && may_send(spec, plan, next_slot, per_frame)) {
      if (spec.stamp) frame = make_frame(spec);
      if (!write_all(fd, frame)) {
        lost = "a push could not be sent";
        break;
      }
      sent.push_back(clock::now());
    }
    if (!lost.empty() || sent.empty()) break;
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) lost = "the daemon closed the connection";
    if (n < 0)
      lost = errno == EAGAIN || errno == EWOULDBLOCK ? "no reply came within " + std::to_string(reply_timeout_s) + " s"
                                                     : "reading a reply failed";
    if (!lost.empty()) break;
    byte_span input(buf.data(), static_cast<std::size_t>(n));
    while (!input.empty()) {
      const auto st = reader.feed(input);
      if (st == wire::frame_reader::status::need_more) break;
      if (st == wire::frame_reader::status::failed) {
        lost = "a reply was not a frame";
        break;
      }
      const auto f = reader.take();
      const auto now = clock::now();
      mine.latency_us.push_back(std::chrono::duration<double, std::micro>(now - sent.front()).count());
      sent.pop_front();
      ++mine.frames;
      const auto ok = acked_in(f, spec.batch);
      mine.records += ok;
      mine.refused += per_frame - ok;
    }
  }
  mine.refused += sent.size() * per_frame;  // sent and never answered
  ::close(fd);
  std::lock_guard<std::mutex> guard(merge);
  if (!lost.empty()) {
    ++out.lost_producers;
    if (out.lost_why.empty()) out.lost_why = lost;
  }
  out.records += mine.records;
  out.frames += mine.frames;
  out.refused += mine.refused;
  out.latency_us.insert(out.latency_us.end(), mine.latency_us.begin(), mine.latency_us.end());
}

}  // namespace

load_result run_load(const std::string& socket_path, const load_spec& spec) {
  load_result out;
  std::mutex merge;
  load_plan plan;
  plan.start = clock::now();
  plan.stop_at = plan.start + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(spec.seconds));
  if (spec.rate > 0)
    plan.interval = std::chrono::duration_cast<clock::duration>(
        std::chrono::duration<double>(spec.producers * (spec.batch == 0 ? 1.0 : spec.batch) / spec.rate));
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  std::string first_failure;
  for (int p = 0; p < spec.producers; ++p)
    threads.emplace_back([&] {
      try {
        produce(socket_path, spec, plan, out, merge);
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> guard(merge);
        if (first_failure.empty()) first_failure = e.what();
        ++failures;
      }
    });
  for (auto& t : threads) t.join();
  out.seconds = std::chrono::duration<double>(clock::now() - plan.start).count();
  if (failures > 0)
    throw std::runtime_error(std::to_string(failures.load()) + " producers could not connect (" + first_failure + ")");
  // A rate over a load that stopped early would be a number about nothing.
  if (out.lost_producers > 0)
    throw std::runtime_error(std::to_string(out.lost_producers) + " of " + std::to_string(spec.producers) +
                             " producers lost the daemon before the load ended (" + out.lost_why +
                             "): the round measured nothing");
  return out;
}

double quantile(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  const auto k = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

}  // namespace weir::bench
