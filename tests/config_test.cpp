// Configuration: precedence, defaults, and one clear line for every class of error.
#include <sys/stat.h>

#include <chrono>
#include <fstream>

#include <catch2/catch.hpp>

#include "config/credentials.hpp"
#include "config/loader.hpp"
#include "sinks/secret.hpp"
#include "config/schema.hpp"
#include "config/sink_list.hpp"
#include "support/test_paths.hpp"

using namespace weir;

namespace {

struct fixture {
  weir::test::temp_dir dir;
  config_sources sources;

  void yaml(const std::string& text) {
    const auto file = dir / "weir.yaml";
    std::ofstream(file) << text;
    sources.file = file.string();
  }
  config load() { return load_config(sources); }
  std::string error() {
    try {
      load_config(sources);
    } catch (const config_error& e) {
      return e.what();
    }
    FAIL("expected a config error");
    return "";
  }
};

}  // namespace

TEST_CASE("defaults need no file and no external service", "[config]") {
  config c = load_config({});
  CHECK(c.data_dir == "var");
  CHECK(c.listen.unix_path == "var/run/weir.sock");
  CHECK(c.sink.type == "sqlite");
  CHECK(c.sink.sqlite.path == "var/sink.db");
  CHECK(c.admin.listen == "127.0.0.1:9185");
  CHECK(c.ingest.ack_mode == ack_mode::ordered);
  CHECK(c.limits.wab_max_bytes > 0);
}

TEST_CASE("the shipped config/weir.yaml is valid and matches the defaults it states", "[config]") {
  config_sources s;
  s.file = (weir::test::source_dir() / "config" / "weir.yaml").string();
  config c = load_config(s);
  CHECK(render_config(c) == render_config(load_config({})));
}

TEST_CASE("precedence: defaults < file < environment < --set", "[config]") {
  fixture f;
  f.yaml("ingest:\n  shards: 3\n  max_inflight: 10\nlog:\n  level: debug\n");
  CHECK(f.load().ingest.shards == 3);

  f.sources.env = {"WEIR_INGEST__SHARDS=5", "PATH=/bin", "WEIR_SINK_BEARER_TOKEN=not-config"};
  auto c = f.load();
  CHECK(c.ingest.shards == 5);
  CHECK(c.ingest.max_inflight == 10);  // file value survives where env is silent
  CHECK(c.log.level == log_level::debug);

  f.sources.overrides = {"ingest.shards=7"};
  c = f.load();
  CHECK(c.ingest.shards == 7);
  CHECK(c.ingest.max_inflight == 10);
}

TEST_CASE("nested keys and sizes and booleans and lists and maps from every source", "[config]") {
  fixture f;
  f.yaml(
      "wab:\n  segment_max_bytes: 1MiB\n"
      "listen:\n  peer_uid_check: off\n"
      "sink:\n  retry:\n    initial_ms: 250\n    jitter: 0.5\n  http:\n    headers:\n      X-Team: storage\n");
  f.sources.env = {"WEIR_SINK__RETRY__MULTIPLIER=3", "WEIR_DATA_DIR=/srv/weir"};
  f.sources.overrides = {"cluster.node_id=1", "cluster.listen=127.0.0.1:7000",
                         "cluster.peers=[\"127.0.0.1:7001\", \"[::1]:7002\"]", "cluster.tls.cert=n1.pem",
                         "cluster.tls.key=n1.key", "cluster.tls.ca=ca.pem"};
  auto c = f.load();
  CHECK(c.sink.retry.initial_ms == 250);
  CHECK(c.sink.retry.jitter == Approx(0.5));
  CHECK(c.sink.retry.multiplier == Approx(3.0));
  CHECK(c.wab.segment_max_bytes == 1024 * 1024);
  CHECK_FALSE(c.listen.peer_uid_check);
  CHECK(c.sink.http.headers.at("X-Team") == "storage");
  CHECK(c.data_dir == "/srv/weir");
  CHECK(c.cluster.peers == std::vector<std::string>{"127.0.0.1:7001", "[::1]:7002"});
}

TEST_CASE("a key's earlier name is still read from every source with a deprecation line", "[config]") {
  fixture f;
  f.yaml("drain:\n  retry:\n    initial_ms: 250\n  linger_ms: 7\n");
  f.sources.env = {"WEIR_DRAIN__RETRY__MULTIPLIER=3"};
  f.sources.overrides = {"drain.retry.max_ms=900"};
  auto c = f.load();
  CHECK(c.sink.retry.initial_ms == 250);
  CHECK(c.sink.retry.multiplier == Approx(3.0));
  CHECK(c.sink.retry.max_ms == 900);
  CHECK(c.drain.linger_ms == 7);  // the section's other keys are where they were
  REQUIRE(c.deprecations.size() == 3);
  CHECK(c.deprecations[0].starts_with("drain.retry.initial_ms is now sink.retry.initial_ms ("));
  CHECK(c.deprecations[0].find("weir.yaml line 3") != std::string::npos);
  CHECK(c.deprecations[1].starts_with("drain.retry.multiplier is now sink.retry.multiplier (environment "
                                      "WEIR_DRAIN__RETRY__MULTIPLIER)"));
  CHECK(c.deprecations[2].starts_with("drain.retry.max_ms is now sink.retry.max_ms (--set)"));
  // The new names carry no such line; both names in one file are one key given twice.
  f.yaml("sink:\n  retry:\n    initial_ms: 250\n");
  f.sources.env.clear();
  f.sources.overrides.clear();
  CHECK(f.load().deprecations.empty());
  f.yaml("sink:\n  retry:\n    initial_ms: 250\ndrain:\n  retry:\n    initial_ms: 300\n");
  CHECK(f.error().find("sink.retry.initial_ms is given twice") != std::string::npos);
  // Validation names the new key, wherever the value came from.
  f.yaml("drain:\n  retry:\n    initial_ms: 500\n    max_ms: 100\n");
  CHECK(f.error().find("sink.retry.max_ms = 100: expected at least sink.retry.initial_ms = 500") != std::string::npos);
}

TEST_CASE("the printed configuration loads back to the same configuration", "[config]") {
  fixture f;
  f.sources.overrides = {"ingest.shards=9", "sink.http.headers={A: b}", "sink.retry.jitter=0.25"};
  const auto first = f.load();
  f.yaml(render_config(first));
  f.sources.overrides.clear();
  CHECK(render_config(f.load()) == render_config(first));
}

TEST_CASE("every key has an environment name and a valid default", "[config]") {
  for (const auto& s : settings()) {
    INFO(s.key);
    CHECK(env_name(s.key).rfind("WEIR_", 0) == 0);
    CHECK_FALSE(s.help.empty());
    config c{};
    CHECK(s.assign(c, YAML::Load(s.default_yaml)));
  }
  CHECK(env_name("sink.retry.initial_ms") == "WEIR_SINK__RETRY__INITIAL_MS");
  CHECK(env_name("data_dir") == "WEIR_DATA_DIR");
}

TEST_CASE("an unknown key is an error naming it wherever it comes from", "[config][errors]") {
  fixture f;
  f.yaml("ingest:\n  shard: 4\n");
  auto e = f.error();
  CHECK(e.find("unknown key ingest.shard") != std::string::npos);
  CHECK(e.find("line 2, column 3") != std::string::npos);

  f.yaml("injest:\n  shards: 4\n");
  CHECK(f.error().find("unknown key injest") != std::string::npos);

  fixture g;
  g.sources.env = {"WEIR_INGEST__SHARD=4"};
  CHECK(g.error().find("WEIR_INGEST__SHARD") != std::string::npos);
  g.sources.env = {"WEIR_INGEST_SHARDS=4"};  // one underscore where two join the section and the key
  CHECK(g.error().find("environment WEIR_INGEST_SHARDS names no configuration key; expected WEIR_INGEST__SHARDS") !=
        std::string::npos);
  g.sources.env = {"WEIR_SINK_BEARER_TOKEN=x", "WEIR_SOCKET=/tmp/s"};  // not configuration: left alone
  CHECK(g.load().ingest.shards == default_config().ingest.shards);

  fixture h;
  h.sources.overrides = {"ingest.shard=4"};
  CHECK(h.error().find("unknown key ingest.shard") != std::string::npos);
}

TEST_CASE("a wrong type names the key and value and place and what is allowed", "[config][errors]") {
  fixture f;
  f.yaml("listen:\n  read_timeout_ms: soon\n");
  auto e = f.error();
  CHECK(e.find("listen.read_timeout_ms") != std::string::npos);
  CHECK(e.find("\"soon\"") != std::string::npos);
  CHECK(e.find("line 2, column 20") != std::string::npos);
  CHECK(e.find("an integer from 100 to 600000") != std::string::npos);

  f.yaml("listen:\n  peer_uid_check: maybe\n");
  CHECK(f.error().find("true or false") != std::string::npos);

  f.yaml("ingest:\n  shards: [1, 2]\n");
  CHECK(f.error().find("ingest.shards") != std::string::npos);

  f.yaml("ingest: 4\n");
  CHECK(f.error().find("expected a section") != std::string::npos);
}

TEST_CASE("out-of-range values are errors with the allowed range", "[config][errors]") {
  fixture f;
  f.sources.overrides = {"ingest.shards=0"};
  auto e = f.error();
  CHECK(e.find("ingest.shards = \"0\"") != std::string::npos);
  CHECK(e.find("from 1 to 256") != std::string::npos);

  f.sources.overrides = {"limits.max_payload_bytes=17MiB"};
  CHECK(f.error().find("16MiB") != std::string::npos);

  f.sources.overrides = {"sink.retry.jitter=1.5"};
  CHECK(f.error().find("from 0 to 1") != std::string::npos);

  f.sources.overrides = {"limits.max_batch_records=4096"};
  CHECK(f.error().find("from 1 to 2048") != std::string::npos);
}

TEST_CASE("enumerations list their choices", "[config][errors]") {
  fixture f;
  f.sources.env = {"WEIR_INGEST__ACK_MODE=fast"};
  auto e = f.error();
  CHECK(e.find("environment WEIR_INGEST__ACK_MODE") != std::string::npos);
  CHECK(e.find("one of strict, ordered") != std::string::npos);

  f.sources.env = {"WEIR_SINK__TYPE=kafka"};
  CHECK(f.error().find("noop, file, sqlite, http, postgres, mysql") != std::string::npos);
}

TEST_CASE("addresses must be host:port", "[config][errors]") {
  fixture f;
  f.sources.overrides = {"admin.listen=localhost"};
  CHECK(f.error().find("\"host:port\"") != std::string::npos);
  f.sources.overrides = {"admin.listen=127.0.0.1:70000"};
  CHECK(f.error().find("admin.listen") != std::string::npos);
  f.sources.overrides = {"admin.listen="};
  CHECK(f.load().admin.listen.empty());
}

TEST_CASE("a key given twice is an error naming both places", "[config][errors]") {
  fixture f;
  f.yaml("ingest:\n  shards: 7\n  shards: 3\n");
  auto e = f.error();
  CHECK(e.find("ingest.shards is given twice") != std::string::npos);
  CHECK(e.find("line 2, column 3") != std::string::npos);
  CHECK(e.find("line 3, column 3") != std::string::npos);

  // However it is written: a dotted key beside its section's.
  f.yaml("ingest:\n  shards: 2\ningest.shards: 4\n");
  CHECK(f.error().find("ingest.shards is given twice (" + f.sources.file + " line 2, column 3 and " +
                       f.sources.file + " line 3, column 1)") != std::string::npos);

  // A section split in two (files put together) is fine while no key repeats.
  f.yaml("ingest:\n  shards: 2\nsink:\n  type: noop\ningest:\n  ack_mode: strict\n");
  const auto c = f.load();
  CHECK(c.ingest.shards == 2);
  CHECK(c.ingest.ack_mode == ack_mode::strict);
}

TEST_CASE("YAML syntax errors give the line and column", "[config][errors]") {
  fixture f;
  f.yaml("ingest:\n  shards: 2\n   bad_indent: [\n");
  auto e = f.error();
  CHECK(e.find("YAML syntax error") != std::string::npos);
  CHECK(e.find("line 3") != std::string::npos);
  CHECK(e.find(f.sources.file) != std::string::npos);
  // Nesting past the parser's limit is said as such (yaml-cpp says "bad file").
  f.yaml("ingest: " + std::string(1000, '[') + std::string(1000, ']') + "\n");
  e = f.error();
  CHECK(e.find("YAML nested too deeply") != std::string::npos);
  CHECK(e.find("bad file") == std::string::npos);
}

TEST_CASE("cross-key rules", "[config][errors]") {
  fixture f;
  f.sources.overrides = {"limits.wab_max_bytes=64MiB", "wab.segment_max_bytes=64MiB"};
  CHECK(f.error().find("limits.wab_max_bytes = 64MiB") != std::string::npos);
  // It says where each key it names was set.
  f.yaml("wab:\n  segment_max_bytes: 64MiB\n");
  f.sources.overrides = {"limits.wab_max_bytes=64MiB"};
  f.sources.env = {"WEIR_INGEST__SHARDS=2"};
  auto crossed = f.error();
  CHECK(crossed.find("limits.wab_max_bytes from --set") != std::string::npos);
  CHECK(crossed.find("ingest.shards from environment WEIR_INGEST__SHARDS") != std::string::npos);
  CHECK(crossed.find("wab.segment_max_bytes from " + f.sources.file + " line 2, column 22") != std::string::npos);
  f.yaml("");
  f.sources.env = {};
  f.sources.overrides = {"sink.retry.max_ms=10"};
  CHECK(f.error().find("sink.retry.initial_ms by default") != std::string::npos);
  // A key's name inside an echoed value is no key of the message's.
  f.sources.overrides = {"sink.http.url=http://host/data_dir", "sink.http.ca_file=ca.pem"};
  crossed = f.error();
  CHECK(crossed.find("sink.http.url from --set") != std::string::npos);
  CHECK(crossed.find("sink.http.ca_file from --set") != std::string::npos);
  CHECK(crossed.find("data_dir by default") == std::string::npos);
  // Nor when the value holds quotes of its own, or a backslash before its end.
  f.sources.overrides = {"sink.http.url=http://host/?q=\"x\"/data_dir/\"y\\", "sink.http.ca_file=ca.pem"};
  crossed = f.error();
  CHECK(crossed.find("sink.http.url = \"http://host/?q=\\\"x\\\"/data_dir/\\\"y\\\\\":") != std::string::npos);
  CHECK(crossed.find("sink.http.ca_file from --set") != std::string::npos);
  CHECK(crossed.find("data_dir by default") == std::string::npos);
  f.sources.overrides = {};

  f.sources.overrides = {"sink.type=http"};
  CHECK(f.error().find("sink.http.url") != std::string::npos);

  f.sources.overrides = {"sink.type=postgres", "sink.postgres.conninfo=host=db password=hunter2"};
  auto e = f.error();
  CHECK(e.find("password_file") != std::string::npos);
  CHECK(e.find("hunter2") == std::string::npos);

  // An extra HTTP header is one header, and not one the sink frames requests with.
  f.sources.overrides = {};
  f.yaml("sink:\n  http:\n    headers:\n      X-Ok: \"a\\r\\nInjected: yes\"\n");
  CHECK(f.error().find("sink.http.headers.X-Ok: expected a value without control characters") != std::string::npos);
  f.yaml("sink:\n  http:\n    headers:\n      \"Bad Name\": v\n");
  CHECK(f.error().find("expected a header name") != std::string::npos);
  f.yaml("sink:\n  http:\n    headers:\n      content-length: \"5\"\n");
  CHECK(f.error().find("sink.http.headers.content-length: set by the sink itself") != std::string::npos);
  CHECK(f.error().find("(sink.http.headers from " + f.sources.file + " line 4, column 7)") != std::string::npos);
  f.yaml("sink:\n  http:\n    headers:\n      X-Tenant: blue\n      X-Tenant: green\n");
  CHECK(f.error().find("sink.http.headers") != std::string::npos);  // the same name twice
  f.yaml("sink:\n  http:\n    headers:\n      X-Tenant: blue\n      x-tenant: green\n");
  CHECK(f.error().find("\"X-Tenant\" and \"x-tenant\" name the same header") != std::string::npos);
  f.yaml("sink:\n  http:\n    headers:\n      X-Tenant: blue\n");
  CHECK(f.load().sink.http.headers.at("X-Tenant") == "blue");
  f.yaml("");

  f.sources.overrides = {"sink.type=mysql"};
  CHECK(f.error().find("sink.mysql.database = \"\": expected the name of a database") != std::string::npos);
  f.sources.overrides = {"sink.type=mysql", "sink.mysql.database=events", "sink.mysql.host="};
  CHECK(f.error().find("sink.mysql.host = \"\"") != std::string::npos);
  f.sources.overrides = {"sink.type=mysql", "sink.mysql.database=events", "sink.mysql.host=", "sink.mysql.socket=/run/mysqld/mysqld.sock"};
  CHECK(f.load().sink.mysql.socket == "/run/mysqld/mysqld.sock");
  f.sources.overrides = {"sink.type=mysql", "sink.mysql.database=events", "sink.mysql.port=0"};
  CHECK(f.error().find("sink.mysql.port") != std::string::npos);

  f.sources.overrides = {"cluster.tls.cert=a.pem"};
  CHECK(f.error().find("cluster.tls.key, cluster.tls.ca") != std::string::npos);

  // A node that joins a cluster says who it is, names only others, and
  // opens no unauthenticated port, on any address.
  const std::string joins = "cluster.listen=127.0.0.1:7000";
  f.sources.overrides = {joins, "cluster.peers=[\"127.0.0.1:7001\"]"};
  CHECK(f.error().find("cluster.node_id = 0: expected this node's number, 1 to 65535") != std::string::npos);
  for (const char* listen : {"cluster.listen=0.0.0.0:7000", "cluster.listen=127.0.0.1:7000"}) {
    f.sources.overrides = {"cluster.node_id=1", listen};
    CHECK(f.error().find("a cluster needs cluster.tls.cert, cluster.tls.key and cluster.tls.ca, on any address") !=
          std::string::npos);
  }
  const std::string cert = "cluster.tls.cert=n1.pem", key = "cluster.tls.key=n1.key", ca = "cluster.tls.ca=ca.pem";
  f.sources.overrides = {"cluster.node_id=1", joins, cert, key, ca, "cluster.peers=[\"127.0.0.1:7000\"]"};
  CHECK(f.error().find("this node's own cluster.listen") != std::string::npos);
  f.sources.overrides = {"cluster.node_id=1", joins, cert, key, ca, "cluster.peers=[\"127.0.0.1:7001\"]",
                         "cluster.replicas=3"};
  CHECK(f.error().find("cluster.replicas = 3: expected at most 2") != std::string::npos);
  f.sources.overrides = {"cluster.node_id=1", joins, cert, key, ca, "cluster.heartbeat_ms=500",
                         "cluster.failover_after_ms=900", "cluster.replicas=1"};
  CHECK(f.error().find("cluster.failover_after_ms = 900: expected at least two cluster.heartbeat_ms") !=
        std::string::npos);
  // A message bound that cannot carry the largest record.
  f.sources.overrides = {"cluster.node_id=1", joins, cert, key, ca, "cluster.replicas=1",
                         "cluster.max_message_bytes=8MiB"};
  CHECK(f.error().find("cluster.max_message_bytes = 8388608: expected at least 17825792") != std::string::npos);
  f.sources.overrides = {"cluster.node_id=1", joins, cert, key, ca, "cluster.replicas=1",
                         "cluster.max_message_bytes=8MiB", "limits.max_payload_bytes=1MiB"};
  CHECK(f.load().cluster.max_message_bytes == 8 * 1024 * 1024);
  f.sources.overrides = {"cluster.node_id=65536"};
  CHECK(f.error().find("cluster.node_id") != std::string::npos);

  f.sources.overrides = {"listen.unix=", "listen.tcp="};
  CHECK(f.error().find("at least one listener") != std::string::npos);

  f.sources.overrides = {"listen.unix=" + std::string(120, 's')};
  CHECK(f.error().find("listen.unix") != std::string::npos);

  f.sources.overrides = {"listen.tcp=127.0.0.1:7443"};
  CHECK(f.error().find("mutual TLS") != std::string::npos);
}

TEST_CASE("a missing config file is an error only when it was asked for", "[config][errors]") {
  fixture f;
  f.sources.file = (f.dir / "absent.yaml").string();
  CHECK(f.error().find("cannot read config file") != std::string::npos);
  f.sources.file_required = false;
  CHECK(f.load().ingest.shards == 2);
}

TEST_CASE("every error is a single line", "[config][errors]") {
  fixture f;
  f.yaml("a: [\n");
  CHECK(f.error().find('\n') == std::string::npos);
  f.yaml("listen:\n  read_timeout_ms: 5\n");
  CHECK(f.error().find('\n') == std::string::npos);
}

TEST_CASE("credentials are found in every form a URL or conninfo can carry them", "[config][secrets]") {
  CHECK(weir::has_url_credentials("http://user:pw@host/x"));
  CHECK(weir::has_url_credentials("http://user@host/x"));
  CHECK_FALSE(weir::has_url_credentials("http://host/x?next=a@b"));
  CHECK_FALSE(weir::has_url_credentials("http://host:8080/path"));

  CHECK(weir::conninfo_has_password("host=db password=x"));
  CHECK(weir::conninfo_has_password("host=db PASSWORD=x"));
  CHECK(weir::conninfo_has_password("postgresql://db/weir?password=x"));
  CHECK(weir::conninfo_has_password("postgresql://weir:x@db/weir"));
  CHECK(weir::conninfo_has_password("postgres://weir:x@db:5432/weir"));
  CHECK(weir::conninfo_has_password("postgresql://weir:s3cr?t@db/weir"));  // libpq ends the user-info at '@' or '/'
  CHECK(weir::conninfo_has_password("postgresql://weir:s3cr#t@db/weir"));
  CHECK_FALSE(weir::conninfo_has_password("postgresql://weir@db/weir"));  // a user alone is no secret
  CHECK_FALSE(weir::conninfo_has_password("host=db user=weir dbname=weir"));
  // libpq decodes a URI's percent-encoding, keys included: so does the check.
  CHECK(weir::conninfo_has_password("postgresql://h/db?pass%77ord=x"));
  CHECK(weir::conninfo_has_password("postgresql://h/db?%70assword=x"));
  CHECK(weir::conninfo_has_password("postgresql://h/db?%70%61%73%73%77%6f%72%64=x"));
  CHECK(weir::conninfo_has_password("postgresql://we%69r:x@h/db"));
  CHECK_FALSE(weir::conninfo_has_password("postgresql://h/db?application_name=weir"));
  // What libpq cannot read is judged by its text.
  CHECK(weir::conninfo_has_password("host='db password=x"));

  CHECK(weir::redact_credentials("\"http://user:pw@host/x\"") == "\"http://(redacted)@host/x\"");
  CHECK(weir::redact_credentials("a http://u:1@h and postgresql://v:2@g/d") ==
        "a http://(redacted)@h and postgresql://(redacted)@g/d");
  // In messages it hides rather than guesses where a URL's user-info ends.
  CHECK(weir::redact_credentials("\"http://u:p?w@h/\"") == "\"http://(redacted)@h/\"");
  CHECK(weir::redact_credentials("\"http://u:pa/ss@h/\"") == "\"http://(redacted)@h/\"");
  CHECK(weir::redact_credentials("http://host/x and more") == "http://host/x and more");
}

TEST_CASE("a conninfo libpq cannot read is refused without echoing it", "[config][secrets]") {
  for (const std::string bad : {"postgresql://u@h/db?pass%77ord=S3cr3t%zz", "postgresql://u@h/db?pass%77ord=S3cr3t&bogus=1",
                                "host=db pass%77ord=S3cr3t"}) {
    INFO(bad);
    CHECK_FALSE(weir::conninfo_readable(bad));
    fixture f;
    f.yaml("sink:\n  type: postgres\n  postgres:\n    conninfo: \"" + bad + "\"\n");
    const auto e = f.error();
    CHECK(e.find("sink.postgres.conninfo") != std::string::npos);
    CHECK(e.find("S3cr3t") == std::string::npos);
  }
  CHECK(weir::conninfo_readable("host=db user=weir dbname=weir"));
  CHECK(weir::conninfo_readable("postgresql://weir@db:5432/weir?application_name=x"));
}

TEST_CASE("an empty secret file is refused at start as on a reload", "[config][secrets]") {
  weir::test::temp_dir dir;
  std::ofstream(dir / "token") << "\n\n";
  CHECK_THROWS_WITH(weir::reloadable_secret("sink.http.bearer_token_file", (dir / "token").string(), "WEIR_TEST_UNUSED",
                                            weir::secret_use::bearer_token),
                    Catch::Contains("the file is empty"));
  CHECK_FALSE(weir::invalid_secret(std::string(9000, 'a'), weir::secret_use::bearer_token).empty());
}

TEST_CASE("config: --print-config never shows a password in sink.postgres.conninfo", "[config][secrets]") {
  auto c = weir::default_config();
  c.sink.postgres.conninfo = "postgresql://h/db?pass%77ord=hunter2";
  const auto shown = weir::render_config(c);
  CHECK(shown.find("hunter2") == std::string::npos);
  CHECK(shown.find("(redacted: it holds a password)") != std::string::npos);
  c.sink.postgres.conninfo = "host=db user=weir";
  CHECK(weir::render_config(c).find("host=db user=weir") != std::string::npos);
}

TEST_CASE("a secret file must be a regular file of a valid secret and a FIFO never blocks", "[config][secrets]") {
  weir::test::temp_dir dir;
  const auto file = dir / "token";
  std::ofstream(file) << "abc.DEF-123_~+/==\n";
  weir::reloadable_secret token("sink.http.bearer_token_file", file.string(), "WEIR_TEST_UNUSED",
                                weir::secret_use::bearer_token);
  CHECK(token.value() == "abc.DEF-123_~+/==");
  std::string error;
  // A FIFO in its place: refused at once (no writer ever comes), the token kept.
  std::filesystem::remove(file);
  REQUIRE(::mkfifo(file.c_str(), 0600) == 0);
  const auto started = std::chrono::steady_clock::now();
  CHECK_FALSE(token.reload(error));
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(2));
  CHECK(error.find("not a regular file (a FIFO)") != std::string::npos);
  CHECK(token.value() == "abc.DEF-123_~+/==");
  CHECK_THROWS_WITH(weir::read_secret("k", file.string(), "WEIR_TEST_UNUSED"), Catch::Contains("a FIFO"));
  // A device never ends: refused as well.
  CHECK_THROWS_WITH(weir::read_secret("k", "/dev/zero", "WEIR_TEST_UNUSED"), Catch::Contains("a character device"));
  // A symlink to a regular file is followed (systemd credentials, Kubernetes secrets).
  std::filesystem::remove(file);
  const auto real = dir / "real-token";
  std::ofstream(real) << "rotated-token\n";
  std::filesystem::create_symlink(real, file);
  CHECK(token.reload(error));
  CHECK(token.value() == "rotated-token");
  // What is not a bearer token is refused, and never echoed.
  std::ofstream(real) << "root:*:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n";
  CHECK_FALSE(token.reload(error));
  CHECK(error.find("not a bearer token") != std::string::npos);
  CHECK(error.find("root") == std::string::npos);
  CHECK(token.value() == "rotated-token");
  std::ofstream(real) << "two words\n";
  CHECK_FALSE(token.reload(error));
  // A file over 64 KiB is no secret.
  std::ofstream(real) << std::string(70 * 1024, 'a');
  CHECK_FALSE(token.reload(error));
  CHECK(error.find("larger than 65536 bytes") != std::string::npos);
  // A password may hold anything but a control character.
  CHECK(weir::invalid_secret("p@ss w0rd:*!", weir::secret_use::password).empty());
  CHECK_FALSE(weir::invalid_secret(std::string("a\0b", 3), weir::secret_use::password).empty());
  CHECK_FALSE(weir::invalid_secret("a\nb", weir::secret_use::password).empty());
  CHECK_FALSE(weir::invalid_secret("", weir::secret_use::bearer_token).empty());
  CHECK_FALSE(weir::invalid_secret("==", weir::secret_use::bearer_token).empty());
}

TEST_CASE("a reloaded secret file that is empty or gone keeps the previous secret", "[config][secrets]") {
  weir::test::temp_dir dir;
  const auto file = dir / "token";
  std::ofstream(file) << "first\n";
  weir::reloadable_secret secret("sink.http.bearer_token_file", file.string(), "WEIR_TEST_UNUSED");
  CHECK(secret.value() == "first");
  std::ofstream(file) << "second\n";
  std::string error;
  CHECK(secret.reload(error));
  CHECK(secret.value() == "second");
  std::ofstream(file, std::ios::trunc).flush();  // caught mid-rotation
  CHECK_FALSE(secret.reload(error));
  CHECK(error.find("is empty") != std::string::npos);
  CHECK(secret.value() == "second");
  std::filesystem::remove(file);
  CHECK_FALSE(secret.reload(error));
  CHECK(error.find("cannot read") != std::string::npos);
  CHECK(error.find("second") == std::string::npos);  // never the secret itself
  CHECK(secret.value() == "second");
}

TEST_CASE("sinks: each element is a sink: section of its own on top of the sink: section", "[config][sinks]") {
  fixture f;
  f.yaml(R"(sink:
  retry: {max_ms: 1000}
  concurrency: 2
sinks:
  - {name: db, type: sqlite, sqlite: {path: /var/lib/weir/app.db}}
  - name: hook
    type: http
    concurrency: 8
    http: {url: "http://127.0.0.1:8080/in", format: ndjson}
)");
  const config c = f.load();
  REQUIRE(c.sinks.size() == 2);
  CHECK(c.sinks[0].name == "db");
  CHECK(c.sinks[0].type == "sqlite");
  CHECK(c.sinks[0].sqlite.path == "/var/lib/weir/app.db");
  CHECK(c.sinks[0].retry.max_ms == 1000);  // from the sink: section
  CHECK(c.sinks[0].concurrency == 2);
  CHECK(c.sinks[1].name == "hook");
  CHECK(c.sinks[1].http.format == "ndjson");
  CHECK(c.sinks[1].retry.max_ms == 1000);
  CHECK(c.sinks[1].concurrency == 8);  // its own
  CHECK(configured_sinks(c).size() == 2);
  // --print-config writes the list, and reading that back gives the same.
  const std::string printed = render_config(c);
  CHECK(printed.find("name: hook") != std::string::npos);
  f.yaml(printed);
  CHECK(render_config(f.load()) == printed);
  // An empty list is no list.
  f.yaml("sinks: []");
  CHECK(f.load().sinks.empty());
  // Without a list the sink: section is the one sink, named default.
  const auto only = configured_sinks(load_config({}));
  REQUIRE(only.size() == 1);
  CHECK(only[0].name == "default");
  CHECK(only[0].type == "sqlite");
}

TEST_CASE("sinks: a missing or repeated name or an unknown key or a bad value names the element", "[config][sinks]") {
  fixture f;
  const std::vector<std::pair<std::string, std::string>> cases{
      {"sinks: {db: sqlite}", "sinks = {db: sqlite}"},
      {"sinks: [{name: a, name: b, type: file}]", "sinks[0].name (" },
      {"sinks: [{name: a, type: file, file: {path: a.nd}}, {name: b, type: file, file: {path: ./a.nd}}]",
       "sinks: a and b both write \"a.nd\" (as \"./a.nd\")"},
      {"sinks: [{name: a, type: sqlite, sqlite: {path: x//a.db}}, {name: b, type: sqlite, sqlite: {path: x/../x/a.db}}]",
       "sinks: a and b both write"},
      {"sinks: [{type: file}]", "sinks[0].name = (missing)"},
      {"sinks: [{name: Bad.Name, type: file}]", "sinks[0].name = \"Bad.Name\""},
      {"sinks: [{name: a, type: file, file: {path: a.ndjson}}, {name: a, type: file, file: {path: b.ndjson}}]",
       "sinks[1].name = \"a\""},
      {"sinks: [{name: a, type: nope}]", "sinks[0] (a): sink.type = \"nope\""},
      {"sinks: [{name: a, colour: red}]", "sinks[0] (a): unknown key sink.colour"},
      {"sinks: [{name: a, type: file, file: {path: x}}, {name: h, type: http}]",
       "sinks[1] (h): sink.http.url = \"\": expected an http:// or https:// URL"},
      {"sinks: [{name: a, type: sqlite}, {name: b, type: sqlite}]", "sinks: a and b both write \"var/sink.db\""},
  };
  for (const auto& [yaml, expected] : cases) {
    INFO(yaml);
    f.yaml(yaml);
    const std::string e = f.error();
    CHECK(e.find(expected) != std::string::npos);
    CHECK(e.find('\n') == std::string::npos);
  }
}

TEST_CASE("sinks: given in the environment or with --set the later source wins", "[config][sinks]") {
  fixture f;
  f.sources.env = {"WEIR_SINKS=[{name: a, type: file, file: {path: a.ndjson}}, {name: b, type: file, file: {path: b.ndjson}}]"};
  REQUIRE(f.load().sinks.size() == 2);
  f.sources.overrides = {"sinks=[{name: c, type: file, file: {path: c.ndjson}}]"};
  const config c = f.load();
  REQUIRE(c.sinks.size() == 1);
  CHECK(c.sinks[0].name == "c");
  CHECK(c.sinks[0].file.path == "c.ndjson");
  f.sources.overrides = {"sinks=[{name: c"};
  CHECK(f.error().find("sinks = \"[{name: c\" (--set): YAML") != std::string::npos);
}
