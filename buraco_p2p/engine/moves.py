"""Moves: what a player does on their turn, as frozen values with a compact wire form.

Every move names the seat that makes it, so that a replayed log can be checked move by move
against the turn order. Cards are named by *slot* (position in the shuffled deck), never by
face: a move that exposes cards (lay down, add, discard) names slots whose identities the
session reveals publicly before the move is applied.

Wire form: a flat list of small ints, `[kind, seat, ...]`, msgpack friendly:

- `DrawStock`:   `[0, seat]`
- `TakeDiscard`: `[1, seat, slot, ...]` (the justifying slots; none outside fechado, so the
  old two-item form still decodes)
- `TurnUpFirst`: `[2, seat]`
- `LayDown`:     `[3, seat, n_melds, len_1, end_1, slot, ..., len_2, end_2, slot, ...]`
- `AddToMeld`:   `[4, seat, meld_index, end, slot, ...]`
- `Discard`:     `[5, seat, slot]`

`end` is where a run's wild goes when it stands at an end and the preset lets the player choose:
0 the rules' default (the high end when there is room), 1 the low end, 2 the high end. The
forms are specified in docs/protocol.md section 3.4.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from buraco_p2p.engine.errors import IllegalMove, IllegalMoveCode

MAX_SLOT: Final = 107
MAX_WIRE_LEN: Final = 3 + 3 * 108
# The largest table: six seats, a 162-card deck.
MAX_PLAYERS: Final = 6
MAX_DECK: Final = 162


@dataclass(frozen=True, slots=True)
class DrawStock:
    """Take the top card of the stock into the hand (a private reveal to the drawer)."""

    seat: int

    def to_wire(self) -> list[int]:
        return [0, self.seat]


@dataclass(frozen=True, slots=True)
class TakeDiscard:
    """Take the whole discard pile into the hand.

    Under fechado ("justify", `RuleSet.must_meld_top_discard`) the player shows, as they take,
    the cards of their hand that meld the pile's top card: `justify` names those hand slots
    (revealed publicly before the move, like melded cards). Empty under every other preset,
    and under fechado only when the top card alone fits one of the team's melds.
    """

    seat: int
    justify: tuple[int, ...] = ()

    def to_wire(self) -> list[int]:
        return [1, self.seat, *self.justify]


@dataclass(frozen=True, slots=True)
class TurnUpFirst:
    """Refuse the first card of the hand (us, playingcards): it starts the discard pile face up
    and the next stock card is drawn instead. Only right after the first draw of the hand."""

    seat: int

    def to_wire(self) -> list[int]:
        return [2, self.seat]


@dataclass(frozen=True, slots=True)
class LayDown:
    """Put one or more new melds on the team's table in one go.

    Several melds travel in one move because the initial-meld minimum counts everything laid
    down at once. A team that has not opened yet and lays down less than its minimum makes a
    *failed attempt*: the move is logged and applied, the cards go back to the hand (they have
    been shown to everyone) and the team's minimum rises per the preset.
    """

    seat: int
    melds: tuple[tuple[int, ...], ...]
    wild_ends: tuple[int, ...] = ()  # per meld (see module doc); empty: all default

    def end_of(self, i: int) -> int:
        return self.wild_ends[i] if self.wild_ends else 0

    def to_wire(self) -> list[int]:
        out = [3, self.seat, len(self.melds)]
        for i, m in enumerate(self.melds):
            out.append(len(m))
            out.append(self.end_of(i))
            out.extend(m)
        return out


@dataclass(frozen=True, slots=True)
class AddToMeld:
    """Add cards to one of the team's melds, by its index in the team's meld list."""

    seat: int
    meld: int
    slots: tuple[int, ...]
    wild_end: int = 0

    def to_wire(self) -> list[int]:
        return [4, self.seat, self.meld, self.wild_end, *self.slots]


@dataclass(frozen=True, slots=True)
class Discard:
    """Put a card on the discard pile; this ends the turn."""

    seat: int
    slot: int

    def to_wire(self) -> list[int]:
        return [5, self.seat, self.slot]


Move = DrawStock | TakeDiscard | TurnUpFirst | LayDown | AddToMeld | Discard

_SIMPLE: Final[dict[int, type[DrawStock | TurnUpFirst]]] = {
    0: DrawStock,
    2: TurnUpFirst,
}


def _bad(message: str, seat: int | None = None) -> IllegalMove:
    return IllegalMove(IllegalMoveCode.BAD_WIRE, message, seat)


def _int(x: object, lo: int, hi: int, what: str, seat: int | None) -> int:
    # bool is an int subclass; a peer sending True for a slot is sending garbage.
    if type(x) is not int:
        raise _bad(f"{what} must be an integer, not {type(x).__name__}", seat)
    if not lo <= x <= hi:
        raise _bad(f"{what} {x} out of range {lo}..{hi}", seat)
    return x


def _slots(items: Sequence[object], seat: int, what: str, top: int) -> tuple[int, ...]:
    out = tuple(_int(s, 0, top, what, seat) for s in items)
    if len(set(out)) != len(out):
        raise IllegalMove(IllegalMoveCode.DUPLICATE_SLOT, f"{what}: a slot appears twice", seat)
    return out


_MOVE_TYPES: Final = (DrawStock, TakeDiscard, TurnUpFirst, LayDown, AddToMeld, Discard)


def _small_ints(x: object, seat: int, what: str, at_least: int = 0) -> None:
    if type(x) is not tuple or len(x) < at_least or any(type(s) is not int for s in x):
        raise _bad(f"{what} must be a tuple of integers, not {x!r:.60}", seat)


def check_shape(move: object) -> Move:
    """`move` itself if it is a move whose fields have the types they are declared with.

    Moves built in Python (a bot, a session, a test) skip `move_from_wire`, and the engine
    compares and indexes their fields: a string for a slot or `True` for a seat must be refused
    as a bad move (`IllegalMove(BAD_WIRE)`), not fail deeper with a `TypeError` or, worse,
    compare equal to an integer (`True == 1`). Ranges are the engine's business (they depend
    on the deck and the table).
    """
    if not isinstance(move, _MOVE_TYPES):
        raise _bad(f"not a move: {type(move).__name__}")
    seat = move.seat
    if type(seat) is not int:
        raise _bad(f"the seat must be an integer, not {seat!r:.60}")
    if isinstance(move, TakeDiscard):
        _small_ints(move.justify, seat, "justifying slots")
    elif isinstance(move, Discard):
        if type(move.slot) is not int:
            raise _bad(f"the slot must be an integer, not {move.slot!r:.60}", seat)
    elif isinstance(move, AddToMeld):
        if type(move.meld) is not int or type(move.wild_end) is not int:
            raise _bad("the meld index and the wild end must be integers", seat)
        _small_ints(move.slots, seat, "added slots")
    elif isinstance(move, LayDown):
        if type(move.melds) is not tuple:
            raise _bad("the melds must be a tuple of slot tuples", seat)
        for m in move.melds:
            _small_ints(m, seat, "laid-down slots")
        _small_ints(move.wild_ends, seat, "wild ends")
    return move


def move_from_wire(obj: object, *, players: int = 4, deck_size: int = 108) -> Move:
    """Decode and validate a move's wire form. Garbage raises `IllegalMove(BAD_WIRE)`.

    `players` and `deck_size` bound seats and slots (those of the table's rules; the defaults
    are the four-player table's); a slot or meld index past the deck is garbage too.
    """
    if not (
        type(players) is int
        and 2 <= players <= MAX_PLAYERS
        and type(deck_size) is int
        and 0 < deck_size <= MAX_DECK
    ):
        raise ValueError(f"no table of {players!r} players and {deck_size!r} cards")
    top = deck_size - 1
    if not isinstance(obj, list | tuple):
        raise _bad(f"a move must be a list of integers, not {type(obj).__name__}")
    if len(obj) < 2:
        raise _bad("a move needs at least a kind and a seat")
    if len(obj) > 3 + 3 * deck_size:
        raise _bad(f"a move of {len(obj)} items is too long")
    kind = _int(obj[0], 0, 5, "move kind", None)
    seat = _int(obj[1], 0, players - 1, "seat", None)
    rest = obj[2:]
    if kind in _SIMPLE:
        if rest:
            raise _bad("this move takes no arguments", seat)
        return _SIMPLE[kind](seat)
    if kind == 1:
        return TakeDiscard(seat, _slots(rest, seat, "justifying slots", top))
    if kind == 5:
        if len(rest) != 1:
            raise _bad("a discard names exactly one slot", seat)
        return Discard(seat, _int(rest[0], 0, top, "slot", seat))
    if kind == 4:
        if len(rest) < 3:
            raise _bad("an addition names a meld, a wild end and at least one slot", seat)
        meld = _int(rest[0], 0, top, "meld index", seat)
        end = _int(rest[1], 0, 2, "wild end", seat)
        return AddToMeld(seat, meld, _slots(rest[2:], seat, "added slots", top), end)
    # kind == 3: lay down
    if not rest:
        raise _bad("a lay-down needs a meld count", seat)
    count = _int(rest[0], 1, 36, "meld count", seat)
    pos = 1
    melds: list[tuple[object, ...]] = []
    ends: list[int] = []
    for _ in range(count):
        if pos + 1 >= len(rest):
            raise _bad("lay-down is shorter than its meld count says", seat)
        n = _int(rest[pos], 3, deck_size, "meld length", seat)
        ends.append(_int(rest[pos + 1], 0, 2, "wild end", seat))
        pos += 2
        if pos + n > len(rest):
            raise _bad("lay-down is shorter than its meld lengths say", seat)
        melds.append(tuple(rest[pos : pos + n]))
        pos += n
    if pos != len(rest):
        raise _bad("lay-down has trailing items", seat)
    flat = _slots([s for m in melds for s in m], seat, "laid-down slots", top)
    out: list[tuple[int, ...]] = []
    i = 0
    for m in melds:
        out.append(flat[i : i + len(m)])
        i += len(m)
    return LayDown(seat, tuple(out), tuple(ends) if any(ends) else ())
