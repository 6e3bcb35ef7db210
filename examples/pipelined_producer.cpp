// Pushes COUNT Durable records with up to WINDOW frames in flight on one
// connection: with `ingest.ack_mode: ordered`, one fsync covers many frames.
// Completions arrive in send order.
// Usage: pipelined_producer SOCKET COUNT [WINDOW [PAYLOAD_BYTES]]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <weir/client.hpp>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s SOCKET COUNT [WINDOW [PAYLOAD_BYTES]]\n", argv[0]);
    return 2;
  }
  const unsigned long count = std::strtoul(argv[2], nullptr, 10);
  const unsigned long window = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 1024;
  const unsigned long payload_bytes = argc > 4 ? std::strtoul(argv[4], nullptr, 10) : 0;  // 0: as long as it is
  try {
    auto conn = weir::client::connection::connect_unix(argv[1]);
    weir::client::pipelined_producer producer(conn, window);
    unsigned long acked = 0, refused = 0;
    const auto started = std::chrono::steady_clock::now();
    for (unsigned long i = 0; i < count; ++i) {
      std::string record = "event " + std::to_string(i);
      if (record.size() < payload_bytes) record.resize(payload_bytes, '.');
      producer.push({reinterpret_cast<const std::uint8_t*>(record.data()), record.size()},
                    weir::client::durability::durable,
                    [&](const weir::client::push_result& r) { r.acked ? ++acked : ++refused; });
    }
    producer.flush();  // every completion has run
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::printf("acked %lu, refused %lu, %.0f records/s\n", acked, refused, s > 0 ? acked / s : 0.0);
    return refused == 0 ? 0 : 1;
  } catch (const weir::client::client_error& e) {
    // Whatever was in flight has no verdict: push it again (nothing is lost, duplicates are possible).
    std::fprintf(stderr, "weir: %s\n", e.what());
    return 1;
  }
}
