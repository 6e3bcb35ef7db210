// weir-ctl: the operator's command line for a running weir-server.
#include <cstdio>
#include <cstring>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "messages/wire/frame.hpp"
#include "observability/version.hpp"
#include "tools/ctl_commands.hpp"
#include "weir/client.hpp"

namespace {

constexpr const char* usage = R"(Usage: weir-ctl [--socket PATH] [--admin HOST:PORT] [--data-dir DIR] [--json] COMMAND [ARGS]

Commands:
  health                     send a wire HealthCheck; exit 0 when the daemon answers
  push [--durability D] [--tracked] [PAYLOAD]
                             push one record (PAYLOAD, or standard input when absent)
                             D: durable (default), buffered or replicated
  status                     summary from the admin server (/api/v1/status)
  metrics                    the Prometheus exposition (/metrics)
  wab                        each shard's segments and confirm cursor, read from the data dir
  dl list                    dead letters: origin, reason, payload, read from the data dir
  dl requeue [--yes]         push the dead letters back through the daemon (new record ids)
                             and delete their files; without --yes, only say what it would do

Options:
  --socket PATH     daemon socket (default: var/run/weir.sock, or $WEIR_SOCKET)
  --admin HOST:PORT admin server (default: 127.0.0.1:9185)
  --data-dir DIR    the daemon's data_dir (default: var)
  --json            print results as JSON
  --version         print the version
  -h, --help        print this help

Exit status: 0 success, 1 the daemon refused or did not answer, 2 usage error.
)";

int usage_error(const std::string& m) {
  std::fprintf(stderr, "weir-ctl: %s (see --help)\n", m.c_str());
  return 2;
}

std::string nack_name(std::uint8_t reason) {
  auto n = weir::wire::name_of(static_cast<weir::wire::nack_reason>(reason));
  return n == "?" ? "Unknown(" + std::to_string(reason) + ")" : std::string(n);
}

}  // namespace

int main(int argc, char** argv) {
  std::string socket = std::getenv("WEIR_SOCKET") ? std::getenv("WEIR_SOCKET") : "var/run/weir.sock";
  bool json = false;
  std::string admin = "127.0.0.1:9185", data_dir = "var";
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::fputs(usage, stdout);
      return 0;
    } else if (a == "--version") {
      std::printf("weir-ctl %s\n", std::string(weir::version_string).c_str());
      return 0;
    } else if (a == "--socket") {
      if (++i >= argc) return usage_error("--socket needs a path");
      socket = argv[i];
    } else if (a == "--admin") {
      if (++i >= argc) return usage_error("--admin needs HOST:PORT");
      admin = argv[i];
    } else if (a == "--data-dir") {
      if (++i >= argc) return usage_error("--data-dir needs a directory");
      data_dir = argv[i];
    } else if (a == "--json") {
      json = true;
    } else {
      args.push_back(a);
    }
  }
  if (args.empty()) return usage_error("no command");

  try {
    if (args[0] == "health") {
      if (args.size() != 1) return usage_error("health takes no arguments");
      auto c = weir::client::connection::connect_unix(socket);
      c.set_timeout(std::chrono::seconds(5));
      c.health_check();
      std::puts(json ? "{\"healthy\":true}" : "healthy");
      return 0;
    }
    if (args[0] == "push") {
      auto tier = weir::client::durability::durable;
      bool tracked = false;
      std::string payload;
      bool have_payload = false;
      for (std::size_t i = 1; i < args.size(); ++i) {
        if (args[i] == "--durability") {
          if (++i >= args.size()) return usage_error("--durability needs a value");
          if (args[i] == "durable") tier = weir::client::durability::durable;
          else if (args[i] == "buffered") tier = weir::client::durability::buffered;
          else if (args[i] == "replicated") tier = weir::client::durability::replicated;
          else return usage_error("--durability must be durable, buffered or replicated");
        } else if (args[i] == "--tracked") {
          tracked = true;
        } else if (!have_payload) {
          payload = args[i];
          have_payload = true;
        } else {
          return usage_error("push takes one payload");
        }
      }
      if (!have_payload)
        payload.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
      if (payload.empty()) return usage_error("empty payload (weir cannot store an empty record)");
      auto bytes = std::span(reinterpret_cast<const std::uint8_t*>(payload.data()), payload.size());
      auto c = weir::client::connection::connect_unix(socket);
      c.set_timeout(std::chrono::seconds(30));
      if (tracked) {
        auto r = c.push_tracked(bytes, tier);
        if (!r.acked) {
          std::fprintf(stderr, "weir-ctl: push refused: Nack(%s)\n", nack_name(r.nack).c_str());
          return 1;
        }
        if (json)
          std::printf("{\"acked\":true,\"segment\":\"%s\",\"index\":%llu,\"record_id\":\"%s\"}\n",
                      r.segment.c_str(), static_cast<unsigned long long>(r.index), r.record_id_hex.c_str());
        else
          std::printf("acked segment=%s index=%llu record_id=%s\n", r.segment.c_str(),
                      static_cast<unsigned long long>(r.index), r.record_id_hex.c_str());
        return 0;
      }
      auto r = c.push(bytes, tier);
      if (!r.acked) {
        std::fprintf(stderr, "weir-ctl: push refused: Nack(%s)\n", nack_name(r.nack).c_str());
        return 1;
      }
      std::puts(json ? "{\"acked\":true}" : "acked");
      return 0;
    }
    if (args[0] == "status" && args.size() == 1) return weir::ctl::admin_get(admin, "/api/v1/status", true, json);
    if (args[0] == "metrics" && args.size() == 1) return weir::ctl::admin_get(admin, "/metrics", false, json);
    if (args[0] == "wab" && args.size() == 1) return weir::ctl::wab_list(data_dir, json);
    if (args[0] == "dl" && args.size() == 2 && args[1] == "list") return weir::ctl::dead_letter_list(data_dir, json);
    if (args[0] == "dl" && args.size() >= 2 && args[1] == "requeue")
      return weir::ctl::dead_letter_requeue(data_dir, socket, args.size() == 3 && args[2] == "--yes");
    return usage_error("unknown command " + args[0]);
  } catch (const weir::client::client_error& e) {
    std::fprintf(stderr, "weir-ctl: %s\n", e.what());
    return 1;
  }
}
