"""This party's part in void agreements: what it proposes or joins, and the void it signs.

A `Peer` plays the hand; a `Voter` decides, beside it, whether the hand stops. It is kept
apart because its state and its rules are its own: it holds the void entries (`Ballots`,
which `buraco_p2p.session.agreement` explains: why a round is applied only whole, at one
point every present party reaches), checks a proposal before this party commits to it, says
when its log stands at the round's point and signs its void there, and recognises an heir's
signature before the "replace" agreement that seats it is applied. It reads the `Table` but
never applies an entry; the peer applies what the voter hands it through the same
`Table.apply` as every other entry. Like all of `session/`, it does no I/O and draws no
randomness.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from buraco_p2p.net.channel.identity import Identity, PeerKey
from buraco_p2p.session import bodies
from buraco_p2p.session.agreement import Ballots, Motion, Vote, majority
from buraco_p2p.session.bodies import BodyError, check_body
from buraco_p2p.session.entry import Entry, make_entry
from buraco_p2p.session.errors import LogError
from buraco_p2p.session.events import VoidProposed

if TYPE_CHECKING:
    from buraco_p2p.session.table import Table

__all__ = ["Voter"]


class Voter:
    """One party's void agreements at one table: the void entries held, and its own vote."""

    def __init__(self, table: Table, identity: Identity) -> None:
        self.table = table
        self.identity = identity
        self.ballots = Ballots(table.n, table.rules.deck_size)

    @property
    def agreement(self) -> Motion | None:
        """The void agreement we signed or are about to sign."""
        return self.ballots.mine

    @property
    def proposal(self) -> tuple[Motion, int] | None:
        """A present party's void proposal we hold and could join: (its motion, its author)."""
        if self.table.closed:
            return None
        return self.ballots.proposal(len(self.table.log), self.table.void_prev())

    def propose(
        self,
        party: int,
        action: str,
        silent: tuple[int, ...],
        keys: tuple[bytes, ...],
        waiting: tuple[int, ...],
        overdue: frozenset[int] = frozenset(),
    ) -> None:
        """Agree, as `party`, to a void round naming `silent` (if empty: the author of the
        fault that stopped the table, else `waiting`, the parties it waits for); raises
        `ValueError` and agrees to nothing if the proposal is not one we may make. `overdue`:
        the parties our own clock has seen keep the current step waiting past the table's
        timeout; we name no other (but the author of a fault)."""
        table = self.table
        if party < 0:
            raise ValueError("an heir is not a party until its seat passes to it")
        if not silent:
            if table.fault is not None and table.fault.author is not None:
                silent = (table.fault.author,)
            else:
                silent = waiting
        silent = tuple(sorted(set(silent)))
        if party in silent:
            raise ValueError("a silent party cannot agree to its own void")
        body: dict[str, Any] = {"action": action, "silent": list(silent)}
        if action == bodies.REPLACE:
            body["keys"] = list(keys)
        try:
            check_body(bodies.VOID, body, table.n, table.rules.deck_size)
        except BodyError as exc:
            raise ValueError(str(exc)) from None
        motion = Motion(action, silent, tuple(keys) if action == bodies.REPLACE else ())
        refusal = self._refusal(motion)
        if refusal is not None:
            raise ValueError(refusal)
        mine = self.ballots.mine
        if mine is not None and mine != motion:
            raise ValueError(f"already agreed to {mine.action!r} naming {mine.silent}")
        if not table.can_void(silent):
            raise ValueError(f"the table is not waiting for parties {silent}"
                             f"{_majority_note(table.n, silent)}")  # fmt: skip
        if not set(silent) <= self.nameable(overdue):
            raise ValueError(f"the table has not waited for parties {silent} past its timeout")
        if not self.ballots.may_sign(len(table.log), motion):
            raise ValueError("we signed another void at this point")
        self.ballots.mine = motion

    def _refusal(self, motion: Motion) -> str | None:
        """Why the table would refuse a round for `motion` once it is whole, if it would
        (4.5, "Abandonment"): nobody takes a seat over before the seats are drawn, and a new
        identity must be new to the table. A party that signed such a void would apply no
        entry past it and see its own round refused: the table would stand for good."""
        if motion.action != bodies.REPLACE:
            return None
        table = self.table
        if table.match is None:
            return "a seat can be taken over only once the seats are drawn"
        seated = {k.raw for k in table.keys} | {k.raw for k in table.terms.keys}
        seated |= {k.raw for _, _, k in table.successions}
        if {bytes(k) for k in motion.keys} & seated:
            return "a new identity is already at the table (or was)"
        return None

    def nameable(self, overdue: frozenset[int]) -> frozenset[int]:
        """The parties we may name silent here: those our clock has seen keep this step
        waiting past the timeout, and the author of the fault that stopped the table."""
        fault = self.table.fault
        if fault is not None and fault.author is not None:
            return overdue | {fault.author}
        return overdue

    def join(self, party: int, overdue: frozenset[int] = frozenset()) -> bool:
        """Agree, as `party`, to the proposal we hold at our point; False (and nothing
        changes) if there is none, we agreed already, we are an heir not yet seated, it
        names us silent, the table here does not wait for its silent parties, or it names a
        party our own clock has not seen keep this step waiting past the timeout."""
        prop = self.proposal
        if prop is None or self.ballots.mine is not None or party < 0:
            return False
        motion, _ = prop
        if party in motion.silent or not self.table.can_void(motion.silent):
            return False
        if self._refusal(motion) is not None:
            return False  # a round the table would refuse once whole: signing it stops us
        if not set(motion.silent) <= self.nameable(overdue):
            return False
        if not self.ballots.may_sign(len(self.table.log), motion):
            return False  # we signed another void here before we gave it up
        self.ballots.mine = motion
        return True

    def hear(self, entry: Entry) -> VoidProposed | None:
        """Note another party's void; the event to show if it is a proposal at our point
        that is news to us (we have agreed to nothing yet)."""
        vote = self.ballots.hear(entry, len(self.table.log), self.table.void_prev())
        if vote is None or self.ballots.mine is not None:
            return None
        m = vote.motion
        return VoidProposed(entry.author, m.action, m.silent, m.keys)

    def next_void(self) -> Entry | None:
        """The void to apply next: the next of a round under way, or the first of a complete
        round at the end of the log."""
        table = self.table
        length = len(table.log)
        if table.voiding is not None:
            under_way = Vote(table.step_start, Motion(
                table.voiding, table.silent, table.void_keys, table.void_try),
                table.step_prev)  # fmt: skip
            return self.ballots.get(length, table.expected_author(length), table.void_try,
                                    under_way)  # fmt: skip
        return self.ballots.round_at(length, table.void_prev(), table.me, table.match is not None)

    def stopped(self) -> bool:
        """Whether we stand at our void's point: we signed it at the end of our log, or a
        present party signed it there and the table waits there for the silent parties (we
        sign once our own clock has seen them keep it waiting past the timeout); either way
        no party it leaves to sign has signed a void further on, of it or of any other
        motion (`Ballots.passed`). We apply and make no entry past it."""
        ballots = self.ballots
        length = len(self.table.log)
        if ballots.mine is None or ballots.passed(length):
            return False
        return ballots.signed_at == length or self.waiting_here()

    def standing(self) -> bool:
        """Whether our vote at the end of our log stands against every round behind it: we
        signed our void there, and it has not yet waited twice the timeout (`lower_ok`).
        The parties that signed with us may already have closed there; a round a late
        signature completes behind us (with a void one of them gave up there and went on
        past, say) must not take us off that branch alone (R3)."""
        ballots = self.ballots
        return (
            ballots.mine is not None
            and ballots.signed_at == len(self.table.log)
            and not ballots.lower_ok
        )

    def waiting_here(self) -> bool:
        """Whether a present party has signed our void at the end of our log, where the
        table waits for the silent parties, and we have not signed it there yet."""
        ballots = self.ballots
        length = len(self.table.log)
        return (
            ballots.mine is not None
            and ballots.signed_at != length
            and ballots.signed_here(length)
            and self.table.can_void(ballots.mine.silent, ballots.mine.attempt)
        )

    def due(self, overdue: frozenset[int] = frozenset()) -> bool:
        """Whether we are to sign our void at the end of our log now: we have not signed our
        try there, the table there waits for the silent parties, and our clock has seen them
        keep it waiting past the timeout (or they are the author of the fault that stopped
        it). Where the table no longer waits for them we sign nothing (`moot`)."""
        ballots = self.ballots
        table = self.table
        if ballots.mine is None or table.voiding is not None or table.closed:
            return False
        length = len(table.log)
        mine = ballots.mine
        if not ballots.may_sign(length, mine):
            return False
        if ballots.signed_at == length:
            return ballots.signed_try < mine.attempt  # a retry, checked by `retry`
        if mine.attempt:
            return False  # a retry is signed only at the point of the try before it
        return table.can_void(mine.silent) and set(mine.silent) <= self.nameable(overdue)

    def moot(self) -> bool:
        """Whether our agreement can no longer be signed where our log stands: we have not
        signed it there, our log has reached the highest point a present party signed it
        at, and the table there does not wait for its silent parties (their entries came
        after all). We give it up and go on (`give_up`)."""
        ballots = self.ballots
        length = len(self.table.log)
        mine = ballots.mine
        if mine is None or ballots.signed_at == length or ballots.released(length):
            return False
        return not self.table.can_void(mine.silent, mine.attempt)

    def vote(self, party: int) -> Entry:
        """Sign our void, as `party`, at the end of our log, its point (`due` said so)."""
        table = self.table
        ballots = self.ballots
        assert ballots.mine is not None
        motion = ballots.mine
        silent = motion.silent
        length = len(table.log)
        active = [p for p in range(table.n) if p not in silent]
        body: dict[str, Any] = {"action": motion.action, "silent": list(silent)}
        if motion.action == bodies.REPLACE:
            body["keys"] = list(motion.keys)
        if motion.attempt:
            body[bodies.TRY] = motion.attempt
        entry = make_entry(
            self.identity, table=table.terms.table_id, index=length + active.index(party),
            prev=table.void_prev(), author=party, kind=bodies.VOID, body=body,
        )  # fmt: skip
        ballots.file(entry)
        ballots.signed[(length, motion.attempt)] = motion
        ballots.signed_at = length
        ballots.signed_try = motion.attempt
        ballots.lower_ok = False
        return entry

    def restore(self, entry: Entry) -> None:
        """Take up again, after a restart, a void we signed before (saved before it was
        sent): we stand by its motion, and sign no other at its point."""
        ballots = self.ballots
        vote = ballots.vote(entry)
        if vote is not None and vote.motion.declines:
            ballots.signed[(vote.point, vote.motion.attempt)] = vote.motion
            ballots.answered.add((vote.point, vote.motion.attempt))
            return  # an answer: we sign nothing else there, and stand by nothing
        if vote is None or vote.point < len(self.table.log) or self.table.closed:
            return
        ballots.file(entry)
        ballots.signed[(vote.point, vote.motion.attempt)] = vote.motion
        if ballots.signed_at == vote.point and ballots.signed_try > vote.motion.attempt:
            return  # we stand by the later try we signed there
        ballots.mine = vote.motion
        ballots.signed_at = vote.point
        ballots.signed_try = vote.motion.attempt

    def stand_again(self) -> bool:
        """We gave our void up at the point our log still stands at (every try declined), and
        the entry we went on with was refused there and stopped the table: we stand
        by the latest try we signed there again, as a restart would (R5), so that R2's retry
        still brings us to the round the others close. False if we agree to something, or
        signed nothing there."""
        ballots = self.ballots
        point = len(self.table.log)
        tries = [t for (q, t), m in ballots.signed.items() if q == point and not m.declines]
        if ballots.mine is not None or not tries:
            return False
        latest = max(tries)
        ballots.mine = ballots.signed[(point, latest)]
        ballots.signed_at = point
        ballots.signed_try = latest
        return True

    def holders(self) -> tuple[int, ...]:
        """The parties that keep our void round waiting at our point: those our motion
        leaves to sign that have signed no void of our try (or a later one) there. Empty
        unless we signed our try at the end of our log and no round is under way."""
        ballots = self.ballots
        length = len(self.table.log)
        mine = ballots.mine
        if (
            mine is None
            or ballots.signed_at != length
            or ballots.signed_try != mine.attempt
            or self.table.voiding is not None
            or self.table.closed
        ):
            return ()
        return ballots.holders(length, self.table.void_prev())

    def stuck(self) -> bool:
        """Whether we signed our try at the end of our log and every party it leaves to sign
        signed that try naming the same silent parties, but not all with our action (two
        proposals crossed, or an equivocator signed two): no round of it can complete."""
        ballots = self.ballots
        mine = ballots.mine
        length = len(self.table.log)
        if mine is None or ballots.signed_at != length or ballots.signed_try != mine.attempt:
            return False
        prev = self.table.void_prev()
        if self.table.voiding is not None or self.table.closed or ballots.holders(length, prev):
            return False
        return not ballots.complete(Vote(length, mine, prev))

    def retry(self, holders: tuple[int, ...], equivocators: tuple[int, ...] = ()) -> str:
        """Our try at our point waited past the timeout for `holders` (our own clock saw
        it): if we hold a complete round of a lower try there, we let it be applied
        instead (closing where the others closed names nobody more); else we agree to the
        next try naming them too, if the table allows that round (a majority left to sign
        it), and every party in `equivocators` (two different voids of one try signed here).
        Returns what we did: "lower", "retry" or "held" (no round can close here without the
        holders: we wait, naming nobody)."""
        ballots = self.ballots
        length = len(self.table.log)
        assert ballots.mine is not None
        if ballots.lower_complete(length, self.table.void_prev()):
            ballots.lower_ok = True
            return "lower"
        fault = self.table.fault
        if fault is not None and fault.author is not None and fault.author != self.table.me:
            holders = (*holders, fault.author)  # the author of the fault is named with them
        # (and so is a party that signed two different voids of one try here, R6)
        holders = (*holders, *(p for p in equivocators if p != self.table.me))
        nxt = ballots.mine.retry(holders)
        while not ballots.may_sign(length, nxt):  # past every try we signed here
            nxt = nxt.retry(())
        if not self.table.can_void(nxt.silent, nxt.attempt):
            # no retry can close here: should the holders sign a lower try after all, we
            # close with the others on that round rather than wait for ever
            ballots.lower_ok = True
            return "held"
        ballots.mine = nxt
        return "retry"

    def bound(self) -> bool | None:
        """Whether a void we signed at the end of our log may still complete a round: None
        where we signed none there (an agreement not signed binds nobody); False where, for
        every try we signed there, a party that try leaves to sign declined it (4.5 rule 3):
        no round of ours can complete anywhere. While it is True we stand by our vote even
        where a party it names came after all: our vote may be the last one another peer
        lacks for a complete round, and giving it up would split the log."""
        ballots = self.ballots
        length = len(self.table.log)
        tries = [m for (point, _), m in ballots.signed.items()
                 if point == length and not m.declines]  # fmt: skip
        if not tries:
            return None
        return not all(ballots.declined(length, m) for m in tries)

    def declined_here(self) -> bool:
        """Whether a party our motion leaves to sign declined it at the end of our log."""
        mine = self.ballots.mine
        return mine is not None and self.ballots.declined(len(self.table.log), mine)

    def may_answer(self, party: int, vote: Entry) -> bool:
        """Whether we may decline `vote` as `party` (`answer`): it is a vote, it does not
        name us, and we have signed no void of its try at its point, declines included."""
        ballots = self.ballots
        v = ballots.vote(vote)
        if v is None or v.motion.declines or party < 0 or party in v.motion.silent:
            return False
        answer = Motion(bodies.DECLINE, v.motion.silent, (), v.motion.attempt)
        slot = (v.point, v.motion.attempt)
        return slot not in ballots.answered and ballots.may_sign(v.point, answer)

    def answer(self, party: int, vote: Entry) -> Entry | None:
        """Our decline of `vote`, a void another party signed that we never sign: at a point
        behind our log (we sign only at the end of our log), or at the end of our log naming
        a party whose entry for the step there we hold. No round of its motion can then
        complete, and the parties that signed it may give their votes up (4.5 rule 3). None
        where we signed a void of its try there (the voids we signed, declines included, are
        one per point and try) or it names us. Its `p` is the hash of the void it answers,
        so it is never taken for a second vote of ours at that index."""
        if not self.may_answer(party, vote):
            return None
        table = self.table
        ballots = self.ballots
        v = ballots.vote(vote)
        assert v is not None
        answer = Motion(bodies.DECLINE, v.motion.silent, (), v.motion.attempt)
        slot = (v.point, v.motion.attempt)
        active = [p for p in range(table.n) if p not in v.motion.silent]
        body: dict[str, Any] = {"action": bodies.DECLINE, "silent": list(v.motion.silent)}
        if v.motion.attempt:
            body[bodies.TRY] = v.motion.attempt
        entry = make_entry(
            self.identity, table=table.terms.table_id, index=v.point + active.index(party),
            prev=vote.hash, author=party, kind=bodies.VOID, body=body,
        )  # fmt: skip
        ballots.signed[slot] = answer
        ballots.answered.add(slot)
        return entry

    def forget_declines(self) -> None:
        """The table stopped at a fault at the end of our log, where we declined a motion
        (we held the entry then refused): that decline said no round of it completes, and
        none does, but it holds us from no void of the fault: nobody can go past a refused
        entry, so the fault's round is the only one that follows here (4.5 rule 3). It is
        still answered (we do not decline again)."""
        length = len(self.table.log)
        signed = self.ballots.signed
        for key in [k for k, m in signed.items() if k[0] == length and m.declines]:
            del signed[key]

    def give_up(self) -> None:
        """No round of ours at our point can complete (a party it needs declined it, or went
        past the step there without signing), or we signed none: we follow the log again,
        agreeing to nothing."""
        self.ballots.give_up(len(self.table.log))

    def take(self, entry: Entry) -> None:
        """The peer is about to apply `entry`: if it is a void we hold, it is held no more."""
        if entry.kind == bodies.VOID:
            self.ballots.drop(entry)

    def settle(self, closed_round: bool) -> None:
        """The peer applied an entry and no round is under way: if it closed a round, the
        agreement is carried out; voids the log has passed are forgotten."""
        ballots = self.ballots
        length = len(self.table.log)
        if closed_round:
            ballots.reset(length)
        ballots.prune(length)
        followed = ballots.mine is not None and (ballots.signed_at or length) < length
        if followed and ballots.target(length) == length and not ballots.signed_here(length):
            # we followed a present party's void past our point and then past its point
            # too: nothing we could close is left ahead
            ballots.give_up(length - 1)

    def heir_signed(self, entry: Entry) -> bool:
        """Whether `entry` is signed by a new identity a held "replace" void names for its
        author: an heir may be heard before its agreement is applied here; the table checks
        the signature again when the entry's turn comes."""
        for slot in self.ballots.held.values():
            for e in slot.values():
                v = self.ballots.vote(e)
                if v is None or entry.author not in v.motion.silent or not v.motion.keys:
                    continue
                key = v.motion.keys[v.motion.silent.index(entry.author)]
                try:
                    entry.verify(tuple(PeerKey(key) if p == entry.author else k
                                       for p, k in enumerate(self.table.keys)))  # fmt: skip
                except (LogError, ValueError):
                    continue
                return True
        return False


def _majority_note(parties: int, silent: tuple[int, ...]) -> str:
    """Why a void round naming `silent` may not be valid even where the table waits for
    them: too few parties would sign it."""
    if not majority(parties, silent):
        return f" (a void needs more than half of the {parties} parties, or half with party 0)"
    return ""
