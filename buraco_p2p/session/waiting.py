"""Waiting: whom a step waits for, when we stop at a void's point or follow the log again,
and what we do when our round at the end of the log waits too long.

A part of `buraco_p2p.session.peer.Peer`, kept apart because it is where time passing and
the void agreement decide what a peer does next (docs/protocol.md 4.5): the parties a step
lacks (`_missing`), the entry that comes next (`_next`: a void round, or the log, unless we
stand at our agreement's point), giving an agreement up once a party it names came after
all, the retry of a round that waited twice the timeout (`_held_round`, R2 and R3), and the
void that deals again without the author of a fault (`_fault_vote`).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

from buraco_p2p.session import bodies
from buraco_p2p.session.agreement import FAULT_ACTION, RETRY_TIMEOUTS
from buraco_p2p.session.entry import Entry, step_head
from buraco_p2p.session.errors import Equivocation
from buraco_p2p.session.events import TimedOut, VoidHeld
from buraco_p2p.session.inbox import Inbox
from buraco_p2p.session.ledger import Ledger
from buraco_p2p.session.output import Output
from buraco_p2p.session.presence import Presence
from buraco_p2p.session.states import Phase
from buraco_p2p.session.table import Table
from buraco_p2p.session.voter import Voter

__all__ = ["Waiting"]


class Waiting:
    """The waits and stops of one party's session (mixed into `Peer`)."""

    table: Table
    party: int
    evidence: dict[tuple[int, int], Equivocation]
    votes: list[bytes]
    _own: set[bytes]
    _inbox: Inbox
    _voter: Voter
    _ledger: Ledger
    _presence: Presence
    _since: float  # when the step under way began (our clock)
    _timed_out: bool  # whether we reported its missing parties already
    _overdue: frozenset[int]  # named past the timeout at this step
    _late: frozenset[int]  # ... whatever their claims
    # the void round we signed at the end of our log: since when it waits (our clock), and
    # whether we reported its holders already (once per try)
    _round_since: float
    _round_told: bool
    _told_of: tuple[int, ...]  # the holders we last reported (and retried or held for)
    _back_since: tuple[int, float] | None  # (point, our clock): a round held back since

    if TYPE_CHECKING:  # the peer's own, which these use

        def run(self, now: float) -> Output: ...
        @property
        def settled(self) -> int: ...
        @property
        def seated(self) -> bool: ...
        def _adopt(self, now: float) -> Output: ...

    def _vote_due(self) -> bool:
        """Whether our void at the end of our log is ours to sign now."""
        return self._voter.due(self._late) and not self._held_by_dispute()

    def _held_by_dispute(self) -> bool:
        """Whether we sign no void at the end of our log, for a dispute behind it: we wait
        for its round having built nothing past its point (a void would build on the entry
        there), or we signed a retry there (two rounds of ours at two points could close
        two logs; 4.6 rule 3)."""
        return self._ledger.disputing(self.party) or self._ledger.retrying()

    def _missing(self) -> tuple[int, ...]:
        """Parties the current step waits for whose entries we do not even hold; at a fault,
        only its author (the others are waiting for the void, as we are)."""
        table = self.table
        fault = table.fault
        if fault is not None and fault.author is not None and fault.author != self.party:
            return (fault.author,)
        out = []
        for p in table.waiting_for:
            index = table.index_of(p)
            if p == self.party or self._inbox.holds(index or -1, p):
                continue
            if not self._ledger.waits_for_dispute(p):
                out.append(p)
        if table.phase is Phase.TIME and table.voiding is None:
            # Readings are made in turn (see `_produce`): the first one missing holds up the
            # parties after it, who are not to blame.
            return tuple(out[:1])
        return tuple(out)

    def _next(self, now: float | None = None) -> Entry | None:
        """The entry to apply next: the next void of a round under way; the first of a
        complete void round at the end of the log; else the entry due at the end of the log,
        unless the table stopped at a fault or we stand at a void's point while the table
        there still waits for its silent parties."""
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
        if voter.moot():
            self._gave_up(now)
        elif voter.stopped():
            if not self._released():
                return None
            self._gave_up(now)
        return self._inbox.due(length, table.expected_author(length))

    def _gave_up(self, now: float | None) -> None:
        """No round of our agreement can close at our point: we follow the log again, and
        the step's timeout starts over for whoever it still waits for."""
        self._voter.give_up()
        if now is not None:
            self._since = now
        self._timed_out = False
        self._overdue = self._late = frozenset()

    def _released(self) -> bool:
        """Whether we stop standing at our void's point (4.5 rule 3): a present party went
        past it on the step made whole (it never signs there), or our agreement binds us no
        more and the log can go on. Signed nothing here, it binds us no more once a party it
        names came after all, or once the motion is declined here and the entry due here is
        on hand; signed here, once every try we signed is declined, and then a party it names
        came or the entry due here is on hand."""
        if self._passed_by_present():
            return True
        voter = self._voter
        length = len(self.table.log)
        due = self._inbox.due(length, self.table.expected_author(length)) is not None
        bound = voter.bound()
        if bound is None:  # we signed nothing here, but a present party may have
            return self._came() or (due and voter.declined_here())
        return not bound and (self._came() or due)

    def _came(self) -> bool:
        """Whether we hold an entry, for the step at our point, of a party our void names:
        it was not gone. Once no vote of ours there can complete a round (`Voter.bound`)
        its entries are applied; a party still missing is named again once the step has
        waited for it past the timeout."""
        agreed = self._voter.agreement
        return agreed is not None and self._came_of(agreed.silent)

    def _came_of(self, silent: tuple[int, ...]) -> bool:
        """Whether we hold an entry, for the step at our point, of one of `silent`."""
        table = self.table
        return any(
            self._inbox.holds(table.index_of(p) or -1, p)
            for p in silent if p in table.waiting_for
        )  # fmt: skip

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

    def _held_round(self, now: float, linked: Collection[int], limit: float) -> Output:
        """The void round we signed at the end of our log has waited twice the timeout for
        parties that have not signed it: retry naming them too, or let a complete round of
        a lower try go, or (no majority would be left) wait and say so (`Voter.retry`).
        Where a party it names stands by a retry behind our log, the wait for a retry
        counts from the end of that standing: a peer that noted it before its own timeout
        does not count that party late until then (4.5 R2).
        Decided again whenever the parties holding it change: some of those that held a
        retry back may sign after all, and a retry naming the rest may then be allowed
        (4.5 R4); a peer that never looked again would hold the table for good."""
        out = Output()
        holders = self._voter.holders()
        stuck = not holders and self._voter.stuck()
        if not (holders or stuck) or (self._round_told and holders == self._told_of):
            return out
        if now - self._round_since < RETRY_TIMEOUTS * limit:
            return out
        if self._voter.standing() and self._ledger.rounds_behind():
            # our round waited twice the timeout, and a round behind it is complete: the
            # others closed there, not here, so we go there too (R3)
            self._voter.ballots.lower_ok = True
            adopted = self._adopt(now)
            if adopted.rollback is not None:
                return adopted
        keys = [k.raw for k in self.table.keys]
        agreed = self._voter.agreement
        assert agreed is not None
        ends = (self._presence.standing_ends(keys[p], limit) for p in agreed.silent)
        start = max([self._round_since, *(e for e in ends if e is not None)])
        if now - start < RETRY_TIMEOUTS * limit:
            # A party our round names stands by a retry behind our log: a present party
            # that noted it before its own timeout has not counted it late, and signs once
            # that ends (4.5 R2); our wait for its vote starts then.
            return out
        away = tuple(
            p for p in self._presence.absent(holders, keys, linked, now, self._round_since, limit,
                                             claims=False)
            if not self._ledger.waits_for_dispute(p)  # the dispute's retry names it (`_missing`)
        )  # fmt: skip
        if holders and not away:
            return out
        self._round_told = True
        self._told_of = holders
        here = len(self.table.log)
        equivocators = tuple(sorted({a for (a, i), err in self.evidence.items() if i >= here}))
        outcome = self._voter.retry(away, equivocators)
        if away:
            out.events.append(TimedOut(away, now - self._round_since))
        out.events.append(VoidHeld(away, outcome, agreed.attempt))
        out.extend(self.run(now))
        return out

    def _held_back(self, now: float, limit: float) -> Output:
        """A complete round closing our log at its end, of a lower try than a retry another
        party signed there naming us (`Ballots.round_at`), has waited twice the timeout
        since we first held it back: the retry did not complete, so the parties that signed
        it take the lower round too (R3's exception), and so do we. Only a closing round
        waits: nobody is named at a step after it for the time we wait."""
        ballots = self._voter.ballots
        length = len(self.table.log)
        if not ballots.held_back(length, self.table.void_prev(), self.table.me,
                                 self.table.match is not None):
            self._back_since = None
            return Output()
        if self._back_since is None or self._back_since[0] != length:
            self._back_since = (length, now)
        if now - self._back_since[1] < RETRY_TIMEOUTS * limit:
            return Output()
        ballots.ahead_ok = True
        return self.run(now)

    def _fault_vote(self, now: float) -> Output:
        """The table stopped at a fault (a refused entry, an equivocation) at the end of our
        log: we agree at once to deal again without its author, as every present party does,
        so that one motion is signed everywhere and nobody waits for a proposal. If we gave a
        void up here (the entry that made us give it up is the one refused), we may sign no
        other try 0 here: we stand by that void again, and R2 retries it (4.5 R5). A decline
        we signed here binds nothing at a fault: only the fault's round can follow here."""
        table = self.table
        fault = table.fault
        if (
            fault is None
            or fault.author is None
            or fault.author == self.party
            or self.party < 0
            or self._voter.agreement is not None
            or fault.index != len(table.log)
        ):
            return Output()
        if self._voter.stand_again():  # our vote here stands, and R2 retries it
            self._round_since = now
            self._round_told = False
            return Output()
        self._voter.forget_declines()
        try:
            self._voter.propose(self.party, FAULT_ACTION, (fault.author,), (), (), frozenset())
        except ValueError:
            return Output()  # no majority would be left: the others' retry decides
        return Output()

    def _to_decline(self) -> list[Entry]:
        """The voids we are to decline now (4.5 rule 3): every void we never sign, one
        behind our log (we went past its point on the entries there) or a try 0 at the end
        of our log naming a party whose entry for the step there we hold (it came), where we
        signed none. No round of its motion can then complete, and its signers, who wait
        for our vote or our answer, may go on. Not where our log holds a void round (a round
        there is the log's; its signers take it), nor at an equivocated index (the dispute
        there is ours to sign or not, 4.6 rule 3)."""
        table = self.table
        settled, length = self.settled, len(table.log)
        if not self.seated or table.closed:
            return []
        ballots = self._voter.ballots
        out = []
        for e in self._ledger.behind.values():
            v = ballots.vote(e)
            if v is None or e.author == self.party or not settled <= v.point <= length:
                continue
            if v.point == length:  # a retry here is ours to sign on our own clock (R2)
                if v.motion.attempt or table.voiding is not None \
                        or not self._came_of(v.motion.silent):
                    continue
            elif table.log[v.point].kind == bodies.VOID or v.point in self._ledger.mine:
                continue
            if self._ledger.evidence_at(v.point, self.evidence):
                continue
            if any(self._ledger.point(o) == v.point and bodies.void_try(o.body) ==
                   v.motion.attempt for o in self._ledger.own.values()):  # fmt: skip
                continue  # we signed a void of its try there
            if self._voter.may_answer(self.party, e):
                out.append(e)
        return out

    def _answer(self) -> Output:
        """Decline the voids `_to_decline` names, each saved before it is sent."""
        out = Output()
        ballots = self._voter.ballots
        settled = self.settled
        ballots.answered = {k for k in ballots.answered if k[0] >= settled}  # moot below
        for e in self._to_decline():
            answer = self._voter.answer(self.party, e)
            if answer is None:
                continue
            self._ledger.own[answer.hash] = answer
            self._inbox.seen.add(answer.hash)
            self._own.add(answer.hash)
            self.votes.append(answer.wire)
            out.send.append(answer.wire)
            out.votes = list(self.votes)
        return out

    def _vote(self, now: float) -> Output:
        """Sign our void at its point (`Voter.vote`), saved before it is sent."""
        entry = self._voter.vote(self.party)
        self._ledger.own[entry.hash] = entry
        self._inbox.seen.add(entry.hash)
        self._own.add(entry.hash)
        self.votes.append(entry.wire)
        self._round_since = now
        self._round_told = False
        return Output(send=[entry.wire], votes=list(self.votes))
