// weir-ctl wab reads a shard's segments as the drain does: past a damaged
// record to the next one that checks, and says so. weir-ctl segments checks
// every record and says what startup recovery would repair, changing nothing.
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/daemon_process.hpp"
#include "support/sink_contents.hpp"
#include "support/test_helpers.hpp"
#include "support/test_paths.hpp"
#include "wab/confirm_cursor.hpp"
#include "wab/dead_letter_store.hpp"
#include "wab/file_io.hpp"
#include "wab/recovery.hpp"
#include "wab/segment_format.hpp"
#include "wab/segment_writer.hpp"
#include "weir/client.hpp"

using namespace weir;

TEST_CASE("weir-ctl wab reads past a damaged record and reports it", "[ctl][wab]") {
  test::temp_dir dir;
  const auto shard = dir / "var/wab/shard_00";
  std::filesystem::create_directories(shard);
  const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                       std::chrono::system_clock::now().time_since_epoch()).count();
  {
    auto seg = wab::segment_writer::create(wab::default_file_io(), shard.string(), 0, 1, now);
    REQUIRE(seg);
    const std::string a = "alpha", b = "bravo", c = "charlie";
    const std::vector<byte_span> records{byte_span(reinterpret_cast<const std::uint8_t*>(a.data()), a.size()),
                                         byte_span(reinterpret_cast<const std::uint8_t*>(b.data()), b.size()),
                                         byte_span(reinterpret_cast<const std::uint8_t*>(c.data()), c.size())};
    REQUIRE(seg.value()->append(records, now).error == 0);
    REQUIRE(seg.value()->sync() == 0);
  }
  // Flip a payload byte of "bravo", the second record.
  const auto file = shard / wab::segment_file_name(1);
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(wab::segment_prefix_size + wab::record_header_size + 5 + wab::record_header_size));
    f.put('X');
  }
  const auto r = test::run_binary(test::binary("weir-ctl"), {"--data-dir", "var", "--json", "wab"}, dir.path());
  CHECK(r.exit_code == 1);  // damage
  const auto j = nlohmann::json::parse(r.out);
  // What the next start does with it is said as `segments` says it.
  CHECK(j.at(0).at("next_start").at(0).at("what").get<std::string>().starts_with("segment damaged"));
  const auto& seg = j.at(0).at("segments").at(0);
  CHECK(seg.at("records") == 2);  // alpha and charlie: reading went on past the damage
  CHECK(seg.at("damaged") == 1);
  CHECK(seg.at("recovered") == 0);
  CHECK(seg.at("sealed") == false);  // synced, never sealed: as a crash leaves the open segment
  CHECK(seg.at("record_bytes") == wab::segment_prefix_size + 3 * wab::record_header_size + 5 + 5 + 7);
  const auto text = test::run_binary(test::binary("weir-ctl"), {"--data-dir", "var", "wab"}, dir.path());
  CHECK(text.out.find("DAMAGED: 1 record(s) read past") != std::string::npos);
}

TEST_CASE("weir-ctl wab tells sealed segments from the open one and counts spares", "[ctl][wab]") {
  test::temp_dir dir;
  const auto shard = dir / "var/wab/shard_00";
  std::filesystem::create_directories(shard);
  const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                       std::chrono::system_clock::now().time_since_epoch()).count();
  const std::string a = "alpha";
  const std::vector<byte_span> one{byte_span(reinterpret_cast<const std::uint8_t*>(a.data()), a.size())};
  for (std::uint64_t seq : {1, 2}) {
    auto seg = wab::segment_writer::create(wab::default_file_io(), shard.string(), 0, seq, now);
    REQUIRE(seg);
    REQUIRE(seg.value()->append(one, now).error == 0);
    REQUIRE((seq == 1 ? seg.value()->seal() : seg.value()->sync()) == 0);
  }
  std::ofstream(shard / "spare_00000003.wab") << std::string(4096, '\0');
  const auto r = test::run_binary(test::binary("weir-ctl"), {"--data-dir", "var", "--json", "wab"}, dir.path());
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j.at(0).at("spares") == 1);
  const auto& segs = j.at(0).at("segments");
  REQUIRE(segs.size() == 2);
  CHECK(segs.at(0).at("end") == "sealed");
  CHECK(segs.at(0).at("sealed") == true);
  CHECK(segs.at(1).at("end") == "open");
  CHECK(segs.at(1).at("records") == 1);
  const auto text = test::run_binary(test::binary("weir-ctl"), {"--data-dir", "var", "wab"}, dir.path());
  CHECK(text.out.find("spares: 1") != std::string::npos);
  CHECK(text.out.find("(sealed)") != std::string::npos);
}

namespace {

/// A shard directory with one segment of `payloads`, sealed or left open.
std::filesystem::path write_segment(const std::filesystem::path& shard, std::uint64_t seq,
                                    const std::vector<std::string>& payloads, bool sealed) {
  std::filesystem::create_directories(shard);
  const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                       std::chrono::system_clock::now().time_since_epoch()).count();
  auto seg = wab::segment_writer::create(wab::default_file_io(), shard.string(), 0, seq, now);
  REQUIRE(seg);
  std::vector<byte_span> records;
  for (const auto& p : payloads) records.emplace_back(reinterpret_cast<const std::uint8_t*>(p.data()), p.size());
  REQUIRE(seg.value()->append(records, now).error == 0);
  REQUIRE((sealed ? seg.value()->seal() : seg.value()->sync()) == 0);
  return shard / wab::segment_file_name(seq);
}

void flip_byte(const std::filesystem::path& file, std::uint64_t at) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(at));
  const char c = static_cast<char>(f.get());
  f.seekp(static_cast<std::streamoff>(at));
  f.put(static_cast<char>(c ^ 0x5a));
}

std::string contents(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("weir-ctl wab and dl neither block on nor crash at a FIFO and dl list escapes control characters",
          "[ctl][wab]") {
  test::temp_dir dir;
  const auto letters = dir / "var/dead_letter";
  std::filesystem::create_directories(letters);
  write_segment(dir / "var/wab/shard_00", 1, {"a"}, true);
  REQUIRE(::mkfifo((dir / "var/wab/shard_00/seg_00000009.wab").c_str(), 0600) == 0);
  REQUIRE(::mkfifo((letters / "dl_00000002.wab").c_str(), 0600) == 0);
  // A letter whose reason carries terminal escapes and a line break (a
  // forged file, or a sink's error text).
  sink_record rec;
  rec.id = std::string(64, 'a');
  rec.segment = "shard_00/seg_00000001.wab";
  rec.index = 1;
  rec.payload = {'x'};
  {
    dead_letter_store store(wab::default_file_io(), letters.string(), 1 << 20);
    std::string error;
    store.store({dead_letter{&rec, "HTTP 422\x1b[2J\x1b]0;PWNED\x07\r\nFAKE LINE"}}, error);
    REQUIRE(error.empty());
  }
  auto ctl = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"--data-dir", "var"});
    return test::run_binary(test::binary("weir-ctl"), args, dir.path(), {}, std::chrono::seconds(20));
  };
  const auto listed = ctl({"wab"});
  CHECK(listed.exit_code == 1);  // not 134: the FIFO is named, not thrown over
  CHECK(listed.out.find("seg_00000009.wab") != std::string::npos);
  const auto dl = ctl({"dl", "list"});
  CHECK(dl.exit_code == 1);
  CHECK(dl.out.find("dl_00000002.wab#0  UNREADABLE: the file cannot be read (unreadable (not a regular file (a FIFO)))") !=
        std::string::npos);
  CHECK(dl.out.find("\x1b") == std::string::npos);
  CHECK(dl.out.find("\r\nFAKE LINE") == std::string::npos);
  CHECK(dl.out.find("HTTP 422\\x1b[2J\\x1b]0;PWNED\\x07\\x0d\\x0aFAKE LINE") != std::string::npos);
  // drop and requeue neither: a dry run counts it as holding nothing, the
  // real one refuses to lock what is not a regular file.
  const auto drop = ctl({"dl", "drop", "dl_00000002.wab"});
  CHECK(drop.exit_code == 0);
  CHECK(drop.out.find("dl_00000002.wab  0 records, 0 bytes") != std::string::npos);
  const auto dropped = ctl({"dl", "drop", "dl_00000002.wab", "--yes"});
  CHECK(dropped.exit_code != 0);
  CHECK(dropped.err.find("not a regular file (a FIFO)") != std::string::npos);
}

TEST_CASE("weir-ctl dl list shows what it cannot read of a dead-letter file and exits 1", "[ctl][wab]") {
  test::temp_dir dir;
  const auto letters = dir / "var/dead_letter";
  std::filesystem::create_directories(letters);
  std::filesystem::create_directories(dir / "var/wab");  // a data directory, as weir-ctl wants one
  const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                       std::chrono::system_clock::now().time_since_epoch()).count();
  // A record that checks but is no dead letter: dl drop would delete it, so dl list shows it.
  const std::string junk = "not an envelope";
  const std::vector<byte_span> one{byte_span(reinterpret_cast<const std::uint8_t*>(junk.data()), junk.size())};
  auto seg = wab::segment_writer::create(wab::default_file_io(), letters.string(), 0, 3, now);
  REQUIRE(seg);
  REQUIRE(seg.value()->append(one, now).error == 0);
  REQUIRE(seg.value()->seal() == 0);
  seg.value().reset();
  std::filesystem::rename(letters / wab::segment_file_name(3), letters / "dl_00000003.wab");
  const auto r = test::run_binary(test::binary("weir-ctl"), {"--data-dir", "var", "dl", "list"}, dir.path());
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("no dead letters") == std::string::npos);
  CHECK(r.out.find("dl_00000003.wab#1  UNREADABLE: the record checks but holds no dead letter") != std::string::npos);
  // A file whose header does not read is named too.
  std::ofstream(letters / "dl_00000004.wab") << std::string(200, 'x');
  const auto j = test::run_binary(test::binary("weir-ctl"), {"--data-dir", "var", "--json", "dl", "list"}, dir.path());
  CHECK(j.exit_code == 1);
  const auto listed = nlohmann::json::parse(j.out);
  REQUIRE(listed.size() == 2);
  CHECK(listed.at(1).at("file") == "dl_00000004.wab");
  CHECK(listed.at(1).at("unreadable").get<std::string>().find("header") != std::string::npos);
}

TEST_CASE("weir-ctl segments names the record whose payload byte flipped in a sealed segment and exits 1",
          "[ctl][wab]") {
  test::temp_dir dir;
  const auto file = write_segment(dir / "var/wab/shard_00", 1, {"alpha", "bravo", "charlie"}, true);
  write_segment(dir / "var/wab/shard_01", 1, {"delta"}, false);
  flip_byte(file, wab::segment_prefix_size + wab::record_header_size + 5 + wab::record_header_size + 2);  // in "bravo"
  const std::string before = contents(file);

  const auto r = test::run_binary(test::binary("weir-ctl"), {"--data-dir", "var", "--json", "segments"}, dir.path());
  CHECK(r.exit_code == 1);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j.size() == 2);
  const auto& seg = j.at(0).at("segments").at(0);
  CHECK(seg.at("file") == "seg_00000001.wab");
  CHECK(seg.at("sealed") == true);
  CHECK(seg.at("records") == 2);
  CHECK(seg.at("lost") == 1);
  CHECK(seg.at("first_damage").at("index") == 2);
  CHECK(seg.at("first_damage").at("offset") == wab::segment_prefix_size + wab::record_header_size + 5);
  CHECK(j.at(0).at("repairs").empty());  // recovery trusts a seal; the drain finds the damage
  CHECK(j.at(1).at("segments").at(0).at("lost") == 0);

  const auto text = test::run_binary(test::binary("weir-ctl"), {"--data-dir", "var", "segments"}, dir.path());
  CHECK(text.exit_code == 1);
  CHECK(text.out.find("seg_00000001.wab  sealed  2 records, ending at byte") != std::string::npos);
  const auto offset = std::to_string(wab::segment_prefix_size + wab::record_header_size + 5);
  CHECK(text.out.find("DAMAGED: record 2 (offset " + offset + ") does not check") != std::string::npos);
  CHECK(text.err.find("1 damaged segment(s)") != std::string::npos);
  // Read-only: the file is as it was and nothing went to quarantine.
  CHECK(contents(file) == before);
  CHECK_FALSE(std::filesystem::exists(dir / "var/quarantine"));
}

TEST_CASE("weir-ctl segments says what recovery will do with a damaged header and recovery does it",
          "[ctl][wab]") {
  test::temp_dir dir;
  const auto shard = dir / "var/wab/shard_00";
  const auto damaged = write_segment(shard, 1, std::vector<std::string>(570, "record"), true);
  write_segment(shard, 2, {"newest"}, false);
  flip_byte(damaged, 0);  // the segment magic

  const auto r = test::run_binary(test::binary("weir-ctl"), {"--data-dir", "var", "--json", "segments"}, dir.path());
  CHECK(r.exit_code == 1);
  const auto j = nlohmann::json::parse(r.out);
  const auto& segs = j.at(0).at("segments");
  REQUIRE(segs.size() == 2);
  CHECK(segs.at(0).at("records") == 0);  // not 570 good records: the header does not check
  CHECK(segs.at(0).at("problem").get<std::string>().find("header unreadable") != std::string::npos);
  const auto& events = j.at(0).at("repairs");
  REQUIRE(events.size() == 1);
  CHECK(events.at(0).at("level") == "error");
  // Its records check as segment 1's: only the header was hit.
  CHECK(events.at(0).at("what") ==
        "segment header damaged; written again from the file name, every record that checks is kept");
  const auto before = contents(damaged);
  CHECK_FALSE(std::filesystem::exists(dir / "var/quarantine"));  // said, not done

  // The real recovery does what was announced.
  std::filesystem::create_directories(dir / "var/quarantine");  // as the daemon makes it
  const auto recovered = wab::recover_shard(*wab::default_file_io(), shard.string(), (dir / "var/quarantine").string());
  REQUIRE(recovered.events.size() == 1);
  CHECK(recovered.events.at(0).what == events.at(0).at("what").get<std::string>());
  CHECK(recovered.quarantined_segments == 1);  // the file as it was, for inspection
  CHECK(recovered.records == 571);
  CHECK(contents(damaged) != before);
  CHECK(contents(dir / "var/quarantine/shard_00__seg_00000001.wab") == before);
}

TEST_CASE("weir-ctl segments checks the replicas a node holds and exits 0 when every record checks", "[ctl][wab]") {
  test::temp_dir dir;
  write_segment(dir / "var/wab/shard_00", 3, {"own"}, false);
  write_segment(dir / "var/replica/node_2/shard_00", 7, {"theirs", "too"}, true);
  const auto r = test::run_binary(test::binary("weir-ctl"), {"--data-dir", "var", "segments"}, dir.path());
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("wab/shard_00\n  seg_00000003.wab  open    1 records") != std::string::npos);
  CHECK(r.out.find("replica/node_2/shard_00\n  seg_00000007.wab  sealed  2 records") != std::string::npos);
  CHECK(r.out.find("when this node delivers the replica") == std::string::npos);  // nothing to repair
  CHECK(r.out.find("2 segment(s) in 2 shard(s), every record checks") != std::string::npos);
  const auto missing = test::run_binary(test::binary("weir-ctl"), {"--data-dir", "nowhere", "segments"}, dir.path());
  CHECK(missing.exit_code == 2);
}

TEST_CASE("weir-ctl dump shows the coordinates and record ids that AckTracked carried", "[ctl][wab][live]") {
  test::temp_dir dir;
  // The sink cannot be reached: the records stay in the WAB to be read.
  test::daemon_process d(dir.path(), {"--set", "sink.type=http", "--set", "sink.http.url=http://127.0.0.1:1/",
                                      "--set", "ingest.shards=1"});
  REQUIRE(d.wait_ready());
  auto c = client::connection::connect_unix(d.socket_path());
  std::vector<client::tracked_result> acks;
  const std::vector<std::string> payloads{"first", "second\x01" "binary", "third"};
  for (const auto& p : payloads)
    acks.push_back(c.push_tracked({reinterpret_cast<const std::uint8_t*>(p.data()), p.size()},
                                  client::durability::durable));
  for (const auto& a : acks) REQUIRE(a.acked);
  // The writer may move onto a spare between pushes: each ack's own segment.
  std::size_t matched = 0;
  for (std::size_t i = 0; i < acks.size(); ++i) {
    const auto r = test::run_binary(test::binary("weir-ctl"),
                                    {"--data-dir", "var", "dump", acks[i].segment, "--format", "json"}, dir.path());
    REQUIRE(r.exit_code == 0);
    for (const auto& rec : nlohmann::json::parse(r.out))
      if (rec.at("index") == acks[i].index) {
        CHECK(rec.at("segment") == acks[i].segment);
        CHECK(rec.at("record_id") == acks[i].record_id_hex);
        CHECK(rec.at("payload_bytes") == payloads[i].size());
        ++matched;
      }
  }
  CHECK(matched == acks.size());

  // --from and --count pick the second record alone; text shows it printable.
  const auto one = test::run_binary(test::binary("weir-ctl"),
                                    {"--data-dir", "var", "dump", acks[1].segment, "--from",
                                     std::to_string(acks[1].index), "--count", "1"},
                                    dir.path());
  CHECK(one.exit_code == 0);
  CHECK(one.out.find(std::string("#").append(std::to_string(acks[1].index)).append(" ")) != std::string::npos);
  CHECK(one.out.find("id " + acks[1].record_id_hex) != std::string::npos);
  CHECK(one.out.find("second.binary") != std::string::npos);
  CHECK(one.out.find("third") == std::string::npos);
  CHECK(one.out.find("first") == std::string::npos);
  const auto hex = test::run_binary(test::binary("weir-ctl"),
                                    {"--data-dir", "var", "dump", acks[1].segment, "--format", "hex"}, dir.path());
  CHECK(hex.out.find(" 73 65 63 6f 6e 64 01") != std::string::npos);  // "second\x01"
  const auto bad = test::run_binary(test::binary("weir-ctl"), {"--data-dir", "var", "dump", acks[0].segment,
                                                               "--format", "yaml"}, dir.path());
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--format yaml: expected text, hex or json") != std::string::npos);
  CHECK(d.stop() == 0);
}

TEST_CASE("weir-ctl segments counts what a cut sealed segment lost and predicts a failing start", "[ctl][wab]") {
  test::temp_dir dir;
  const auto file = write_segment(dir / "var/wab/shard_00", 1, {"alpha", "bravo", "charlie", "delta"}, true);
  // Cut after the second record: the seal still counts four.
  std::filesystem::resize_file(file, wab::segment_prefix_size + 2 * wab::record_header_size + 10);
  std::filesystem::create_directories(dir / "var/wab/shard_00/seg_00000002.wab");  // a directory, named like a segment
  std::filesystem::create_directories(dir / "var/wab/shard_xyz");                  // not a shard the daemon reads
  const auto r = test::run_binary(test::binary("weir-ctl"), {"--data-dir", "var", "--json", "segments"}, dir.path());
  CHECK(r.exit_code == 1);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j.size() == 1);
  const auto& segs = j.at(0).at("segments");
  REQUIRE(segs.size() == 2);
  CHECK(segs.at(0).at("cut") == true);
  CHECK(segs.at(0).at("records") == 2);
  CHECK(segs.at(0).at("lost") == 2);
  CHECK(segs.at(1).at("problem") == "a directory, not a segment file");
  bool fails = false;
  for (const auto& e : j.at(0).at("repairs"))
    fails = fails || e.at("what").get<std::string>().find("recovery would fail") == 0;
  CHECK(fails);
  // dump, on the quarantine-style copy of the cut file, gives the ids it had in place and exits 1.
  std::filesystem::copy_file(file, dir / "shard_00__seg_00000001.wab");
  const auto d = test::run_binary(test::binary("weir-ctl"), {"--data-dir", "var", "dump", "shard_00__seg_00000001.wab"},
                                  dir.path());
  CHECK(d.exit_code == 1);
  CHECK(d.out.find("shard_00/seg_00000001.wab #2 ") != std::string::npos);
  CHECK(d.err.find("2 record(s) lost") != std::string::npos);
}

TEST_CASE("weir-ctl wab segments and dump say what the next start does with files that lie and it does so",
          "[ctl][wab][live]") {
  test::temp_dir dir;
  const auto wab_dir = dir / "var/wab";
  // shard_00: two sealed segments whose names were swapped.
  write_segment(wab_dir / "shard_00", 1, {"a", "b"}, true);
  write_segment(wab_dir / "shard_00", 2, {"c", "d", "e"}, true);
  std::filesystem::rename(wab_dir / "shard_00/seg_00000001.wab", wab_dir / "shard_00/swap");
  std::filesystem::rename(wab_dir / "shard_00/seg_00000002.wab", wab_dir / "shard_00/seg_00000001.wab");
  std::filesystem::rename(wab_dir / "shard_00/swap", wab_dir / "shard_00/seg_00000002.wab");
  // shard_01: a confirm cursor that checks but names segment 100.
  write_segment(wab_dir / "shard_01", 1, {"f", "g"}, true);
  wab::confirm_cursor lie;
  lie.sequence = 100;
  REQUIRE(wab::store_cursor(*wab::default_file_io(), (wab_dir / "shard_01").string(), lie) == 0);
  // shard_02: a seal claiming 2^64 - 1 records over two (its CRC checks).
  const auto forged = write_segment(wab_dir / "shard_02", 1, {"h", "i"}, true);
  {
    const auto slot = wab::encode_seal(1, {~0ull, wab::segment_prefix_size + 2 * (wab::record_header_size + 1)});
    std::fstream f(forged, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(wab::segment_header_size));
    f.write(reinterpret_cast<const char*>(slot.data()), static_cast<std::streamsize>(slot.size()));
  }
  // shard_03: a seal that counts one record and ends inside the second (its CRC checks).
  const auto inside = write_segment(wab_dir / "shard_03", 1, {"j", "k", "l", "m"}, true);
  {
    const auto slot = wab::encode_seal(1, {1, wab::segment_prefix_size + (wab::record_header_size + 1) + 3});
    std::fstream f(inside, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(wab::segment_header_size));
    f.write(reinterpret_cast<const char*>(slot.data()), static_cast<std::streamsize>(slot.size()));
  }
  // shard_04: an undelivered segment renamed to a spare's name.
  write_segment(wab_dir / "shard_04", 1, {"n", "o"}, true);
  write_segment(wab_dir / "shard_04", 2, {"p"}, true);
  std::filesystem::rename(wab_dir / "shard_04/seg_00000002.wab", wab_dir / "shard_04/spare_00000009.wab");
  // shard_05: a seal counting five records over three, its end where they
  // end (records of 40 bytes: five would fit its extent).
  const std::string s40(40, 's'), t40(40, 't'), u40(40, 'u');
  const auto overcounted = write_segment(wab_dir / "shard_05", 1, {s40, t40, u40}, true);
  {
    const auto slot = wab::encode_seal(1, {5, wab::segment_prefix_size + 3 * (wab::record_header_size + 40)});
    std::fstream f(overcounted, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(wab::segment_header_size));
    f.write(reinterpret_cast<const char*>(slot.data()), static_cast<std::streamsize>(slot.size()));
  }
  // shard_06: a cursor at the start of segment 2, below which segment 1 is
  // still there (a crash between storing the cursor and deleting, or a
  // cursor copied from elsewhere): believed, and said.
  write_segment(wab_dir / "shard_06", 1, {"q"}, true);
  write_segment(wab_dir / "shard_06", 2, {"r"}, true);
  wab::confirm_cursor passed;
  passed.sequence = 2;
  REQUIRE(wab::store_cursor(*wab::default_file_io(), (wab_dir / "shard_06").string(), passed) == 0);
  auto ctl = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"--data-dir", "var"});
    return test::run_binary(test::binary("weir-ctl"), args, dir.path());
  };

  const auto seg = ctl({"--json", "segments"});
  CHECK(seg.exit_code == 1);
  const auto j = nlohmann::json::parse(seg.out);
  REQUIRE(j.size() == 7);
  // Swapped: each file is renamed to the segment it holds, nothing is lost.
  CHECK(j.at(0).at("segments").at(0).at("next_start_name") == "seg_00000002.wab");
  CHECK(j.at(0).at("segments").at(1).at("next_start_name") == "seg_00000001.wab");
  REQUIRE(j.at(0).at("repairs").size() == 2);
  for (const auto& e : j.at(0).at("repairs")) {
    CHECK(e.at("level") == "warning");
    CHECK(e.at("what").get<std::string>().find("renamed to its own name") != std::string::npos);
  }
  // The lying cursor: not trusted, said as the drain will say it.
  REQUIRE(j.at(1).at("repairs").size() == 1);
  CHECK(j.at(1).at("repairs").at(0).at("level") == "error");
  CHECK(j.at(1).at("repairs").at(0).at("what").get<std::string>().starts_with(
      "the confirm cursor points past records it never confirmed; it is not trusted"));
  // The forged seal: damage of the seal, no loss, the two records kept.
  const auto& sealed = j.at(2).at("segments").at(0);
  CHECK(sealed.at("seal_damaged") == true);
  CHECK(sealed.at("records") == 2);
  CHECK(sealed.at("lost") == 0);
  CHECK(j.at(2).at("repairs").at(0).at("what").get<std::string>().find("the seal is not believed") != std::string::npos);
  // The seal ending inside a record: what follows it is read, as the drain reads it.
  const auto& short_seal = j.at(3).at("segments").at(0);
  CHECK(short_seal.at("seal_damaged") == true);
  CHECK(short_seal.at("records") == 4);
  CHECK(short_seal.at("lost") == 0);
  // The spare that holds segment 2: renamed back and delivered, not reused.
  REQUIRE(j.at(4).at("repairs").size() == 1);
  CHECK(j.at(4).at("repairs").at(0).at("fields").at("was").get<std::string>().ends_with("spare_00000009.wab"));
  CHECK(j.at(4).at("repairs").at(0).at("fields").at("now").get<std::string>().ends_with("seg_00000002.wab"));
  // The overcounting seal: damage of the seal, no loss.
  CHECK(j.at(5).at("segments").at(0).at("seal_damaged") == true);
  CHECK(j.at(5).at("segments").at(0).at("records") == 3);
  CHECK(j.at(5).at("segments").at(0).at("lost") == 0);
  // The cursor that has passed segment 1: the deletion is foretold.
  REQUIRE(j.at(6).at("repairs").size() == 1);
  CHECK(j.at(6).at("repairs").at(0).at("level") == "warning");
  CHECK(j.at(6).at("repairs").at(0).at("what") == "the confirm cursor has passed segments: they are deleted once every sink's cursor has passed them");
  CHECK(j.at(6).at("repairs").at(0).at("fields").at("segments") == "1");

  const auto text = ctl({"segments"});
  CHECK(text.out.find("holds segment seg_00000002.wab: renamed to it at the next start") != std::string::npos);
  CHECK(text.out.find("its seal was not written by weir") != std::string::npos);
  CHECK(text.out.find("18446744073709551613") == std::string::npos);  // no absurd loss

  const auto listed = ctl({"wab"});
  CHECK(listed.exit_code == 1);
  CHECK(listed.out.find("at the next start (warning): segment file named for another segment holds this one") !=
        std::string::npos);
  CHECK(listed.out.find("at the next start (error): the confirm cursor points past records it never confirmed") !=
        std::string::npos);
  const auto dumped = ctl({"dump", "shard_02/seg_00000001.wab"});
  CHECK(dumped.exit_code == 1);
  CHECK(dumped.err.find("its seal was not written by weir (it claims 18446744073709551615 record(s)") !=
        std::string::npos);
  CHECK(dumped.out.find("#2 ") != std::string::npos);

  // The next start does what was said: every record delivered, nothing lost.
  test::daemon_process d(dir.path(), {"--set", "ingest.shards=7"});
  REQUIRE(d.wait_ready());
  std::set<std::string> delivered;
  REQUIRE(test::eventually([&] {
    delivered.clear();
    for (const auto& row : test::sqlite_rows(dir / "var/sink.db")) delivered.insert(row.payload);
    return delivered.size() == 20;
  }));
  // Every record but q, which the believed cursor says was delivered.
  CHECK(delivered == std::set<std::string>{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o",
                                           "p", "r", s40, t40, u40});
  CHECK(d.log().find("WAB segment seal counts more records than its extent holds") != std::string::npos);
  CHECK(d.log().find("WAB segments the stored confirm cursor has passed are deleted") != std::string::npos);
  CHECK(d.log().find("renamed_segments=3") != std::string::npos);
  CHECK(d.log().find("damaged_seals=1") != std::string::npos);
  CHECK(d.log().find("the confirm cursor points past records it never confirmed; it is not trusted") !=
        std::string::npos);
  CHECK(d.stop() == 0);
}

TEST_CASE("weir-ctl quarantine lists the copies with their records and inspect prints one", "[ctl][wab]") {
  test::temp_dir dir;
  const auto original = write_segment(dir / "elsewhere/shard_00", 5, {"alpha", "bravo", "charlie"}, true);
  std::filesystem::create_directories(dir / "var/wab");
  std::filesystem::create_directories(dir / "var/quarantine");
  const auto copy = dir / "var/quarantine/shard_00__seg_00000005.wab";
  std::filesystem::copy_file(original, copy);
  flip_byte(copy, wab::segment_prefix_size + wab::record_header_size + 1);  // in "alpha"

  const auto list = test::run_binary(test::binary("weir-ctl"), {"--data-dir", "var", "--json", "quarantine", "list"},
                                     dir.path());
  REQUIRE(list.exit_code == 0);
  const auto j = nlohmann::json::parse(list.out);
  REQUIRE(j.size() == 1);
  CHECK(j.at(0).at("file") == "shard_00__seg_00000005.wab");
  CHECK(j.at(0).at("segment") == "shard_00/seg_00000005.wab");
  CHECK(j.at(0).at("records") == 2);
  CHECK(j.at(0).at("lost") == 1);

  const auto inspect = test::run_binary(test::binary("weir-ctl"),
                                        {"--data-dir", "var", "quarantine", "inspect", "shard_00__seg_00000005.wab"},
                                        dir.path());
  CHECK(inspect.exit_code == 1);  // it holds damage
  CHECK(inspect.out.find("shard_00/seg_00000005.wab #2 ") != std::string::npos);
  CHECK(inspect.out.find("charlie") != std::string::npos);
  CHECK(inspect.out.find("alpha") == std::string::npos);
  const auto none = test::run_binary(test::binary("weir-ctl"), {"--data-dir", "var", "quarantine", "inspect"}, dir.path());
  CHECK(none.exit_code == 2);
}
