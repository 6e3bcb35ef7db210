// docs/configuration.md must describe exactly the keys the daemon knows.
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "config/loader.hpp"
#include "support/daemon_process.hpp"
#include "support/test_paths.hpp"

TEST_CASE("docs/configuration.md lists every key as the schema describes it", "[config][docs]") {
  std::ifstream in(weir::test::source_dir() / "docs" / "configuration.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str(), table = weir::describe_config();
  INFO("regenerate the table with: build/bin/weir-server --describe-config");
  REQUIRE(doc.size() >= table.size());
  CHECK(doc.substr(doc.size() - table.size()) == table);
}

TEST_CASE("log.format json writes one JSON object per line", "[cli][log]") {
  weir::test::temp_dir dir;
  // A startup failure is the quickest way to get a log line out of the daemon.
  std::ofstream(dir / "blocker") << "x";
  auto r = weir::test::run_binary(weir::test::binary("weir-server"),
                                  {"--set", "log.format=json", "--set", "data_dir=blocker/sub"}, dir.path());
  CHECK(r.exit_code == 2);
  REQUIRE_FALSE(r.err.empty());
  CHECK(r.err.front() == '{');
  CHECK(r.err.find("\"level\":\"error\"") != std::string::npos);
  CHECK(r.err.find("\"msg\":\"cannot start: data_dir = blocker/sub") != std::string::npos);
  CHECK(r.err.back() == '\n');
}

TEST_CASE("log.format json writes numbers as numbers and --print-config numbers as written", "[cli][log]") {
  weir::test::temp_dir dir;
  {
    weir::test::daemon_process d(dir.path(), {"--set", "log.format=json", "--set", "ingest.shards=3"});
    REQUIRE(d.wait_ready());
    REQUIRE(d.stop() == 0);
    std::istringstream lines(d.log());
    int ready = 0;
    for (std::string line; std::getline(lines, line);) {
      const auto j = nlohmann::json::parse(line);  // every line is one JSON object
      if (j.at("msg") != "weir-server ready") continue;
      CHECK(j.at("shards").is_number());
      CHECK(j.at("shards") == 3);
      CHECK(j.at("startup_ms").is_number());
      CHECK(j.at("socket").is_string());
      ++ready;
    }
    CHECK(ready == 1);
  }
  const auto printed = weir::test::run_binary(weir::test::binary("weir-server"),
                                              {"--set", "sink.retry.jitter=0.3", "--print-config"}, dir.path());
  CHECK(printed.out.find("jitter: 0.3\n") != std::string::npos);
}

TEST_CASE("features not available in this version refuse to start rather than be ignored", "[cli]") {
  weir::test::temp_dir dir;
  auto r = weir::test::run_binary(weir::test::binary("weir-server"),
                                  {"--set", "cluster.listen=127.0.0.1:7000", "--set", "admin.listen="}, dir.path());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("cluster.listen") != std::string::npos);
}
