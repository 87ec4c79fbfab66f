"""The verifier's path: a whole log through the same `Table` a peer uses, with no secrets."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from buraco_p2p.crypto.proofcheck import CHECK_NOW, ProofChecks
from buraco_p2p.session.entry import Entry, decode_entry
from buraco_p2p.session.errors import LogError, MalformedEntry
from buraco_p2p.session.table import Table

__all__ = ["Replay", "replay"]


@dataclass
class Replay:
    """What a replay established: the table at the end of the log and a summary."""

    table: Table
    entries: int
    hands: int
    shuffles_verified: int
    scores: tuple[int, ...]
    winner: int | None
    closed: bool
    fingerprints: tuple[str, ...]
    opened: tuple[tuple[int, ...], ...]
    # (log index of the "replace" round's last entry, party, the new identity's fingerprint)
    successions: tuple[tuple[int, int, str], ...] = ()


def replay(
    entries: Iterable[bytes | Entry],
    *,
    require_closed: bool = False,
    checks: ProofChecks = CHECK_NOW,
) -> Replay:
    """Check a log from its genesis, entry by entry, exactly as a peer does.

    Raises the `LogError` of the first bad entry (its index, its author, the reason); an
    empty log is a `MalformedEntry`. With `require_closed`, a log that stops before the
    signed match result is refused too. `checks` runs the deck's proof checks
    (`buraco_p2p.crypto.proofcheck`; `verify --jobs` runs them in other processes).
    """
    it = iter(entries)
    first = next(it, None)
    if first is None:
        raise MalformedEntry("an empty log has no genesis")
    table = Table(_entry(first), checks=checks)
    count = 1
    for item in it:
        table.apply(_entry(item))
        count += 1
    if require_closed and not table.closed:
        raise LogError("the log ends before the match result", index=count)
    match = table.match
    return Replay(
        table=table,
        entries=count,
        hands=table.hands_played,
        shuffles_verified=table.shuffles_verified,
        scores=tuple(match.scores) if match is not None else (),
        winner=match.winner if match is not None else None,
        closed=table.closed,
        fingerprints=table.terms.fingerprints(),
        opened=tuple(table.opened),
        successions=tuple((i, p, k.fingerprint()) for i, p, k in table.successions),
    )


def _entry(item: bytes | Entry) -> Entry:
    return item if isinstance(item, Entry) else decode_entry(item)
