"""A settled log walked into a match record: the seats, and every deal as the log shows it.

`Walker` feeds a log's entries, in order, to the same `Table` a peer and `verify` use, and
keeps what a replay draws: for each deal (`HandRecord`) its dealer and shufflers, its setup,
the log index of every move, each slot's card from the move that made it public, the result
and the match scores after it, every slot's card once the hand's keys were opened, and the
table's news (a void, an abandonment, the time up). The engine states themselves are made
later, on demand, from these (`buraco_p2p.replay.telling`).

The walker is given only entries that `verify` has already settled good (every signature and
proof checked: `buraco_p2p.replay.checking` says how far). It does not check them a second
time: the proofs are taken as passed (`SETTLED`) and the signatures as verified, which leaves
the engine, the decryption of the shown cards and the opening of each hand, a tenth of the
audit's work. It can be fed a little at a time (`feed(upto)`), so a screen stays responsive
while a long log is read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from buraco_p2p.crypto.elgamal import Ciphertext, decode_deck
from buraco_p2p.crypto.group import Point
from buraco_p2p.crypto.keys import KeyAnnouncement
from buraco_p2p.crypto.shares import ShareBatch
from buraco_p2p.crypto.transcript import ProofContext
from buraco_p2p.engine import HandResult, HandSetup, HandState
from buraco_p2p.rules import RuleSet
from buraco_p2p.session import (
    Abandoned,
    HandEnded,
    HandStarted,
    LogError,
    MoveApplied,
    Table,
    Terms,
    TimeUp,
    Voided,
    decode_entry,
)
from buraco_p2p.session.deal import Deal
from buraco_p2p.text.narration import TIME_UP, abandoned_text, voided_line

__all__ = ["SETTLED", "HandRecord", "Walker"]


class _Settled:
    """The deck's proof checks for entries `verify` has settled: passed, as they did there."""

    def key(self, ann: KeyAnnouncement) -> None:
        pass

    def shuffle(
        self,
        ctx: ProofContext,
        table_key: Point,
        deck_in: Sequence[Ciphertext],
        deck_out: bytes,
        proof: bytes,
    ) -> tuple[Ciphertext, ...]:
        return decode_deck(deck_out, len(deck_in))

    def shares(
        self, public: Point, cts: Sequence[Ciphertext], batch: ShareBatch, ctx: ProofContext
    ) -> None:
        pass


SETTLED = _Settled()


@dataclass
class HandRecord:
    """One deal as the log shows it (`deal` counts every deal from 0, a voided one too).

    `public` is the verifier's own engine view of the hand (the public cards only), whole once
    the record is `closed`; `public_from[slot]` is the number of moves after which that slot's
    card was public (0: from the deal; the count reveals every card left in a hand after the
    last move). `cards` (slot -> card id) is known once the hand's keys were opened at its end
    (docs/protocol.md 4.4 step 6); a hand voided or cut short has none, and is shown from the
    public record only. `before` are the table's notices said before this deal's shuffles
    (the time up), `after` those that ended it (a void, an abandonment); `scores` are the
    match scores after it (its result, or a charge), `last` the log index of its last entry.
    """

    deal: int
    dealer: int
    shufflers: list[int] = field(default_factory=list)
    setup: HandSetup | None = None
    public: HandState | None = None
    dealt_at: int = -1
    moves_at: list[int] = field(default_factory=list)
    public_from: dict[int, int] = field(default_factory=dict)
    result: HandResult | None = None
    scores: tuple[int, ...] | None = None
    cards: tuple[int, ...] | None = None
    before: list[str] = field(default_factory=list)
    after: list[str] = field(default_factory=list)
    voided: str = ""  # the void agreement that ended it ("void", "end", "replace")
    closed: bool = False
    last: int = -1

    @property
    def opened(self) -> bool:
        return self.cards is not None


class Walker:
    """The log's entries, walked in order into `hands` (see the module docstring)."""

    def __init__(self, wires: Sequence[bytes]) -> None:
        """`wires[0]` must be a genesis (`LogError` otherwise); nothing else is read yet."""
        self.wires = wires
        self.table = Table(decode_entry(wires[0]), checks=SETTLED)
        self.terms: Terms = self.table.terms
        self.pos = 1  # the next entry to walk
        self.hands: list[HandRecord] = []
        self.seating: tuple[int, ...] = ()  # the party at each seat, once drawn
        self.notices: list[str] = []  # said since the last deal, for the next one (or the end)
        self.refused: LogError | None = None  # an entry this walk could not apply (see feed)
        self._deal: Deal | None = None

    @property
    def rules(self) -> RuleSet:
        return self.terms.rules

    def nick(self, seat: int) -> str:
        """The nickname of the player at `seat` (the party's, in the genesis)."""
        if not self.seating:
            return f"seat {seat}"
        return self.terms.nicknames[self.seating[seat]]

    def seat_of(self, party: int) -> int:
        """The seat of `party` by the log's seat draw (-1 until it is walked)."""
        return self.seating.index(party) if party in self.seating else -1

    def party_nick(self, party: int) -> str:
        return self.terms.nicknames[party]

    @property
    def scores(self) -> tuple[int, ...]:
        """The match scores as the walk stands."""
        match = self.table.match
        return tuple(match.scores) if match is not None else ()

    @property
    def closed(self) -> bool:
        """The match ended in the log (the final round, or a void that closed it)."""
        return self.table.closed

    def feed(self, upto: int) -> None:
        """Walk the entries up to (not including) position `upto`. An entry the table
        refuses (which a settled entry never is) stops the walk there, in `refused`."""
        upto = min(upto, len(self.wires))
        while self.pos < upto and self.refused is None:
            entry = decode_entry(self.wires[self.pos])
            t = self.table
            try:
                events = t.apply(entry, signed=t.key_at(entry.author, entry.index))
            except LogError as err:
                self.refused = err
                break
            self._note(entry.index, entry.kind, entry.author, events)
            self.pos += 1

    def finish(self) -> None:
        """The walk is over (the settled log ends here): the deal in progress is closed."""
        if self.hands:
            self.hands[-1].closed = True

    # ------------------------------------------------------------------ what an entry did

    def _note(self, index: int, kind: str, author: int, events: Sequence[object]) -> None:
        """What entry `index` did: first to the deal it belongs to, then a new deal begun."""
        t = self.table
        if not self.seating and t.seating:
            self.seating = tuple(t.seating)
        rec = self.hands[-1] if self.hands else None
        if rec is not None and not rec.closed:
            rec.last = index
            if kind == "shuffle":
                rec.shufflers.append(t.party_seat[author])
        for ev in events:
            self._event(rec, index, ev)
        deal = self._deal
        if rec is not None and deal is not None:
            self._publicised(rec)
            if deal.opened is not None and rec.cards is None:
                rec.cards = deal.opened
                rec.closed = True
        if t.closed and rec is not None:
            rec.closed = True
        if t.hand is not None and t.hand is not deal:
            self._begin(t.hand)

    def _event(self, rec: HandRecord | None, index: int, ev: object) -> None:
        if isinstance(ev, HandStarted) and rec is not None:
            assert self._deal is not None and self._deal.view is not None
            rec.setup = self._deal.view.setup
            rec.public = self._deal.view
            rec.dealt_at = index
        elif isinstance(ev, MoveApplied) and rec is not None:
            rec.moves_at.append(index)
        elif isinstance(ev, HandEnded) and rec is not None:
            rec.result = ev.result
            rec.scores = self.scores
        elif isinstance(ev, Voided):
            line = voided_line(ev.action, [self.party_nick(p) for p in ev.silent])
            if rec is not None and not rec.opened:
                rec.voided = ev.action
                rec.after.append(line)
            else:
                self.notices.append(line)
        elif isinstance(ev, Abandoned) and rec is not None:
            rec.after.append(abandoned_text(ev, self.party_nick))
            rec.scores = self.scores
        elif isinstance(ev, TimeUp):
            self.notices.append(TIME_UP)

    def _begin(self, deal: Deal) -> None:
        """A new deal: the one before it (voided, or opened) is over."""
        if self.hands:
            self.hands[-1].closed = True
        self._deal = deal
        rec = HandRecord(deal.number, deal.dealer, before=self.notices)
        self.notices = []
        self.hands.append(rec)

    def _publicised(self, rec: HandRecord) -> None:
        """Note the slots that became public since the last look, with the moves made."""
        view = rec.public
        if view is None:
            return
        k = len(rec.moves_at)
        for slot in view.public - rec.public_from.keys():
            rec.public_from[slot] = k
