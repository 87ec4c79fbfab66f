"""Who, among the parties a step waits for, is still answering: a party catching up.

A party that restarted, or an heir that a "replace" seated, first has to fetch and check the
log it missed before it can make its next entry; a long catch-up can outlast the table's
timeout. Counted as missing, it would be voided out (replaced again) while it is connected
and working. So each peer notes every party's claims of how much of the log it holds (what
the network layer hears: `["sync", n]`, `["at", n]`) and counts as answering a party whose
link is up and whose claim advanced within the timeout.

A claim cannot be checked, so what it can buy is bounded: it counts only if it is behind our
own log (a party that holds all we hold is not catching up: it owes its entry), past the index
of the latest entry that identity signed in our log (it held everything before that entry when
it signed it, so a lower claim is stale or false), and past every claim of that identity
before, so each entry of our log after its own latest buys at most one timeout once: a party
that is caught up, whose latest entry is a few steps back, buys a few timeouts at most; and no
step is held this way past `CATCHUP_TIMEOUTS` timeouts. A party that connects and never
advances is missing once the timeout passes, as before.
What a claim buys is only that: the peer does not tell its host that the party keeps the
table waiting, nor propose to name it. It never keeps a peer from agreeing to a void, nor
from signing a retry (`absent(..., claims=False)`): a claim reaches only the peers it was
sent to, and a peer held back from signing what the others sign would be named by them.

A party can also be behind for a reason the log shows: it signed a retry at a point behind our
log where our log took a round of a lower try. Its vote for the retry stands until it has
waited twice the timeout (docs/protocol.md 4.5 R3), and only then does it take the round we
took and come on. Such a vote (`stands`) counts like a claim, for `STANDING_TIMEOUTS`
timeouts from when it first keeps our step waiting: the wait it is bound to, a timeout to
come to our point and one to sign there. Each point of a party counts once (an honest party
stands there once: after its wait it takes the lower round), and the same cap holds. That
vote reaches the peers at different moments, some before their timeout of the step and some
after; those that signed a void naming the party meanwhile wait for the others' votes until
its standing is over at their clocks before they retry (`standing_ends`).

Pure like all of `session/`: the times are the `now` the host passes.
"""

from __future__ import annotations

from collections.abc import Collection

__all__ = ["CATCHUP_TIMEOUTS", "STANDING_TIMEOUTS", "Presence"]

# How many timeouts in all a step may wait for parties that are catching up: a bound on
# what claims no peer can check can hold a table for.
CATCHUP_TIMEOUTS = 10

# How long a party's standing retry behind our log counts as answering, in timeouts: two
# while its vote stands (4.5 R3), then one to reach our point and one to sign a void there
# if the step waits for a silent party.
STANDING_TIMEOUTS = 4


class Presence:
    """The last claim that counted of each identity (by key) and when it was heard."""

    def __init__(self) -> None:
        self._best: dict[bytes, int] = {}
        self._heard: dict[bytes, float] = {}
        self._stood: dict[bytes, int] = {}
        self._standing: dict[bytes, float] = {}

    def heard(self, key: bytes, position: int, length: int, now: float, signed: int = -1) -> bool:
        """Note that `key` claims to hold the first `position` entries, heard at `now` while
        our log holds `length` and the latest entry `key` signed in it is at index `signed`;
        whether the claim counts as progress (behind our log, past the entries `key` has
        shown it holds by signing after them, and past every claim of `key` that counted
        before)."""
        floor = max(self._best.get(key, -1), signed)
        if not 0 <= position < length or position <= floor:
            return False
        self._best[key] = position
        self._heard[key] = now
        return True

    def stands(self, key: bytes, point: int, now: float) -> None:
        """Note that `key` keeps our step waiting while its retry at `point` stands behind
        our log; counted from the first time we note that point, and only if it is past
        every point noted before for `key`."""
        if point > self._stood.get(key, -1):
            self._stood[key] = point
            self._standing[key] = now

    def answering(
        self, key: bytes, linked: bool, now: float, limit: float, claims: bool = True
    ) -> bool:
        """Whether `key` counts as present: its link is up, and a claim of it counted within
        `limit` seconds of `now` (unless `claims` is False) or its standing retry within
        `STANDING_TIMEOUTS` timeouts."""
        at = self._heard.get(key) if claims else None
        return linked and ((at is not None and now - at < limit) or self.standing(key, now, limit))

    def standing(self, key: bytes, now: float, limit: float) -> bool:
        """Whether `key`'s retry behind our log, noted within `STANDING_TIMEOUTS` timeouts of
        `now`, keeps it from being late at our step. Unlike a claim, a vote is signed and
        relayed to every peer, so every honest peer notes it alike: it may keep a peer from
        agreeing to name `key` (`Peer.late`), where a claim only keeps it from proposing."""
        stood = self._standing.get(key)
        return stood is not None and now - stood < STANDING_TIMEOUTS * limit

    def standing_ends(self, key: bytes, limit: float) -> float | None:
        """When `key`'s standing retry noted last stops keeping it from being late here
        (None if none was noted). A peer that noted it before its own timeout of the step
        does not count `key` late until then, so it has not signed a void naming `key`; a
        retry must not name that peer for it before it could have (4.5 R2)."""
        stood = self._standing.get(key)
        return None if stood is None else stood + STANDING_TIMEOUTS * limit

    def absent(
        self,
        waiting: Collection[int],
        keys: list[bytes],
        linked: Collection[int],
        now: float,
        since: float,
        limit: float,
        claims: bool = True,
    ) -> tuple[int, ...]:
        """The parties of `waiting` (indexes into `keys`) that keep a step begun at `since`
        waiting: all of them once the step has waited `CATCHUP_TIMEOUTS` timeouts, else
        those not answering. A retry of a void round counts no claims (`claims` False): a
        claim reaches only the peers it was sent to, and a peer it held back from signing the
        retry the others sign would be named by their next one, present and answering; a
        signed vote that stands reaches them all."""
        if now - since >= CATCHUP_TIMEOUTS * limit:
            return tuple(waiting)
        return tuple(p for p in waiting
                     if not self.answering(keys[p], p in linked, now, limit, claims))  # fmt: skip
