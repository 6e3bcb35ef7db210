// Mutation fuzzing of everything that parses bytes from outside: the stream
// frame reader, the PushBatch body decoder, the AckTracked coordinate decoder
// and the segment reader. Seeds are the project's own wire vectors and a real
// segment; each case runs thousands of mutated inputs and only asks that
// nothing crashes, hangs or reads out of bounds (the ASan/UBSan build of the
// suite, `make test-asan`, is what catches the latter). The seed is printed
// when a case fails.
#include <filesystem>
#include <fstream>
#include <random>

#include <catch2/catch.hpp>

#include "wire/batch.hpp"
#include "wire/coordinate.hpp"
#include "wire/frame_reader.hpp"
#include "wab/segment_reader.hpp"
#include "wab/segment_writer.hpp"
#include "support/test_paths.hpp"
#include "support/vectors.hpp"

using namespace weir;

namespace {

constexpr int iterations = 20000;

/// Flips, overwrites, inserts, deletes and duplicates bytes; sometimes
/// splices in a little-endian length that is large, zero or off by one.
byte_buffer mutate(byte_buffer in, std::mt19937& rng) {
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits; ++e) {
    const std::size_t at = in.empty() ? 0 : rng() % in.size();
    switch (rng() % 6) {
      case 0:
        if (!in.empty()) in[at] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
        break;
      case 1:
        if (!in.empty()) in[at] = static_cast<std::uint8_t>(rng());
        break;
      case 2:
        in.insert(in.begin() + static_cast<std::ptrdiff_t>(at), static_cast<std::uint8_t>(rng()));
        break;
      case 3:
        if (!in.empty()) in.erase(in.begin() + static_cast<std::ptrdiff_t>(at));
        break;
      case 4:
        if (!in.empty()) in.resize(rng() % (in.size() + 1));
        break;
      case 5: {
        static const std::uint32_t lengths[] = {0, 1, 0xffffffffu, 0x7fffffffu, 16u << 20, 65536};
        const std::uint32_t v = lengths[rng() % 6] + (rng() % 3) - 1;
        if (in.size() >= 4 && at + 4 <= in.size()) store_le32(in.data() + at, v);
        break;
      }
    }
  }
  return in;
}

std::vector<byte_buffer> seeds(const char* kind) {
  std::vector<byte_buffer> out;
  for (const auto& v : test::own_vectors()[kind]) out.push_back(test::from_hex(v["hex"].get<std::string>()));
  return out;
}

}  // namespace

TEST_CASE("fuzz: the stream frame reader survives mutated frames in any chunking", "[fuzz][wire]") {
  const std::uint32_t seed = std::random_device{}();
  INFO("seed " << seed);
  std::mt19937 rng(seed);
  const auto corpus = seeds("frames");
  for (int i = 0; i < iterations; ++i) {
    byte_buffer stream;
    for (int f = 0; f < 3; ++f) {
      auto m = mutate(corpus[rng() % corpus.size()], rng);
      stream.insert(stream.end(), m.begin(), m.end());
    }
    wire::frame_reader reader(1024 * 1024);
    bool failed = false;
    for (std::size_t pos = 0; pos < stream.size() && !failed;) {
      const std::size_t n = std::min<std::size_t>(1 + rng() % 32, stream.size() - pos);
      byte_span input(stream.data() + pos, n);
      pos += n;
      while (!input.empty()) {
        const auto status = reader.feed(input);
        if (status == wire::frame_reader::status::frame_ready) {
          (void)reader.take();
          continue;
        }
        failed = status == wire::frame_reader::status::failed;
        break;
      }
    }
    (void)wire::decode_frame(stream);
  }
  SUCCEED();
}

TEST_CASE("fuzz: batch bodies and coordinates decode or fail cleanly", "[fuzz][wire]") {
  const std::uint32_t seed = std::random_device{}();
  INFO("seed " << seed);
  std::mt19937 rng(seed);
  const auto bodies = seeds("batch_bodies");
  for (int i = 0; i < iterations; ++i) {
    const auto body = mutate(bodies[rng() % bodies.size()], rng);
    auto records = wire::decode_batch_body(body, 1 + rng() % 2048, 1 + rng() % (1u << 20));
    if (records)
      for (auto r : records.value()) REQUIRE((r.data() >= body.data() && r.data() + r.size() <= body.data() + body.size()));
    (void)wire::decode_ack_batch(body, rng() % 3000);
    (void)wire::decode_coordinate(body);
  }
  SUCCEED();
}

TEST_CASE("fuzz: the segment reader classifies mutated segments without reading past the file", "[fuzz][wab]") {
  const std::uint32_t seed = std::random_device{}();
  INFO("seed " << seed);
  std::mt19937 rng(seed);
  test::temp_dir dir;
  auto io = wab::default_file_io();
  byte_buffer original;
  {
    auto w = wab::segment_writer::create(io, dir.path().string(), 0, 1, 1);
    REQUIRE(w);
    std::vector<byte_buffer> payloads;
    for (int i = 0; i < 20; ++i) payloads.push_back(byte_buffer(1 + i * 7, static_cast<std::uint8_t>('a' + i)));
    std::vector<byte_span> spans(payloads.begin(), payloads.end());
    REQUIRE(w.value()->append(spans, 42).error == 0);
    std::ifstream in(w.value()->path(), std::ios::binary);
    original.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const auto path = dir / "mutant.wab";
  for (int i = 0; i < iterations / 10; ++i) {
    const auto bytes = mutate(original, rng);
    std::ofstream(path, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    const int fd = io->open_existing(path.string());
    REQUIRE(fd >= 0);
    // A mutated header still has records to classify: read them as the writer made them.
    const auto decoded = wab::read_segment_header(*io, fd);
    const wab::segment_header header = decoded ? decoded.value() : wab::segment_header{.shard = 0, .sequence = 1, .created_at_ns = 1};
    wab::segment_reader reader(*io, fd, header, wab::records_end(header, bytes.size()));
    std::size_t records = 0;
    while (auto r = reader.next()) {
      REQUIRE(r->offset + wab::record_header_size + r->payload.size() <= bytes.size());
      REQUIRE(++records <= bytes.size());
    }
    CHECK(reader.stop() != wab::scan_stop::none);
    // Shorter than a header: recovery quarantines such a file before reading records.
    if (bytes.size() >= header.data_start()) CHECK(reader.valid_end() <= bytes.size());
    io->close(fd);
  }
}
