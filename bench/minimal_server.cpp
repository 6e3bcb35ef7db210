#include "bench/minimal_server.hpp"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "bench/unix_socket.hpp"
#include "wire/batch.hpp"
#include "wire/frame.hpp"
#include "wire/frame_reader.hpp"
#include "wab/segment_format.hpp"

namespace weir::bench {

namespace {

void put_u32(byte_buffer& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
void put_u64(byte_buffer& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

/// Appends one record as the WAB frames it: length, CRC, ingest time, payload.
void append_record(byte_buffer& out, byte_span payload, std::int64_t ts) {
  put_u32(out, static_cast<std::uint32_t>(payload.size()));
  put_u32(out, wab::record_crc(0, ts, payload));
  put_u64(out, static_cast<std::uint64_t>(ts));
  out.insert(out.end(), payload.begin(), payload.end());
}

void write_all(int fd, const byte_buffer& b) {
  std::size_t done = 0;
  while (done < b.size()) {
    const ssize_t n = ::write(fd, b.data() + done, b.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the producer went away; nothing to answer
    done += static_cast<std::size_t>(n);
  }
}

struct connection {
  int fd = -1;
  wire::frame_reader reader{16u * 1024 * 1024};
};

/// Replies owed to one connection once the covering sync returns.
struct owed {
  int fd = -1;
  byte_buffer replies;
  std::uint64_t records = 0;
};

}  // namespace

struct minimal_server::impl {
  std::shared_ptr<wab::file_io> io;
  socket_place socket;
  std::string data_path;
  int listen_fd = -1, data_fd = -1, epoll_fd = -1, stop_fd = -1;
  std::uint64_t offset = 0;
  std::map<int, connection> connections;
  std::thread reader, syncer;
  std::mutex mutex;
  std::condition_variable wake;
  std::vector<owed> waiting;  // acks for the next sync
  bool stopping = false;
  std::atomic<bool> failed{false};  // a write or sync failed: nothing more is acked
  std::atomic<std::uint64_t> synced_records{0}, fsyncs{0};

  impl(const std::string& dir, std::shared_ptr<wab::file_io> file_io)
      : io(std::move(file_io)), socket(dir, "minimal.sock"), data_path(dir + "/minimal.wab") {
    const sockaddr_un addr = unix_address(socket.path());
    data_fd = io->create_exclusive(data_path);
    listen_fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (data_fd < 0 || listen_fd < 0 || ::bind(listen_fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listen_fd, 1024) != 0)
      throw std::runtime_error("minimal server: cannot start in " + dir + ": " + std::strerror(errno));
    epoll_fd = ::epoll_create1(EPOLL_CLOEXEC);
    stop_fd = ::eventfd(0, EFD_CLOEXEC);
    watch(listen_fd);
    watch(stop_fd);
    reader = std::thread([this] { read_loop(); });
    syncer = std::thread([this] { sync_loop(); });
  }

  ~impl() {
    {
      std::lock_guard<std::mutex> guard(mutex);
      stopping = true;
    }
    wake.notify_all();
    const std::uint64_t one = 1;
    (void)!::write(stop_fd, &one, sizeof one);
    reader.join();
    syncer.join();
    for (auto& [fd, c] : connections) ::close(fd);
    for (int fd : {listen_fd, epoll_fd, stop_fd}) ::close(fd);
    io->close(data_fd);
    ::unlink(socket.path().c_str());
  }

  /// A write or sync failed: no ack may follow, and the producers are told
  /// by their connections closing, not left waiting.
  void fail() {
    failed = true;
    for (auto& [fd, c] : connections) ::shutdown(fd, SHUT_RDWR);
  }

  void watch(int fd) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    ::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev);
  }

  /// One round: read what every ready connection sent, write all complete
  /// frames' records with one pwrite, then ack (Buffered) or queue the acks
  /// for the next sync (Durable).
  void read_loop() {
    std::vector<epoll_event> events(256);
    std::vector<std::uint8_t> buf(64 * 1024);
    for (;;) {
      const int n = ::epoll_wait(epoll_fd, events.data(), static_cast<int>(events.size()), -1);
      if (n < 0 && errno == EINTR) continue;
      byte_buffer records;
      std::map<int, owed> durable, buffered;
      const auto ts = std::chrono::system_clock::now().time_since_epoch().count();
      for (int i = 0; i < n; ++i) {
        const int fd = events[static_cast<std::size_t>(i)].data.fd;
        if (fd == stop_fd) return;
        if (fd == listen_fd) {
          const int c = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
          if (c >= 0) {
            connections[c].fd = c;
            watch(c);
          }
          continue;
        }
        const ssize_t got = ::read(fd, buf.data(), buf.size());
        if (got <= 0) {
          ::epoll_ctl(epoll_fd, EPOLL_CTL_DEL, fd, nullptr);  // closed at the end: acks may still be owed
          continue;
        }
        auto& c = connections[fd];
        byte_span input(buf.data(), static_cast<std::size_t>(got));
        while (!input.empty()) {
          const auto st = c.reader.feed(input);
          if (st != wire::frame_reader::status::frame_ready) break;
          const auto f = c.reader.take();
          const bool is_batch = f.header.type == wire::message_type::push_batch;
          std::size_t count = 1;
          if (is_batch) {
            auto rs = wire::decode_batch_body(f.payload, 1u << 20, 16u * 1024 * 1024);
            if (!rs) {
              ::shutdown(fd, SHUT_RDWR);  // the producer sees the end instead of waiting for an answer
              break;
            }
            for (auto r : rs.value()) append_record(records, r, ts);
            count = rs.value().size();
          } else {
            append_record(records, f.payload, ts);
          }
          auto& to = (wire::tier_of(f.header.dur) == wire::tier::buffered ? buffered : durable)[fd];
          to.fd = fd;
          to.records += count;
          const auto reply = is_batch ? wire::encode_ack_batch(std::vector<bool>(count, true)) : wire::encode_ack();
          to.replies.insert(to.replies.end(), reply.begin(), reply.end());
        }
      }
      if (records.empty() || failed) continue;
      if (wab::pwrite_all(*io, data_fd, byte_span(records.data(), records.size()), offset) != 0) {
        fail();
        continue;
      }
      offset += records.size();
      for (auto& [fd, o] : buffered) write_all(fd, o.replies);
      if (durable.empty()) continue;
      {
        std::lock_guard<std::mutex> guard(mutex);
        for (auto& [fd, o] : durable) waiting.push_back(std::move(o));
      }
      wake.notify_one();
    }
  }

  /// fdatasync back to back while acks wait; each sync covers every write
  /// that finished before it started.
  void sync_loop() {
    for (;;) {
      std::vector<owed> batch;
      {
        std::unique_lock<std::mutex> lock(mutex);
        wake.wait(lock, [&] { return stopping || !waiting.empty(); });
        if (stopping) return;
        batch.swap(waiting);
      }
      if (failed || io->fdatasync(data_fd) != 0) {
        fail();
        continue;
      }
      fsyncs.fetch_add(1, std::memory_order_relaxed);
      for (auto& o : batch) {
        synced_records.fetch_add(o.records, std::memory_order_relaxed);
        write_all(o.fd, o.replies);
      }
    }
  }
};

minimal_server::minimal_server(const std::string& dir, std::shared_ptr<wab::file_io> io)
    : impl_(std::make_unique<impl>(dir, std::move(io))) {}
minimal_server::~minimal_server() = default;
const std::string& minimal_server::socket_path() const { return impl_->socket.path(); }
bool minimal_server::failed() const { return impl_->failed; }
double minimal_server::records_per_fsync() const {
  const auto syncs = impl_->fsyncs.load();
  return syncs ? static_cast<double>(impl_->synced_records.load()) / static_cast<double>(syncs) : 0;
}

}  // namespace weir::bench
