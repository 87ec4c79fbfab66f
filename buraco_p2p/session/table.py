"""The table: one match's log replayed through the state machine, by a seat or a verifier.

`Table` is the single implementation of the protocol's checks. A peer (`Peer`) feeds it every
entry of the log, its own included, and asks it what it owes next; an offline verifier
(`replay`) feeds it a log file with `me=None`, no secrets. Each entry is checked in full
before it counts: version and table id, index, previous step head, author (the transition
table, `buraco_p2p.session.states`), signature, the body's schema, then its content (key,
shuffle and share proofs through the deck, commitments, the move through the engine, the
score). A refused entry raises a `LogError` naming its author, with the signed entry as
evidence; the table then accepts no further entry but a void agreement.

Validate before reveal: a move is checked (author on turn, the move's seat, the slots it shows
held by the mover) before anything of it is applied, and this peer's shares for it are made
only after the engine has accepted it (`produce`, called after `apply`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from buraco_p2p.crypto.deck import (
    CardRevealed,
    DeckError,
    DeckEvent,
    DeckPhase,
    DeckSession,
    KeyMessage,
    SharesMessage,
    ShuffleMessage,
)
from buraco_p2p.crypto.deck import (
    CardSeen as DeckCardSeen,
)
from buraco_p2p.crypto.errors import CommitRevealError, CryptoError
from buraco_p2p.crypto.group import Point, RandomSource, Scalar
from buraco_p2p.crypto.keys import KeyPair
from buraco_p2p.crypto.randomness import (
    CoinContext,
    CommitReveal,
    new_nonce,
    permutation,
    uniform_choice,
    uniform_int,
)
from buraco_p2p.engine import (
    HandState,
    IllegalMove,
    IllegalMoveCode,
    Match,
    Move,
    PlayerView,
    RevealError,
    deal_layout,
    score_hand,
)
from buraco_p2p.session import bodies
from buraco_p2p.session.bodies import BodyError, Shares, check_body
from buraco_p2p.session.deal import Deal, OpenError, RevealRefused, open_hand, request_reveal
from buraco_p2p.session.entry import PROTOCOL_VERSION, Entry, step_head
from buraco_p2p.session.errors import (
    BrokenChain,
    LogError,
    MalformedEntry,
    OutOfTurn,
    RejectedEntry,
    WrongTable,
)
from buraco_p2p.session.events import (
    CardSeen,
    Event,
    HandEnded,
    HandStarted,
    MatchEnded,
    MoveApplied,
    SeatsDrawn,
    Voided,
    YourTurn,
)
from buraco_p2p.session.produce import CUT, SEATS, produce_entry, produce_move
from buraco_p2p.session.states import TRANSITIONS, VOID_RULE, Phase, Rule
from buraco_p2p.session.terms import Terms, parse_genesis

__all__ = ["SEATS", "Table"]


class _Refused(Exception):
    """Raised inside a handler; `Table.apply` turns it into the typed `LogError`."""

    def __init__(self, cls: type[LogError], reason: str) -> None:
        self.cls = cls
        self.reason = reason


def _reject(reason: str) -> _Refused:
    return _Refused(RejectedEntry, reason)


class Table:
    """One match's log through the state machine, as seat `me` (party index) or as a verifier.

    `me` is this peer's party (its position in the genesis); `rng` its private random source
    (nonces, hand keys, proofs). A verifier passes neither.
    """

    def __init__(
        self, genesis: Entry, *, me: int | None = None, rng: RandomSource | None = None
    ) -> None:
        self.terms: Terms = parse_genesis(genesis)
        n = self.terms.parties
        if me is not None and not 0 <= me < n:
            raise ValueError(f"party {me} is not one of the {n} parties")
        if (me is None) != (rng is None):
            raise ValueError("a party needs a random source; a verifier none")
        self.n = n
        self.me = me
        self._rng = rng
        self.rules = self.terms.rules
        self.log: list[Entry] = [genesis]
        self.phase = Phase.SEATS_COMMIT
        self.step_prev = step_head([genesis.hash])
        self.step_start = 1
        self.step_hashes: list[bytes] = []
        self.authors: tuple[int, ...] = tuple(range(n))
        self.fault: LogError | None = None
        self.seating: tuple[int, ...] = ()
        self.party_seat: tuple[int, ...] = ()
        self.match: Match | None = None
        self.hand: Deal | None = None
        self.hands_played = 0
        self.shuffles_verified = 0
        self.opened: list[tuple[int, ...]] = []  # verifier: every finished hand's cards
        self.silent: tuple[int, ...] = ()
        self.voiding: str | None = None
        self._seats = CommitReveal(CoinContext(self.terms.table_id, SEATS, 0), n)
        self._seat_nonce = new_nonce(rng) if rng is not None else None

    # ------------------------------------------------------------------ queries

    @property
    def rule(self) -> Rule:
        return VOID_RULE if self.voiding is not None else TRANSITIONS[self.phase]

    @property
    def closed(self) -> bool:
        return self.phase is Phase.CLOSED

    @property
    def waiting_for(self) -> tuple[int, ...]:
        """Parties whose entries the current step still needs, in log order."""
        return self.authors[len(self.step_hashes) :]

    def index_of(self, party: int) -> int | None:
        """The log index of `party`'s entry in the current step, if it owes one."""
        if party not in self.waiting_for:
            return None
        return self.step_start + self.authors.index(party)

    def expected_author(self, index: int) -> int | None:
        k = index - self.step_start
        return self.authors[k] if 0 <= k < len(self.authors) else None

    @property
    def view(self) -> HandState | None:
        return self.hand.view if self.hand is not None else None

    @property
    def my_seat(self) -> int | None:
        if self.me is None or not self.party_seat:
            return None
        return self.party_seat[self.me]

    def seat_of(self, party: int) -> int:
        return self.party_seat[party]

    # ------------------------------------------------------------------ applying entries

    def apply(self, entry: Entry, *, own: bool = False, signed: bool = False) -> list[Event]:
        """Check one entry in its place and apply it; raise `LogError` naming its author.

        `own`: the entry was made and signed by this peer (its signature and proofs need no
        checking); `signed`: its signature has been checked already (on receipt). After a
        refusal the table is faulted and refuses everything but a void.
        """
        try:
            return self._apply(entry, own, signed)
        except _Refused as r:
            err = r.cls(r.reason, index=entry.index, author=entry.author, evidence=(entry.wire,))
        except LogError as e:
            err = e
        if not isinstance(err, BrokenChain | WrongTable | OutOfTurn) or own:
            self.fault = self.fault or err
        raise err

    def _apply(self, entry: Entry, own: bool, signed: bool) -> list[Event]:
        if entry.version != PROTOCOL_VERSION or entry.table != self.terms.table_id:
            raise _Refused(WrongTable, "entry of another table or protocol version")
        if entry.index != len(self.log):
            raise _Refused(BrokenChain, f"index {entry.index}, the log is at {len(self.log)}")
        if self.closed:
            raise _Refused(OutOfTurn, "the log is closed")
        if self.fault is not None and entry.kind != bodies.VOID:
            raise _Refused(OutOfTurn, f"the table stopped at a fault: {self.fault}")
        saved = None
        if entry.kind == bodies.VOID and self.voiding is None:
            saved = (self.authors, self.step_prev, self.step_start, self.step_hashes, self.silent)
            self._open_void(entry)
        try:
            return self._apply_in_step(entry, own, signed)
        except BaseException:
            if saved is not None and self.voiding == "pending":
                self.voiding = None
                self.authors, self.step_prev, self.step_start, self.step_hashes, self.silent = saved
            raise

    def _apply_in_step(self, entry: Entry, own: bool, signed: bool) -> list[Event]:
        if self.expected_author(entry.index) != entry.author:
            raise _Refused(OutOfTurn, f"not this party's turn to append ({self.phase.value})")
        if entry.prev != self.step_prev:
            raise _Refused(BrokenChain, "previous hash does not name the step before")
        if not (own or signed):
            entry.verify(self.terms.keys)
        rule = self.rule
        if entry.kind != rule.kind:
            raise _Refused(OutOfTurn, f"a {entry.kind!r} entry where {rule.kind!r} is expected")
        try:
            parsed = check_body(entry.kind, entry.body, self.n, self.rules.deck_size)
        except BodyError as exc:
            raise _Refused(MalformedEntry, str(exc)) from None
        events = self._handle(entry, parsed)
        self.log.append(entry)
        self.step_hashes.append(entry.hash)
        if len(self.step_hashes) == len(self.authors):
            self.step_prev = step_head(self.step_hashes)
            self.step_hashes = []
            self.step_start = len(self.log)
            events.extend(self._next_step())
        return events

    def void_prev(self) -> bytes:
        """What a void agreement names as `p`: it closes the step under way where it stands
        (the head of the entries that step has so far), or follows the last complete step."""
        return step_head(self.step_hashes) if self.step_hashes else self.step_prev

    def _open_void(self, entry: Entry) -> None:
        """A void agreement may start at any point: its authors are every party but the
        silent ones it names, which must be parties the table is waiting for or the author
        of the fault that stopped it (the body is checked again by its schema)."""
        silent = entry.body.get("silent")
        if self.phase in (Phase.GENESIS, Phase.CLOSED) or not isinstance(silent, list):
            return
        if not silent or not all(type(p) is int and 0 <= p < self.n for p in silent):
            return
        blamable = set(self.waiting_for)
        if self.fault is not None and self.fault.author is not None:
            blamable.add(self.fault.author)
        active = tuple(p for p in range(self.n) if p not in silent)
        if not active or not set(silent) <= blamable:
            return
        self.voiding = "pending"
        self.silent = tuple(sorted(set(silent)))
        self.step_prev = self.void_prev()
        self.step_hashes = []
        self.step_start = len(self.log)
        self.authors = active

    # ------------------------------------------------------------------ handlers

    def _handle(self, entry: Entry, parsed: Any) -> list[Event]:
        kind = entry.kind
        party = entry.author
        if kind == bodies.VOID:
            return self._on_void(party, parsed)
        if kind == bodies.COMMIT:
            self._seats.add_commitment(party, parsed)
            return []
        if kind == bodies.REVEAL:
            try:
                self._seats.add_reveal(party, parsed)
            except CommitRevealError as exc:
                raise _reject(f"seat draw: {exc}") from None
            return []
        hand = self.hand
        assert hand is not None
        seat = self.party_seat[party]
        if kind == bodies.KEYS:
            key, c = parsed
            self._deck(hand, KeyMessage(seat, key), entry.index, seat)
            hand.keys[seat] = Point.from_bytes(key[:32])
            hand.cut.add_commitment(party, c)
            return []
        if kind == bodies.SHUFFLE:
            deck_bytes, proof = parsed
            self._deck(hand, ShuffleMessage(seat, deck_bytes, proof), entry.index, seat)
            self.shuffles_verified += 1
            if hand.deck.phase is DeckPhase.READY and hand.face_up is not None:
                hand.deck.request_public([hand.face_up])
            return []
        if kind == bodies.DEAL:
            shares, nonce = parsed
            events = self._shares(hand, seat, shares, entry.index)
            try:
                hand.cut.add_reveal(party, nonce)
            except CommitRevealError as exc:
                raise _reject(f"cut draw: {exc}") from None
            return events
        if kind == bodies.MOVE:
            return self._on_move(hand, seat, entry, parsed)
        if kind in (bodies.SHARES, bodies.END):
            return self._shares(hand, seat, parsed, entry.index)
        if kind == bodies.RESULT:
            totals, state = parsed
            assert hand.view is not None and hand.result is not None
            if tuple(totals) != hand.result.totals:
                raise _reject(f"hand score {totals} is not {list(hand.result.totals)}")
            if state != hand.view.state_hash():
                raise _reject("the state hash does not match the hand's final state")
            return []
        if kind == bodies.OPEN:
            try:
                x = Scalar.from_bytes(parsed)
            except CryptoError as exc:
                raise _reject(f"hand secret: {exc}") from None
            if x.is_zero() or Point.base_mul(x) != hand.keys[seat]:
                raise _reject("the hand secret does not match the seat's hand key")
            hand.secrets[seat] = x
            if self.me is None and len(hand.secrets) == self.n:
                hand.opened = self._opened(hand)
            return []
        if kind == bodies.FINAL:
            assert self.match is not None
            if tuple(parsed) != tuple(self.match.scores):
                raise _reject(f"final scores {parsed} are not {self.match.scores}")
            return []
        raise _Refused(OutOfTurn, f"unexpected kind {kind!r}")  # pragma: no cover

    def _deck(self, hand: Deal, msg: Any, index: int, seat: int) -> list[Event]:
        try:
            events = hand.deck.receive(msg, index, sender=seat)
        except DeckError as exc:
            raise _reject(f"deck: {exc.reason}") from None
        return self._cards(hand, events)

    def _cards(self, hand: Deal, events: Sequence[DeckEvent]) -> list[Event]:
        out: list[Event] = []
        view = hand.view
        for ev in events:
            if not isinstance(ev, DeckCardSeen | CardRevealed):
                continue
            if view is None:
                hand.early.append(ev)
                continue
            public = isinstance(ev, CardRevealed)
            try:
                view.reveal(ev.slot, ev.card, public=public)
            except RevealError as exc:
                raise _reject(f"reveal of slot {ev.slot}: {exc}") from None
            if not public:
                out.append(CardSeen(ev.slot, ev.card))
        return out

    def _shares(self, hand: Deal, seat: int, shares: Shares | None, index: int) -> list[Event]:
        owed = hand.deck.owed_by(seat)
        got = shares.slots if shares is not None else ()
        if got != owed:
            raise _reject(f"shares for slots {list(got)}, owed {list(owed)}")
        if shares is None:
            return []
        return self._deck(hand, SharesMessage(seat, shares.slots, shares.batch), index, seat)

    def _on_move(self, hand: Deal, seat: int, entry: Entry, parsed: Any) -> list[Event]:
        move, shares = parsed
        view = hand.view
        assert view is not None
        shown = self.check_move(seat, move)
        got = shares.slots if shares is not None else ()
        if got != shown:
            raise _reject(f"the move shows slots {list(shown)} but carries shares for {list(got)}")
        events: list[Event] = []
        if shares is not None:
            _request(hand.deck, shown, seat, public=True)
            events += self._deck(
                hand, SharesMessage(seat, shares.slots, shares.batch), entry.index, seat
            )
        try:
            requests = view.push(move)
        except IllegalMove as exc:
            raise _reject(f"illegal move: {exc}") from None
        events.append(MoveApplied(seat, move))
        deck = hand.deck
        if view.ended:
            # The count is the table's request, not a seat's: a pot whose private reveal was
            # still held back opens here too, though its taker never saw it.
            public = deck.public_cards()
            left = [x for s in range(self.n) for x in view.hand(s) if x not in public]
            if left:
                _request(deck, sorted(left), None, public=True)
            hand.deferred.clear()
            return events
        for r in requests:
            if r.seat is None:
                _request(deck, [r.slot], None, public=True)
            elif r.seat == view.turn:
                _request(deck, [r.slot], r.seat, public=False)
            else:
                # A pot reached with a discard (or a melding move that ends the turn): its
                # cards are not looked at until the seat before its taker has played.
                hand.deferred.append(r)
        due = [r for r in hand.deferred if r.seat is not None and view.turn == _prev(view, r.seat)]
        for r in due:
            assert r.seat is not None
            _request(deck, [r.slot], r.seat, public=False)
            hand.deferred.remove(r)
        return events

    def check_move(self, seat: int, move: Move) -> tuple[int, ...]:
        """Validate before reveal: the checks made on a move before any card of it is shown
        or any share released. Returns the slots it shows (ascending), which the mover's own
        shares must cover exactly; raises `_Refused` otherwise."""
        view = self.view
        if view is None or self.phase is not Phase.TURN:
            raise _Refused(OutOfTurn, "no move is expected now")
        if move.seat != seat:
            raise _Refused(OutOfTurn, f"a move for seat {move.seat} signed by seat {seat}")
        if view.turn != seat:
            raise _Refused(OutOfTurn, f"seat {view.turn} is on turn, not seat {seat}")
        try:
            shown = view.exposed_by(move)
        except IllegalMove as exc:
            raise _reject(f"illegal move: {exc}") from None
        held = set(view.hand(seat))
        if len(set(shown)) != len(shown) or not set(shown) <= held:
            foreign = sorted(set(shown) - held)
            raise _reject(f"the move shows slots {foreign} the mover does not hold")
        # Cards already public (a taken pile's) need no share: the rest are the mover's own.
        public = self.hand.deck.public_cards() if self.hand is not None else {}
        return tuple(sorted(s for s in shown if s not in public))

    def _on_void(self, party: int, parsed: Any) -> list[Event]:
        action, silent = parsed
        if tuple(silent) != self.silent:
            raise _reject("a void agreement naming other silent parties")
        if self.voiding == "pending":
            self.voiding = action
        elif action != self.voiding:
            raise _reject(f"a void agreement for {action!r}, the round agrees on {self.voiding!r}")
        return []

    # ------------------------------------------------------------------ the next step

    def _set(self, phase: Phase, authors: Sequence[int]) -> None:
        self.phase = phase
        self.authors = tuple(authors)

    def _next_step(self) -> list[Event]:
        everyone = tuple(range(self.n))
        if self.voiding is not None:
            action = self.voiding
            self.voiding = None
            self.fault = None
            events: list[Event] = [Voided(action, self.silent)]
            if action == "end" or self.match is None:
                self._set(Phase.CLOSED, ())
                return events
            self.silent = ()
            return events + self._start_hand()
        phase = self.phase
        hand = self.hand
        if phase is Phase.SEATS_COMMIT:
            self._set(Phase.SEATS_REVEAL, everyone)
            return []
        if phase is Phase.SEATS_REVEAL:
            seed = self._seats.seed()
            self.seating = tuple(permutation(seed, self.n, label=b"seats"))
            ps = [0] * self.n
            for s, p in enumerate(self.seating):
                ps[p] = s
            self.party_seat = tuple(ps)
            dealer = uniform_choice(seed, self.n, label=b"dealer")
            self.match = Match(self.rules, first_dealer=dealer)
            return [SeatsDrawn(self.seating, dealer), *self._start_hand()]
        assert hand is not None
        if phase is Phase.HAND_KEYS:
            self._set(Phase.SHUFFLE, (self.seating[0],))
            return []
        if phase is Phase.SHUFFLE:
            nxt = hand.deck.next_shuffler
            if nxt is not None:
                self._set(Phase.SHUFFLE, (self.seating[nxt],))
                return []
            self._set(Phase.DEAL, everyone)
            return []
        if phase is Phase.DEAL:
            return self._dealt(hand)
        if phase in (Phase.TURN, Phase.REVEAL):
            return self._after_move(hand)
        if phase is Phase.COUNT:
            assert hand.view is not None
            hand.result = score_hand(hand.view)
            self._set(Phase.RESULT, everyone)
            return []
        if phase is Phase.RESULT:
            assert self.match is not None and hand.result is not None
            self.match.record(hand.result)
            self.hands_played += 1
            self._set(Phase.OPEN, everyone)
            return [HandEnded(hand.result)]
        if phase is Phase.OPEN:
            if hand.opened is not None:
                self.opened.append(hand.opened)
            assert self.match is not None
            if self.match.over:
                self._set(Phase.FINAL, everyone)
                return []
            return self._start_hand()
        if phase is Phase.FINAL:
            assert self.match is not None
            self._set(Phase.CLOSED, ())
            return [MatchEnded(tuple(self.match.scores), self.match.winner)]
        raise AssertionError(phase)  # pragma: no cover

    def _start_hand(self) -> list[Event]:
        assert self.match is not None
        number = 0 if self.hand is None else self.hand.number + 1
        rules = self.rules
        dealer = self.match.dealer
        # The engine's own play order for this deal, at any seat count.
        order = HandState(self.match.next_setup(), None, None).order
        layout = deal_layout(rules)
        rng = self._rng
        keypair = KeyPair.generate(rng) if rng is not None else None
        deck = DeckSession(
            table_id=self.terms.table_id,
            hand=number,
            players=[self.terms.keys[p].raw for p in self.seating],
            me=self.my_seat,
            keypair=keypair,
            layout=layout,
            play_order=order,
            rng=rng,
        )
        cut = CommitReveal(CoinContext(self.terms.table_id, CUT, number), self.n)
        self.hand = Deal(
            number,
            dealer,
            layout.face_up,
            deck,
            cut,
            keypair,
            new_nonce(rng) if rng is not None else None,
        )
        self._set(Phase.HAND_KEYS, tuple(range(self.n)))
        return []

    def _dealt(self, hand: Deal) -> list[Event]:
        assert self.match is not None
        seed = hand.cut.seed()
        cut = uniform_int(seed, 1, self.rules.deck_size - 1, label=b"cut")
        setup = self.match.next_setup(cut=cut)
        seat = self.my_seat
        hand.view = PlayerView(setup, seat) if seat is not None else HandState(setup, None, None)
        events: list[Event] = [HandStarted(hand.number, hand.dealer, cut)]
        events += self._cards(hand, hand.early)
        hand.early = []
        return events + self._to_turn(hand)

    def _after_move(self, hand: Deal) -> list[Event]:
        view = hand.view
        assert view is not None
        if view.ended:
            self._set(Phase.COUNT, tuple(range(self.n)))
            return []
        owing = [p for p in range(self.n) if hand.deck.owed_by(self.party_seat[p])]
        if owing and self.phase is Phase.TURN:
            self._set(Phase.REVEAL, owing)
            return []
        return self._to_turn(hand)

    def _to_turn(self, hand: Deal) -> list[Event]:
        view = hand.view
        assert view is not None
        self._set(Phase.TURN, (self.seating[view.turn],))
        if view.turn == self.my_seat:
            return [YourTurn(view.turn)]
        return []

    def _opened(self, hand: Deal) -> tuple[int, ...]:
        try:
            return open_hand(hand, self.n)
        except OpenError as exc:
            raise _reject(str(exc)) from None

    # ------------------------------------------------------------------ producing entries

    def produce(self) -> tuple[int, str, dict[str, Any]] | None:
        """The entry this party owes in the current step, if any but a move: (index, kind,
        body). Call once per step; a move comes from `move_body`."""
        return produce_entry(self)

    def move_body(self, move: Move) -> tuple[int, dict[str, Any]]:
        """The body of our own move (see `buraco_p2p.session.produce.move_body`); raises
        `IllegalMove` for a move that would be refused, which then changes nothing."""
        try:
            return produce_move(self, move)
        except _Refused as r:
            seat = self.my_seat
            raise IllegalMove(_code_for(r), r.reason, seat) from None


def _request(deck: DeckSession, slots: Sequence[int], owner: int | None, *, public: bool) -> None:
    try:
        request_reveal(deck, slots, owner, public=public)
    except RevealRefused as exc:
        raise _reject(str(exc)) from None


def _prev(view: HandState, seat: int) -> int:
    return view.next_seat.index(seat)


def _code_for(r: _Refused) -> IllegalMoveCode:
    return IllegalMoveCode.WRONG_PLAYER if r.cls is OutOfTurn else IllegalMoveCode.NOT_HELD
