"""The void agreement's bookkeeping at one peer: the void entries it holds, and its own vote.

A void round must start at one log index, the same at every present party, but the present
parties stop at different places: one may already hold (and have applied) an entry of the
silent party that another never received. If each signed its void where its own log stands
and applied it at once, two present parties could commit to different points, and the round
would never close. So void entries are not applied as they arrive. Each names its *point*
(the log length its round starts at: its index minus its author's place among the present
parties), and a peer:

- applies a void round only once it holds the whole round at the end of its log: a void from
  every present party, all with the same point, action and silent parties;
- once it has agreed (proposed or joined), applies no entry past the highest point any present
  party has signed for the same motion (its *target*), produces no entry of its own,
  and signs its void when its log reaches the target;
- if the target moves up (another present party signed at a later point because it holds more
  entries), catches up to it with those entries (every present party relays what it first
  hears) and signs again there; its earlier void is left behind as a stale entry;
- drops voids whose point its log has passed;
- stands by a void it signed until, for every try it signed there, a party the round needs
  has declined it (a `"decline"` void: that party never signs there), even where a silent
  party's entry came after all: its vote may be the last one another peer lacks, and a vote
  given up while its round completes elsewhere would split the log;
- declines, once, a void it will never sign: one behind its log, or one at its point naming
  a party whose entry for that step it holds.

A round can only complete where every present party signed: a party whose first void is at
point M never signs below M, so no round below the highest first point completes, and every
party ends at the same point with the same log. See docs/protocol.md 4.5.
"""

from __future__ import annotations

from dataclasses import dataclass

from buraco_p2p.session import bodies
from buraco_p2p.session.bodies import BodyError, check_body
from buraco_p2p.session.entry import Entry

__all__ = ["FAULT_ACTION", "RETRY_TIMEOUTS", "Ballots", "Motion", "Vote", "majority"]

# A void round we signed waits this many timeouts for a party before we name it in a retry
# (4.5): a present party that reached our point later than we did signs within one timeout
# of reaching it (its own clock must first see the silent parties keep that step waiting).
RETRY_TIMEOUTS = 2

# What the table does with the author of a fault (a refused entry, an equivocation): it
# deals again without it, and every present party signs that at once (4.6).
FAULT_ACTION = bodies.VOID


def _attempt(entry: Entry) -> int:
    return bodies.void_try(entry.body)


def majority(parties: int, silent: list[int] | tuple[int, ...]) -> bool:
    """Whether the parties a void round naming `silent` leaves to sign it may close it alone:
    more than half of the `parties`, or exactly half when party 0 is among them.

    Two groups of present parties that cannot reach each other each see the other silent;
    were any group allowed to sign, both would close the match, each with its own log. Two
    sets of more than half of the parties always share a party, which signs one round at one
    point only; of two exact halves, the half with party 0 (the host, the one that seats a
    replacement) is the only one that may sign. So at 2 parties party 0 alone may close, and
    party 1 alone may not: it can only wait, or leave an unfinished log (which names nobody).
    """
    named = set(silent)
    signers = parties - len(named)
    return 2 * signers > parties or (2 * signers == parties and 0 not in named)


@dataclass(frozen=True, slots=True)
class Motion:
    """What a void agreement decides: its action, the silent parties (the present ones, in
    party order, are its authors), and for "replace" the new identity key of each."""

    action: str
    silent: tuple[int, ...]
    keys: tuple[bytes, ...] = ()
    attempt: int = 0  # the entry's "try": 0, or the retry that named non-signers too

    @property
    def declines(self) -> bool:
        """Whether this is a decline: an answer that its author will never sign the motion
        of this try and silent parties at this point (4.5 rule 3), never a round's vote."""
        return self.action == bodies.DECLINE

    def retry(self, holders: tuple[int, ...]) -> Motion:
        """The next try of this motion, naming `holders` (parties that did not sign this
        try) as well. Every retry is "end": the present parties that signed one try with
        different actions (two proposals crossed) then sign the same, and a party cannot
        hold the round by signing another action than the others."""
        silent = tuple(sorted(set(self.silent) | set(holders)))
        return Motion(bodies.END_ACTION, silent, (), self.attempt + 1)


@dataclass(frozen=True, slots=True)
class Vote:
    """What one void entry says: the log length its round starts at, its motion, and the log
    it was signed on (its `p`, the head of the entries before its point). A round is votes
    alike in all three: a vote signed on another log (or on none) completes no round of
    ours, and a retry names its author like any party that has not signed. A decline's `p`
    names the void it answers, not a log (4.5 rule 3): it is no part of what a decline says,
    so `prev` is empty there."""

    point: int
    motion: Motion
    prev: bytes = b""


class Ballots:
    """The void entries a peer holds (index -> (author, try) -> entry) and its own
    agreement."""

    def __init__(self, parties: int, deck_size: int) -> None:
        self.n = parties
        self.deck_size = deck_size
        self.held: dict[int, dict[tuple[int, int], Entry]] = {}
        # the second of two different voids one author signed for one index and try
        # (equivocation): kept beside the first, so that a round either completes is applied
        self.rivals: dict[tuple[int, int, int], Entry] = {}
        self.mine: Motion | None = None  # what we agreed to
        self.signed_at: int | None = None  # the point of our latest void
        self.signed_try = 0  # the try of our latest void there
        self.lower_ok = False  # our try waited past the timeout: a lower complete round may go
        # a lower complete round held back by another party's retry has waited: it may go
        self.ahead_ok = False
        self.moot_to = -1  # votes up to this point are moot (a round applied, or refused)
        # every void we signed, by (point, try): we never sign a different one for either,
        # nor a lower try where we signed a higher one (a giving up forgets none of them)
        self.signed: dict[tuple[int, int], Motion] = {}
        # the (point, try) of every void we declined: answered once (4.5 rule 3)
        self.answered: set[tuple[int, int]] = set()

    def vote(self, entry: Entry) -> Vote | None:
        """The vote a void entry casts, or None for one no round can take (a malformed body,
        an author among the silent)."""
        try:
            parsed: tuple[str, tuple[int, ...], tuple[bytes, ...], int] = check_body(  # type: ignore[assignment]
                bodies.VOID, entry.body, self.n, self.deck_size
            )
        except BodyError:
            return None
        motion = Motion(*parsed)
        if entry.author in motion.silent:
            return None
        active = [p for p in range(self.n) if p not in motion.silent]
        prev = b"" if motion.declines else entry.prev
        return Vote(entry.index - active.index(entry.author), motion, prev)

    def hear(self, entry: Entry, length: int, prev: bytes) -> Vote | None:
        """The vote another party's void casts, if it is a proposal we could join: for the point our
        log stands at (`length`), signed on our log (`prev`), a try 0, not settled. A void for a
        point behind our log is never one (whoever signed it is behind us, and catches up), nor one
        ahead (we join it when our log gets there): so no void, stale or hostile, stands between
        this party and its own proposal (4.5)."""
        v = self.vote(entry)
        if v is None or v.point != length or v.point <= self.moot_to or v.motion.attempt:
            return None
        return None if v.motion.declines or v.prev != prev else v

    def give_up(self, point: int) -> None:
        """Give our agreement up at `point` (4.5 rule 3: it binds us no more, or a present
        party went past the step there). We propose and join nothing more there; but the
        votes at `point` are kept: a hostile party that declined to us may have voted to the
        others, who then hold a complete round there (a round is valid for the log, whatever
        we hold beside it), and a complete one is applied all the same (`round_at`)."""
        self.mine = None
        self.signed_at = None
        self.signed_try = 0
        self.lower_ok = self.ahead_ok = False
        self.moot_to = point
        self.prune(point)

    def may_sign(self, point: int, motion: Motion) -> bool:
        """Whether signing `motion` at `point` leaves us one void per index and try: we
        signed none of its try there, or this very motion, and no later try there."""
        return all(
            p != point or t < motion.attempt or (t == motion.attempt and m == motion)
            for (p, t), m in self.signed.items()
        )

    def reset(self, length: int) -> None:
        """The round was applied (the log is now `length` long): the agreement is carried out,
        and a void heard late for an earlier point is no proposal for the next hand."""
        self.signed = {k: m for k, m in self.signed.items() if k[0] >= length}
        self.mine = None
        self.signed_at = None
        self.signed_try = 0
        self.lower_ok = self.ahead_ok = False
        self.moot_to = length - 1

    def file(self, entry: Entry) -> Entry | None:
        """Hold a void entry; returns the different entry its author already signed for that
        index and try, if any (equivocation): the new one is then held beside it as its
        rival (of several, one that casts the same vote as another party's, 4.5 R6). Two
        tries of one author at one index are two votes, not equivocation (4.5)."""
        slot = self.held.setdefault(entry.index, {})
        key = (entry.author, _attempt(entry))
        other = slot.get(key)
        if other is not None:
            rival = self.rivals.get((entry.index, *key))
            if other.wire != entry.wire and (rival is None or (
                    rival.wire != entry.wire and self._seconded(entry)
                    and not self._seconded(rival))):  # fmt: skip
                self.rivals[(entry.index, *key)] = entry
            return other
        slot[key] = entry
        return None

    def _seconded(self, entry: Entry) -> bool:
        """Whether another party's void we hold casts the same vote as `entry`."""
        vote = self.vote(entry)
        return vote is not None and any(
            e.author != entry.author and self.vote(e) == vote
            for slot in self.held.values() for e in slot.values()
        )  # fmt: skip

    def get(
        self, index: int, author: int | None, attempt: int = 0, like: Vote | None = None
    ) -> Entry | None:
        """The void `author` signed at `index` for try `attempt`; with `like`, the one that
        casts that vote (of two an equivocator signed there, either may be in a round)."""
        if author is None:
            return None
        found = [self.held.get(index, {}).get((author, attempt)),
                 self.rivals.get((index, author, attempt))]  # fmt: skip
        for e in found:
            if e is not None and (like is None or self.vote(e) == like):
                return e
        return None

    def drop(self, entry: Entry) -> None:
        """Hold `entry` no more, whether it is the void we hold for its slot or the other one
        its author also signed there (an equivocator's, R6): a void the table refused would
        otherwise be offered again as the next of its round, for ever."""
        slot = self.held.get(entry.index, {})
        key = (entry.author, _attempt(entry))
        if slot.get(key) is entry:
            del slot[key]
        if not slot:
            self.held.pop(entry.index, None)
        rival = (entry.index, *key)
        if self.rivals.get(rival) is entry:
            del self.rivals[rival]

    def prune(self, length: int) -> None:
        """Forget voids at indices the log has passed, and voids whose point it has passed."""
        for index in [i for i in self.held if i < length]:
            del self.held[index]
        for k in [k for k in self.rivals if k[0] < length]:
            del self.rivals[k]
        for index, slot in list(self.held.items()):
            for author, e in list(slot.items()):
                v = self.vote(e)
                if v is None or v.point < length:
                    del slot[author]
            if not slot:
                del self.held[index]

    def _votes(self, length: int) -> list[tuple[Vote, Entry]]:
        out = []
        for slot in self.held.values():
            for e in slot.values():
                v = self.vote(e)
                if v is not None and v.point >= length and v.point > self.moot_to:
                    out.append((v, e))
        return out

    def round_at(
        self, length: int, prev: bytes, me: int | None = None, drawn: bool = True
    ) -> Entry | None:
        """The first entry of a complete void round starting at `length` on our log (its
        votes name `prev`, the `p` our log gives a void there), if we hold one: of several,
        the highest try. Not one of a lower try than the one we signed there,
        until ours has waited past the timeout (`lower_ok`): our vote for a retry stands
        until then, so that a holder's late signature on the lower try cannot split the
        present parties between two rounds. Nor, until it has waited as long (`ahead_ok`),
        a round that closes the log (an "end", or any void before the seats are `drawn`)
        of a lower try than a retry another party signed there naming us (party `me`): that
        retry can complete without us, while our late signature completed the lower round
        here, and a closed log is never cut back (a round that does not close is, if the
        retry completes: 4.6, "The one way back")."""
        best = self._best(length, prev, self._floor(length))
        if best is not None and self._waits(best, length, prev, me, drawn):
            return None
        return best

    def held_back(self, length: int, prev: bytes, me: int | None, drawn: bool) -> bool:
        """Whether a complete round at `length` waits only for another party's retry naming
        us (`round_at`): the wait that `ahead_ok` ends."""
        best = self._best(length, prev, self._floor(length))
        return best is not None and self._waits(best, length, prev, me, drawn)

    def _floor(self, length: int) -> int:
        return self.signed_try if self.signed_at == length and not self.lower_ok else 0

    def _waits(
        self, first: Entry, length: int, prev: bytes, me: int | None, drawn: bool
    ) -> bool:
        """Whether the complete round `first` begins waits under a retry naming us, signed
        on our log (`prev`: one signed on another could never complete here)."""
        if self.ahead_ok or me is None:
            return False
        if first.body.get("action") != bodies.END and drawn:
            return False  # the log goes on, and comes to the retry's round if it completes
        tries = [v.motion.attempt for v, e in self._votes(length)
                 if v.point == length and v.prev == prev and e.author != me
                 and me in v.motion.silent and not v.motion.declines]  # fmt: skip
        return bodies.void_try(first.body) < max(tries, default=0)

    def _best(self, length: int, prev: bytes, floor: int) -> Entry | None:
        """The first entry of the complete round at `length` on the log `prev` names, of the
        highest try not below `floor`, if we hold one."""
        best: tuple[int, Entry] | None = None
        rivals = [e for k, e in self.rivals.items() if k[0] == length]
        for e in [*self.held.get(length, {}).values(), *rivals]:
            v = self.vote(e)
            if v is None or v.point != length or v.prev != prev:
                continue
            if v.motion.attempt < floor or (best is not None and v.motion.attempt <= best[0]):
                continue
            if self.complete(v):
                best = (v.motion.attempt, e)
        return best[1] if best is not None else None

    def complete(self, v: Vote) -> bool:
        """Whether we hold a void from every party `v`'s motion leaves to sign, all alike
        (one point, motion and `p`)."""
        if v.motion.declines:
            return False  # declines are answers, never a round
        active = [p for p in range(self.n) if p not in v.motion.silent]
        return all(
            self.get(v.point + k, a, v.motion.attempt, v) is not None
            for k, a in enumerate(active)
        )

    def holders(self, length: int, prev: bytes) -> tuple[int, ...]:
        """The parties our motion leaves to sign from which we hold no void at `length` of
        our try naming exactly our silent parties (whatever its action: two proposals may
        cross, and every retry is "end"; but a decline is no vote), signed on our log (`p`
        is `prev`): they keep our round waiting. A void naming other parties does not count:
        a hostile party could otherwise hold the round by signing a retry nobody else signs;
        nor one signed on another log: it completes no round with ours."""
        assert self.mine is not None
        mine = self.mine
        active = [p for p in range(self.n) if p not in mine.silent]

        def signed(k: int, a: int) -> bool:
            for o in (self.get(length + k, a, mine.attempt),
                      self.rivals.get((length + k, a, mine.attempt))):  # fmt: skip
                v = self.vote(o) if o is not None else None
                if v is None or v.point != length or v.motion.silent != mine.silent \
                        or v.prev != prev:
                    continue
                if not v.motion.declines:  # a decliner that holds back what releases
                    return True  # us (4.5 rule 3) keeps the round waiting like any holder
            return False

        return tuple(a for k, a in enumerate(active) if not signed(k, a))

    def lower_complete(self, length: int, prev: bytes) -> bool:
        """Whether we hold a complete round at `length` on our log (`prev`) of a lower try
        than ours."""
        assert self.mine is not None
        return any(
            v.point == length and v.prev == prev and v.motion.attempt < self.mine.attempt
            and self.complete(v)
            for v, _ in self._votes(length)
        )

    def target(self, length: int) -> int:
        """The highest point a present party has signed for our motion, or the end of our
        log if none is further on."""
        assert self.mine is not None
        best = length
        for v, _ in self._votes(length):
            if v.motion == self.mine and v.point > best:
                best = v.point
        return best

    def signed_here(self, length: int) -> bool:
        """Whether a present party has signed our motion at `length` (the end of our log)."""
        return any(v.motion == self.mine and v.point == length for v, _ in self._votes(length))

    def released(self, length: int) -> bool:
        """Whether a present party has signed our motion at a point past `length`: it never
        signs lower, so no round of ours at `length` can complete, and we may follow."""
        return self.target(length) > length

    def passed(self, length: int) -> bool:
        """Whether a party our motion leaves to sign has signed a void (a vote, not a
        decline) at a point past `length`: of our motion (then `released` holds too) or of
        any other. A party signs only at the end of
        its log, and that void's `p` commits it to the entry at our point: it never signs at
        `length`, so no round of ours there can complete, and we may follow the log. Its log
        may have settled past our point before our void reached it, and then it declines
        nothing there (4.5 rule 3)."""
        assert self.mine is not None
        silent = self.mine.silent
        return any(
            v.point > length and not v.motion.declines and e.author not in silent
            for v, e in self._votes(length)
        )  # fmt: skip

    def declined(self, point: int, motion: Motion) -> bool:
        """Whether a party `motion` leaves to sign declined it at `point` (its try, its
        silent parties): that party never signs it there, so no round of it can complete
        anywhere, and a vote for it may be given up (4.5 rule 3)."""
        answer = Vote(point, Motion(bodies.DECLINE, motion.silent, (), motion.attempt))
        active = [p for p in range(self.n) if p not in motion.silent]
        return any(
            self.get(point + k, a, motion.attempt, answer) is not None
            for k, a in enumerate(active)
        )  # fmt: skip

    def proposal(self, length: int, prev: bytes) -> tuple[Motion, int] | None:
        """A present party's void to join: (its motion, its author), of those at the point our log
        stands at signed on our log (`prev`), the lowest party's. A retry is never one (it names
        parties that did not sign the try before: a party that comes late joins that try, and a
        party signs a retry only on its own clock)."""
        votes = [
            (v, e) for v, e in self._votes(length)
            if v.point == length and v.prev == prev and not v.motion.attempt
            and not v.motion.declines
        ]  # fmt: skip
        if not votes:
            return None
        v, e = min(votes, key=lambda ve: ve[1].author)
        return v.motion, e.author
