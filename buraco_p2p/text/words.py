"""Moves and refusals in words. The engine decides; this module only says what it decided.

`explain` turns an `IllegalMove` into a sentence a player understands (its code says which
rule, the engine's message the particulars); `describe` says what a move does, for hints and
for the record of what the other players just did.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from buraco_p2p.cards import parse_card
from buraco_p2p.engine import (
    AddToMeld,
    Discard,
    DrawStock,
    HandState,
    IllegalMove,
    IllegalMoveCode,
    LayDown,
    Move,
    TakeDiscard,
    TurnUpFirst,
)
from buraco_p2p.text.glyphs import Glyphs

C = IllegalMoveCode

REASONS: Final[dict[IllegalMoveCode, str]] = {
    C.BAD_WIRE: "That move is malformed",
    C.WRONG_PLAYER: "It is not your turn",
    C.WRONG_PHASE: "Not now",
    C.HAND_OVER: "The hand is over",
    C.NOT_HELD: "You do not hold that card",
    C.DUPLICATE_SLOT: "A card was chosen twice",
    C.UNKNOWN_CARD: "A card has not been revealed yet",
    C.EMPTY_PILE: "The discard pile is empty",
    C.EMPTY_STOCK: "The stock is empty",
    C.ILLEGAL_MELD: "Those cards do not make a meld",
    C.NO_SUCH_MELD: "There is no such meld",
    C.DUPLICATE_SET: "Your side already has a set of that rank",
    C.NOT_OPENED: "Your side must open with the minimum first",
    C.CANNOT_EMPTY_HAND: "You may not empty your hand now",
    C.WILD_GOING_OUT: "You may not go out by discarding a wild card",
    C.DISCARD_TAKEN_CARD: "You may not discard the only card you just took",
    C.MUST_MELD_TOP: "Meld the top card of the pile you took first",
    C.PILE_NOT_JUSTIFIED: "Show cards that meld the pile's top card to take it",
    C.GO_OUT_BY_DISCARD_ONLY: "At this table you go out only by discarding",
    C.NO_FIRST_CARD: "There is no first card to turn up",
}

def wild_discard_question(card: str) -> str:
    """The one question before a wild card (`card`, drawn) is discarded: a wild is worth far
    more in a meld, so discarding one is almost always a slip of the cursor."""
    return f"Discard {card}, a wild card? y discards it, n keeps it."


PHASE_HINTS: Final = {
    "draw": "draw first: from the stock or the pile",
    "first_choice": "keep the card (play on) or t to turn it up",
    "play": "meld, add or discard",
}


def explain(err: IllegalMove, view: HandState | None = None, g: Glyphs | None = None) -> str:
    """One line for the player: the rule in words, then the engine's particulars, with its
    card names (`4C`) and slot numbers in the screen's glyphs (`4♣`) and no internal code."""
    head = REASONS.get(err.code, "Not allowed")
    if err.code is C.WRONG_PHASE and view is not None:
        tip = PHASE_HINTS.get(view.phase.value)
        if tip:
            return f"{head}: {tip}."
    detail = in_glyphs(err.message.rstrip("."), view, g or Glyphs())
    if detail and detail.lower() != head.lower():
        return f"{head}: {detail}."
    return f"{head}."


CARD_TEXT = re.compile(r"\b(10|[A2-9TJQK])([SHDC])\b")
SLOT_TEXT = re.compile(r"\bslot (\d+)\b")


def in_glyphs(text: str, view: HandState | None, g: Glyphs) -> str:
    """`text` with card names (`4C`, `TH`) in the glyphs in use and slot numbers, which mean
    nothing to a player, as the card in that slot (when this view knows it)."""

    def card(m: re.Match[str]) -> str:
        face = parse_card(m.group(0))
        return g.face(face)

    def slot(m: re.Match[str]) -> str:
        k = int(m.group(1))
        if view is not None and 0 <= k < view.n and view.known[k] >= 0:
            return g.card(view.known[k])
        return "that card"

    return SLOT_TEXT.sub(slot, CARD_TEXT.sub(card, text))


def faces_of(view: HandState, slots: Sequence[int], g: Glyphs) -> str:
    return " ".join("??" if view.card(s) is None else g.card(view.known[s]) for s in slots)


def describe(
    move: Move, view: HandState, g: Glyphs, who: str = "", cards: Sequence[int] = ()
) -> str:
    """What a move does, as a short phrase (`who` names the player, if given).

    `cards` are the card ids recorded when the move was made (`Action.cards`); without them
    the view is asked for the cards the move names.
    """
    faces = [g.card(c) for c in cards]
    pre = f"{who} " if who else ""
    if isinstance(move, DrawStock):
        return f"{pre}drew from the stock"
    if isinstance(move, TurnUpFirst):
        return f"{pre}turned up the first card"
    if isinstance(move, TakeDiscard):
        n = f" ({len(faces)} cards)" if faces else ""
        shown = f", showing {faces_of(view, move.justify, g)}" if move.justify else ""
        return f"{pre}took the pile{n}{shown}"
    if isinstance(move, Discard):
        return f"{pre}discarded {_txt(faces, 0) or faces_of(view, (move.slot,), g)}"
    if isinstance(move, LayDown):
        groups = [faces_of(view, m, g) for m in move.melds]
        if faces:
            it = iter(faces)
            groups = [" ".join(next(it, "??") for _ in m) for m in move.melds]
        return f"{pre}laid down " + " | ".join(groups)
    added = " ".join(faces[: len(move.slots)]) if faces else faces_of(view, move.slots, g)
    return f"{pre}added {added} to meld {move.meld + 1}"


def suggest(move: Move, view: HandState, g: Glyphs) -> str:
    """A move offered to the player (a hint), as what to do: `lay down 3♠ 4♠ 5♠`."""
    if isinstance(move, DrawStock):
        return "draw from the stock"
    if isinstance(move, TurnUpFirst):
        return "turn up the first card and draw the next"
    if isinstance(move, TakeDiscard):
        shown = f", showing {faces_of(view, move.justify, g)}" if move.justify else ""
        return f"take the pile ({len(view.pile)} cards){shown}"
    if isinstance(move, Discard):
        return f"discard {faces_of(view, (move.slot,), g)}"
    if isinstance(move, LayDown):
        return "lay down " + " | ".join(faces_of(view, m, g) for m in move.melds)
    return f"add {faces_of(view, move.slots, g)} to meld {move.meld + 1}"


def _txt(faces: list[str], i: int) -> str:
    return faces[i] if len(faces) > i else ""


def move_slots(move: Move) -> tuple[int, ...]:
    """The hand cards a move uses (to select them when it is offered as a hint)."""
    if isinstance(move, LayDown):
        return tuple(s for m in move.melds for s in m)
    if isinstance(move, AddToMeld):
        return move.slots
    if isinstance(move, Discard):
        return (move.slot,)
    if isinstance(move, TakeDiscard):
        return move.justify
    return ()
