#pragma once
// A producer that pushes Durable records ("<prefix>0", "<prefix>1", ...) one
// after another on its own thread until its connection ends — for tests
// that kill the daemon under load. Only what was acked is listed.
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace weir::test {

class steady_producer {
 public:
  steady_producer(std::string socket, std::string prefix);
  ~steady_producer();
  steady_producer(const steady_producer&) = delete;
  steady_producer& operator=(const steady_producer&) = delete;

  /// Waits for the thread to end (it ends when the daemon goes away) and
  /// returns every payload that was acked, in order.
  std::vector<std::string> join();

 private:
  std::mutex mutex_;
  std::vector<std::string> acked_;
  std::thread thread_;
};

}  // namespace weir::test
