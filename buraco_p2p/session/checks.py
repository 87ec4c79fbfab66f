"""The content checks of every entry kind, and what each accepted entry does to the hand.

`Table` (buraco_p2p.session.table) checks what every entry shares (table, index, chain,
author, signature, schema) and then hands the parsed body here: `check_entry` dispatches on the
kind to its check (commit-reveal for the seat draw and the cut, the deck for keys, shuffles
and shares with their proofs, the engine for a move, the score and the state hash for a
result, the hand key for an opened secret, the match for the final scores). These checks run
alike for our own entries and for a peer's, so no party is judged by different rules.

Validate before reveal: `check_move` is everything a move must pass (a move is expected, the
author's seat is on turn and is the move's seat, the engine accepts its form, the slots it
shows are held by the mover) before any of it is applied; only then are reveals requested
from the deck, and this peer's shares for them are made later, by `produce`, once the step
they belong to begins.

A failed check raises `Refusal`, which `Table.apply` turns into the typed `LogError` naming
the entry's author, with the signed entry as evidence.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

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
from buraco_p2p.crypto.errors import CryptoError
from buraco_p2p.crypto.group import Point, Scalar
from buraco_p2p.engine import HandState, IllegalMove, Move, RevealError
from buraco_p2p.session import bodies
from buraco_p2p.session.bodies import Shares
from buraco_p2p.session.deal import Deal, OpenError, RevealRefused, open_hand, request_reveal
from buraco_p2p.session.entry import Entry
from buraco_p2p.session.errors import LogError, OutOfTurn, RejectedEntry
from buraco_p2p.session.events import CardSeen, Event, MoveApplied
from buraco_p2p.session.states import Phase

if TYPE_CHECKING:
    from buraco_p2p.session.tablestate import TableState

__all__ = ["Refusal", "check_entry", "check_move", "reject", "reveal_cards"]


class Refusal(Exception):
    """Raised by a check; `Table.apply` turns it into the typed `LogError` (`cls`), adding
    the entry's index, its author and the signed entry as evidence."""

    def __init__(self, cls: type[LogError], reason: str) -> None:
        self.cls = cls
        self.reason = reason


def reject(reason: str) -> Refusal:
    """An entry in its place, signed by its author, whose content is wrong."""
    return Refusal(RejectedEntry, reason)


def check_entry(t: TableState, entry: Entry, parsed: Any) -> list[Event]:
    """Check an entry's content against the table's state and apply it; `parsed` is its body
    as `bodies.check_body` returned it. Returns the events it causes."""
    kind = entry.kind
    party = entry.author
    if kind == bodies.VOID:
        return _on_void(t, party, parsed)
    if kind == bodies.COMMIT:
        _draw("seat draw", t.seat_draw.add_commitment, party, parsed)
        return []
    if kind == bodies.REVEAL:
        _draw("seat draw", t.seat_draw.add_reveal, party, parsed)
        return []
    if kind == bodies.TIME:
        return []  # any reading is the author's to give; the round's verdict is `flow`'s
    hand = t.hand
    assert hand is not None
    seat = t.party_seat[party]
    if kind == bodies.KEYS:
        key, c = parsed
        _deck(t, hand, KeyMessage(seat, key), entry.index, seat)
        hand.keys[seat] = Point.from_bytes(key[:32])
        _draw("cut draw", hand.cut.add_commitment, party, c)
        return []
    if kind == bodies.SHUFFLE:
        deck_bytes, proof = parsed
        _deck(t, hand, ShuffleMessage(seat, deck_bytes, proof), entry.index, seat)
        t.shuffles_verified += 1
        if hand.deck.phase is DeckPhase.READY and hand.face_up is not None:
            hand.deck.request_public([hand.face_up])
        return []
    if kind == bodies.DEAL:
        shares, nonce = parsed
        # The nonce first: a refused deal entry then leaves no share of it in the deck.
        _draw("cut draw", hand.cut.add_reveal, party, nonce)
        return _shares(t, hand, seat, shares, entry.index)
    if kind == bodies.MOVE:
        return _on_move(t, hand, seat, entry, parsed)
    if kind in (bodies.SHARES, bodies.END):
        return _shares(t, hand, seat, parsed, entry.index)
    if kind == bodies.RESULT:
        totals, state = parsed
        assert hand.view is not None and hand.result is not None
        if tuple(totals) != hand.result.totals:
            raise reject(f"hand score {totals} is not {list(hand.result.totals)}")
        if state != hand.view.state_hash():
            raise reject("the state hash does not match the hand's final state")
        return []
    if kind == bodies.OPEN:
        try:
            x = Scalar.from_bytes(parsed)
        except CryptoError as exc:
            raise reject(f"hand secret: {exc}") from None
        if x.is_zero() or Point.base_mul(x) != hand.keys[seat]:
            raise reject("the hand secret does not match the seat's hand key")
        hand.secrets[seat] = x
        if t.me is None and len(hand.secrets) == t.n:
            hand.opened = _opened(t, hand)
        return []
    if kind == bodies.FINAL:
        assert t.match is not None
        if tuple(parsed) != tuple(t.match.scores):
            raise reject(f"final scores {parsed} are not {t.match.scores}")
        return []
    raise Refusal(OutOfTurn, f"unexpected kind {kind!r}")  # pragma: no cover


def _draw(what: str, step: Callable[[int, bytes], None], party: int, value: bytes) -> None:
    """A commitment or a nonce for a commit-reveal draw: a nonce that does not open the
    party's commitment (or any other refusal of the draw) is that party's fault."""
    try:
        step(party, value)
    except CryptoError as exc:
        raise reject(f"{what}: {exc}") from None


def _deck(t: TableState, hand: Deal, msg: Any, index: int, seat: int) -> list[Event]:
    try:
        events = hand.deck.receive(msg, index, sender=seat)
    except DeckError as exc:
        raise reject(f"deck: {exc.reason}") from None
    return reveal_cards(t, hand, events)


def reveal_cards(t: TableState, hand: Deal, events: Sequence[DeckEvent]) -> list[Event]:
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
            raise reject(f"reveal of slot {ev.slot}: {exc}") from None
        if not public:
            out.append(CardSeen(ev.slot, ev.card))
    return out


def _shares(t: TableState, hand: Deal, seat: int, shares: Shares | None, index: int) -> list[Event]:
    owed = hand.deck.owed_by(seat)
    got = shares.slots if shares is not None else ()
    if got != owed:
        raise reject(f"shares for slots {list(got)}, owed {list(owed)}")
    if shares is None:
        return []
    return _deck(t, hand, SharesMessage(seat, shares.slots, shares.batch), index, seat)


def _on_move(t: TableState, hand: Deal, seat: int, entry: Entry, parsed: Any) -> list[Event]:
    move, shares = parsed
    view = hand.view
    assert view is not None
    shown = check_move(t, seat, move)
    got = shares.slots if shares is not None else ()
    if got != shown:
        raise reject(f"the move shows slots {list(shown)} but carries shares for {list(got)}")
    events: list[Event] = []
    if shares is not None:
        _request(hand.deck, shown, seat, public=True)
        batch = SharesMessage(seat, shares.slots, shares.batch)
        events += _deck(t, hand, batch, entry.index, seat)
    try:
        requests = view.push(move)
    except IllegalMove as exc:
        raise reject(f"illegal move: {exc}") from None
    events.append(MoveApplied(seat, move))
    deck = hand.deck
    if view.ended:
        # The count is the table's request, not a seat's: a pot whose private reveal was
        # still held back opens here too, though its taker never saw it.
        public = deck.public_cards()
        left = [x for s in range(t.n) for x in view.hand(s) if x not in public]
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


def check_move(t: TableState, seat: int, move: Move) -> tuple[int, ...]:
    """Validate before reveal: the checks made on a move before any card of it is shown
    or any share released. Returns the slots it shows (ascending), which the mover's own
    shares must cover exactly; raises `Refusal` otherwise."""
    view = t.view
    if view is None or t.phase is not Phase.TURN:
        raise Refusal(OutOfTurn, "no move is expected now")
    if move.seat != seat:
        raise Refusal(OutOfTurn, f"a move for seat {move.seat} signed by seat {seat}")
    if view.turn != seat:
        raise Refusal(OutOfTurn, f"seat {view.turn} is on turn, not seat {seat}")
    try:
        shown = view.exposed_by(move)
    except IllegalMove as exc:
        raise reject(f"illegal move: {exc}") from None
    held = set(view.hand(seat))
    if len(set(shown)) != len(shown) or not set(shown) <= held:
        foreign = sorted(set(shown) - held)
        raise reject(f"the move shows slots {foreign} the mover does not hold")
    # Cards already public (a taken pile's) need no share: the rest are the mover's own.
    public = t.hand.deck.public_cards() if t.hand is not None else {}
    return tuple(sorted(s for s in shown if s not in public))


def _on_void(t: TableState, party: int, parsed: Any) -> list[Event]:
    action, silent, keys, attempt = parsed
    if action == bodies.DECLINE:
        raise reject("a decline answers a void and is never part of a round")
    if tuple(silent) != t.silent:
        raise reject("a void agreement naming other silent parties")
    if t.voiding == "pending":
        t.void_try = attempt
        if action == bodies.REPLACE:
            if t.match is None:
                raise reject("a seat can be taken over only once the seats are drawn")
            seated = {k.raw for k in t.keys} | {k.raw for k in t.terms.keys}
            seated |= {k.raw for _, _, k in t.successions}
            if any(k in seated for k in keys):
                raise reject("a new identity is already at the table (or was)")
        t.voiding = action
        t.void_keys = tuple(keys)
    elif action != t.voiding or tuple(keys) != t.void_keys:
        raise reject(f"a void agreement for {action!r}, the round agrees on {t.voiding!r}")
    elif attempt != t.void_try:
        raise reject(f"a void agreement of try {attempt}, the round is try {t.void_try}")
    return []


def _opened(t: TableState, hand: Deal) -> tuple[int, ...]:
    try:
        return open_hand(hand, t.n)
    except OpenError as exc:
        raise reject(str(exc)) from None


def _request(deck: DeckSession, slots: Sequence[int], owner: int | None, *, public: bool) -> None:
    try:
        request_reveal(deck, slots, owner, public=public)
    except RevealRefused as exc:
        raise reject(str(exc)) from None


def _prev(view: HandState, seat: int) -> int:
    return view.next_seat.index(seat)
