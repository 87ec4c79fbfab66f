"""What a received entry meets: the entries we already hold for its author and index, and
the void rounds behind the end of our log.

The peer's receive path goes one way (`buraco_p2p.session.peer`): screen, then check here,
then apply, hold, or keep as evidence. This module is the "check here" part, kept apart
because it is the one place that sets a new entry against everything the peer holds (its
log, the entries it holds for later, the signed entries its table refused, the void entries
of rounds under way and of rounds behind its log) and says whether the two are one author's
two signatures for one slot of one log (`rival`, `proof`: docs/protocol.md 4.6). It never
changes the log.

It also keeps the void entries whose point is behind the end of our log but not before its
settled point (`keep`): a complete round of them, signed by a majority, is where the
table went while we were on another branch (`rounds_behind`, the peer's `_adopt`); and the
voids we signed ourselves at an equivocated index behind our log (`dispute_vote`). Both are
bounded, and so that no party's voids can push out another's: what is behind the settled
point is dropped (`prune`); a vote for a point our log holds is kept only if it was signed on
our log (its `p`, the only log a round there could be taken on); and two are kept per round
slot (point, author and try). A party fills its own slots, no other's, and there are few:
points from the settled point to `MAX_AHEAD` past the log (the inbox screens the rest), one
per try.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.session import bodies
from buraco_p2p.session.agreement import FAULT_ACTION, Motion, Vote, majority
from buraco_p2p.session.entry import Entry, decode_entry, make_entry
from buraco_p2p.session.errors import Equivocation, LogError
from buraco_p2p.session.evidence import proves_equivocation

if TYPE_CHECKING:
    from buraco_p2p.session.inbox import Inbox
    from buraco_p2p.session.table import Table
    from buraco_p2p.session.voter import Voter

__all__ = ["Ledger"]


class Ledger:
    """The comparisons of one peer's receive path, over its table, inbox and voter."""

    def __init__(self, table: Table, inbox: Inbox, voter: Voter) -> None:
        self.table = table
        self.inbox = inbox
        self.voter = voter
        # voids whose point is not before our settled point: (point, author, try, k) -> entry,
        # k 0 for the first void of that slot, 1 for a different one its author also signed
        # (4.5 R6: either may complete a round, so both are held)
        self.behind: dict[tuple[int, int, int, int], Entry] = {}
        # the voids we signed at an equivocated index behind our log: point -> entry
        self.mine: dict[int, Entry] = {}
        # every void we signed (a round behind our log may be one we signed before we were
        # released and went on)
        self.own: dict[bytes, Entry] = {}
        # the voids of `own` we took up again after a restart (their hashes): one behind our
        # log is a dispute's or one we gave up, as the evidence will say (`saved_dispute`)
        self.restored: set[bytes] = set()
        # when we signed our latest try at each point of `mine` (our clock), and the points
        # where that try has waited long enough to let a complete lower try there go
        self.since: dict[int, float] = {}
        self.lower_ok: set[int] = set()

    # -- one author, one slot ------------------------------------------------------------

    def rival(self, entry: Entry) -> Entry | None:
        """An entry we hold that `entry`'s author also signed for its index, such that the
        two are equivocation (`proof`); None if there is none."""
        for held in self._same_slot(entry):
            if self.proof(held, entry) is not None:
                return held
        return None

    def _same_slot(self, entry: Entry) -> list[Entry]:
        table = self.table
        out: list[Entry] = []
        if entry.index < len(table.log) and table.log[entry.index].author == entry.author:
            out.append(table.log[entry.index])
        if entry.kind == bodies.VOID:
            attempt = bodies.void_try(entry.body)
            ballots = self.voter.ballots
            point = self.point(entry)
            kept = [] if point is None else [self.behind.get((point, entry.author, attempt, k))
                                             for k in (0, 1)]  # fmt: skip
            for e in (ballots.held.get(entry.index, {}).get((entry.author, attempt)),
                      ballots.rivals.get((entry.index, entry.author, attempt)), *kept):
                if e is not None:
                    out.append(e)
        else:
            out += self.inbox.rivals(entry)
        return [e for e in out if e.wire != entry.wire]

    def proof(self, held: Entry, new: Entry) -> tuple[Entry, Entry] | None:
        """The pair, if `held` and `new` prove their author equivocated: one index, one `p`
        that continues our log, both signed under the author's key in force there (an heir's
        signature, not yet checked against any key in force, proves nothing)."""
        table = self.table
        if not 0 <= new.author < table.n or new.index < 1:
            return None
        key = table.key_at(new.author, new.index)
        if (
            not self._continues(new)
            or self.inbox.heir_only(held)
            or self.inbox.heir_only(new)
            or not proves_equivocation(held, new, key)
        ):
            return None
        return held, new

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

    # -- votes behind our log ------------------------------------------------------------

    def point(self, entry: Entry) -> int | None:
        """The point of a void entry's round (None for a void no round can take)."""
        vote = self.voter.ballots.vote(entry)
        return vote.point if vote is not None else None

    def point_of_wire(self, wire: bytes) -> int | None:
        try:
            return self.point(decode_entry(wire))
        except LogError:
            return None

    def keep(self, entry: Entry) -> None:
        """Hold a void whose point is not before our settled point: a round of such voids may
        be found behind our log later (`rounds_behind`). Of the different voids an author
        signed for one point and try (an equivocator's, 4.5 R6) two are held, as by the
        voter: the first, and one other, the one that votes with another party if any (so
        a third cannot push out the one that completes a round). Slots are a round's, not
        an index's: a void of another point at the same index (another silent set) is
        another round's vote. A vote for a point our log holds, signed on another log, is
        none of ours: no round there could be taken on our log (4.6, "The one way back");
        should our log be cut back and come to that log, its signers send what they stand
        by again after the log (`Peer.standing`)."""
        vote = self.voter.ballots.vote(entry)
        if vote is None or not self._on_our_log(vote, {}):
            return
        slot = (vote.point, entry.author, vote.motion.attempt)
        first, other = self.behind.get((*slot, 0)), self.behind.get((*slot, 1))
        if entry.wire in (first.wire if first else None, other.wire if other else None):
            return
        if first is None:
            self.behind[(*slot, 0)] = entry
        elif other is None or (self._seconded(entry) and not self._seconded(other)):
            self.behind[(*slot, 1)] = entry

    def _on_our_log(self, vote: Vote | None, heads: dict[int, bytes]) -> bool:
        """Whether `vote` could be part of a round on our log: its point is one our log
        holds and its `p` the one our log gives a void there (a decline's, whatever it
        names: it answers a void), or its point is not behind our log (its `p` is known
        when the log gets there, `prune`). `heads` remembers `Table.prev_at` by point."""
        table = self.table
        if vote is None or vote.point < 1:
            return False
        if vote.point >= len(table.log) or not vote.prev:
            return True
        if vote.point not in heads:
            heads[vote.point] = table.prev_at(vote.point)
        return vote.prev == heads[vote.point]

    def _seconded(self, entry: Entry) -> bool:
        """Whether another party's void we hold casts the same vote as `entry`."""
        vote = self.voter.ballots.vote(entry)
        return vote is not None and any(
            e.author != entry.author and self.voter.ballots.vote(e) == vote
            for e in [*self.behind.values(), *self.own.values()]
        )  # fmt: skip

    @property
    def settled(self) -> int:
        """How far our log is settled (`Table.settled`): we never cut it back below this
        point. Never past an index where we signed the void of a dispute: once signed, that
        round may complete at another peer, and our log must still be able to take it. A
        closed log is settled as a whole."""
        table = self.table
        if table.closed:
            return len(table.log)
        return min([table.settled, *self.mine])

    @property
    def final(self) -> int:
        """How many entries of our log are final (`Table.final`): every honest peer holds
        them for good. Never past a dispute we signed, as `settled`."""
        return min([self.table.final, *self.mine])

    def prune(self) -> None:
        """Forget the voids behind our settled point (no round there can ever apply), and
        those our log has passed that were signed on another log (no round of ours)."""
        settled = self.settled
        log = self.table.log
        heads: dict[int, bytes] = {}
        ballots = self.voter.ballots
        for k in [k for k, e in self.behind.items()
                  if k[0] < settled
                  or (e.index < len(log) and log[e.index].wire == e.wire)
                  or not self._on_our_log(ballots.vote(e), heads)]:  # fmt: skip
            del self.behind[k]
        for h in [h for h, e in self.own.items() if (self.point(e) or -1) < settled]:
            del self.own[h]
        if self.table.closed:
            self.mine.clear()

    def carry(self, old: Ledger, point: int) -> None:
        """Take over what a roll-back to `point` keeps of the ledger `old`, as a restarted
        peer would from its saved files: the voids held (a round behind may still be found),
        the voids we signed, and each dispute we signed below `point` (its round may still
        complete, and our settled point stays at it until then, 4.6)."""
        self.behind = old.behind
        self.own = old.own
        self.restored = old.restored
        self.mine = {at: e for at, e in old.mine.items() if at < point}
        self.since = {at: t for at, t in old.since.items() if at < point}
        self.lower_ok = {at for at in old.lower_ok if at < point}
        self.prune()

    def behind_log(self) -> bool:
        """Whether we hold a vote of another party for a point behind the end of our log
        (a cheap test before `rounds_behind`)."""
        length = len(self.table.log)
        return any(k[0] < length for k in self.behind)

    def rounds_behind(self) -> list[tuple[int, list[Entry]]]:
        """Every complete void round we hold behind the end of our log, signed by a majority
        and not before our settled point: (its point, its entries in log order), the lowest
        point first and, at one point, the highest try first."""
        table = self.table
        settled, length = self.settled, len(table.log)
        votes: dict[Vote, list[Entry]] = {}
        ballots = self.voter.ballots
        for e in [*self.behind.values(), *self.mine.values(), *self.own.values()]:
            v = ballots.vote(e)
            if v is not None and settled <= v.point < length and not v.motion.declines:
                votes.setdefault(v, []).append(e)
        out: list[tuple[int, int, list[Entry]]] = []
        for v, entries in votes.items():
            if not majority(table.n, v.motion.silent):
                continue
            active = [p for p in range(table.n) if p not in v.motion.silent]
            by_author = {e.author: e for e in entries}
            if all(a in by_author for a in active):
                round_ = [by_author[a] for a in active]
                if any(e.index != v.point + k for k, e in enumerate(round_)):
                    continue
                if round_ == table.log[v.point : v.point + len(round_)]:
                    continue  # the round our log holds already
                there = table.log[v.point]
                if there.kind == bodies.VOID and self.point(there) == v.point and \
                        bodies.void_try(there.body) >= v.motion.attempt:
                    continue  # our log holds a round of this try or a higher one there
                out.append((v.point, -v.motion.attempt, round_))
        out.sort(key=lambda x: (x[0], x[1]))
        return [(point, round_) for point, _, round_ in out]

    # -- an equivocated index behind our log ----------------------------------------------

    def disputed(self, index: int, motion: Motion) -> bool:
        """Whether a party other than the motion's silent author, that has built nothing on
        the entry our log holds at `index` (no entry of its after that step in our log, no
        vote of its we hold at a later point), signed the void dealing again without that
        author at `index`."""
        table = self.table
        dispute = Vote(index, motion, table.prev_at(index))
        for e in self.behind.values():
            if self.voter.ballots.vote(e) != dispute:
                continue
            if table.cover[e.author] <= index and not self.voted_past(e.author, index):
                return True
        return False

    def voted_past(self, party: int, index: int) -> bool:
        """Whether we hold a vote of `party` (ours: one we signed) at a point after `index`:
        its `p` commits to the entry at `index`, and should its round complete, every log
        that takes it counts that entry as built on by `party` (4.6, the settled point). A
        decline commits to nothing (it is never part of a round)."""
        table = self.table
        ballots = [e for slot in self.voter.ballots.held.values() for e in slot.values()]
        held = [*self.behind.values(), *self.own.values(), *ballots]
        for e in held:
            point = self.point(e) if e.author == party else None
            if point is None or point <= index or bodies.is_decline(e.body):
                continue
            # one signed on another branch (its `p` not our log's at its point) commits to
            # another entry there; one ahead of our log, to what we cannot tell yet
            if point > len(table.log) or e.prev == table.prev_at(point):
                return True
        return False

    def dispute_try(self, index: int) -> int:
        """The try at which we sign the dispute at `index`: 0, or the one after the latest
        void (not a decline) we signed there, at the end of our log before the evidence came
        (4.5 R1: one void per point and try; a try past 0 is "end", 4.5 R2)."""
        tries = [self._try_of(e) for e in self.own.values()
                 if self.point(e) == index and not bodies.is_decline(e.body)]  # fmt: skip
        return max(tries) + 1 if tries else 0

    def dispute_vote(
        self, index: int, motion: Motion, party: int, identity: Identity
    ) -> Entry | None:
        """Our void at the equivocated `index` behind our log, of the motion's try: None if
        we signed one of that try or a later one there already (an honest party never signs
        two voids for one point and try), or the table could take no such round."""
        held = self.mine.get(index)
        if held is not None and self._try_of(held) >= motion.attempt:
            return None
        table = self.table
        silent = motion.silent
        if not majority(table.n, silent) or party in silent:
            return None
        if any(self.point(e) == index and self._try_of(e) == motion.attempt
               and not bodies.is_decline(e.body) for e in self.own.values()):  # fmt: skip
            return None  # (a decline we sent there before we held the evidence does not
            # hold us: the dispute, not that round, is where the table meets, 4.6 rule 3)
        active = [p for p in range(table.n) if p not in silent]
        body: dict[str, Any] = {"action": motion.action, "silent": list(silent)}
        if motion.attempt:
            body[bodies.TRY] = motion.attempt
        entry = make_entry(
            identity, table=table.terms.table_id, index=index + active.index(party),
            prev=table.prev_at(index), author=party, kind=bodies.VOID, body=body,
        )  # fmt: skip
        self.mine[index] = entry
        self.own[entry.hash] = entry
        return entry

    def restored_behind(self) -> list[int]:
        """The points behind our log, not below its settled point, of the voids (not
        declines) we took up again after a restart: until the evidence says whether each is
        a dispute's, we ask for the log from there (`Peer.sync_point`)."""
        settled, length = self.settled, len(self.table.log)
        points = (self.point(e) for h, e in self.own.items()
                  if h in self.restored and not bodies.is_decline(e.body))  # fmt: skip
        return [q for q in points if q is not None and settled <= q < length]

    def saved_dispute(self, point: int, author: int) -> Entry | None:
        """A void of the dispute of `author`'s equivocation at `point` that we signed and do
        not stand by yet (saved before a restart, `Peer.restore_vote`): its try 0, dealing
        again without `author` alone, or a retry naming `author`. Of several, the latest
        try; None if there is none. (A void there naming other parties, one we signed at the
        end of our log, is no vote in the dispute: `dispute_try`.)"""
        held = self.mine.get(point)
        best: Entry | None = None
        for e in self.own.values():
            vote = self.voter.ballots.vote(e)
            if vote is None or vote.point != point or vote.motion.declines \
                    or author not in vote.motion.silent:
                continue
            if not vote.motion.attempt and vote.motion != Motion(FAULT_ACTION, (author,)):
                continue
            if best is None or vote.motion.attempt > self._try_of(best):
                best = e
        if best is None or (held is not None and self._try_of(held) >= self._try_of(best)):
            return None
        return best

    def stand_by(self, point: int, entry: Entry) -> None:
        """A dispute void we signed before a restart: the latest try at `point` is ours."""
        held = self.mine.get(point)
        if held is None or self._try_of(entry) > self._try_of(held):
            self.mine[point] = entry

    def dispute_holders(self, point: int) -> tuple[Motion, tuple[int, ...], bool] | None:
        """Where the dispute we signed at `point` stands (4.6, as R2 at the end of the log):
        our motion there; the parties it leaves to sign from which we hold no void of its
        try or a later one there naming its silent parties (whatever its action); and
        whether all of them signed it alike (its round is complete). None: we signed no
        dispute there."""
        held = self.mine.get(point)
        vote = self.voter.ballots.vote(held) if held is not None else None
        if vote is None:
            return None
        motion = vote.motion
        signed, alike = set(), set()
        for e in [*self.behind.values(), *self.own.values()]:
            v = self.voter.ballots.vote(e)
            if v is None or v.point != point or v.motion.attempt < motion.attempt \
                    or v.prev != vote.prev or v.motion.declines:
                continue
            if v.motion.silent == motion.silent:
                # (a higher try naming the same parties answers too: a party whose first try
                # there was taken by a void it signed at the end of its log signs the
                # dispute at the next, and the retry meets it there)
                signed.add(e.author)
            if v == vote:
                alike.add(e.author)
        active = [p for p in range(self.table.n) if p not in motion.silent]
        holders = tuple(p for p in active if p not in signed)
        return motion, holders, alike >= set(active)

    def below_our_try(self, point: int, round_: list[Entry]) -> bool:
        """Whether `round_`, a complete round at `point`, is of a lower try than the dispute
        void we signed there: our vote stands against it (4.6, "The one way back")."""
        held = self.mine.get(point)
        return held is not None and bool(round_) and self._try_of(round_[0]) < self._try_of(held)

    def signed(self, point: int, round_: list[Entry]) -> bool:
        """Whether `round_`, a complete round at the dispute at `point`, holds the void we
        signed there: we agreed to it, and so did every other honest signer, whose settled
        point stays at `point` until it takes it; our vote at the end of our log does not
        stand against it (4.6 rule 3)."""
        held = self.mine.get(point)
        return held is not None and held in round_

    @staticmethod
    def _try_of(entry: Entry) -> int:
        return bodies.void_try(entry.body)

    def open_disputes(self) -> list[int]:
        """The equivocated indexes behind our log where we signed a void, lowest first: the
        points our log may yet be cut back to, as those rounds may still complete."""
        length = len(self.table.log)
        return sorted(q for q in self.mine if q < length)

    def retrying(self) -> bool:
        """Whether we signed a retry (a try past 0) at one of our open disputes: a round of
        ours at the end of our log too could close two logs at two points (4.6 rule 3)."""
        return any(self._try_of(self.mine[q]) > 0 for q in self.open_disputes())

    def waits_for_dispute(self, party: int) -> bool:
        """Whether `party` signed the void of a dispute we signed too, behind our log, and
        has built nothing on the entry our log holds there: by rule it makes no entry until
        that round is applied, so the end of our log does not wait for it (the round's own
        retry names whoever keeps the round waiting)."""
        cover = self.table.cover[party]
        disputes = {q for q in self.open_disputes() if cover <= q}
        return bool(disputes) and any(
            e.author == party and self.point(e) in disputes
            for e in [*self.behind.values(), *self.own.values()]
        )  # fmt: skip

    def standing_retry(self, party: int) -> int | None:
        """The point behind our log where `party` signed a retry of a higher try than the
        round our log holds there, if `party` has built nothing after that round: its vote
        stands there (4.5 R3) until it has waited, and then it takes our round, so it is
        behind for a reason (`Presence.stands`). The latest such point; None if none."""
        table = self.table
        length, cover = len(table.log), table.cover[party]
        best: int | None = None
        for e in self.behind.values():
            point = self.point(e) if e.author == party and not bodies.is_decline(e.body) else None
            if point is None or not cover <= point < length or (best is not None and best >= point):
                continue
            there = table.log[point]
            if there.kind == bodies.VOID and self.point(there) == point \
                    and self._try_of(there) < self._try_of(e):
                best = point
        return best

    def disputing(self, party: int) -> bool:
        """Whether we signed a void at an equivocated index behind our log and have built
        nothing on the entry there: we make no entry until that round is applied, so that
        the entry can never become settled while its round may still complete."""
        if party < 0:
            return False
        cover = self.table.cover[party]
        return any(cover <= point for point in self.mine)

    def evidence_at(
        self, index: int, evidence: dict[tuple[int, int], Equivocation]
    ) -> list[Equivocation]:
        """The equivocations we hold evidence of at `index`, but two voids of one try: those
        are two votes, and a round either completes is the log's (4.5 R6), no dispute."""
        return [err for (_, i), err in evidence.items()
                if i == index and not _votes(err)]  # fmt: skip


def _votes(err: Equivocation) -> bool:
    """Whether an equivocation's two entries are void entries (votes)."""
    try:
        return all(decode_entry(w).kind == bodies.VOID for w in err.evidence)
    except LogError:
        return False
