// Pushes each argument as one Durable record: acked once an fdatasync
// covers it. Usage: minimal_producer SOCKET RECORD...
#include <cstdio>
#include <string>

#include <weir/client.hpp>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s SOCKET RECORD...\n", argv[0]);
    return 2;
  }
  try {
    auto conn = weir::client::connection::connect_unix(argv[1]);
    for (int i = 2; i < argc; ++i) {
      const std::string record = argv[i];
      const auto r = conn.push({reinterpret_cast<const std::uint8_t*>(record.data()), record.size()},
                               weir::client::durability::durable);
      if (!r.acked) {
        // InternalError (r.retryable()) may succeed if pushed again; anything else will not.
        std::fprintf(stderr, "not acked: %s (nack 0x%02x%s)\n", argv[i], r.nack, r.retryable() ? ", retryable" : "");
        return 1;
      }
      std::printf("acked: %s\n", argv[i]);
    }
  } catch (const weir::client::client_error& e) {
    std::fprintf(stderr, "weir: %s\n", e.what());
    return 1;
  }
  return 0;
}
