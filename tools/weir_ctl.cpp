// weir-ctl: the operator's command line for a running weir-server. main()
// takes the global options and hands the rest to one command.
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "observability/version.hpp"
#include "tools/ctl_config.hpp"
#include "config/sink_list.hpp"
#include "tools/ctl_commands.hpp"
#include "tools/ctl_status_view.hpp"

namespace weir::ctl {

namespace {

constexpr const char* usage = R"(Usage: weir-ctl [--config FILE] [--set KEY=VALUE]...
                [--socket PATH | --tcp HOST:PORT --ca FILE --cert FILE --key FILE]
                [--admin HOST:PORT] [--data-dir DIR] [--json] COMMAND [ARGS]

Commands:
  health        send a wire HealthCheck; exit 0 when the daemon answers
  push          push a record, or one record per line of standard input
  status        what the daemon is doing, from its admin server
  cluster status  the cluster's members, replication lag and failover
  cluster certs   make a private CA and a certificate for each node
  top           the same, redrawn live
  metrics       the Prometheus exposition (/metrics)
  wab           each shard's segments and confirm cursor, read from the data dir
  segments      check every record's CRC offline; what the next start would repair
  dump          one segment's records with index, offset, ingest time and record id
  tail          follow new records as they are appended (like tail -f)
  quarantine    the damaged segments copied aside: list, inspect FILE
  dl list       dead letters: origin, reason, payload, read from the data dir
  dl requeue    push the dead letters back through the daemon
  dl drop       delete dead-letter files for good
  drain         retire the daemon: stop taking pushes, deliver everything, stop

`weir-ctl COMMAND --help` shows a command's options and examples.

Options:
  --config FILE     the daemon's configuration: its listen.unix, admin.listen
                    and data_dir are the defaults of --socket, --admin and
                    --data-dir (read as weir-server reads it: WEIR_* variables
                    and --set apply). Default: /etc/weir/weir.yaml when this
                    user can read it ($WEIR_CTL_CONFIG names another; empty:
                    none)
  --set KEY=VALUE   a key of that configuration, as weir-server --set
  --socket PATH     daemon socket (default: var/run/weir.sock, or $WEIR_SOCKET)
  --tcp HOST:PORT   the daemon's listen.tcp instead, over mutual TLS ($WEIR_TCP):
  --ca FILE         the CA that signed the daemon's certificate ($WEIR_TLS_CA)
  --cert FILE       this client's certificate ($WEIR_TLS_CERT)
  --key FILE        its private key ($WEIR_TLS_KEY)
  --admin HOST:PORT admin server (default: 127.0.0.1:9185)
  --data-dir DIR    the daemon's data_dir (default: var)
  --json            print results as JSON
  --version         print the version
  -h, --help        print this help

Exit status: 0 success; 1 a problem found, or the daemon refused or broke off;
2 a usage error, or the daemon (socket, TCP or admin server) cannot be reached.
)";

struct command {
  const char* name;
  const char* help;
  int (*run)(const options&, const std::vector<std::string>&);
};

int no_arguments(const char* name, const std::vector<std::string>& args) {
  return args.empty() ? 0 : usage_error(name, "takes no arguments, got " + args.front());
}

int health(const options& o, const std::vector<std::string>& args) {
  if (int rc = no_arguments("health", args)) return rc;
  auto c = connect(o);
  c.set_timeout(std::chrono::seconds(5));
  c.health_check();
  std::puts(o.json ? "{\"healthy\":true}" : "healthy");
  return 0;
}

int status(const options& o, const std::vector<std::string>& args) {
  if (int rc = no_arguments("status", args)) return rc;
  return admin_get(o.admin, "/api/v1/status", render_status, o.json);
}

int cluster(const options& o, const std::vector<std::string>& args) {
  if (!args.empty() && args[0] == "certs") return cluster_certs({args.begin() + 1, args.end()});
  if (args.empty() || args[0] != "status")
    return usage_error("cluster", args.empty() ? "needs a subcommand: status or certs"
                                               : "unknown subcommand " + args[0] + " (expected status or certs)");
  if (args.size() > 1) return usage_error("cluster", "status takes no arguments, got " + args[1]);
  return admin_get(o.admin, "/api/v1/status", render_cluster, o.json);
}

int metrics(const options& o, const std::vector<std::string>& args) {
  if (int rc = no_arguments("metrics", args)) return rc;
  return admin_metrics(o.admin, o.json);
}

int wab(const options& o, const std::vector<std::string>& args) {
  if (int rc = no_arguments("wab", args)) return rc;
  return require_data_dir(o) ? wab_list(o.data_dir, o.json) : 2;
}

int segments(const options& o, const std::vector<std::string>& args) {
  if (int rc = no_arguments("segments", args)) return rc;
  return require_data_dir(o) ? segments_check(o.data_dir, o.json) : 2;
}

/// A whole number from `text` (up to 2^64 - 1), or nullopt.
std::optional<std::uint64_t> count_of(const std::string& text) {
  std::uint64_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return n;
}

/// A cluster.node_id given as --node, or nullopt.
std::optional<std::uint16_t> node_id_of(const std::string& text) {
  const auto n = count_of(text);
  if (!n || *n == 0 || *n > 65535) return std::nullopt;
  return static_cast<std::uint16_t>(*n);
}

constexpr const char* node_id_expected = ": expected a node id from 1 to 65535";

int dump(const options& o, const std::vector<std::string>& args) {
  dump_request req;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const bool has_value = i + 1 < args.size();
    if (a == "--from" || a == "--count" || a == "--format" || a == "--node") {
      if (!has_value) return usage_error("dump", a + " needs a value");
      const std::string& v = args[++i];
      if (a == "--format") {
        if (v == "text") req.format = dump_format::text;
        else if (v == "hex") req.format = dump_format::hex;
        else if (v == "json") req.format = dump_format::json;
        else return usage_error("dump", "--format " + v + ": expected text, hex or json");
        continue;
      }
      if (a == "--node") {
        const auto node = node_id_of(v);
        if (!node) return usage_error("dump", a + " " + v + node_id_expected);
        req.node = *node;
        continue;
      }
      const auto n = count_of(v);
      if (!n || (a == "--from" && *n == 0))
        return usage_error("dump", a + " " + v + ": expected " + (a == "--from" ? "an index from 1" : "a whole number"));
      if (a == "--from") req.from = *n;
      else req.count = *n;
    } else if (a.rfind("--", 0) == 0) {
      return usage_error("dump", "unknown option " + a);
    } else if (req.segment.empty()) {
      req.segment = a;
    } else {
      return usage_error("dump", "takes one SEGMENT, got " + a + " too");
    }
  }
  if (req.segment.empty()) return usage_error("dump", "needs a SEGMENT (a file, or shard_NN/seg_….wab)");
  if (o.json) req.format = dump_format::json;
  return dump_segment(o.data_dir, req);
}

int quarantine(const options& o, const std::vector<std::string>& args) {
  if (args.empty()) return usage_error("quarantine", "needs a subcommand: list or inspect FILE");
  if (!require_data_dir(o)) return 2;
  if (args[0] == "list") {
    if (args.size() > 1) return usage_error("quarantine", "list takes no arguments, got " + args[1]);
    return quarantine_list(o.data_dir, o.json);
  }
  if (args[0] == "inspect") {
    dump_request req;
    std::string file;
    for (std::size_t i = 1; i < args.size(); ++i) {
      if (args[i] == "--node") {
        if (i + 1 >= args.size()) return usage_error("quarantine", "--node needs a value");
        const auto node = node_id_of(args[++i]);
        if (!node) return usage_error("quarantine", "--node " + args[i] + node_id_expected);
        req.node = *node;
      } else if (args[i].rfind("--", 0) == 0) {
        return usage_error("quarantine", "inspect: unknown option " + args[i]);
      } else if (file.empty()) {
        file = args[i];
      } else {
        return usage_error("quarantine", "inspect takes one FILE, got " + args[i] + " too");
      }
    }
    if (file.empty()) return usage_error("quarantine", "inspect takes one FILE (a name from quarantine list)");
    // A name from the list, or a path: its records, as dump shows them.
    const std::filesystem::path in_dir = std::filesystem::path(o.data_dir) / "quarantine" / file;
    std::error_code ec;
    req.segment = std::filesystem::exists(in_dir, ec) ? in_dir.string() : file;
    req.format = o.json ? dump_format::json : dump_format::text;
    return dump_segment(o.data_dir, req);
  }
  return usage_error("quarantine", "unknown subcommand " + args[0] + " (expected list or inspect)");
}

/// With a sinks: list, dead letters are kept per sink: `dl list` without
/// --sink shows the default sink's, and says which others hold some.
void hint_other_sinks_letters(const std::string& data_dir) {
  std::error_code ec;
  const std::string prefix = "dead_letter-";
  for (const auto& entry : std::filesystem::directory_iterator(data_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0 || !entry.is_directory(ec)) continue;
    std::size_t files = 0;
    for (const auto& f : std::filesystem::directory_iterator(entry.path(), ec)) files += f.is_regular_file(ec);
    if (files == 0) continue;
    const std::string sink = name.substr(prefix.size());
    std::fprintf(stderr, "weir-ctl: sink %s has %zu dead-letter file%s: weir-ctl dl --sink %s list\n", sink.c_str(),
                 files, files == 1 ? "" : "s", sink.c_str());
  }
}

int dead_letters(const options& o, const std::vector<std::string>& all_args) {
  // --sink NAME: that sink's dead letters (each sink of a sinks: list keeps its own).
  std::vector<std::string> args;
  std::string sink = default_sink_name;
  bool named_sink = false;
  for (std::size_t i = 0; i < all_args.size(); ++i) {
    if (all_args[i] != "--sink") {
      args.push_back(all_args[i]);
      continue;
    }
    if (i + 1 == all_args.size() || !sink_name_ok(all_args[i + 1]))
      return usage_error("dl", std::string("--sink needs a sink's name: ") + sink_name_rule);
    sink = all_args[++i];
    named_sink = true;
  }
  const std::string letters = o.data_dir + "/" + dead_letter_dir_name(sink);
  if (args.empty()) return usage_error("dl", "needs a subcommand: list, requeue or drop");
  if (args[0] == "list") {
    if (args.size() > 1) return usage_error("dl", "list takes no arguments, got " + args[1]);
    if (!require_data_dir(o)) return 2;
    const int rc = dead_letter_list(letters, o.json);
    if (!named_sink) hint_other_sinks_letters(o.data_dir);
    return rc;
  }
  if (args[0] == "requeue") {
    bool yes = false;
    for (std::size_t i = 1; i < args.size(); ++i) {
      if (args[i] == "--yes") yes = true;
      else return usage_error("dl", "requeue: unknown option " + args[i]);
    }
    return require_data_dir(o) ? dead_letter_requeue(o, letters, yes) : 2;
  }
  if (args[0] == "drop") {
    bool yes = false;
    std::vector<std::string> names;
    for (std::size_t i = 1; i < args.size(); ++i) {
      if (args[i] == "--yes") yes = true;
      else if (args[i].size() > 1 && args[i][0] == '-') return usage_error("dl", "drop: unknown option " + args[i]);
      else names.push_back(args[i]);
    }
    return require_data_dir(o) ? dead_letter_drop(letters, names, yes, o.json) : 2;
  }
  return usage_error("dl", "unknown subcommand " + args[0] + " (expected list, requeue or drop)");
}

const char* const drain_help = R"(Usage: weir-ctl drain [--timeout SECONDS]

Retires the daemon (a planned migration, a host taken out of service):
signals the weir-server that holds the data directory (--data-dir, or the
data_dir of --config) with SIGUSR1, upon which it stops taking pushes,
delivers every record it holds to every sink and stops. Meanwhile shows the
records left, the rate and the time left (read from its admin server; one
line every 5 s when not on a terminal), and the sinks still owed records.
Once the process is gone, checks its WAB: nothing undelivered may be left.

Options:
  --timeout S   give up waiting after S seconds (default 0: no limit); the
                daemon goes on delivering (SIGTERM stops it, the rest kept)

Exit status: 0 the daemon stopped with every record delivered; 1 it stopped
with records left (stopped by SIGTERM before it was done), or the timeout
passed, naming what is left; 2 no daemon runs on the data directory, or it
may not be signalled (run as its user or root).

Examples:
  weir-ctl --config /etc/weir/weir.yaml drain
  weir-ctl --data-dir /var/lib/weir --admin 127.0.0.1:9185 drain --timeout 600
)";

const command commands[] = {
    {"health", R"(Usage: weir-ctl health

Sends a wire HealthCheck over the daemon's socket. Exit 0 when it answers,
1 when it breaks off or does not answer within 5 s, 2 when its socket (or
--tcp) cannot be reached.

Example:
  weir-ctl --socket /run/weir/weir.sock health
)", health},
    {"push", push_help, push_command},
    {"status", R"(Usage: weir-ctl status

What the daemon is doing, from its admin server (/api/v1/status): ingest
and delivery rates, the WAB against its cap, the sink's health and error,
the oldest undelivered record and the last sink commit, each shard's lag.
--json prints the whole status document.

Example:
  weir-ctl --admin 127.0.0.1:9185 status
)", status},
    {"top", top_help, top_command},
    {"tail", tail_help, tail_command},
    {"cluster", R"(Usage: weir-ctl cluster status
       weir-ctl cluster certs --out DIR --nodes LIST [--days N]

This node's cluster, from its admin server: each peer's node id, address,
state (up, suspect: connected but silent for three heartbeats, down) and
when it was last heard, how many records of this node's WAB it has not synced
yet, and which failed peers' replicas this node delivers. --json prints the
whole status document.

`cluster certs` makes a private CA and each node's certificate (weir-ctl
cluster certs --help).

Examples:
  weir-ctl --admin 127.0.0.1:9185 cluster status
  weir-ctl cluster certs --out /etc/weir/cluster --nodes 1,2,3
)", cluster},
    {"metrics", R"(Usage: weir-ctl metrics

Prints the Prometheus exposition (/metrics) of the admin server; with
--json one array of samples, each {"name", "labels", "value"}.

Exit status: 0; 1 the admin server answered an error; 2 it cannot be reached.

Examples:
  weir-ctl metrics | grep weir_sink_health
  weir-ctl --json metrics | jq '.[] | select(.name == "weir_drain_lag_records")'
)", metrics},
    {"wab", R"(Usage: weir-ctl wab

Reads the data directory directly (the daemon may be down): each shard's
segments with their records, bytes and whether they are sealed, spare
files, the confirm cursor, and what the next start would repair — a file
renamed to the segment it holds, a damaged header written again, a seal
not believed, a confirm cursor not trusted — as `weir-ctl segments` says
it (--json: the same as one document).

Exit status: 0; 1 damage, or a repair the next start reports as an error
(an untrusted cursor included); 2 a usage error or no data directory.

Example:
  weir-ctl --data-dir /var/lib/weir wab
)", wab},
    {"dump", R"(Usage: weir-ctl dump SEGMENT [--from N] [--count N] [--format text|hex|json] [--node ID]

Prints the records of one segment file, read-only: each record's segment
string and index (its coordinate), file offset, ingest time, record id (the
sink's idempotency key, and what AckTracked carried), size and payload.
SEGMENT is a file path, or shard_NN/seg_NNNNNNNN.wab under the data
directory's wab/. Records that do not check are read past, as the drain does.

--from N      start at record index N (1-based)
--count N     print at most N records
--format F    text (default; payload as printable text), hex (a hex dump of
              each payload), json (one array; also with --json)
--node ID     the daemon's cluster.node_id: in a cluster, record ids carry
              the origin node. By default the one the data directory
              records (data_dir/cluster_node_id, written at each start); a
              replica's file carries its origin in its path

Exit status: 0, 1 the segment holds damage (or its header is unreadable),
2 usage error or no such file.

Examples:
  weir-ctl --data-dir /var/lib/weir dump shard_00/seg_00000001.wab --count 10
  weir-ctl dump /var/lib/weir/replica/node_2/shard_00/seg_00000004.wab --format hex
)", dump},
    {"quarantine", R"(Usage: weir-ctl quarantine list
       weir-ctl quarantine inspect FILE [--node ID]

list     the files in the data directory's quarantine/: the copies recovery
         and the drain made of damaged segments, each with its size, when it
         was copied, and its records read and checked as a segment
inspect  the records of one of them (a name from list, or a path), as
         weir-ctl dump prints them, with the record ids they had in place
         (--node ID: the cluster.node_id they were written under; by
         default the one the data directory records)

The copies are for you: once what matters is recovered from them, delete
them. Read-only.

Exit status: 0; inspect: 1 when the file holds damage; 2 usage error or no
data directory.

Examples:
  weir-ctl --data-dir /var/lib/weir quarantine list
  weir-ctl --data-dir /var/lib/weir quarantine inspect shard_00__seg_00000004.wab
)", quarantine},
    {"segments", R"(Usage: weir-ctl segments

Checks the data directory offline, read-only (safe beside a running
daemon): every segment of every shard, and of every replica this node holds
for a peer, with its records and bytes, each record's CRC checked. A record
that does not check is named by its segment, index and offset. Then, from
startup recovery itself run on a file layer that changes nothing, what the
next start would repair: segments it would quarantine, cut or seal.

Exit status: 0 every record checks and the next start reports no error,
1 damage found (named above), 2 usage error or no data directory.

Examples:
  weir-ctl --data-dir /var/lib/weir segments
  weir-ctl --data-dir /var/lib/weir --json segments | jq '.[].repairs'
)", segments},
    {"drain", drain_help, drain_command},
    {"dl", R"(Usage: weir-ctl dl [--sink NAME] list
       weir-ctl dl [--sink NAME] requeue [--yes]
       weir-ctl dl [--sink NAME] drop [--yes] [FILE...]

--sink NAME  the dead letters of that sink of a sinks: list (each keeps its
             own); without it, the default sink's (a single sink: section)

list     the dead letters in the data directory: where each record came
         from, why the sink refused it, its payload
requeue  pushes each dead letter's payload back through the daemon (Durable;
         it gets a new record id) and deletes each file once all of its
         records were acked; without --yes, only says what it would do
drop     deletes the dead-letter files named (dl_00000003.wab; all of them
         when none is named) for good, which also lets delivery go on when
         drain.dead_letter_max_bytes is reached; without --yes, only says
         what it would delete

--json prints each as one JSON document: list the letters; requeue and
drop {"dry_run", "records", ...} (drop also each file with its records and
bytes).

A requeued record goes to every sink again, like any push.

Exit status: 0; 1 a record was not acked (its file is kept), a file could
not be deleted, or the daemon broke off; 2 a usage error, no data
directory, or the daemon cannot be reached.

Examples:
  weir-ctl --data-dir /var/lib/weir dl list --json
  weir-ctl --data-dir /var/lib/weir --socket /run/weir/weir.sock dl requeue --yes
  weir-ctl --data-dir /var/lib/weir dl drop dl_00000001.wab --yes
  weir-ctl --data-dir /var/lib/weir dl --sink hook list
)", dead_letters},
};

const command* find_command(const std::string& name) {
  for (const auto& c : commands)
    if (name == c.name) return &c;
  return nullptr;
}

}  // namespace

int usage_error(const std::string& command, const std::string& message) {
  std::fprintf(stderr, "weir-ctl %s: %s (see weir-ctl %s --help)\n", command.c_str(), message.c_str(),
               command.c_str());
  return 2;
}

client::connection connect(const options& o) {
  try {
    if (!o.tcp.empty()) {
      const auto colon = o.tcp.rfind(':');
      int port = 0;
      if (colon == std::string::npos ||
          std::from_chars(o.tcp.data() + colon + 1, o.tcp.data() + o.tcp.size(), port).ec != std::errc{} ||
          port < 1 || port > 65535)
        throw client::client_error("--tcp " + o.tcp + ": expected HOST:PORT", client::error_kind::unreachable);
      auto c = client::connection::connect_tcp(o.tcp.substr(0, colon), static_cast<std::uint16_t>(port), o.tls);
      c.set_timeout(std::chrono::seconds(30));
      return c;
    }
    auto c = client::connection::connect_unix(o.socket);
    c.set_timeout(std::chrono::seconds(30));
    return c;
  } catch (const client::client_error& e) {
    if (e.kind() != client::error_kind::unreachable) throw;
    throw client::client_error(std::string(e.what()) +
                                   (o.tcp.empty() ? " (is weir-server running? point weir-ctl at its socket with "
                                                    "--socket PATH or WEIR_SOCKET)"
                                                  : " (is listen.tcp set on the daemon?)"),
                               client::error_kind::unreachable);
  }
}

bool require_data_dir(const options& o) {
  std::error_code ec;
  if (std::filesystem::is_directory(std::filesystem::path(o.data_dir) / "wab", ec)) return true;
  // A data directory this user may not enter (0700, the daemon's user's) is
  // not "not one".
  struct stat st {};
  if (::stat(o.data_dir.c_str(), &st) != 0 && errno == EACCES) {
    std::fprintf(stderr, "weir-ctl: cannot reach the data directory %s: %s (a directory above it is closed to this "
                         "user)\n", o.data_dir.c_str(), std::strerror(EACCES));
    return false;
  }
  const std::string wab = o.data_dir + "/wab";
  if (::stat(o.data_dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) &&
      (::access(o.data_dir.c_str(), R_OK | X_OK) != 0 || (::access(wab.c_str(), F_OK) == 0 && ::access(wab.c_str(), R_OK | X_OK) != 0))) {
    const int err = errno;
    std::string owner = std::to_string(st.st_uid);
    if (const struct passwd* p = ::getpwuid(st.st_uid)) owner = p->pw_name;
    const std::string who = owner == "root" ? "root" : owner + " or root";
    std::fprintf(stderr, "weir-ctl: cannot read the data directory %s: %s (it belongs to %s; run weir-ctl as %s)\n",
                 o.data_dir.c_str(), std::strerror(err), owner.c_str(), who.c_str());
    return false;
  }
  std::fprintf(stderr,
               "weir-ctl: %s is not a weir data directory (it has no wab/ directory); pass the daemon's data_dir "
               "with --data-dir DIR%s%s%s\n",
               o.data_dir.c_str(), o.config_unreadable.empty() ? "" : " (the daemon's configuration could not be read: ",
               o.config_unreadable.c_str(), o.config_unreadable.empty() ? "" : ")");
  return false;
}

}  // namespace weir::ctl

int main(int argc, char** argv) {
  using namespace weir::ctl;
  options o;
  // Precedence: built-in defaults < the daemon's config < WEIR_SOCKET and
  // the like < flags. Flags are read first and applied last.
  std::vector<std::pair<std::string*, std::string>> flags;
  daemon_config_source daemon_config;
  std::vector<std::string> args;
  bool help = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* what) -> const char* { return ++i < argc ? argv[i] : nullptr; };
    if (a == "--") {  // the rest belongs to the command, verbatim
      for (; i < argc; ++i) args.emplace_back(argv[i]);
    } else if (a == "-h" || a == "--help") {
      help = true;
    } else if (a == "--version") {
      std::printf("weir-ctl %s\n", std::string(weir::version_string).c_str());
      return 0;
    } else if (std::string* target = a == "--socket"     ? &o.socket
                                     : a == "--admin"    ? &o.admin
                                     : a == "--data-dir" ? &o.data_dir
                                     : a == "--tcp"      ? &o.tcp
                                     : a == "--ca"       ? &o.tls.ca_file
                                     : a == "--cert"     ? &o.tls.cert_file
                                     : a == "--key"      ? &o.tls.key_file
                                                         : nullptr) {
      const char* v = value(a.c_str());
      if (!v) {
        std::fprintf(stderr, "weir-ctl: %s needs a value (see weir-ctl --help)\n", a.c_str());
        return 2;
      }
      flags.emplace_back(target, v);
    } else if (a == "--config" || a == "--set") {
      const char* v = value(a.c_str());
      if (!v) {
        std::fprintf(stderr, "weir-ctl: %s needs a value (see weir-ctl --help)\n", a.c_str());
        return 2;
      }
      if (a == "--config") daemon_config.file = v;
      else daemon_config.overrides.emplace_back(v);
    } else if (a == "--json") {
      o.json = true;
    } else {
      args.push_back(a);
    }
  }
  if (const auto why = apply_daemon_config(o, daemon_config); !why.empty()) {
    std::fprintf(stderr, "weir-ctl: %s\n", why.c_str());
    return 2;
  }
  if (const char* s = std::getenv("WEIR_SOCKET")) o.socket = s;
  if (const char* s = std::getenv("WEIR_TCP")) o.tcp = s;
  if (const char* s = std::getenv("WEIR_TLS_CA")) o.tls.ca_file = s;
  if (const char* s = std::getenv("WEIR_TLS_CERT")) o.tls.cert_file = s;
  if (const char* s = std::getenv("WEIR_TLS_KEY")) o.tls.key_file = s;
  for (auto& [target, v] : flags) *target = v;
  if (args.empty() || (help && args.size() == 1 && args[0] == "help")) {
    std::fputs(usage, help ? stdout : stderr);
    return help ? 0 : 2;
  }
  if (args[0] == "help" && args.size() == 2) {  // "weir-ctl help push"
    args.erase(args.begin());
    help = true;
  }
  const command* cmd = find_command(args[0]);
  if (!cmd) {
    std::fprintf(stderr, "weir-ctl: unknown command %s (commands: health, push, status, cluster, top, metrics, wab, segments, dump, tail, quarantine, dl, drain; see "
                         "weir-ctl --help)\n", args[0].c_str());
    return 2;
  }
  if (help) {
    std::fputs(cmd->help, stdout);
    return 0;
  }
  try {
    return cmd->run(o, {args.begin() + 1, args.end()});
  } catch (const weir::client::client_error& e) {
    std::fprintf(stderr, "weir-ctl %s: %s\n", cmd->name, e.what());
    // Not served at all (nothing listens, or the TLS handshake was refused): 2.
    const auto k = e.kind();
    return k == weir::client::error_kind::unreachable || k == weir::client::error_kind::tls ? 2 : 1;
  } catch (const std::filesystem::filesystem_error& e) {
    // A directory of the data dir this user may not read: said, never a crash or an all-clear.
    std::fprintf(stderr, "weir-ctl %s: cannot read %s: %s\n", cmd->name, e.path1().c_str(), e.code().message().c_str());
    return 2;
  }
}
