"""The way back: the disputes behind our log, and the one way a log is ever cut back.

A part of `buraco_p2p.session.peer.Peer`, kept apart because it is the one place that
changes what is behind the end of our log (docs/protocol.md 4.6, "The one way back").

The one way a log is ever cut back (`_adopt`): a complete void round, signed by a majority,
at a point behind the end of our log and not before its settled point, once our vote at the end
of our log, if we signed one, has waited twice the timeout (R3). Such a round is where
the table went while we were on another branch (we went on alone after a split, or applied
an entry its equivocating author also signed otherwise): every honest peer that sees it
takes it, the lowest such point first and there the highest try, so there is one log. What
the cut-off part left behind (agreements, overdue parties, held entries, claims, our saved
voids) is rebuilt from the kept prefix as a restart would rebuild it; nothing settled is ever
touched, and our random source draws for the new log, never again for the old one.

A *dispute* is an equivocation at an index behind our log but not below its settled point: the
honest peers may hold different entries there. Each signs the void there that deals again
without the equivocator where that is safe (`_dispute`), retries that round as R2 retries
one at the end of the log (`_held_dispute`), and once it is complete takes it (`_adopt`).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.session import bodies
from buraco_p2p.session.agreement import FAULT_ACTION, RETRY_TIMEOUTS, Motion
from buraco_p2p.session.entry import Entry
from buraco_p2p.session.errors import Equivocation, LogError
from buraco_p2p.session.events import Refused
from buraco_p2p.session.inbox import Inbox
from buraco_p2p.session.ledger import Ledger
from buraco_p2p.session.output import Output
from buraco_p2p.session.presence import Presence
from buraco_p2p.session.table import Table
from buraco_p2p.session.voter import Voter

__all__ = ["WayBack"]


class WayBack:
    """The disputes and roll-backs of one party's session (mixed into `Peer`)."""

    table: Table
    party: int
    identity: Identity
    votes: list[bytes]
    evidence: dict[tuple[int, int], Equivocation]
    _own: set[bytes]
    _produced: set[int]
    _inbox: Inbox
    _voter: Voter
    _ledger: Ledger
    _presence: Presence
    # rounds behind our log that did not apply there: (point, head, entries' hashes)
    _untaken: set[tuple[int, bytes, tuple[bytes, ...]]]

    if TYPE_CHECKING:  # the peer's own, which these use

        @property
        def settled(self) -> int: ...
        def receive(self, data: bytes, now: float, *, defer: bool = False) -> Output: ...
        def run(self, now: float) -> Output: ...
        def _produce(self, now: float) -> Output: ...
        def _fresh(self, now: float) -> None: ...

    def _dispute(self, err: Equivocation, now: float) -> Output:
        """Sign, at the equivocated index behind our log, the void that deals again without
        its author, where that is safe: we have not built on the entry our log holds there
        (so it can never become settled: every party's entry after it is needed), neither
        with an entry nor with a vote at a later point (should that round complete, every
        log that takes it counts the entry as built on by us), or a party that has not built
        on it either signed that void already (4.6)."""
        index, author = err.index, err.author
        assert index is not None and author is not None
        table = self.table
        if self.party < 0 or author == self.party or index < self.settled:
            return Output()
        motion = Motion(FAULT_ACTION, (author,))
        built = (
            table.cover[self.party] > index
            or self._made_past(index)
            or self._ledger.voted_past(self.party, index)
        )
        if built and not self._ledger.disputed(index, motion):
            return Output()
        if index in self._ledger.mine:
            return Output()  # we signed there already (its retries are `_held_dispute`'s)
        saved = self._ledger.saved_dispute(index, author)
        if saved is not None:  # ours, saved before a restart: we stand by it
            self._ledger.stand_by(index, saved)
            return self._adopt(now)
        attempt = self._ledger.dispute_try(index)
        if attempt:
            motion = Motion(bodies.END_ACTION, (author,), (), attempt)
            if not table.rewound(index, seated=False).can_void(motion.silent, attempt):
                return Output()  # no such round could close there
        return self._dispute_vote(index, motion, now)

    def _dispute_vote(self, point: int, motion: Motion, now: float) -> Output:
        """Sign our void of `motion` at the dispute at `point` (saved before it is sent)."""
        mine = self._ledger.dispute_vote(point, motion, self.party, self.identity)
        if mine is None:
            return Output()
        self._ledger.since[point] = now
        self._own.add(mine.hash)
        self._inbox.seen.add(mine.hash)
        self.votes.append(mine.wire)
        out = Output(send=[mine.wire], votes=list(self.votes))
        out.extend(self._adopt(now))
        return out

    def _held_dispute(self, now: float, linked: Collection[int], limit: float) -> Output:
        """The void we signed at an equivocated index behind our log has waited twice the timeout,
        and its round is not complete (4.6, "The one way back"): if a complete round of a lower try
        stands there, we go there (the others did); else we sign the next try, "end", naming too the
        parties that have not signed ours (those away: `Presence.absent`, which counts no claims
        here), as R2 does at the end of the log. Without it, one party that never signs would keep
        that round, and with it the parties that built nothing past its point, waiting for good."""
        ledger, table = self._ledger, self.table
        points = ledger.open_disputes()
        if not points or self.party < 0 or table.closed:
            return Output()
        point = points[0]
        since = ledger.since.setdefault(point, now)
        if now - since < RETRY_TIMEOUTS * limit:
            return Output()
        if point not in ledger.lower_ok and any(
            q == point and ledger.below_our_try(q, r) for q, r in ledger.rounds_behind()
        ):
            ledger.lower_ok.add(point)
            adopted = self._adopt(now)
            if adopted.rollback is not None:
                return adopted
        held = ledger.dispute_holders(point)
        assert held is not None
        motion, holders, complete = held
        keys = [k.raw for k in table.keys]
        away = self._presence.absent(holders, keys, linked, now, since, limit, claims=False)
        if (holders and not away) or complete:
            return Output()  # they may yet sign; or the round is whole (applied, or never)
        nxt = motion.retry(away)
        ledger.since[point] = now  # whatever follows, the next look is a wait away
        if self.party in nxt.silent or not table.rewound(point, seated=False).can_void(
            nxt.silent, nxt.attempt
        ):
            return Output()  # no round could close there without them (no majority): we wait
        return self._dispute_vote(point, nxt, now)

    def _made_past(self, index: int) -> bool:
        """Whether we made an entry (not yet in our log) for a step after `index`'s."""
        table = self.table
        return index < table.step_start and table.index_of(self.party) in self._produced

    def _adopt(self, now: float) -> Output:
        """If we hold a complete void round behind our log, signed by a majority, not before
        our settled point, that applies on our log cut back to its point: cut back there and
        apply it (the lowest such point, there the highest try). None held: nothing."""
        table = self.table
        for point, round_, tried in self._behind():
            try:  # tried on a verifier's copy first: nothing of ours is drawn or changed
                trial = table.rewound(point, seated=False)
                for e in round_:
                    trial.apply(e, signed=trial.key_at(e.author, e.index))
            except (LogError, ValueError):
                self._untaken.add(tried)
                continue
            return self._roll_back(point, round_, now)
        return Output()

    def _behind(self) -> list[tuple[int, list[Entry], tuple[int, bytes, tuple[bytes, ...]]]]:
        """The complete rounds behind our log `_adopt` may take now, each with what marks it
        tried: none while a round is under way at the end of our log (it is finished first)
        or while our vote there stands (R3: the parties that signed with us may close there);
        and not one that did not apply where it stands, which never will while our log up to
        its point is the same (it is tried once, not at every entry we apply)."""
        table = self.table
        if table.voiding is not None:
            return []
        standing = self._voter.standing()
        out = []
        ledger = self._ledger
        for point, round_ in ledger.rounds_behind():
            if point not in ledger.lower_ok and ledger.below_our_try(point, round_):
                continue  # our later try there stands until it has waited (`_held_dispute`)
            if standing and not ledger.signed(point, round_):
                continue  # R3; but a round of a dispute we signed comes before our vote
            tried = (point, table.log[point - 1].hash, tuple(e.hash for e in round_))
            if tried not in self._untaken:
                out.append((point, round_, tried))
        return out

    def _roll_back(self, point: int, round_: list[Entry], now: float) -> Output:
        """Cut our log back to `point` and apply `round_` there, and rebuild every piece of
        state derived from the log as a restarted peer would: what it holds and heard, its
        agreement, who is overdue, its saved voids (those past the point are moot). The round
        is applied to our own table once it stands at `point`, so whatever the next hand
        draws is drawn for this log (`Table.draw_key`)."""
        out = Output(rollback=point)
        ledger = self._ledger
        # what we heard for later stays heard: screened again against the log cut back
        heard = [e.wire for slot in self._inbox.held.values() for es in slot.values()
                 for e in es if e.hash not in self._own]  # fmt: skip
        heard += [e.wire for slot in self._voter.ballots.held.values() for e in slot.values()]
        self.table.become(self.table.rewound(point))
        events: list[Any] = []
        for e in round_:
            events += self.table.apply(e, signed=self.table.key_at(e.author, e.index))
        if self.table.me is not None:
            self.party = self.table.me
        elif self.table.heir is not None:
            self.party = -1
        self._fresh(now)
        self._ledger.carry(ledger, point)
        self.votes = [w for w in self.votes if (self._ledger.point_of_wire(w) or 0) <= point]
        out.votes = list(self.votes)
        out.persist += self.table.log[point:]
        for e in self.table.log[point:]:
            self._inbox.seen.add(e.hash)
        out.events += events
        for wire in heard:
            got = self.receive(wire, now, defer=True)
            out.events += [e for e in got.events if not isinstance(e, Refused)]
            out.send += got.send
        out.extend(self._produce(now))
        out.extend(self.run(now))
        return out
