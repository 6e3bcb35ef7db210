#!/usr/bin/env python3
"""Writes weir's own wire test vectors (tests/vectors/*.json).

The vectors are computed here with Python's zlib and hashlib, independently
of the C++ codec they test. Run it again only to add vectors; the JSON files
are committed and are what the tests read.
"""
import hashlib
import json
import struct
import zlib
from pathlib import Path

CAP = 16 * 1024 * 1024


def header(mtype, dur, length, version=1, flags=0, magic=b"WEIR", crc=None):
    h = magic + bytes([version, mtype, dur, flags]) + struct.pack("<I", length)
    return h + struct.pack("<I", zlib.crc32(h) if crc is None else crc)


def frame(mtype, dur, payload, **kw):
    pcrc = kw.pop("payload_crc", None)
    p = header(mtype, dur, len(payload), **kw) + payload
    return p + struct.pack("<I", zlib.crc32(payload) if pcrc is None else pcrc)


def batch(records, version=1, count=None):
    body = bytes([version]) + struct.pack("<H", len(records) if count is None else count)
    for r in records:
        body += struct.pack("<I", len(r)) + r
    return body


def v(name, data, verdict, about, **extra):
    d = {"name": name, "about": about, "hex": data.hex(), "verdict": verdict}
    d.update(extra)
    return d


# --- frames: verdict of decode_frame, and what a live daemon must answer ---
# reply: "ack-or-internal" (a push, whose answer depends on the ingest path),
# "health", or a Nack reason byte; closes: whether the daemon closes after it.
frames = [
    v("health_check", frame(4, 1, b""), "ok", "HealthCheck with an empty payload", reply="health", closes=False),
    v("push_durable", frame(1, 1, b"weir"), "ok", "Push at Durable", reply="push", closes=False),
    v("push_retired_batched_byte", frame(1, 2, b"old"), "ok", "0x02 still decodes and means Durable", reply="push", closes=False),
    v("push_buffered", frame(1, 3, b"fast"), "ok", "Push at Buffered", reply="push", closes=False),
    v("push_replicated", frame(1, 4, b"safe"), "ok", "Push at Replicated (this project's 0x04)", reply="push", closes=False),
    v("push_tracked", frame(6, 1, b"where"), "ok", "PushTracked", reply="push", closes=False),
    v("push_batch_two", frame(8, 1, batch([b"a", b"bc"])), "ok", "PushBatch of two records", reply="push", closes=False),
    v("client_sends_ack", frame(2, 1, b""), "ok", "a daemon-to-client type from a client", reply=0x08, closes=True),
    v("client_sends_ack_batch", frame(9, 1, bytes([1, 1, 0, 1])), "ok", "a daemon-to-client type from a client", reply=0x08, closes=True),
    v("too_short_for_a_header", b"WEIR\x01", "TruncatedFrame", "five bytes: length is checked before magic", reply=None, closes=True),
    v("payload_cut_short", frame(1, 1, b"abcdef")[:-6], "TruncatedFrame", "header promises more than arrives", reply=None, closes=True),
    v("extra_bytes_after_frame", frame(4, 1, b"") + b"\x00\x00", "TrailingBytes", "a whole frame plus two bytes", reply="health", closes=True),
    v("wrong_magic", frame(1, 1, b"x", magic=b"RIEW"), "BadMagic", "magic spelled backwards", reply=0x01, closes=True),
    v("future_version", frame(1, 1, b"x", version=9), "VersionMismatch", "version 9 with a correct header CRC", reply=0x02, closes=True),
    v("version_zero_bad_crc", frame(1, 1, b"x", version=0, crc=0), "VersionMismatch", "version is checked before the header CRC", reply=0x02, closes=True),
    v("corrupt_header_crc", frame(1, 1, b"x", crc=0xDEADBEEF), "HeaderCrcMismatch", "header CRC does not match", reply=0x03, closes=True),
    v("type_zero", frame(0, 1, b"x"), "UnknownMessageType", "type 0x00 is unassigned", reply=0x08, closes=True),
    v("type_0a", frame(0x0A, 1, b"x"), "UnknownMessageType", "type 0x0A is unassigned", reply=0x08, closes=True),
    v("durability_zero", frame(1, 0, b"x"), "UnknownDurability", "durability 0x00", reply=0x08, closes=True),
    v("durability_five", frame(1, 5, b"x"), "UnknownDurability", "durability 0x05", reply=0x08, closes=True),
    v("flags_0x80", frame(1, 1, b"x", flags=0x80), "ReservedFlagsSet", "a reserved flag bit", reply=0x09, closes=True),
    v("type_checked_before_flags", frame(0xEE, 1, b"x", flags=1), "UnknownMessageType", "unknown type wins over flags", reply=0x08, closes=True),
    v("declares_over_hard_cap", header(1, 1, CAP + 7), "PayloadTooLarge", "only a header, declaring 16 MiB + 7", reply=0x04, closes=True),
    v("empty_push", frame(1, 1, b""), "EmptyPayload", "a Push must carry a record", reply=0x07, closes=True),
    v("empty_push_tracked", frame(6, 3, b""), "EmptyPayload", "a PushTracked must carry a record", reply=0x07, closes=True),
    v("empty_push_batch", frame(8, 1, b""), "EmptyPayload", "a PushBatch must carry a body", reply=0x07, closes=True),
    v("corrupt_payload_crc", frame(1, 1, b"data", payload_crc=1), "PayloadCrcMismatch", "payload CRC does not match", reply=0x05, closes=True),
    # Bodies that frame correctly but break the batch layout: the daemon maps them.
    v("batch_body_bad_version", frame(8, 1, batch([b"a"], version=7)), "ok", "PushBatch body version 7", reply=0x0B, closes=True),
    v("batch_body_empty_record", frame(8, 1, batch([b"a", b""])), "ok", "second record empty", reply=0x07, closes=True),
    v("batch_body_over_hard_cap", frame(8, 1, batch([], count=2049)), "ok", "declares 2049 records", reply=0x04, closes=True),
]

bodies = [
    v("two_records", batch([b"one", b"two"]), "ok", "two records", records=[b"one".hex(), b"two".hex()]),
    v("max_u32_len_record", bytes([1, 1, 0]) + b"\xff\xff\xff\xff", "RecordTooLarge", "length 2^32-1, checked before the body is consulted"),
    v("two_bytes", b"\x01\x01", "Truncated", "shorter than version + count"),
    v("version_zero", batch([b"a"], version=0), "UnsupportedVersion", "version 0"),
    v("count_zero", batch([]), "EmptyBatch", "declares no records"),
    v("count_over_configured", batch([b"a"] * 5), "TooManyRecords", "five records when four are allowed", max_records=4),
    v("zero_length_first", batch([b""]), "EmptyRecord", "first record empty"),
    v("length_past_end", bytes([1, 1, 0]) + struct.pack("<I", 10) + b"abc", "TruncatedRecord", "declares 10 bytes, carries 3"),
    v("partial_length_prefix", bytes([1, 2, 0]) + struct.pack("<I", 1) + b"a" + b"\x01\x00", "TruncatedRecord", "second length prefix cut short"),
    v("extra_record", batch([b"a", b"b"], count=1), "LengthMismatch", "declares one, carries two"),
    v("missing_record", batch([b"a"], count=2), "LengthMismatch", "declares two, carries one"),
]

acks = [
    v("n10_first_and_last", bytes([1, 10, 0, 0x01, 0x02]), "ok", "records 0 and 9 of ten", expected=10, accepted=[i in (0, 9) for i in range(10)]),
    v("n1_clear", bytes([1, 1, 0, 0]), "ok", "one record, not durable", expected=1, accepted=[False]),
    v("cut_short", b"\x01", "Truncated", "one byte", expected=1),
    v("version_three", bytes([3, 1, 0, 1]), "UnsupportedVersion", "version 3", expected=1),
    v("zero_count", bytes([1, 0, 0]), "EmptyBatch", "no records", expected=0),
    v("count_not_echoed", bytes([1, 2, 0, 3]), "LengthMismatch", "answers two, one was sent", expected=1),
    v("bitmap_too_long", bytes([1, 2, 0, 3, 0]), "LengthMismatch", "two bitmap bytes for two records", expected=2),
    v("padding_bit_set", bytes([1, 3, 0, 0x0F]), "PaddingNotZero", "bit 3 set for a three-record batch", expected=3),
]


def coordinate(index, rid, seg, version=1, seg_len=None):
    s = seg.encode() if isinstance(seg, str) else seg
    return bytes([version]) + struct.pack("<Q", index) + rid + struct.pack("<H", len(s) if seg_len is None else seg_len) + s


def record_id(seg, index, payload):
    s = seg.encode()
    return hashlib.sha256(struct.pack("<Q", len(s)) + s + struct.pack("<Q", index) + struct.pack("<Q", len(payload)) + payload).digest()


seg = "shard_01/seg_0000000000000003.wab"
rid = record_id(seg, 42, b"payload")
coords = [
    v("shard_one", coordinate(42, rid, seg), "ok", "record 42 of a shard 1 segment", segment=seg, index=42, record_id_hex=rid.hex(), payload_hex=b"payload".hex()),
    v("one_byte_short", coordinate(42, rid, "")[:-1], "Truncated", "42 bytes"),
    v("version_two", coordinate(1, rid, "s", version=2), "UnsupportedVersion", "version 2"),
    v("declares_256", coordinate(1, rid, "s" * 256), "SegmentTooLong", "a 256-byte segment name"),
    v("short_by_one", coordinate(1, rid, "abc", seg_len=4), "LengthMismatch", "declares 4 name bytes, carries 3"),
    v("overlong_utf8", coordinate(1, rid, b"\xc0\xaf"), "SegmentNotUtf8", "an overlong encoding of '/'"),
]

out = Path(__file__).parent / "wire_vectors.json"
out.write_text(json.dumps({
    "about": "weir's own wire vectors: frames (with the live daemon's expected reply), PushBatch bodies, AckBatch bodies, RecordCoordinates.",
    "frames": frames, "batch_bodies": bodies, "ack_batches": acks, "coordinates": coords,
}, indent=1) + "\n")
print(f"wrote {out}")
