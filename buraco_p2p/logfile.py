"""The match log as a file: a header, then one record per log entry, in log order.

    file    = MAGIC || version || record*
    MAGIC   = 92 ae "buraco-p2p/log"      (msgpack: an array of two, the first a 14-byte str)
    version = 01                          (msgpack positive fixint: this format, 1)
    record  = the entry's wire bytes as one msgpack bin, in its shortest header form
              (c4 len8 | c5 len16be | c6 len32be), at most `MAX_ENTRY_BYTES` long

So the file is valid msgpack read as a stream (an array header, a str, an int, then bins; the
array's two elements are the magic and the version, the bins follow it), it can be appended to
entry by entry as a client persists its log (write the record, flush, then act), and a reader
finds every entry's bounds without parsing entries. Pure: bytes in, bytes out; `decode_log`
refuses what is not a log file with a `LogFileError` saying where and why, and leaves checking
the entries themselves to the session's replay.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

__all__ = [
    "FILE_VERSION",
    "MAGIC",
    "MAX_ENTRY_BYTES",
    "MAX_RECORDS",
    "LogFileError",
    "decode_log",
    "encode_log",
    "header",
    "record",
]

MAGIC: Final = b"\x92\xaeburaco-p2p/log"
FILE_VERSION: Final = 1
MAX_ENTRY_BYTES: Final = 1 << 20
# A hand takes about 300 entries, a long match a few dozen hands; the bound keeps a file of
# tiny records from making a reader build millions of objects.
MAX_RECORDS: Final = 200_000


class LogFileError(ValueError):
    """Bytes that are not a match log file: `offset` is where reading stopped."""

    def __init__(self, reason: str, offset: int) -> None:
        self.reason = reason
        self.offset = offset
        super().__init__(f"{reason} (at byte {offset})")


def header() -> bytes:
    return MAGIC + bytes([FILE_VERSION])


def record(wire: bytes) -> bytes:
    """One entry's record (append it to a file that has the header)."""
    n = len(wire)
    if not 0 < n <= MAX_ENTRY_BYTES:
        raise ValueError(f"an entry is 1..{MAX_ENTRY_BYTES} bytes, not {n}")
    if n < 1 << 8:
        return b"\xc4" + n.to_bytes(1, "big") + wire
    if n < 1 << 16:
        return b"\xc5" + n.to_bytes(2, "big") + wire
    return b"\xc6" + n.to_bytes(4, "big") + wire


def encode_log(wires: Iterable[bytes]) -> bytes:
    """A whole log file from the entries' wire bytes, in log order."""
    return header() + b"".join(record(w) for w in wires)


_HEADS: Final = {0xC4: (1, 0), 0xC5: (2, 1 << 8), 0xC6: (4, 1 << 16)}


def decode_log(data: bytes) -> list[bytes]:
    """The entries' wire bytes, in file order; `LogFileError` for anything else: another
    magic or version, a record that is not a shortest-form bin, an empty or oversized record,
    a file that ends inside a record, more than `MAX_RECORDS` records, or no record at all."""
    if not data.startswith(MAGIC):
        raise LogFileError("not a buraco-p2p match log (wrong magic)", 0)
    pos = len(MAGIC)
    if pos >= len(data):
        raise LogFileError("truncated: the header has no version", pos)
    if data[pos] != FILE_VERSION:
        raise LogFileError(
            f"log file format {data[pos]}, this reader knows format {FILE_VERSION}", pos
        )
    pos += 1
    out: list[bytes] = []
    end = len(data)
    while pos < end:
        if len(out) >= MAX_RECORDS:
            raise LogFileError(f"more than {MAX_RECORDS} records", pos)
        head = _HEADS.get(data[pos])
        if head is None:
            raise LogFileError(f"record {len(out)} is not a msgpack bin", pos)
        width, least = head
        if pos + 1 + width > end:
            raise LogFileError(f"truncated inside the length of record {len(out)}", pos)
        n = int.from_bytes(data[pos + 1 : pos + 1 + width], "big")
        if n < least or n == 0:
            raise LogFileError(f"record {len(out)} has a non-shortest or empty length", pos)
        if n > MAX_ENTRY_BYTES:
            raise LogFileError(f"record {len(out)} is over {MAX_ENTRY_BYTES} bytes", pos)
        start = pos + 1 + width
        if start + n > end:
            raise LogFileError(f"truncated inside record {len(out)}", pos)
        out.append(data[start : start + n])
        pos = start + n
    if not out:
        raise LogFileError("a log file with no entry", pos)
    return out
