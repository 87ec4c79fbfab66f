"""Checking a refusal's evidence as a third party, with the log alone.

A refused entry is evidence against its author because anybody holding the log up to it can
replay that prefix (`replay`, the same code every peer runs) and watch the entry fail the same
way; two entries signed by one author for one index are evidence by themselves (but for a
void agreement, which may take the index of an entry its author made before the table fell
silent).
"""

from __future__ import annotations

from collections.abc import Sequence

from buraco_p2p.session import bodies
from buraco_p2p.session.entry import Entry, decode_entry
from buraco_p2p.session.errors import LogError
from buraco_p2p.session.table import Table
from buraco_p2p.session.terms import parse_genesis

__all__ = ["check_equivocation", "confirm_refusal", "equivocates"]


def equivocates(a: Entry, b: Entry) -> bool:
    """Whether two signed entries are one party's two different answers for one index.

    A void agreement may take the index of a round entry a present party made before the
    table went silent (`Table._open_void` starts it at the log's end, behind the entries of
    the step that were applied): that party's entry and its void at one index are both
    honest, so a void entry and another kind never count as equivocation.
    """
    return (
        a.author == b.author
        and a.index == b.index
        and a.wire != b.wire
        and (a.kind == bodies.VOID) == (b.kind == bodies.VOID)
    )


def check_equivocation(genesis: Entry | bytes, first: bytes, second: bytes) -> int:
    """Confirm that `first` and `second` are two different entries of this table signed by
    one party for one index; return that party. Raises `LogError` or `ValueError` if not."""
    terms = parse_genesis(genesis if isinstance(genesis, Entry) else decode_entry(genesis))
    a, b = decode_entry(first), decode_entry(second)
    for e in (a, b):
        if e.table != terms.table_id:
            raise ValueError("an entry of another table")
        e.verify(terms.keys)
    if not equivocates(a, b):
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
