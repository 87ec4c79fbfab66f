"""A seat at the table, sans-IO: entries in, entries to send, entries to persist, events out.

`Peer` wraps a `Table` (the one implementation of the checks) with this party's identity and
random source. The host (a network loop, an in-memory router, a benchmark, the simulator)
passes every received entry to `receive` with the current clock reading, sends what
`Output.send` lists to every other party, writes `Output.persist` (and `Output.votes`) to disk
before acting on it, and shows `Output.events`. It answers `YourTurn` with `play(move)`, and
calls `tick(now)` now and then so the peer can report a party that keeps the table waiting
(`TimedOut`); the present parties may then `propose_void`, or `join_void` a proposal another
present party made at the same point (`VoidProposed`). Void entries are held apart and
applied only as a whole round, at one point every present party has reached: the peer's
`Voter` (`buraco_p2p.session.voter`) holds them and decides when the peer stops and what it
signs.

A received entry goes one way (`receive`): it is screened (its form, table, signature under
the key in force, how far ahead: `Inbox.screen`), then set against what we already hold for
its author and index (`Ledger.rival`): two different entries signed there for one log are
evidence of equivocation, and what that evidence does is decided in one place (`_evidence`,
docs/protocol.md 4.6) by the *settled point* (`Table.settled`): below it the log never changes
and the pair is only kept and told; at or past it the table stops there. Otherwise a void is
a vote (`Voter`), and any other entry is held until its index comes (`Inbox`), or dropped if
its index is taken.

Two parts of a peer live in modules of their own, mixed into `Peer`: whom a step waits for,
when we stop at a void's point, and the retry of our round (`Waiting`,
`buraco_p2p.session.waiting`); and the one way a log is ever cut back, with the disputes that
lead there (`WayBack`, `buraco_p2p.session.wayback`), which never touches a settled entry.

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
from buraco_p2p.session.events import (
    Fault,
    Refused,
    Rewrite,
    SeatsDrawn,
    TimedOut,
)
from buraco_p2p.session.inbox import MAX_AHEAD, Inbox
from buraco_p2p.session.ledger import Ledger
from buraco_p2p.session.output import Output
from buraco_p2p.session.presence import Presence
from buraco_p2p.session.produce import produce_shuffle_on, produce_time, shuffle_after
from buraco_p2p.session.states import Phase
from buraco_p2p.session.table import Table
from buraco_p2p.session.terms import parse_genesis
from buraco_p2p.session.voter import Voter
from buraco_p2p.session.waiting import Waiting
from buraco_p2p.session.wayback import WayBack

__all__ = ["MAX_AHEAD", "Output", "Peer"]

# Refusals that prove nothing against the entry's author (noise anyone could send, or an
# entry that does not continue this log): the table goes on.
QUIET = (BadSignature, BrokenChain, WrongTable, OutOfTurn)

_MAX_RUN = 100_000  # each `work` applies one entry; a bound, never reached in practice


class Peer(Waiting, WayBack):
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
        keys = [k.raw for k in parse_genesis(genesis).keys]
        mine = identity.public.raw
        self.identity = identity
        if heir:
            if mine in keys:
                raise ValueError("an heir's identity must be new to the table")
            self.party = -1
            table = Table(genesis, heir=(mine, rng))
        else:
            if mine not in keys:
                raise ValueError("this identity is not a party of the genesis")
            self.party = keys.index(mine)
            table = Table(genesis, me=self.party, rng=rng)
        self.table = table
        # Kept across a roll-back: the evidence of equivocation we found (pairs of signed
        # entries, by author and index), the void entries we signed and stand by (saved
        # before they are sent: `Output.votes`), what we signed at all.
        self.evidence: dict[tuple[int, int], Equivocation] = {}
        self.votes: list[bytes] = []
        self._own: set[bytes] = set()
        # A match with a time limit: our clock from the moment we saw the seats drawn, in
        # the host's `now` units; `minute` is how many of them make a minute of the rule.
        self.minute = minute
        self.clock_start: float | None = None
        self._fresh(now)

    def _fresh(self, now: float) -> None:
        """Everything this peer derives from its log and what it heard, as a peer that has
        just replayed its log holds it: at the start, and after a roll-back."""
        table = self.table
        self._voter = Voter(table, self.identity)
        self._inbox = Inbox(table, self._voter)
        self._ledger = Ledger(table, self._inbox, self._voter)
        self._produced: set[int] = set()
        self._since = now
        self._timed_out = False
        self._overdue: frozenset[int] = frozenset()  # named past the timeout at this step
        self._late: frozenset[int] = frozenset()  # ... whatever their claims (`late`)
        self._presence = Presence()
        self._last_signed: dict[bytes, int] = {}  # identity key -> its latest index in our log
        for e in table.log[1:]:
            self._last_signed[table.keys_at(e.index)[e.author].raw] = e.index
        # the void round we signed at the end of our log: since when it waits (our clock),
        # and whether we reported its holders already (once per try and set of holders)
        self._round_since = now
        self._round_told = False
        self._told_of = ()
        self._back_since = None
        self._speculated: int | None = None
        # rounds behind our log that did not apply there: (point, head, entries' hashes)
        self._untaken: set[tuple[int, bytes, tuple[bytes, ...]]] = set()

    # ------------------------------------------------------------------ host API

    @property
    def log(self) -> list[Entry]:
        return self.table.log

    @property
    def final(self) -> int:
        """How many entries of our log are final: every honest peer holds them, for good
        (4.6)."""
        return self._ledger.final

    @property
    def settled(self) -> int:
        """How far our log is settled: we never cut it back below this point (4.6)."""
        return self._ledger.settled

    @property
    def busy(self) -> bool:
        """Whether `work` has an entry it can apply now (or our void to sign, voids to
        decline, or a round behind our log to take)."""
        if self.table.closed:
            return False
        return (
            self._vote_due()
            or bool(self._to_decline())
            or self._next() is not None
            or bool(self._ledger.behind_log() and self._behind())
        )

    @property
    def sync_point(self) -> int:
        """How many entries we ask the others' logs from (`sync`, 2.10): our log's length,
        but no further than an equivocated index behind it where we signed a void: the
        others may have settled it while we were down, and we need that round whole. After
        a restart, no further than any void we saved behind our log either: which of them
        were a dispute's, the evidence says only when it comes again."""
        return min([len(self.table.log), *self._ledger.open_disputes(),
                    *self._ledger.restored_behind()])  # fmt: skip

    @property
    def overdue(self) -> frozenset[int]:
        """The parties our clock has seen keep the current step waiting past the table's
        timeout, but those catching up (reported by `tick`): whom the client's policy
        proposes to name (`buraco_p2p.session.policy`)."""
        return self._overdue

    @property
    def late(self) -> frozenset[int]:
        """The parties our clock has seen keep the current step waiting past the table's
        timeout, whatever their claims of catching up (but not while a retry of theirs
        stands behind our log, 4.5 R3): the only ones, but the author of a fault, that we
        name silent or join a void naming (docs/protocol.md 4.5). A claim can reach some
        peers and not others, so it decides only who proposes: a peer that would not join
        where the others do would be named by their retry (R2). A standing retry is a
        signed vote every peer holds alike."""
        return self._late

    @property
    def on_turn(self) -> bool:
        """Whether the table waits for our move now (not for a round, a void or a fault)."""
        t = self.table
        return (
            t.phase is Phase.TURN
            and t.voiding is None
            and not self.stopped
            and t.fault is None
            and t.waiting_for[:1] == (self.party,)
            and not self.disputing
        )

    @property
    def disputing(self) -> bool:
        """Whether we make no entry of our own, by any path (a move, an entry owed, a shuffle
        built ahead): we signed the void of a dispute behind our log having built nothing on
        the entry there (4.6 rule 3 (a)), and until its round is applied we build nothing on
        it, or another party that holds our void could no longer follow it by (b), and we
        and the others could close two logs."""
        return self._ledger.disputing(self.party)

    @property
    def waiting(self) -> tuple[int, ...]:
        """The parties the current step waits for whose entries we do not even hold (at a
        fault, only its author)."""
        return self._missing()

    @property
    def stopped(self) -> bool:
        """Whether we have agreed to a void and stand at its point: we make no entry."""
        return self._voter.stopped() or self._voter.due(self._late)

    @property
    def agreement(self) -> Motion | None:
        """The void agreement we signed or are about to sign."""
        return self._voter.agreement

    @property
    def proposal(self) -> tuple[Motion, int] | None:
        """A present party's void proposal at our point that we could join: (its motion,
        its author)."""
        return self._voter.proposal

    def start(self, now: float, *, defer: bool = False) -> Output:
        """Our first entries (the seat draw's commitment)."""
        out = self._produce(now)
        if not defer:
            out.extend(self.run(now))
        return out

    def receive(self, data: bytes, now: float, *, defer: bool = False) -> Output:
        """File one entry received from the table (any order, duplicates welcome): screen
        it, set it against what we hold for its author and index, then keep it as evidence,
        count it as a vote, hold it until its index comes, or drop it."""
        out = Output()
        try:
            entry = self._inbox.screen(data)
        except LogError as exc:
            out.events.append(Refused(exc))
            return out
        if entry is None:
            return out
        # relayed to the others once it is kept here (as evidence, a vote, an entry held):
        # one that is only refused goes no further
        rival = self._ledger.rival(entry)
        if rival is not None:
            out.relay.append(entry.wire)
            out.extend(self._evidence(rival, entry, now))
        elif entry.kind == bodies.VOID:
            out.relay.append(entry.wire)
            out.extend(self._ballot(entry, now))
        elif entry.index < len(self.table.log):
            out.events.append(Refused(OutOfTurn(
                "an entry for an index already taken", index=entry.index,
                author=entry.author, evidence=(entry.wire,),
            )))  # fmt: skip
            return out
        else:
            try:
                self._inbox.file(entry)
            except LogError as exc:
                out.events.append(Refused(exc))
                return out
            out.relay.append(entry.wire)
        if not defer:
            out.extend(self.run(now))
        return out

    def play(self, move: Move, now: float, *, defer: bool = False) -> Output:
        """Our move (answering `YourTurn`). An illegal move raises `IllegalMove` and changes
        nothing; a legal one is checked again by `Table.apply` like anybody's. Once we have
        agreed to a void (and stand at its point), signed one at a dispute behind our log
        (`disputing`), or the table stopped at a fault, we move no more."""
        table = self.table
        why = None
        if self.stopped:
            why = "the table is stopping: a void is agreed"
        elif self.disputing:
            why = "we wait for the round at an equivocated index behind our log"
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
        """Apply the next entry whose turn has come (at most one), then make what we owe;
        or sign our void; or, with nothing to apply, decline the voids we never sign (the
        signers wait for that answer)."""
        if self._vote_due():
            return self._vote(now)
        if self._ledger.behind_log():
            adopted = self._adopt(now)  # the log grew past a round we hold: take it
            if adopted.rollback is not None:
                return adopted
        entry = self._next(now)
        if entry is None:  # nothing to apply: decline what we never sign (once an entry
            return self._answer()  # it came for is checked and applied, not before)
        table = self.table
        if entry.kind != bodies.VOID:
            # two held for a step that has begun: the table stops there if the step waits
            # for their author; if not, they are evidence only, and the table refuses them
            for other in self._inbox.rivals(entry):
                if self._ledger.proof(other, entry) is not None:
                    out = self._evidence(other, entry, now)
                    if table.fault is None:
                        out.extend(self._apply(entry, now))
                    return out
        if (
            self._voter.agreement is None
            and table.phase is Phase.SHUFFLE
            and entry.kind == bodies.SHUFFLE
            and self._speculated is None
            and not self.disputing
            and self._stands(entry)
        ):
            spec = self._speculate(entry)
            if spec is not None:
                return spec
        return self._apply(entry, now)

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
        reported; so is one whose retry stands behind our log (`Ledger.standing_retry`)
        (`buraco_p2p.session.presence` bounds how long either can last)."""
        out = Output()
        table = self.table
        limit = table.terms.timeout_ms / 1000
        if self._ledger.behind_log():
            for p in table.waiting_for:
                point = self._ledger.standing_retry(p)
                if point is not None:  # it stands by its retry behind us (R3), then comes
                    self._presence.stands(table.keys[p].raw, point, now)
        out.extend(self._held_round(now, linked, limit))
        out.extend(self._held_back(now, limit))
        out.extend(self._held_dispute(now, linked, limit))
        if now - self._since < limit or table.closed:
            return out
        keys = [k.raw for k in table.keys]
        late = self._late | frozenset(
            p for p in self._missing() if not self._presence.standing(keys[p], now, limit)
        )
        if late != self._late:
            self._late = late
            out.extend(self.run(now))  # a void we agreed to may be ours to sign now
        if self._timed_out:
            return out
        waiting = self._presence.absent(self._missing(), keys, linked, now, self._since, limit)
        if waiting:
            self._timed_out = True
            self._overdue = frozenset(waiting)
            out.events.append(TimedOut(waiting, now - self._since))
            out.extend(self.run(now))  # a void we agreed to may be ours to sign now
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
        if self._held_by_dispute():
            raise ValueError("we wait for the round at an equivocated index behind our log")
        self._voter.propose(self.party, action, silent, tuple(keys), self._missing(), self._late)
        return self.run(now)

    def join_void(self, now: float) -> Output:
        """Agree to the void another present party proposed at our point (its action and
        silent parties; see `proposal`). Nothing happens if there is none or we have agreed
        already."""
        if self._held_by_dispute() or not self._voter.join(self.party, self._late):
            return Output()
        return self.run(now)

    def restore_vote(self, data: bytes) -> Output:
        """A void we signed before a restart (saved before it was sent): stand by it again,
        so that we sign no other at its point, and send it again."""
        entry = self._inbox.screen(data)
        if entry is None or entry.kind != bodies.VOID or entry.author != self.party:
            return Output()
        self._own.add(entry.hash)
        if entry.wire not in self.votes:
            self.votes.append(entry.wire)
        self._ledger.own[entry.hash] = entry
        self._ledger.restored.add(entry.hash)
        # One behind our log may be the vote of a dispute, or one we gave up at the end of
        # our log and went past (4.5 rule 3): which, the evidence says when it comes again
        # on `sync` (`_dispute` stands by it then, if rule 3 still has us sign there).
        self._voter.restore(entry)
        self._round_since = self._since
        self._round_told = False
        return Output(send=[entry.wire])

    def standing(self) -> list[bytes]:
        """What a party that asks for `sync` is sent after the log (2.10): the void entries
        we stand by and the evidence of every equivocation not below our settled point. A
        party that restarted, or lost them on the way, needs them to reach the round the
        table is to meet at (a dispute behind its log, a round at its point), and no entry
        of the log brings them again."""
        settled = self.settled
        out = [w for w in self.votes if (self._ledger.point_of_wire(w) or -1) >= settled]
        for (_, index), err in self.evidence.items():
            if index >= settled:
                out += [w for w in err.evidence if w not in out]
        return out

    def clock_ms(self, now: float) -> int:
        """Our match clock in milliseconds of the rule's minutes (0 before the seat draw):
        what our entry of a round of clocks reports."""
        if self.clock_start is None:
            return 0
        return int((now - self.clock_start) * 60_000 / self.minute)

    @property
    def seated(self) -> bool:
        """Whether our identity holds our party's seat now: an heir before its round, or a
        party whose seat a "replace" round passed to another key, signs nothing for it."""
        return self.party >= 0 and self.table.keys[self.party] == self.identity.public

    # ------------------------------------------------------------------ what a received entry does

    def _evidence(self, held: Entry, new: Entry, now: float) -> Output:
        """`held` and `new` are one author's two signatures for one index of one log (4.6).
        Below the settled point that changes nothing but what we keep and tell (`Rewrite`):
        every party built on the entry our log holds there, and we never cut it. At the end
        of our log or ahead of it, the table stops there for the void round that names the
        author. Behind the end of our log but not settled, the honest peers may hold
        different entries there: each signs the void there that deals again without the
        author, if it has not built on the entry it holds (nothing of ours after it), or
        once another party has signed that void; when that round is complete, it is where
        every honest peer goes (`_adopt`)."""
        out = Output()
        table = self.table
        err = Equivocation(
            "two different entries signed for one log index",
            index=new.index, author=new.author, evidence=(held.wire, new.wire),
        )  # fmt: skip
        out.relay += [held.wire, new.wire]
        slot = (new.author, new.index)
        first = slot not in self.evidence
        self.evidence.setdefault(slot, err)
        index = new.index
        if new.kind == bodies.VOID:
            # Two votes of one try: both are held, and a round either completes is applied;
            # otherwise the retry names the author (4.5, R6). The log itself is not at fault:
            # the table goes on (a party it waited for may yet come back).
            point = self._ledger.point(new)
            if point is not None and point >= self.settled:
                self._ledger.keep(new)
                if point >= len(table.log):
                    self._voter.ballots.file(new)
            if first:
                out.events.append(Fault(err))
            return out
        if index < self.settled:
            if first:
                out.events.append(Rewrite(err))
            return out
        if first:
            out.events.append(Fault(err))
        if index >= len(table.log):
            table.stop_at(err)
            out.extend(self._fault_vote(now))
            return out
        out.extend(self._dispute(err, now))
        return out

    def _ballot(self, entry: Entry, now: float) -> Output:
        """A void entry: a vote for the round at its point. Ahead of our log or at its end
        the voter holds it (a proposal at our point, the target of an agreement). Behind our
        log it may complete a round the table went to while we were on another branch, or
        be the void a party signed at an equivocation we hold evidence of."""
        out = Output()
        voter = self._voter
        proposed = voter.hear(entry) if entry.author != self.party else None
        if proposed is not None:
            out.events.append(proposed)
        point = self._ledger.point(entry)
        if point is None or point < self.settled:
            return out
        # every vote not behind our settled point is kept: a round we hold at our point now
        # may be one we find behind our log later, after we went on
        self._ledger.keep(entry)
        if point < len(self.table.log):
            for err in self._ledger.evidence_at(point, self.evidence):
                out.extend(self._dispute(err, now))
            out.extend(self._adopt(now))
            return out
        voter.ballots.file(entry)
        return out

    # ------------------------------------------------------------------ internals

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
                # a void round refused at our point stood before our own entry there: that
                # entry is ours to make now, or no entry ever comes to make it
                out.extend(self._produce(now))
            else:
                out.events.append(Fault(exc))
                out.extend(self._fault_vote(now))
            return out
        out.persist.append(entry)
        self._inbox.prune(len(table.log))
        self._ledger.prune()
        if self.votes and table.step_start != before:
            kept = [w for w in self.votes
                    if (self._ledger.point_of_wire(w) or 0) >= self.settled]  # fmt: skip
            if len(kept) != len(self.votes):  # voids behind the settled point are moot for good
                self.votes = kept
                out.votes = list(kept)
        out.events += events
        self._last_signed[table.keys[entry.author].raw] = entry.index
        if self.clock_start is None and any(isinstance(e, SeatsDrawn) for e in events):
            self.clock_start = now
        if table.step_start != before:
            self._since = now
            self._timed_out = False
            self._overdue = self._late = frozenset()
            self._speculated = None
        if table.fault is not None and table.fault.index == len(table.log):
            out.extend(self._fault_vote(now))  # a stop ahead of us reached: only a void follows
        if table.voiding is None:
            self._voter.settle(closed_round=void)  # a complete round: the agreement carried out
            if void and self.party < 0 and table.me is not None:  # our seat passed to us
                self.party = table.me
            out.extend(self._produce(now))
        return out

    def _produce(self, now: float) -> Output:
        out = Output()
        if self._voter.stopped() or self.table.index_of(self.party) in self._produced:
            return out
        if self._voter.next_void() is not None:
            return out  # a complete void round stands at our point: it comes first
        if not self.seated or self.disputing:
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
        send it: verification of the previous one follows in the next `work` call. Its
        randomness is drawn for that entry (`Table.building_on`), so a shuffle made again on
        another never reuses it."""
        index = shuffle_after(self.table, entry)
        if index is None:
            return None
        self._speculated = index
        self.table.building_on = entry.hash
        try:
            body = produce_shuffle_on(self.table, entry, index)
        finally:
            self.table.building_on = b""
        if body is None:
            return None
        own = self._sign(index, bodies.SHUFFLE, body, prev=step_head([entry.hash]))
        self._inbox.keep_own(own)
        return Output(send=[own.wire])
