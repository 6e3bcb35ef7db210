// Named files (secrets, certificates, the configuration) on a file system
// that stops answering: each read is given up on after the time limit,
// leaves the caller's buffer alone, is given up on at once at shutdown, and
// no more than max_stuck_file_reads threads are ever left blocked.
#include <atomic>
#include <future>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "daemon/reload_runner.hpp"
#include "files/regular_file.hpp"
#include "files/time_limit.hpp"
#include "support/hung_file_system.hpp"
#include "support/test_helpers.hpp"
#include "support/test_paths.hpp"

using namespace weir;
using namespace weir::test;
using namespace std::chrono_literals;

namespace {

/// A read of `path` that blocks as long as its file system does.
std::function<std::string(std::string&)> open_of(std::string path) {
  return [path](std::string& out) {
    std::string why = check_regular_file(path, 1024);
    out = "read";
    return why;
  };
}

}  // namespace

TEST_CASE("a secret on a file system that does not answer is given up on after the time limit", "[files]") {
  temp_dir dir;
  hung_file_system hung(dir / "nfs");
  INFO(hung.error());
  REQUIRE(hung.mounted());
  const int stuck_before = stuck_file_reads();
  std::string out = "untouched";
  const std::string why = read_regular_file(hung.path("token").string(), 1024, out);
  CHECK(why == "did not answer within 5 s (a file system that does not respond?)");
  CHECK(out == "untouched");
  CHECK(stuck_file_reads() == stuck_before + 1);
  // Released, the blocked thread returns (ENOTCONN) into its own buffer, not ours.
  hung.release();
  REQUIRE(eventually([&] { return stuck_file_reads() == stuck_before; }));
  CHECK(out == "untouched");
}

TEST_CASE("reads in progress are given up on at once at shutdown and later ones still wait", "[files]") {
  temp_dir dir;
  hung_file_system hung(dir / "nfs");
  INFO(hung.error());
  REQUIRE(hung.mounted());
  auto waiting = std::async(std::launch::async, [&] {
    std::string out;
    return read_within(open_of(hung.path("token").string()), out, std::chrono::hours(1));
  });
  // Given up on as soon as it is in progress (it may not have started when first told).
  std::string why;
  while (waiting.wait_for(10ms) != std::future_status::ready) give_up_file_reads_in_progress();
  CHECK(waiting.get() == "not read: given up at shutdown");
  // A read started afterwards is not given up on: it finishes normally.
  std::string out;
  CHECK(read_within([](std::string& o) { o = "fine"; return std::string(); }, out, std::chrono::hours(1)).empty());
  CHECK(out == "fine");
  hung.release();
  REQUIRE(eventually([] { return stuck_file_reads() == 0; }));
}

TEST_CASE("no more than max_stuck_file_reads threads are left blocked on a dead file system", "[files]") {
  temp_dir dir;
  hung_file_system hung(dir / "nfs");
  INFO(hung.error());
  REQUIRE(hung.mounted());
  REQUIRE(stuck_file_reads() == 0);
  int timed_out = 0;
  for (int i = 0; i < max_stuck_file_reads; ++i) {
    std::string out;
    timed_out += read_within(open_of(hung.path("token").string()), out, 20ms).starts_with("did not answer within 20 ms");
  }
  CHECK(timed_out == max_stuck_file_reads);
  CHECK(stuck_file_reads() == max_stuck_file_reads);
  std::string out;
  bool ran = false;
  const std::string why = read_within([&ran](std::string&) { ran = true; return std::string(); }, out, 20ms);
  CHECK(why == std::to_string(max_stuck_file_reads) +
                   " earlier file reads have not returned (a file system that does not answer?); not trying another");
  CHECK(!ran);
  hung.release();
  REQUIRE(eventually([] { return stuck_file_reads() == 0; }));
  CHECK(read_within([&ran](std::string&) { ran = true; return std::string(); }, out, 1s).empty());
  CHECK(ran);
}

TEST_CASE("a reload runs off the signal thread: SIGHUPs during one make one more and stopping never waits for a file",
          "[files][signals]") {
  temp_dir dir;
  hung_file_system hung(dir / "nfs");
  INFO(hung.error());
  REQUIRE(hung.mounted());
  std::atomic<int> started{0};
  std::mutex m;
  std::condition_variable cv;
  bool hold = true;
  std::string last_why;
  reload_runner runner([&] {
    const int n = ++started;
    if (n == 1) {  // the first reload waits for the test; the next reads a dead file
      std::unique_lock<std::mutex> lock(m);
      cv.wait(lock, [&] { return !hold; });
      return;
    }
    std::string out;
    const auto why = read_regular_file(hung.path("token").string(), 1024, out);
    std::lock_guard<std::mutex> guard(m);
    last_why = why;
  });
  CHECK(runner.request());
  REQUIRE(eventually([&] { return started == 1; }));
  // Three SIGHUPs while the first runs: one more reload, not three.
  CHECK(!runner.request());
  CHECK(!runner.request());
  CHECK(!runner.request());
  {
    std::lock_guard<std::mutex> guard(m);
    hold = false;
  }
  cv.notify_all();
  REQUIRE(eventually([&] { return started == 2; }));
  CHECK(runner.finished() == 1);
  // The second is reading a file that never answers (for 5 s): stop gives up on it.
  runner.stop();
  CHECK(runner.finished() == 2);
  CHECK(started == 2);
  {
    std::lock_guard<std::mutex> guard(m);
    CHECK(last_why == "not read: given up at shutdown");
  }
  CHECK(!runner.request());  // stopped: nothing runs any more
  CHECK(started == 2);
  hung.release();
  REQUIRE(eventually([] { return stuck_file_reads() == 0; }));
}
