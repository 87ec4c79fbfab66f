"""A seat at the table, sans-IO: entries in, entries to send, entries to persist, events out.

`Peer` wraps a `Table` (the one implementation of the checks) with this party's identity and
random source. The host (a network loop, an in-memory router, a benchmark) passes every
received entry to `receive` with the current clock reading, sends what `Output.send` lists to
every other party, writes `Output.persist` to disk before acting on it, and shows
`Output.events`. It answers `YourTurn` with `play(move)`, and calls `tick(now)` now and then so
the peer can report a party that keeps the table waiting (`TimedOut`); the present parties may
then `propose_void`, or `join_void` a proposal another present party made (`VoidProposed`).
Void entries are held apart and applied only as a whole round, at one point every present
party has reached: the peer's `Voter` (`buraco_p2p.session.voter`) holds them and decides
when the peer stops and what it signs.

A void round we signed that waits past twice the timeout for parties that do not sign it is
signed again with the next try, naming them too (`tick`; docs/protocol.md 4.5, "Retries"),
where the majority rule allows; and a peer that went on alone after a split it lost rolls back
to the complete round the others closed naming it (`_lost_split`), so that there is one log.

Entries of a round arrive in any order; the peer screens each as it arrives and holds it
until its index comes (its `Inbox`, `buraco_p2p.session.inbox`). Our own entries pass
through the same `Table.apply` as everybody else's (only their signature and proofs are not
checked again). Equivocation: two different entries signed by one author for
one index of one log (the same `p`), both under its key in force there, are a `Fault` whose
evidence is both entries (nothing else is: `buraco_p2p.session.evidence`); a host that relays
`Output.relay` (entries first heard from others, and both entries of an equivocation) to the
rest of the table makes a peer that sends different entries to different parties meet its
own two signatures at every honest peer. The table then stops at the equivocated index
(`Table.stop_at`): a peer whose log went past it rolls back to it (`Output.rollback` tells
the host to cut its saved log), so that every honest peer signs the void round naming the
equivocator at one point, whichever of the two entries it had applied. A signed entry the
table refused is kept (`Inbox.keep_refused`) until the log passes its index: it still meets
any other entry its author signs there.

Expensive work is split so a host can send sooner: `receive` only checks an entry's form and
signature and files it; applying queued entries (proof checks, engine moves) happens in
`work`, one entry per call, and a peer whose turn it is to shuffle sends its shuffle before it
verifies the shuffle it builds on (shuffling reveals nothing; the verification still gates
everything that follows). `busy` says whether `work` has something to do; `receive`, `play`
and `start` also run that work to completion unless told `defer=True`.

A match with a time limit (rule `minutes`): the peer's clock is the `now` its host passes,
counted from the call in which it saw the seats drawn (`clock_start`); after each hand it
reports that clock in the round of clocks (`clock_ms`), and the round decides, alike at
every replica, whether the time is up. `minute` (default 60.0) is how many units of `now`
make a minute, so a test can run a timed match on a fast clock.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from buraco_p2p.crypto.group import RandomSource
from buraco_p2p.engine import IllegalMove, IllegalMoveCode, Move
from buraco_p2p.net.channel.identity import Identity, PeerKey
from buraco_p2p.session import bodies
from buraco_p2p.session.agreement import Motion
from buraco_p2p.session.entry import Entry, make_entry, step_head
from buraco_p2p.session.errors import (
    BadSignature,
    BrokenChain,
    Equivocation,
    LogError,
    OutOfTurn,
    WrongTable,
)
from buraco_p2p.session.events import Fault, Refused, SeatsDrawn, TimedOut, VoidHeld
from buraco_p2p.session.evidence import proves_equivocation
from buraco_p2p.session.inbox import MAX_AHEAD, Inbox
from buraco_p2p.session.output import Output
from buraco_p2p.session.presence import Presence
from buraco_p2p.session.produce import produce_shuffle_on, produce_time, shuffle_after
from buraco_p2p.session.states import Phase
from buraco_p2p.session.table import Table
from buraco_p2p.session.terms import parse_genesis
from buraco_p2p.session.voter import Voter

__all__ = ["MAX_AHEAD", "Output", "Peer"]

# Refusals that prove nothing against the entry's author (noise anyone could send, or an
# entry that does not continue this log): the table goes on.
QUIET = (BadSignature, BrokenChain, WrongTable, OutOfTurn)

# A void round we signed waits this many timeouts for a party before we name it in a retry
# (4.5): a present party that reached our point later than we did signs within one timeout
# of reaching it (its own clock must first see the silent parties keep that step waiting).
RETRY_TIMEOUTS = 2

_MAX_RUN = 100_000  # each `work` applies one entry; a bound, never reached in practice
_MAX_BEHIND = 64  # voids held for a round behind our log (a lost split), at most


class Peer:
    """One party's session of one match."""

    def __init__(
        self,
        genesis: Entry,
        identity: Identity,
        rng: RandomSource,
        now: float = 0.0,
        *,
        heir: bool = False,
        minute: float = 60.0,
    ) -> None:
        """`heir`: `identity` is not in the genesis but is to take a seat over by a "replace"
        agreement; the peer follows the log (`party` is -1) until that agreement is applied,
        then plays the seat from the hand it starts. `minute`: the units of `now` in a minute
        of a timed match's clock."""
        if not minute > 0:
            raise ValueError(f"a minute must last a positive time, not {minute}")
        keys = [k.raw for k in _terms_keys(genesis)]
        mine = identity.public.raw
        self.identity = identity
        if heir:
            if mine in keys:
                raise ValueError("an heir's identity must be new to the table")
            self.party = -1
            self.table = Table(genesis, heir=(mine, rng))
        else:
            if mine not in keys:
                raise ValueError("this identity is not a party of the genesis")
            self.party = keys.index(mine)
            self.table = Table(genesis, me=self.party, rng=rng)
        # Void entries are held apart from the others (a void may take the index of an entry
        # its author made for the step it closes).
        self._voter = Voter(self.table, identity)
        self._inbox = Inbox(self.table, self._voter)
        self._own: set[bytes] = set()
        self._produced: set[int] = set()
        self._since = now
        self._timed_out = False
        self._overdue: frozenset[int] = frozenset()  # named past the timeout at this step
        self._presence = Presence()
        self._last_signed: dict[bytes, int] = {}  # identity key -> its latest index in our log
        # the void round we signed at the end of our log: since when it waits (our clock),
        # and whether we reported its holders already (once per try)
        self._round_since = now
        self._round_told = False
        # voids of a round that names us at a point our log has passed (we were on the
        # losing side of a split), by (index, author, try): see `_lost_split`
        self._behind: dict[tuple[int, int, int], Entry] = {}
        self._speculated: int | None = None
        # A match with a time limit: our clock from the moment we saw the seats drawn, in
        # the host's `now` units; `minute` is how many of them make a minute of the rule.
        self.minute = minute
        self.clock_start: float | None = None

    # ------------------------------------------------------------------ host API

    @property
    def log(self) -> list[Entry]:
        return self.table.log

    @property
    def busy(self) -> bool:
        """Whether `work` has an entry it can apply now (or our void to sign)."""
        if self.table.closed:
            return False
        return self._voter.due(self._overdue) or self._next() is not None

    @property
    def overdue(self) -> frozenset[int]:
        """The parties our clock has seen keep the current step waiting past the table's
        timeout (reported by `tick`): the only ones, but the author of a fault, that we
        name silent or join a void naming."""
        return self._overdue

    @property
    def stopped(self) -> bool:
        """Whether we have agreed to a void and stand at its point: we make no entry."""
        return self._voter.stopped() or self._voter.due(self._overdue)

    @property
    def agreement(self) -> Motion | None:
        """The void agreement we signed or are about to sign."""
        return self._voter.agreement

    @property
    def proposal(self) -> tuple[Motion, int] | None:
        """A present party's void proposal we hold and could join: (its motion, its author)."""
        return self._voter.proposal

    def start(self, now: float, *, defer: bool = False) -> Output:
        """Our first entries (the seat draw's commitment)."""
        out = self._produce(now)
        if not defer:
            out.extend(self.run(now))
        return out

    def receive(self, data: bytes, now: float, *, defer: bool = False) -> Output:
        """File one entry received from the table (any order, duplicates welcome)."""
        out = Output()
        try:
            entry = self._inbox.screen(data)
        except LogError as exc:
            out.events.append(Refused(exc))
            return out
        if entry is None:
            return out
        table = self.table
        out.relay.append(entry.wire)
        if entry.kind == bodies.VOID and entry.author != self.party:
            proposed = self._voter.hear(entry)
            if proposed is not None:
                out.events.append(proposed)
        if entry.kind == bodies.VOID:
            lost = self._lost_split(entry, now)
            if lost is not None:
                out.extend(lost)
                return out
        if entry.index < len(table.log):
            held = table.log[entry.index]
            out.extend(self._conflict(held, entry, now) or self._taken(entry))
            return out
        if entry.kind == bodies.VOID:
            other = self._voter.ballots.file(entry)
            if other is not None:
                out.extend(self._conflict(other, entry, now) or self._taken(entry))
                return out
        else:
            for other in self._inbox.rivals(entry):
                found = self._conflict(other, entry, now)
                if found is not None:
                    out.extend(found)
                    return out
            try:
                self._inbox.file(entry)
            except LogError as exc:
                out.events.append(Refused(exc))
                return out
        if not defer:
            out.extend(self.run(now))
        return out

    def play(self, move: Move, now: float, *, defer: bool = False) -> Output:
        """Our move (answering `YourTurn`). An illegal move raises `IllegalMove` and changes
        nothing; a legal one is checked again by `Table.apply` like anybody's. Once we have
        agreed to a void (and stand at its point), or the table stopped at a fault (an
        equivocation may have rolled our log back past the turn we were asked for), we move no
        more."""
        table = self.table
        why = None
        if self.stopped:
            why = "the table is stopping: a void is agreed"
        elif table.fault is not None or table.stop is not None or table.me is None:
            why = "the table stopped at a fault: only a void round can follow"
        elif not self.seated:
            why = "our seat passed to another identity"
        if why is not None:
            raise IllegalMove(IllegalMoveCode.WRONG_PLAYER, why, table.my_seat)
        index, body = self.table.move_body(move)
        entry = self._sign(index, bodies.MOVE, body)
        out = Output(send=[entry.wire])
        out.extend(self._apply(entry, now))
        if not defer:
            out.extend(self.run(now))
        return out

    def work(self, now: float) -> Output:
        """Apply the next entry whose turn has come (at most one), then make what we owe."""
        out = Output()
        if self._voter.due(self._overdue):
            return self._vote(now)
        entry = self._next()
        if entry is None:
            return out
        table = self.table
        if entry.kind != bodies.VOID:
            for other in self._inbox.rivals(entry):  # two held for a step that has begun
                found = self._conflict(other, entry, now)
                if found is not None:
                    return found
        if (
            self._voter.agreement is None
            and table.phase is Phase.SHUFFLE
            and entry.kind == bodies.SHUFFLE
            and self._speculated is None
            and self._stands(entry)
        ):
            spec = self._speculate(entry)
            if spec is not None:
                return spec
        out.extend(self._apply(entry, now))
        return out

    def run(self, now: float) -> Output:
        """`work` until there is nothing left to apply (bounded by the entries on hand)."""
        out = Output()
        for _ in range(_MAX_RUN):
            if not self.busy:
                break
            out.extend(self.work(now))
        return out

    def tick(self, now: float, linked: Collection[int] = ()) -> Output:
        """Report, once per step, the parties that have kept the table waiting too long.

        `linked`: the parties whose link is up. One of them whose claims of the log it holds
        (`heard`) advanced within the timeout is catching up, not missing, and is not
        reported (`buraco_p2p.session.presence` bounds how long that can last)."""
        out = Output()
        table = self.table
        limit = table.terms.timeout_ms / 1000
        out.extend(self._held_round(now, linked, limit))
        if self._timed_out or now - self._since < limit or table.closed:
            return out
        keys = [k.raw for k in table.keys]
        waiting = self._presence.absent(self._missing(), keys, linked, now, self._since, limit)
        if waiting:
            self._timed_out = True
            self._overdue = frozenset(waiting)
            out.events.append(TimedOut(waiting, now - self._since))
            out.extend(self.run(now))  # a void we agreed to may be ours to sign now
        return out

    def _held_round(self, now: float, linked: Collection[int], limit: float) -> Output:
        """The void round we signed at the end of our log has waited past the timeout for
        parties that have not signed it: retry naming them too, or let a complete round of
        a lower try go, or (no majority would be left) wait and say so (`Voter.retry`)."""
        out = Output()
        holders = self._voter.holders()
        stuck = not holders and self._voter.stuck()
        if not (holders or stuck) or self._round_told:
            return out
        if now - self._round_since < RETRY_TIMEOUTS * limit:
            return out
        keys = [k.raw for k in self.table.keys]
        away = self._presence.absent(holders, keys, linked, now, self._round_since, limit)
        if holders and not away:
            return out
        self._round_told = True
        agreed = self._voter.agreement
        assert agreed is not None
        outcome = self._voter.retry(away)
        if away:
            out.events.append(TimedOut(away, now - self._round_since))
        out.events.append(VoidHeld(away, outcome, agreed.attempt))
        out.extend(self.run(now))
        return out

    def heard(self, key: PeerKey, position: int, now: float) -> bool:
        """Note that the seated identity `key` says it holds the first `position` entries of
        the log (its `sync` or `at`); whether that counts as progress of a party catching up
        (see `tick`). A key that holds no seat is ignored."""
        if key not in self.table.keys:
            return False
        signed = self._last_signed.get(key.raw, -1)
        return self._presence.heard(key.raw, position, len(self.table.log), now, signed)

    def propose_void(
        self,
        action: str,
        now: float,
        silent: tuple[int, ...] = (),
        keys: tuple[bytes, ...] = (),
    ) -> Output:
        """Agree to a void round naming the silent parties (default: every party the table
        waits for, or the author of the fault that stopped it); for "replace", `keys` names
        the new identity key of each. Our void is signed where our log stands, or further on
        if another present party signed further on (we catch up first); from now on we apply
        no entry past that point and make none of our own. Raises `ValueError` if we are among
        the silent, have agreed to something else, the table is not waiting for them, or the
        keys are not valid new identities."""
        self._voter.propose(self.party, action, silent, tuple(keys), self._missing(), self._overdue)
        return self.run(now)

    def join_void(self, now: float) -> Output:
        """Agree to the void another present party proposed (its action and silent parties;
        see `proposal`). Nothing happens if there is none or we have agreed already."""
        if not self._voter.join(self.party, self._overdue):
            return Output()
        return self.run(now)

    def restore_vote(self, data: bytes) -> Output:
        """A void we signed before a restart (saved before it was sent): stand by it again,
        so that we sign no other at its point, and send it again."""
        entry = self._inbox.screen(data)
        if entry is None or entry.kind != bodies.VOID or entry.author != self.party:
            return Output()
        self._own.add(entry.hash)
        self._voter.restore(entry)
        self._round_since = self._since
        self._round_told = False
        return Output(send=[entry.wire])

    def clock_ms(self, now: float) -> int:
        """Our match clock in milliseconds of the rule's minutes (0 before the seat draw):
        what our entry of a round of clocks reports."""
        if self.clock_start is None:
            return 0
        return int((now - self.clock_start) * 60_000 / self.minute)

    # ------------------------------------------------------------------ internals

    def _missing(self) -> tuple[int, ...]:
        """Parties the current step waits for whose entries we do not even hold."""
        table = self.table
        out = []
        for p in table.waiting_for:
            index = table.index_of(p)
            if p != self.party and not self._inbox.holds(index or -1, p):
                out.append(p)
        if table.phase is Phase.TIME and table.voiding is None:
            # Readings are made in turn (see `_produce`): the first one missing holds up the
            # parties after it, who are not to blame.
            return tuple(out[:1])
        return tuple(out)

    def _next(self) -> Entry | None:
        """The entry to apply next: the next void of a round under way; the first of a
        complete void round at the end of the log; else the entry due at the end of the log,
        unless the table stopped at a fault or we have agreed to a void and reached its
        point."""
        table = self.table
        length = len(table.log)
        if table.closed:
            return None
        void = self._voter.next_void()
        if void is not None or table.voiding is not None:
            return void
        if table.fault is not None:
            return None
        voter = self._voter
        if voter.stopped():
            came = voter.waiting_here() and not self._still_missing()
            if not (came or self._passed_by_present()):
                return None
            voter.give_up()
        return self._inbox.due(length, table.expected_author(length))

    def _still_missing(self) -> bool:
        """Whether we still lack the entries of every party our void names (before our own
        clock has seen them keep the step waiting: if one came, they were not gone)."""
        agreed = self._voter.agreement
        return agreed is not None and set(agreed.silent) <= set(self._missing())

    def _passed_by_present(self) -> bool:
        """Whether a party our void does not name made an entry on the step under way made
        whole (its `p` is the head of that step with the entries we hold for the rest of
        it): it applied that step, so it never signs a void at our point."""
        table = self.table
        agreed = self._voter.agreement
        silent = agreed.silent if agreed is not None else ()
        held = self._inbox.held
        end = table.step_start + len(table.authors)
        hashes = list(table.step_hashes)
        for index in range(table.step_start + len(hashes), end):
            author = table.expected_author(index)
            mine = held.get(index, {}).get(author, []) if author is not None else []
            chained = [e for e in mine if e.prev == table.step_prev]
            if not chained:
                return False
            hashes.append(chained[0].hash)
        head = step_head(hashes)
        return any(
            e.prev == head and author not in silent
            for index, slot in held.items() if index >= end
            for author, entries in slot.items()
            for e in entries
        )  # fmt: skip

    def _lost_split(self, entry: Entry, now: float) -> Output | None:
        """`entry` is a void for a point our log has passed. If it completes a round naming us
        at a point our log has passed, whose signers have no entry in our log past that
        point, and which applies on our log cut back there, the table split and the other
        side (a majority: the round is valid) closed that round while we went on alone: we
        roll back to its point and apply it, so that there is one log (4.5, "Why a
        majority"). None if it does not (then it is only refused, as before)."""
        table = self.table
        ballots = self._voter.ballots
        vote = ballots.vote(entry)
        if vote is None or self.party not in vote.motion.silent:
            return None
        if not 1 <= vote.point < len(table.log) or table.closed:
            return None
        point = vote.point
        if len(self._behind) >= _MAX_BEHIND:
            self._behind.clear()
        self._behind.setdefault((entry.index, entry.author, vote.motion.attempt), entry)
        active = [p for p in range(table.n) if p not in vote.motion.silent]
        round_ = []
        for k, a in enumerate(active):
            e = self._behind.get((point + k, a, vote.motion.attempt))
            if e is None or ballots.vote(e) != vote:
                return Output()  # held until the round is whole
            round_.append(e)
        if any(e.author in active for e in table.log[point:]):
            return None  # a signer went on with us past its point: no split we lost
        trial = Table(table.log[0])
        try:
            for e in table.log[1:point]:
                trial.apply(e, signed=trial.key_at(e.author, e.index))
            for e in round_:
                trial.apply(e)
        except LogError:
            return None
        out = Output(rollback=point)
        table.rollback(point)
        self._rolled_back(point, now)
        for e in round_:
            ballots.file(e)
        self._behind = {}
        out.extend(self.run(now))
        return out

    def _vote(self, now: float) -> Output:
        """Sign our void at its point (`Voter.vote`); if we gave the agreement up there, go
        on with the hand."""
        entry, declined = self._voter.vote(self.party)
        self._inbox.seen.add(entry.hash)
        self._own.add(entry.hash)
        self._round_since = now
        self._round_told = False
        out = Output(send=[entry.wire])
        if declined:
            out.extend(self._produce(now))
        return out

    def _taken(self, new: Entry) -> Output:
        return Output(events=[Refused(OutOfTurn(
            "an entry for an index already taken", index=new.index, author=new.author,
            evidence=(new.wire,),
        ))])  # fmt: skip

    def _conflict(self, held: Entry, new: Entry, now: float) -> Output | None:
        """`new` is for an index where we hold `held` (applied, held, or refused). If its
        author signed both for one index of one log, both under the key in force there, it
        equivocated: the table stops at that index (rolled back to it if our log is past
        it), and both entries go to every peer. None if that is not proven."""
        out = Output()
        table = self.table
        key = table.key_at(new.author, new.index) if 0 <= new.author < table.n else None
        if (
            key is None
            or new.index < 1
            or not self._continues(new)
            or self._inbox.heir_only(held)
            or self._inbox.heir_only(new)
            or not proves_equivocation(held, new, key)
        ):
            return None
        err = Equivocation(
            "two different entries signed for one log index",
            index=new.index, author=new.author, evidence=(held.wire, new.wire),
        )  # fmt: skip
        out.relay += [held.wire, new.wire]
        if new.kind == bodies.VOID:
            table.fault = table.fault or err
        elif table.stop_at(err):
            self._rolled_back(new.index, now)
            out.rollback = new.index
        out.events.append(Fault(err))
        return out

    def _continues(self, entry: Entry) -> bool:
        """Whether `entry` names as `p` the step head its index follows in our log: known
        for an index our log holds (the entry there) or one of the step under way; for a
        later step, not yet (two entries there are held, and judged when it begins)."""
        table = self.table
        if entry.index < len(table.log):
            return entry.prev == table.log[entry.index].prev
        if entry.kind == bodies.VOID:
            return True  # a void's point, and so its `p`, is the agreement's to judge
        if entry.index >= table.step_start + len(table.authors):
            return False
        return entry.prev == table.step_prev

    def _rolled_back(self, length: int, now: float) -> None:
        """Our log was cut back to `length` entries: forget what we made, held or signed
        for the abandoned part, so the void round there and the hand after it start clean."""
        self._produced = {i for i in self._produced if i < length}
        self._speculated = None
        self._inbox.drop_from(length)
        ballots = self._voter.ballots
        for index, slot in list(ballots.held.items()):
            for author, e in list(slot.items()):
                v = ballots.vote(e)
                if v is None or v.point > length:
                    del slot[author]
            if not slot:
                del ballots.held[index]
        if ballots.signed_at is not None and ballots.signed_at > length:
            ballots.signed_at = None
        ballots.declined = min(ballots.declined, length - 1)
        self._since = now
        self._timed_out = False
        if self.table.heir is not None:  # the round that seated us was cut: an heir again
            self.party = -1

    def _apply(self, entry: Entry, now: float) -> Output:
        out = Output()
        table = self.table
        void = entry.kind == bodies.VOID
        self._voter.take(entry)
        key = self._inbox.take(entry)
        before = table.step_start
        own = entry.hash in self._own
        try:
            events = table.apply(entry, own=own, signed=key)
        except LogError as exc:
            if not own and not isinstance(exc, BadSignature | WrongTable):
                self._inbox.keep_refused(entry, key)
            if self._speculated == entry.index + 1 and entry.author != self.party:
                self._withdraw()
            if isinstance(exc, QUIET) and table.fault is None:
                out.events.append(Refused(exc))
            else:
                out.events.append(Fault(exc))
            return out
        out.persist.append(entry)
        self._inbox.prune(len(table.log))
        out.events += events
        self._last_signed[table.keys[entry.author].raw] = entry.index
        if self.clock_start is None and any(isinstance(e, SeatsDrawn) for e in events):
            self.clock_start = now
        if table.step_start != before:
            self._since = now
            self._timed_out = False
            self._overdue = frozenset()
            self._speculated = None
        if table.voiding is None:
            self._voter.settle(closed_round=void)  # a complete round: the agreement carried out
            if void and self.party < 0 and table.me is not None:  # our seat passed to us
                self.party = table.me
            out.extend(self._produce(now))
        return out

    @property
    def seated(self) -> bool:
        """Whether our identity holds our party's seat now: an heir before its round, or a
        party whose seat a "replace" round passed to another key, signs nothing for it."""
        return self.party >= 0 and self.table.keys[self.party] == self.identity.public

    def _produce(self, now: float) -> Output:
        out = Output()
        if self._voter.stopped() or self.table.index_of(self.party) in self._produced:
            return out
        if not self.seated:
            return out
        made = self.table.produce()
        if made is None and self.table.phase is Phase.TIME:
            # A clock reading is the one entry that could not be made again the same: it is
            # made only when it goes straight into our log (saved before it is sent), so a
            # restarted peer never signs a second, different reading for its index.
            if self.table.index_of(self.party) != len(self.table.log):
                return out
            made = produce_time(self.table, self.clock_ms(now))
        if made is None:
            return out
        index, kind, body = made
        entry = self._sign(index, kind, body)
        out.send.append(entry.wire)
        if index == len(self.table.log):
            out.extend(self._apply(entry, now))
        else:
            self._inbox.keep_own(entry)
        return out

    def _sign(
        self, index: int, kind: str, body: dict[str, Any], prev: bytes | None = None
    ) -> Entry:
        """Our entry, chained to the last complete step unless `prev` says otherwise."""
        table = self.table
        entry = make_entry(
            self.identity, table=table.terms.table_id, index=index,
            prev=table.step_prev if prev is None else prev, author=self.party, kind=kind,
            body=body,
        )  # fmt: skip
        self._inbox.seen.add(entry.hash)
        self._own.add(entry.hash)
        self._produced.add(index)
        return entry

    def _stands(self, entry: Entry) -> bool:
        """Whether `entry` passes every check but its content's: in its place, in turn,
        chained to the step before, signed under the key in force. A shuffle is built ahead
        only on such an entry, so that nothing but a refusal of its content (which stops the
        table, naming its author) can leave ours on an entry that does not stand."""
        table = self.table
        return (
            table.fault is None
            and table.stop is None
            and entry.index == len(table.log)
            and table.expected_author(entry.index) == entry.author
            and entry.prev == table.step_prev
            and self._inbox.key_of(entry) == table.keys[entry.author]
        )

    def _withdraw(self) -> None:
        """The entry we built our shuffle on was refused: ours is withdrawn (never applied,
        never persisted), and we make it again on the one that stands."""
        index = self._speculated
        assert index is not None
        self._inbox.withdraw(index, self.party)
        self._produced.discard(index)
        self._speculated = None

    def _speculate(self, entry: Entry) -> Output | None:
        """If the shuffle about to be verified is the one we build on, build ours first and
        send it: verification of the previous one follows in the next `work` call."""
        index = shuffle_after(self.table, entry)
        if index is None:
            return None
        self._speculated = index
        body = produce_shuffle_on(self.table, entry, index)
        if body is None:
            return None
        own = self._sign(index, bodies.SHUFFLE, body, prev=step_head([entry.hash]))
        self._inbox.keep_own(own)
        return Output(send=[own.wire])


def _terms_keys(genesis: Entry) -> list[PeerKey]:
    return list(parse_genesis(genesis).keys)
