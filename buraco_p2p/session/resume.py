"""A peer rebuilt from what its client saved, and what a peer sends a party that asks.

Two small routines every host of a `Peer` needs the same way, so the network driver
(`buraco_p2p.play.driver`) and the simulator run one code path:

- `resume`: a client killed at any moment restarts from its saved log and its saved void
  entries (`Output.votes`): the log is replayed through a fresh peer (which makes its own
  entries again, byte for byte, from a random source keyed to the log), then it stands by
  every void it signed, so it signs no other at their points.
- `sync_answer`: a party that says it holds the first `n` entries (`["sync", n]`) is sent
  what it may lack: our log from `n`, and our own entries made ahead of our log; a party
  that claims as much as we hold or more may be on another branch, and our last step is
  what brings it back (docs/protocol.md 4.6). `Tails` says when that step goes to a party
  again.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Hashable, Iterable, Sequence

from buraco_p2p.crypto.group import RandomSource
from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.session.entry import decode_entry
from buraco_p2p.session.output import Output
from buraco_p2p.session.peer import Peer
from buraco_p2p.session.terms import parse_genesis

__all__ = ["Tails", "resume", "sync_answer"]


def resume(
    wires: Sequence[bytes],
    votes: Iterable[bytes],
    identity: Identity,
    rng: RandomSource,
    now: float,
    *,
    minute: float = 60.0,
    bind: Callable[[Peer], None] | None = None,
) -> tuple[Peer, Output]:
    """A peer for `identity` rebuilt from a saved log (`wires`, the genesis first) and the
    void entries it saved (`votes`), and what that produced (its entries to send again).
    An identity the genesis does not name is an heir (it follows the log until a "replace"
    round seats it). `bind(peer)` runs before anything is replayed: a keyed random source
    is bound to the peer's log there. Raises `LogError` for a genesis that does not check;
    the caller compares `len(peer.log)` with `len(wires)` to find a saved entry that no
    longer checks."""
    genesis = decode_entry(wires[0])
    heir = identity.public not in parse_genesis(genesis).keys
    peer = Peer(genesis, identity, rng, now, heir=heir, minute=minute)
    if bind is not None:
        bind(peer)
    out = peer.start(now)
    for wire in wires[1:]:
        out.extend(peer.receive(wire, now))
    for wire in votes:
        out.extend(peer.restore_vote(wire))
    return peer, out


def sync_answer(
    peer: Peer, n: int, pending: Iterable[bytes] = (), *, tail: bool = True
) -> list[bytes]:
    """What a party that claims the first `n` entries is sent (2.10): our log from `n`,
    then `pending`, our entries made ahead of our log, then what we stand by
    (`Peer.standing`: our voids, the evidence of an equivocation that still matters). A
    party that claims all we hold or more may be on another branch (its entries at the same
    indices differ from ours): with `tail`, it is sent our last complete step, what brings
    it back (4.6). The caller sends that tail as `Tails` says."""
    if n < len(peer.log):
        # from the start of our step that holds its last entry: that entry may be one of
        # another branch (a void round it lacks may start there)
        steps = peer.table.steps
        start = max(steps[bisect.bisect_right(steps, max(n - 1, 0)) - 1], 1)
        return [e.wire for e in peer.log[min(n, start) :]] + list(pending) + peer.standing()
    start = max(peer.table.steps[-2], 1) if tail else len(peer.log)
    return [e.wire for e in peer.log[start:]] + list(pending) + peer.standing()


class Tails:
    """When a party that asks from the end of our log or past it is sent our last step (the
    `tail` of `sync_answer`, docs/protocol.md 2.10): once for each party and length of our
    log, so that a table that waits does not send it with every `sync`; and again once
    `again` (the table's timeout) has passed while the party still asks from there, since
    the one sent may have been lost on the way, and that party learns of the round that
    closed the match, say, from nothing else."""

    def __init__(self, again: float) -> None:
        self.again = again
        self._last: dict[Hashable, tuple[int, float]] = {}  # party -> (our length, when)

    def due(self, party: Hashable, n: int, length: int, now: float) -> bool:
        """Whether `party`, which says it holds `n` entries, is sent our last step now (and
        if so, noted as sent it): `length` is our log's, `now` our clock."""
        if n < length:
            return False
        last = self._last.get(party)
        if last is not None and last[0] == length and now - last[1] < self.again:
            return False
        self._last[party] = (length, now)
        return True
