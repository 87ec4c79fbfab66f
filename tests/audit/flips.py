"""Changing one byte of a match log file, at many positions, with one replay of the log.

`uncaught(data, flips)` says which single-byte changes of the log file `data` the verifier
would accept. It gives the verdict `buraco-p2p verify` gives (`audit.verify_bytes`), without
replaying the whole log once per change: the entries before the changed one are the original
entries, so it replays the original log once, entry by entry, and at each entry tries every
change that falls in that entry's record against the table as it stands there. A changed
entry is refused by checks that run before the table changes anything (decoding, table id,
index, previous step head, author, signature); anything else is reported, so a change that got
further than that cannot go unnoticed.
"""

from __future__ import annotations

from collections.abc import Iterable

from buraco_p2p.audit import verify_bytes
from buraco_p2p.logfile import LogFileError, decode_log, header
from buraco_p2p.session import (
    BadSignature,
    BrokenChain,
    LogError,
    MalformedEntry,
    OutOfTurn,
    Table,
    WrongTable,
    decode_entry,
)

EARLY = (MalformedEntry, WrongTable, BrokenChain, OutOfTurn, BadSignature)


def flipped(data: bytes, pos: int, mask: int) -> bytes:
    return data[:pos] + bytes([data[pos] ^ mask]) + data[pos + 1 :]


def record_bounds(data: bytes) -> list[tuple[int, int]]:
    """(start, end) of every record in the file (header excluded)."""
    out, pos = [], len(header())
    for wire in decode_log(data):
        width = 2 if len(wire) < 1 << 8 else 3 if len(wire) < 1 << 16 else 5
        out.append((pos, pos + width + len(wire)))
        pos += width + len(wire)
    assert pos == len(data)
    return out


def uncaught(data: bytes, flips: Iterable[tuple[int, int]]) -> list[tuple[int, int, str]]:
    """The (position, mask, what happened) of every change the verifier would not refuse."""
    wires = decode_log(data)
    bounds = record_bounds(data)
    by_record: dict[int, list[tuple[int, int]]] = {}
    misses: list[tuple[int, int, str]] = []
    for pos, mask in flips:
        assert mask and 0 <= pos < len(data)
        if pos < bounds[0][1]:  # the header or the genesis: the real command, it stops at once
            if verify_bytes(flipped(data, pos, mask)).code == 0:
                misses.append((pos, mask, "accepted by verify"))
            continue
        k = next(i for i, (a, b) in enumerate(bounds) if a <= pos < b)
        by_record.setdefault(k, []).append((pos, mask))
    table = Table(decode_entry(wires[0]))
    for k in range(1, len(wires)):
        for pos, mask in by_record.get(k, ()):
            what = _try(table, wires, k, flipped(data, pos, mask))
            if what is not None:
                misses.append((pos, mask, what))
        table.apply(decode_entry(wires[k]))
    assert table.closed
    return misses


def _try(table: Table, wires: list[bytes], k: int, data: bytes) -> str | None:
    """None if the verifier refuses the changed file (the table is left as it was)."""
    try:
        changed = decode_log(data)
    except LogFileError:
        return None
    assert changed[:k] == wires[:k]
    if len(changed) <= k:
        return None  # the log now stops before entry k: it ends before the match result
    try:
        entry = decode_entry(changed[k])
    except LogError:
        return None
    fault = table.fault
    try:
        table.apply(entry)
    except EARLY:
        table.fault = fault
        return None
    except LogError as exc:
        return f"refused late, the table may have changed: {exc}"
    return f"entry {k} accepted with a changed byte"
