#include "support/kill_and_redeliver.hpp"

#include <signal.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/daemon_process.hpp"
#include "support/http_get.hpp"
#include "support/test_helpers.hpp"
#include "weir/client.hpp"

namespace weir::test {

void kill_and_redeliver(const std::filesystem::path& dir, const std::vector<std::string>& sink_args, int records,
                        const std::function<std::string(int)>& payload, const std::function<std::size_t()>& rows) {
  auto args = sink_args;
  args.insert(args.end(), {"--set", "drain.cursor_persist_ms=60000", "--set", "drain.linger_ms=5", "--set",
                           "wab.spare_segments=0", "--set", "ingest.shards=1"});
  {
    daemon_process d(dir, args);
    REQUIRE(d.wait_ready());
    auto c = client::connection::connect_unix(d.socket_path());
    for (int i = 0; i < records; ++i) REQUIRE(c.push(as_bytes(payload(i)), client::durability::durable).acked);
    INFO(d.log());
    REQUIRE(eventually([&] { return rows() == static_cast<std::size_t>(records); }));
    ::kill(d.pid(), SIGKILL);
    CHECK(d.wait_exit() == 128 + SIGKILL);
  }
  const auto admin = free_tcp_port();
  args.insert(args.end(), {"--set", "admin.listen=127.0.0.1:" + std::to_string(admin)});
  daemon_process again(dir, args);
  REQUIRE(again.wait_ready());
  std::uint64_t committed = 0, dead_lettered = 0;
  const bool caught_up = eventually([&] {
    const auto status = nlohmann::json::parse(http_request(admin, "/api/v1/status").body);
    committed = status["sink"]["committed_records"].get<std::uint64_t>();
    dead_lettered = status["sink"]["dead_lettered"].get<std::uint64_t>();
    std::uint64_t lag = 0;
    for (const auto& shard : status["shards"]) lag += shard["lag_records"].get<std::uint64_t>();
    return lag == 0;
  });
  INFO("committed again: " << committed << "; log: " << again.log());
  REQUIRE(caught_up);
  CHECK(committed == static_cast<std::uint64_t>(records));
  CHECK(dead_lettered == 0);
  CHECK(again.stop() == 0);
}

}  // namespace weir::test
