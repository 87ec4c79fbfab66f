"""Checking a refusal's evidence as a third party, with the log alone.

A refused entry is evidence against its author because anybody holding the log up to it can
replay that prefix (`replay`, the same code every peer runs) and watch the entry fail the same
way; two entries signed by one author for one index are evidence by themselves.
"""

from __future__ import annotations

from collections.abc import Sequence

from buraco_p2p.session.entry import Entry, decode_entry
from buraco_p2p.session.errors import LogError
from buraco_p2p.session.table import Table
from buraco_p2p.session.terms import parse_genesis

__all__ = ["check_equivocation", "confirm_refusal"]


def check_equivocation(genesis: Entry | bytes, first: bytes, second: bytes) -> int:
    """Confirm that `first` and `second` are two different entries of this table signed by
    one party for one index; return that party. Raises `LogError` or `ValueError` if not."""
    terms = parse_genesis(genesis if isinstance(genesis, Entry) else decode_entry(genesis))
    a, b = decode_entry(first), decode_entry(second)
    for e in (a, b):
        if e.table != terms.table_id:
            raise ValueError("an entry of another table")
        e.verify(terms.keys)
    if a.author != b.author or a.index != b.index or a.wire == b.wire:
        raise ValueError("not two different entries by one author for one index")
    return a.author


def confirm_refusal(log: Sequence[bytes], entry: bytes) -> LogError:
    """Replay `log` (from its genesis) as a verifier, then offer `entry` at its end: return
    the error it is refused with. Raises `ValueError` if it is accepted (no evidence) and the
    prefix's own `LogError` if the prefix is bad."""
    if not log:
        raise ValueError("the log has no genesis")
    table = Table(decode_entry(log[0]))
    for wire in log[1:]:
        table.apply(decode_entry(wire))
    try:
        table.apply(decode_entry(entry))
    except LogError as exc:
        return exc
    raise ValueError("the entry is accepted in that place: it is no evidence")
