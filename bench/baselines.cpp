#include "bench/baselines.hpp"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <thread>
#include <vector>

#include "bench/load_driver.hpp"

namespace weir::bench {

namespace {

using clock = std::chrono::steady_clock;

bool read_exact(int fd, std::uint8_t* p, std::size_t n) {
  while (n > 0) {
    const ssize_t r = ::read(fd, p, n);
    if (r <= 0) return false;
    p += r;
    n -= static_cast<std::size_t>(r);
  }
  return true;
}

}  // namespace

namespace {

/// Writes `bytes_per_op` and fdatasyncs, over and over, for `seconds`: at
/// the end of the file (`wrap_at` 0), or over the first `wrap_at` bytes
/// again and again.
baseline_result write_sync_loop(const std::string& path, int fd, std::size_t bytes_per_op, double seconds,
                                std::uint64_t wrap_at) {
  const std::vector<std::uint8_t> block(bytes_per_op, 'b');
  std::vector<double> lat;
  std::uint64_t offset = 0;
  const auto start = clock::now();
  const auto stop_at = start + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(seconds));
  while (clock::now() < stop_at) {
    if (wrap_at > 0 && offset + block.size() > wrap_at) offset = 0;
    const auto t0 = clock::now();
    if (::pwrite(fd, block.data(), block.size(), static_cast<off_t>(offset)) != static_cast<ssize_t>(block.size()) ||
        ::fdatasync(fd) != 0) {
      ::close(fd);
      ::unlink(path.c_str());
      throw std::runtime_error("fsync baseline: write or fdatasync failed: " + std::string(std::strerror(errno)));
    }
    offset += block.size();
    lat.push_back(std::chrono::duration<double, std::micro>(clock::now() - t0).count());
  }
  const double elapsed = std::chrono::duration<double>(clock::now() - start).count();
  ::close(fd);
  ::unlink(path.c_str());
  return {static_cast<double>(lat.size()) / elapsed, quantile(lat, 0.5)};
}

int create_baseline_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0) throw std::runtime_error("cannot create " + path + ": " + std::strerror(errno));
  return fd;
}

}  // namespace

baseline_result measure_fsync(const std::string& dir, std::size_t bytes_per_op, double seconds) {
  const std::string path = dir + "/fsync-baseline.dat";
  return write_sync_loop(path, create_baseline_file(path), bytes_per_op, seconds, 0);
}

baseline_result measure_overwrite_fsync(const std::string& dir, std::size_t bytes_per_op, double seconds) {
  const std::string path = dir + "/overwrite-baseline.dat";
  const int fd = create_baseline_file(path);
  // Really written zeros (not a hole, not unwritten extents), synced: what a
  // preallocated segment looks like.
  constexpr std::uint64_t file_bytes = 64ull * 1024 * 1024;
  const std::vector<std::uint8_t> zeros(1 << 20, 0);
  for (std::uint64_t at = 0; at < file_bytes; at += zeros.size())
    if (::pwrite(fd, zeros.data(), zeros.size(), static_cast<off_t>(at)) != static_cast<ssize_t>(zeros.size()))
      throw std::runtime_error("overwrite baseline: cannot fill " + path + ": " + std::strerror(errno));
  ::fsync(fd);
  return write_sync_loop(path, fd, bytes_per_op, seconds, file_bytes);
}

baseline_result measure_socket_round_trip(std::size_t request_bytes, double seconds) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    throw std::runtime_error("socketpair failed: " + std::string(std::strerror(errno)));
  constexpr std::size_t answer_bytes = 24;
  std::thread echo([fd = fds[1], request_bytes] {
    std::vector<std::uint8_t> in(request_bytes), out(answer_bytes, 'a');
    while (read_exact(fd, in.data(), in.size()))
      if (::write(fd, out.data(), out.size()) != static_cast<ssize_t>(out.size())) break;
  });
  std::vector<std::uint8_t> req(request_bytes, 'r'), ans(answer_bytes);
  std::vector<double> lat;
  const auto start = clock::now();
  const auto stop_at = start + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(seconds));
  while (clock::now() < stop_at) {
    const auto t0 = clock::now();
    if (::write(fds[0], req.data(), req.size()) != static_cast<ssize_t>(req.size())) break;
    if (!read_exact(fds[0], ans.data(), ans.size())) break;
    lat.push_back(std::chrono::duration<double, std::micro>(clock::now() - t0).count());
  }
  const double elapsed = std::chrono::duration<double>(clock::now() - start).count();
  ::shutdown(fds[0], SHUT_RDWR);
  ::close(fds[0]);
  echo.join();
  ::close(fds[1]);
  return {static_cast<double>(lat.size()) / elapsed, quantile(lat, 0.5)};
}

namespace {

/// A 64-character lowercase hex id that differs for every row, as wide as
/// the SHA-256 record id the sink stores (a hash here would cost the loop
/// more than the insert it measures).
void fill_hex_id(std::string& id, std::uint64_t row) {
  static constexpr char digits[] = "0123456789abcdef";
  std::uint64_t x = row;
  for (std::size_t word = 0; word < 4; ++word) {
    // splitmix64: spreads consecutive rows over the whole key space
    x += 0x9e3779b97f4a7c15ull;
    std::uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    for (std::size_t d = 0; d < 16; ++d) id[word * 16 + d] = digits[(z >> (60 - 4 * d)) & 0xf];
  }
}

/// Rows of `payload_bytes` inserted into a fresh database in `dir` (WAL,
/// synchronous=FULL, as the SQLite sink runs it), `rows_per_transaction` at a
/// time (1: each INSERT commits on its own), for `seconds`. Each row is as
/// wide as a row the sink writes (a 64-character hex id, a segment name of
/// weir's form), so the yardstick loads the same bytes. `key` is the table's
/// key column: the id, or a sequential integer.
baseline_result measure_sqlite(const std::string& path, const char* key, int rows_per_transaction,
                               std::size_t payload_bytes, double seconds) {
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) throw std::runtime_error("cannot open " + path);
  const std::string create = std::string("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; CREATE TABLE "
                                         "weir_records(") + key + ", shard INTEGER, segment TEXT, idx INTEGER, "
                                         "ts INTEGER, payload BLOB)";
  sqlite3_exec(db, create.c_str(), nullptr, nullptr, nullptr);
  sqlite3_stmt* insert = nullptr;
  sqlite3_prepare_v2(db, "INSERT INTO weir_records(id, shard, segment, idx, ts, payload) VALUES(?1, 0, "
                     "'shard_00/seg_00000001.wab', ?2, ?4, ?3)", -1, &insert, nullptr);
  constexpr std::int64_t ingest_time_ns = 1'800'000'000'000'000'000;  // as wide as a real one
  const std::vector<std::uint8_t> payload(payload_bytes, 'p');
  std::string id(64, '0');
  std::vector<double> lat;  // per transaction
  std::int64_t rows = 0;
  const bool explicit_transactions = rows_per_transaction > 1;
  const auto start = clock::now();
  const auto stop_at = start + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(seconds));
  while (clock::now() < stop_at) {
    const auto t0 = clock::now();
    if (explicit_transactions) sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr);
    for (int k = 0; k < rows_per_transaction; ++k, ++rows) {
      fill_hex_id(id, static_cast<std::uint64_t>(rows));
      sqlite3_reset(insert);
      sqlite3_bind_text(insert, 1, id.c_str(), static_cast<int>(id.size()), SQLITE_STATIC);
      sqlite3_bind_int64(insert, 2, rows);
      sqlite3_bind_int64(insert, 4, ingest_time_ns + rows);
      sqlite3_bind_blob(insert, 3, payload.data(), static_cast<int>(payload.size()), SQLITE_STATIC);
      if (sqlite3_step(insert) != SQLITE_DONE) throw std::runtime_error("sqlite baseline: INSERT failed");
    }
    if (explicit_transactions && sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK)
      throw std::runtime_error("sqlite baseline: COMMIT failed");
    lat.push_back(std::chrono::duration<double, std::micro>(clock::now() - t0).count());
  }
  const double elapsed = std::chrono::duration<double>(clock::now() - start).count();
  sqlite3_finalize(insert);
  sqlite3_close(db);
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  return {static_cast<double>(rows) / elapsed, quantile(lat, 0.5)};
}

}  // namespace

baseline_result measure_sqlite_insert(const std::string& dir, std::size_t payload_bytes, double seconds) {
  return measure_sqlite(dir + "/sqlite-baseline.db", "id TEXT PRIMARY KEY", 1, payload_bytes, seconds);
}

baseline_result measure_sqlite_bulk(const std::string& dir, std::size_t payload_bytes, double seconds) {
  // seq takes the rowid: each row lands after the last.
  return measure_sqlite(dir + "/sqlite-bulk-baseline.db", "seq INTEGER PRIMARY KEY, id TEXT", 1000, payload_bytes,
                        seconds);
}

std::uint64_t sqlite_row_count(const std::string& path) {
  if (!std::filesystem::exists(path)) return 0;
  sqlite3* db = nullptr;
  std::uint64_t n = 0;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(db, 1000);
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM weir_records", -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
      n = static_cast<std::uint64_t>(sqlite3_column_int64(st, 0));
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return n;
}

}  // namespace weir::bench
