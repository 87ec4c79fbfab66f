"""The line-mode table: a whole match played by typing, over a session driver.

Shown after every change that matters: whose turn it is, the pile's top card and size, the
stock's size, every side's melds (numbered per side, `add` takes that number), and our hand,
sorted by suit then rank, each card with the number `meld`, `add` and `discard` take.

Commands (`help` prints them):

    draw                       draw from the stock
    take [N ...]               take the pile (N ...: hand cards that justify the top card)
    up                         turn the first card drawn face up (where the rules allow)
    meld N N N [/ N N N ...]   lay down one or more melds
    add M N [N ...]            add hand cards to our side's meld M
    discard N                  discard a hand card (ends the turn)
    say TEXT                   chat to the table
    show                       show the table again
    end | void                 after a timeout: agree to end the match or void the hand
    replace                    after a timeout: agree that bots take the missing players'
                               seats from the hand dealt again (the host seats them)
    quit                       leave (the match stays on disk: `buraco-p2p resume` returns)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from buraco_p2p.cards import face_of
from buraco_p2p.engine import (
    AddToMeld,
    Discard,
    DrawStock,
    HandState,
    LayDown,
    Move,
    TakeDiscard,
    TurnUpFirst,
)
from buraco_p2p.session import (
    Event,
    Fault,
    HandEnded,
    HandStarted,
    MatchEnded,
    MoveApplied,
    SeatsDrawn,
    TimedOut,
    TimeUp,
    Voided,
    VoidProposed,
)

__all__ = ["HELP", "LineError", "describe_event", "parse_command", "render", "sorted_hand"]

HELP = __doc__.split("Commands (`help` prints them):", 1)[1].strip("\n")


class LineError(ValueError):
    """A command that cannot be made into a move; the text says why."""


def _key(view: HandState, slot: int) -> tuple[int, int]:
    card = view.card(slot)
    if card is None:
        return (9, slot)
    face = face_of(card, view.n)
    suit = 4 if face.suit is None else int(face.suit)
    return (suit, face.rank)


def sorted_hand(view: HandState, seat: int) -> list[int]:
    """Our hand's slots, by suit then rank (jokers last): the numbers commands take."""
    return sorted(view.hand(seat), key=lambda s: _key(view, s))


def _text(view: HandState, slot: int) -> str:
    card = view.card(slot)
    return "??" if card is None else str(face_of(card, view.n))


def render(view: HandState, seat: int, names: Sequence[str]) -> str:
    """The table as text, from the view of `seat` (names by seat)."""
    lines = []
    turn = view.turn
    lines.append(f"turn: {names[turn]}, {view.phase.value}")
    top = _text(view, view.pile[-1]) if view.pile else "empty"
    lines.append(f"pile: {top} ({len(view.pile)} cards)   stock: {len(view.stock)}")
    for side, melds in enumerate(view.melds):
        who = ", ".join(names[s] for s in range(view.players) if view.side_of(s) == side)
        shown = "  ".join(
            f"[{m}] " + " ".join(str(f) for f in tm.meld.faces) for m, tm in enumerate(melds)
        )
        lines.append(f"side {side} ({who}): {shown or 'no melds'}")
    hand = sorted_hand(view, seat)
    cards = "  ".join(f"{k}:{_text(view, s)}" for k, s in enumerate(hand, 1))
    lines.append(f"your hand ({len(hand)}): {cards}")
    return "\n".join(lines)


def _numbers(words: Sequence[str], hand: Sequence[int]) -> tuple[int, ...]:
    out = []
    for w in words:
        if not w.isdigit() or not 1 <= int(w) <= len(hand):
            raise LineError(f"{w!r} is not a card number 1..{len(hand)}")
        out.append(hand[int(w) - 1])
    if len(set(out)) != len(out):
        raise LineError("a card is named twice")
    return tuple(out)


def parse_command(line: str, view: HandState, seat: int) -> Move:
    """The move a typed line asks for (`LineError` if it makes none)."""
    words = line.split()
    if not words:
        raise LineError("empty command")
    cmd, rest = words[0].lower(), words[1:]
    hand = sorted_hand(view, seat)
    if cmd == "draw" and not rest:
        return DrawStock(seat)
    if cmd == "take":
        return TakeDiscard(seat, _numbers(rest, hand))
    if cmd == "up" and not rest:
        return TurnUpFirst(seat)
    if cmd == "meld":
        groups = " ".join(rest).split("/")
        melds = tuple(_numbers(g.split(), hand) for g in groups)
        if not all(melds):
            raise LineError("meld needs card numbers, groups separated by /")
        return LayDown(seat, melds)
    if cmd == "add" and len(rest) >= 2:
        if not rest[0].isdigit():
            raise LineError("add M N ...: M is a meld number of your side")
        return AddToMeld(seat, int(rest[0]), _numbers(rest[1:], hand))
    if cmd == "discard" and len(rest) == 1:
        return Discard(seat, _numbers(rest, hand)[0])
    raise LineError(f"unknown command {line.strip()!r} (type help)")


def describe_event(
    ev: Event, names: Sequence[str], view: HandState | None, nick: Callable[[int], str]
) -> str | None:
    """One line for an event worth announcing (party-indexed events use `nick`)."""
    if isinstance(ev, SeatsDrawn):
        order = ", ".join(nick(p) for p in ev.seating)
        return f"seats drawn: {order}; first dealer {names[ev.dealer]}"
    if isinstance(ev, HandStarted):
        return f"hand {ev.hand} dealt (dealer {names[ev.dealer]})"
    if isinstance(ev, MoveApplied):
        return f"{names[ev.seat]}: {_move_text(ev.move, view)}"
    if isinstance(ev, HandEnded):
        totals = ", ".join(
            f"side {k} {sum(line.points for line in side)}"
            for k, side in enumerate(ev.result.lines)
        )
        return f"hand over: {totals}"
    if isinstance(ev, MatchEnded):
        return f"match over: scores {list(ev.scores)}, winner side {ev.winner}"
    if isinstance(ev, TimedOut):
        who = ", ".join(nick(p) for p in ev.parties)
        return f"waiting for {who} for {ev.waited:.0f} s"
    if isinstance(ev, TimeUp):
        return f"the time is up after hand {ev.hand}: the match ends (a tied lead plays on)"
    if isinstance(ev, VoidProposed):
        who = ", ".join(nick(p) for p in ev.silent)
        return f"{nick(ev.party)} proposes: {ev.action} (missing: {who}); type {ev.action} to agree"
    if isinstance(ev, Voided):
        gone = ", ".join(nick(p) for p in ev.silent)
        if ev.action == "replace":
            return f"agreed: replace (a bot takes the seat of {gone} from the next deal)"
        return f"agreed: {ev.action} (missing: {gone})"
    if isinstance(ev, Fault):
        return f"FAULT: {ev.error}"
    return None


def _move_text(move: Move, view: HandState | None) -> str:
    def cards(slots: Sequence[int]) -> str:
        return " ".join(_text(view, s) for s in slots) if view is not None else ""

    if isinstance(move, DrawStock):
        return "draws from the stock"
    if isinstance(move, TakeDiscard):
        return "takes the pile"
    if isinstance(move, TurnUpFirst):
        return "turns the first card up"
    if isinstance(move, LayDown):
        return "melds " + " / ".join(cards(m) for m in move.melds)
    if isinstance(move, AddToMeld):
        return f"adds {cards(move.slots)} to meld {move.meld}"
    return f"discards {cards((move.slot,))}"
