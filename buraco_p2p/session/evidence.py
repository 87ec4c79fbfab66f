"""Checking a refusal's evidence as a third party, with the log alone.

A refused entry is evidence against its author because anybody holding the log up to it can
replay that prefix (`replay`, the same code every peer runs) and watch the entry fail the same
way; two entries signed by one author for one index, answering the same log (the same
`p`), are evidence by themselves when both signatures hold under the key in force for that
author at that index (but for a void agreement, which may take the index of an entry its
author made before the table fell silent). Nothing else is: a signature under any other key
(one a mere proposal names, one a replacement has retired), or an entry whose `p` names
another log (it does not continue the log, so it is only refused).
"""

from __future__ import annotations

from collections.abc import Sequence

from buraco_p2p.net.channel.errors import BadSignature as NetBadSignature
from buraco_p2p.net.channel.identity import PeerKey
from buraco_p2p.session import bodies
from buraco_p2p.session.entry import Entry, decode_entry
from buraco_p2p.session.errors import LogError
from buraco_p2p.session.table import Table
from buraco_p2p.session.terms import parse_genesis

__all__ = ["check_equivocation", "confirm_refusal", "equivocates", "proves_equivocation"]


def equivocates(a: Entry, b: Entry) -> bool:
    """Whether two signed entries are one party's two different answers for one index of
    one log: same author, index and `p`, different bytes (their signatures are the caller's
    to check, `proves_equivocation`).

    Two entries with different `p` are not: at most one of them continues the log every
    honest peer holds up to that step; the other is refused as not chaining, and an honest
    author may sign one such (a shuffle built ahead on a previous shuffle that was then
    refused, 4.4). A void agreement may take the index of a round entry a present party
    made before the table went silent (`Table._open_void` starts it at the log's end,
    behind the entries of the step that were applied): that party's entry and its void at
    one index are both honest, so a void entry and another kind never count as
    equivocation; nor do two voids of different tries (4.5: a retry may take the index of
    its author's void of the try before).
    """
    return (
        a.author == b.author
        and a.index == b.index
        and a.prev == b.prev
        and a.wire != b.wire
        and (a.kind == bodies.VOID) == (b.kind == bodies.VOID)
        and (a.kind != bodies.VOID or bodies.void_try(a.body) == bodies.void_try(b.body))
    )


def proves_equivocation(a: Entry, b: Entry, key: PeerKey) -> bool:
    """Whether `a` and `b` are equivocation (`equivocates`) and both verify under `key`,
    the author's identity key in force at their index."""
    if not equivocates(a, b):
        return False
    try:
        for e in (a, b):
            if isinstance(e.sig, tuple):
                return False
            key.verify(e.sig, e.signing_bytes())
    except (LogError, NetBadSignature):
        return False
    return True


def check_equivocation(
    genesis: Entry | bytes, first: bytes, second: bytes, key: PeerKey | None = None
) -> int:
    """Confirm that `first` and `second` are two different entries of this table signed by
    one party for one index of one log; return that party. `key`: the author's identity key
    in force at that index, if a "replace" round has changed it (the log says: its
    `Table.key_at`); by default its genesis key. Raises `LogError` or `ValueError` if not."""
    terms = parse_genesis(genesis if isinstance(genesis, Entry) else decode_entry(genesis))
    a, b = decode_entry(first), decode_entry(second)
    for e in (a, b):
        if e.table != terms.table_id:
            raise ValueError("an entry of another table")
        if e.index < 1 or not 0 <= e.author < len(terms.keys):
            raise ValueError("not an entry a party signs alone")
    keys = list(terms.keys)
    if key is not None:
        keys[a.author] = key
    for e in (a, b):
        e.verify(tuple(keys))
    if not equivocates(a, b):
        raise ValueError("not two different entries by one author for one index of one log")
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
